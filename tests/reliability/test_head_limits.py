"""Limits on a request's head (issue 44, item 10): docs/security.md said 16 KB, but a 60 KB header and 10,000
headers reached the routes (h11 measures only a head that comes in more than one read, and nothing counted one
header or their number); a 200 KB head got uvicorn's plain-text 400.

Now a header (name and value) over 16 KB, more than 100 headers or a head over 64 KB is a ``431 limit_exceeded``
in the error shape, before any route: in the app for every server (``api.http.middleware.HeadLimits``), and in
``folio serve``'s protocol for a head that never completes (``api.http.protocol``).
"""

from __future__ import annotations

import json
import os
import select
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from folio.api.http.protocol import MAX_HEAD_BYTES, MAX_HEADER_BYTES, MAX_HEADERS
from tests.api.conftest import assert_error, folio_serve, make_settings


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(tmp_path_factory.mktemp("head") / "data"))) as c:
        yield c


def _pad(size: int) -> str:
    """A value that makes the header ``X-Pad: value`` ``size`` bytes, name and value."""
    return "a" * (size - len("x-pad"))


def test_one_header_over_16_kb_is_431(client: TestClient) -> None:
    assert client.get("/v1/health", headers={"X-Pad": _pad(MAX_HEADER_BYTES)}).status_code == 200
    for path in ("/v1/health", "/v1/documents", "/docs"):
        err = assert_error(client.get(path, headers={"X-Pad": _pad(MAX_HEADER_BYTES + 1)}), 431, "limit_exceeded")
        assert f"'x-pad' is {MAX_HEADER_BYTES + 1} bytes, over the limit of {MAX_HEADER_BYTES}" in str(err["message"])
    err = assert_error(client.post("/v1/search", json={"query": "q"}, headers={"X-Pad": "a" * 60_000}), 431)
    assert "x-pad" in str(err["message"])


def test_more_than_100_headers_is_431(client: TestClient) -> None:
    base = len(client.build_request("GET", "/v1/health").headers)  # what TestClient sends of its own
    fill = {f"x-h{n}": "1" for n in range(MAX_HEADERS - base)}
    assert client.get("/v1/health", headers=fill).status_code == 200
    many = {f"x-h{n}": "1" for n in range(10_000)}
    err = assert_error(client.get("/v1/health", headers=many), 431, "limit_exceeded")
    assert f"over the limit of {MAX_HEADERS}" in str(err["message"])


def test_a_head_over_64_kb_is_431(client: TestClient) -> None:
    five = {f"x-p{n}": "a" * (MAX_HEADER_BYTES - 10) for n in range(5)}  # each under its limit, 80 KB in all
    err = assert_error(client.get("/v1/health", headers=five), 431, "limit_exceeded")
    assert f"over the limit of {MAX_HEAD_BYTES}" in str(err["message"])


# --------------------------------------------------------------------------------------------- folio serve


def _answer(url: str, head: bytes, chunk: int = 8192) -> tuple[int, dict[str, object]]:
    """Send ``head`` in pieces, stopping as soon as the server answers; its status and JSON body."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=20) as sock:
        for start in range(0, len(head), chunk):
            sock.sendall(head[start : start + chunk])
            if select.select([sock], [], [], 0.05)[0]:
                break
        data = b""
        while not data.endswith(b"}") or b"\r\n\r\n" not in data:
            got = sock.recv(65536)
            if not got:
                break
            data += got
    status_line, _, rest = data.partition(b"\r\n")
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in headers.lower(), data[:500]
    return int(status_line.split()[1]), json.loads(body)


def test_folio_serve_refuses_large_heads_in_the_error_shape(tmp_path: Path) -> None:
    env = {**os.environ, "FOLIO_DATA": str(tmp_path / "data"), "FOLIO_OCR": "0", "FOLIO_QUERY_PROCESSES": "0"}
    with open(tmp_path / "serve.log", "wb") as log:
        proc, url = folio_serve(env, log)
        try:
            host = f"Host: 127.0.0.1:{urlsplit(url).port}\r\n".encode()
            cases = {
                # The probes: one 60 KB header, 10,000 headers, a 200 KB header (which h11 stopped with a
                # plain-text 400), and a head that never ends (h11's buffer, now 64 KB, then folio's 431).
                "60 KB header": b"X-Pad: " + b"a" * 60_000 + b"\r\n\r\n",
                "10,000 headers": b"".join(b"X-H%d: 1\r\n" % n for n in range(10_000)) + b"\r\n",
                "200 KB header": b"X-Pad: " + b"a" * 200_000 + b"\r\n\r\n",
                "endless head": b"X-Pad: " + b"a" * 200_000,
            }
            for name, rest in cases.items():
                status, body = _answer(url, b"GET /v1/health HTTP/1.1\r\n" + host + rest)
                err = body["error"]
                assert status == 431 and isinstance(err, dict), (name, status, body)
                assert err["code"] == "limit_exceeded" and err["request_id"], (name, body)
            # A malformed request is the error shape too (was uvicorn's text/plain "Invalid HTTP request received.").
            status, body = _answer(url, b"GET /v1/health HTTP/1.1\r\n" + host + b"bad header line\r\n\r\n")
            assert status == 400 and body["error"]["code"] == "bad_request", body  # type: ignore[index]
            with httpx.Client(timeout=10) as c:  # and ordinary requests are served as before
                assert c.get(f"{url}/v1/health", headers={"X-Pad": "a" * 8000}).status_code == 200
        finally:
            proc.terminate()
            proc.wait(30)
