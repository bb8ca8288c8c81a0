"""The HTTP layer under a hostile client (issue 20: M1, M2, M5 and the small leaks).

Each test reproduces one finding of the second attack on ``main`` (9918a2e) and fails there:

- M1: a ``multipart/form-data`` Content-Type (any case) skipped the JSON body limit, also for a
  chunked body; and a keyed server read a body before it refused the caller with 401;
- M2: ``image_url_template`` went through ``str.format``;
- M5: a 50,000-item ``/v1/verify`` package was validated item by item on the event loop;
- the keys file's path in ``503 keys_unavailable``, a 5 MB region id echoed by MCP ``get_region``,
  a ``GET /mcp`` event stream that never ended, a viewer without CSP / X-Frame-Options / nosniff,
  no deadline on request headers (slowloris), and ``/v1/health`` counts from before an idle spell.

Servers that the behaviour depends on run for real on 127.0.0.1: uvicorn in a thread
(``live_server``) or ``folio serve`` as its own process.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient

from benchmarks.odd_pdfs import valid_pdf
from folio.api.http.app import create_app
from folio.assembly import AssemblyOptions, assemble
from folio.ingest.parse_supervisor import IngestLimits
from folio.ingest.pipeline import ingest_bytes
from folio.ingest.storage.store import Store
from folio.kernel.index import RegionIndex
from tests.api.conftest import assert_error, folio_serve, live_server, make_settings
from tests.assembly.builders import by_kind, hit, make_doc

LIMIT = 10 * 1024 * 1024  # Settings.max_request_bytes


@pytest.fixture()
def empty_client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(tmp_path / "data"))) as c:
        yield c


def _connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def _status_line(sock: socket.socket, timeout: float) -> str:
    """The first line the server sends, or '' when it sends nothing within ``timeout``."""
    sock.settimeout(timeout)
    try:
        data = sock.recv(65536)
    except TimeoutError:
        return ""
    return data.split(b"\r\n", 1)[0].decode("latin-1")


# ------------------------------------------------------------------------- M1: body limit, auth first


@pytest.mark.parametrize(
    "ctype", ["multipart/form-data; boundary=x", "Multipart/Form-Data; boundary=x", "MULTIPART/FORM-DATA"]
)
@pytest.mark.parametrize("path", ["/v1/context", "/v1/verify", "/mcp"])
def test_multipart_content_type_does_not_lift_the_json_body_limit(
    empty_client: TestClient, ctype: str, path: str
) -> None:
    resp = empty_client.post(path, content=b"x" * (LIMIT + 1), headers={"Content-Type": ctype})
    err = assert_error(resp, 413, "limit_exceeded")
    assert str(LIMIT) in str(err["message"])


@pytest.mark.parametrize(
    "spelling", ["MULTIPART/FORM-DATA; boundary", "Multipart/Form-Data; BOUNDARY", "multipart/form-data ; Boundary"]
)
def test_an_upload_media_type_in_any_case_is_multipart(empty_client: TestClient, spelling: str) -> None:
    """Media types and parameter names are case-insensitive (RFC 9110): ``MULTIPART/FORM-DATA`` was refused with
    ``422 send the PDF as multipart/form-data`` (issue 44, item 10). The boundary's value keeps its case."""
    pdf = {"file": ("a.pdf", valid_pdf(1), "application/pdf")}
    request = httpx.Request("POST", "http://x/v1/documents", files=pdf, data={"doc_id": "up"})
    body, ctype = request.read(), request.headers["content-type"]
    assert ctype.startswith("multipart/form-data; boundary=")
    resp = empty_client.post("/v1/documents", content=body, headers={"Content-Type": ctype.replace(
        "multipart/form-data; boundary", spelling)})  # fmt: skip
    assert resp.status_code == 200 and resp.json()["doc_id"] == "up", resp.text
    other = empty_client.post("/v1/documents", content=body, headers={"Content-Type": "text/plain"})
    assert_error(other, 422, "invalid_request")


def _chunks(total: int, size: int = 256 * 1024) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        yield b"x" * size
        sent += size


def test_a_chunked_body_without_content_length_is_cut_at_the_limit(tmp_path: Path) -> None:
    with live_server(make_settings(tmp_path / "data")) as url:
        for ctype in ("multipart/form-data; boundary=x", "application/json"):
            resp = httpx.post(
                f"{url}/v1/search", content=_chunks(3 * LIMIT), headers={"Content-Type": ctype}, timeout=60
            )
            assert "content-length" not in resp.request.headers  # sent chunked
            assert resp.status_code == 413, (ctype, resp.text)
            assert resp.json()["error"]["code"] == "limit_exceeded"


def test_a_keyed_server_refuses_a_caller_without_a_key_before_reading_the_body(tmp_path: Path) -> None:
    """The client sends the head of a 5 MB request and waits: the 401 comes before any of the body."""
    with live_server(make_settings(tmp_path / "data", api_key="the-key")) as url:
        port = urlsplit(url).port
        for path, key_header in [
            ("/v1/context", ""),
            ("/v1/verify", "X-API-Key: wrong\r\n"),
            ("/v1/documents", "Authorization: Bearer wrong\r\n"),
            ("/mcp", ""),
        ]:
            with _connect(url) as sock:
                sock.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: multipart/form-data; "
                    f"boundary=x\r\nContent-Length: 5000000\r\n{key_header}\r\n".encode()
                )
                assert _status_line(sock, 10).startswith("HTTP/1.1 401"), path
        # With the key, the server does wait for the body: the 401 above came from the key check.
        with _connect(url) as sock:
            sock.sendall(
                f"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                "Content-Length: 100\r\nX-API-Key: the-key\r\n\r\n".encode()
            )
            assert _status_line(sock, 1.5) == ""
        assert httpx.get(f"{url}/v1/health").status_code == 200


# ------------------------------------------------------------------- M2: image_url_template is literal


@pytest.mark.parametrize(
    "template",
    [
        "/img/{region_id}{0}",
        "/img/{region_id}{x}",
        "/img/{region_id}{",
        "/img/{region_id}.{region_id.__class__.__base__.__subclasses__}",
        "/img/{region_id:>5000000}{region_id}",
    ],
)
def test_image_url_template_is_substituted_literally(template: str) -> None:
    regs = make_doc("data", [("Diagrams", [["See the wiring diagram."], ("figure", "Figure 2: Wiring")])])
    fig = by_kind(regs, "figure")[0]
    pkg = assemble(
        "wiring?",
        [hit(fig, 1.0, 1, "clip")],
        RegionIndex(regs),
        AssemblyOptions(page_units="off", image_url_template=template),
    )
    item = next(i for i in pkg.items if i.modality == "figure")
    assert item.image_url == template.replace("{region_id}", fig.region_id)
    assert "<" not in item.image_url and " at 0x" not in item.image_url and len(item.image_url) < 300  # no reprs


def test_image_url_template_is_bounded(empty_client: TestClient) -> None:
    with pytest.raises(ValueError, match="over 500 characters"):
        AssemblyOptions(image_url_template="/{region_id}" + "x" * 600)
    resp = empty_client.post("/v1/context", json={"query": "q", "image_url_template": "/{region_id}" + "x" * 600})
    assert_error(resp, 422, "validation_error")


# --------------------------------------------------------------------------- M5: big bodies off the loop


def _item(boxes: int = 0) -> dict[str, Any]:
    locator: dict[str, Any] = {"page": 1, "bbox": [0, 0, 1, 1]}
    if boxes:
        locator["line_boxes"] = [[0, 0, 1, 1]] * boxes
    return {
        "citation_id": "S1", "region_id": "r", "region_ids": ["r"], "doc_id": "d", "version_id": "v",
        "filename": "f.pdf", "modality": "text", "expansion": "hit", "trigger_ids": ["r"], "pages": [1],
        "locators": [locator], "text": "x", "tokens": 1, "status": "packed", "score": 0.5,
    }  # fmt: skip


def test_a_verify_package_of_30000_items_is_refused_by_its_size(empty_client: TestClient) -> None:
    """(50,000 such items, 650,000 values, are refused before parsing: tests/reliability/test_body_limits.py.)"""
    item = {k: v for k, v in _item().items() if k not in ("locators", "region_ids", "trigger_ids", "filename")}
    body = json.dumps({"answer": "a [S1].", "package": {"query": "q", "items": [item] * 30_000}})
    assert len(body) < LIMIT
    started = time.perf_counter()
    resp = empty_client.post("/v1/verify", content=body, headers={"Content-Type": "application/json"})
    err = assert_error(resp, 422, "validation_error")
    assert "package.items has 30000 entries, over the limit of 2000" in str(err["message"])
    assert time.perf_counter() - started < 5


def test_a_large_body_is_validated_off_the_event_loop(tmp_path: Path) -> None:
    """2,000 items of 44 line boxes each (1.5 MB, 494,000 values: under the limit of api.http.body_limits) take a few
    tenths of a second to validate, and /v1/health answers again and again meanwhile. On the loop (9918a2e), health
    waited for the whole validation. (Of 450 boxes each, 9.5 MB, the body is refused by its 4.5 million values
    before it is parsed: tests/reliability/test_body_limits.py.)"""
    body = json.dumps({"answer": "a [S1].", "package": {"query": "q", "items": [_item(44)] * 2000}},
                      separators=(",", ":")).encode()  # fmt: skip
    assert len(body) < LIMIT
    with live_server(make_settings(tmp_path / "data")) as url:
        polls: list[tuple[float, float]] = []  # (sent, answered) of each /v1/health
        done = threading.Event()

        def poll() -> None:
            with httpx.Client(timeout=60) as c:
                while not done.is_set():
                    t = time.perf_counter()
                    assert c.get(f"{url}/v1/health").status_code == 200
                    polls.append((t, time.perf_counter()))
                    time.sleep(0.005)

        poller = threading.Thread(target=poll)
        poller.start()
        time.sleep(0.3)
        started = time.perf_counter()
        resp = httpx.post(f"{url}/v1/verify", content=body, headers={"Content-Type": "application/json"}, timeout=120)
        took = time.perf_counter() - started
        done.set()
        poller.join()
    assert_error(resp, 422, "validation_error")
    assert took > 0.1, f"validation took only {took:.2f} s: this body no longer tests anything"
    answered = [started] + [end for _, end in polls if started < end < started + took] + [started + took]
    longest = max(b - a for a, b in zip(answered, answered[1:], strict=False))
    # Validated on the loop, health waits for most of it (0.2 s of 0.3 here); off the loop, a few hundredths.
    assert longest < took / 2, (longest, took, len(answered) - 2)


def test_large_valid_bodies_are_served_as_small_ones_are(empty_client: TestClient) -> None:
    """Past 64 KB the body is validated on the pool; what the route does with it is unchanged."""
    c = empty_client
    package = c.post("/v1/context", json={"query": "what is the deadline?"}).json()
    assert package["refused"]  # the store is empty: a valid, refused package
    small = c.post("/v1/verify", json={"answer": "The deadline is 15 minutes.", "package": package})
    big = c.post("/v1/verify", json={"answer": "The deadline is 15 minutes. " * 4000, "package": package})
    assert len(big.request.content) > 64 * 1024
    assert small.status_code == big.status_code == 200, big.text
    assert set(big.json()) == set(small.json()) and big.json()["insufficient_evidence"] is False
    ids = [f"doc-{n:04d}-" + "x" * 100 for n in range(1000)]  # 1,000 ids of 109 characters: 114 KB
    for some in (ids[:3], ids):
        resp = c.post("/v1/search", json={"query": "deadline", "doc_ids": some})
        assert_error(resp, 404, "document_not_found")
    resp = c.post("/v1/search", json={"query": "deadline", "doc_ids": ids + ["one-too-many"]})
    assert_error(resp, 422, "validation_error")
    resp = c.post("/v1/search", content=b"{" + b" " * 70_000, headers={"Content-Type": "application/json"})
    assert_error(resp, 422, "validation_error")


# ------------------------------------------------------------------------------------------ the leaks


def test_keys_unavailable_does_not_show_the_keys_file_path(tmp_path: Path) -> None:
    keys = tmp_path / "secret-dir" / "keys.json"
    keys.parent.mkdir()
    keys.write_text("{not json")
    with TestClient(create_app(make_settings(tmp_path / "data", keys_file=str(keys)))) as c:
        key = {"X-API-Key": "k"}
        for resp in (c.get("/v1/documents", headers=key), c.post("/v1/search", json={"query": "q"}, headers=key)):
            err = assert_error(resp, 503, "keys_unavailable")
            assert "secret-dir" not in resp.text and str(tmp_path) not in resp.text, err


def _mcp_call(c: TestClient, name: str, arguments: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    return c.post("/mcp", json=body, headers=headers)


def test_mcp_get_region_does_not_echo_a_huge_id(empty_client: TestClient) -> None:
    huge = "x" * 1_000_000  # a body of 1 MiB at most for /mcp (api.http.body_limits)
    resp = _mcp_call(empty_client, "get_region", {"region_id": huge})
    assert resp.status_code == 200 and len(resp.content) < 5000, len(resp.content)
    result = resp.json()["result"]
    assert result["isError"] and "over 512 characters" in result["content"][0]["text"]
    # An id of ordinary length still gets its region_not_found.
    resp = _mcp_call(empty_client, "get_region", {"region_id": "doc@0123456789abcdef:p1:figure1"})
    assert "region_not_found" in resp.json()["result"]["content"][0]["text"]


@pytest.mark.parametrize("rid", [{"a": 1}, [1], None, True, 1.5])
def test_an_mcp_request_with_an_id_mcp_does_not_allow_is_an_invalid_request(empty_client: TestClient, rid: Any) -> None:
    """MCP ids are strings or integers. The SDK took a request with an object (array, null ...) id for a
    notification and answered 202 with an empty body (issue 44); now it is JSON-RPC's invalid request."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    for body in ({"jsonrpc": "2.0", "id": rid, "method": "tools/list"},
                 [{"jsonrpc": "2.0", "id": rid, "method": "tools/list"}]):  # fmt: skip
        resp = empty_client.post("/mcp", json=body, headers=headers)
        assert resp.status_code == 400, (resp.status_code, resp.text)
        assert resp.json() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "Invalid Request: a JSON-RPC id must be a string or an integer"},
        }
    # Ids MCP allows, and a notification (no id), are served as before.
    for ok in (7, "seven"):
        resp = empty_client.post("/mcp", json={"jsonrpc": "2.0", "id": ok, "method": "tools/list"}, headers=headers)
        assert resp.status_code == 200 and resp.json()["id"] == ok and resp.json()["result"]["tools"], resp.text
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert empty_client.post("/mcp", json=note, headers=headers).status_code == 202


def test_get_mcp_answers_405_at_once(tmp_path: Path) -> None:
    with live_server(make_settings(tmp_path / "data")) as url:
        resp = httpx.get(f"{url}/mcp", headers={"Accept": "text/event-stream"}, timeout=5)
        assert_error(resp, 405, "method_not_allowed")
        assert resp.headers["allow"] == "POST"


@pytest.mark.parametrize(
    "path",
    ["/viewer", "/static/index.html", "/static/viewer.js", "/static/viewer.css",
     "/docs", "/redoc", "/static-offline-docs/swagger-ui-bundle.js", "/static-offline-docs/redoc.standalone.js"],
)  # fmt: skip
def test_viewer_headers(empty_client: TestClient, path: str) -> None:
    """The viewer has the same security headers whichever URL serves it (``/static/index.html`` had
    none, issue 31), and so do its scripts and styles; so do the API docs (``/docs`` had none, issue 44)."""
    resp = empty_client.get(path)
    assert resp.status_code == 200
    csp = resp.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "object-src 'none'" in csp
    assert resp.headers["x-frame-options"] == "DENY"
    assert resp.headers["x-content-type-options"] == "nosniff"


def test_health_counts_are_fresh_on_the_first_call_after_an_idle_spell(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with TestClient(create_app(make_settings(data))) as c:
        assert c.get("/v1/health").json()["counts"]["documents"] == 0
        # Another writer (the CLI, a job) adds a document while nobody asks for health.
        ingest_bytes(Store(data), valid_pdf(1), filename="one.pdf", ocr=False, limits=IngestLimits(isolate=False))
        c.app.state.health.at -= 3600  # type: ignore[attr-defined]  # an hour of idling
        assert c.get("/v1/health").json()["counts"]["documents"] == 1


# --------------------------------------------------------------------------------- slowloris (folio serve)


def _closed_within(sock: socket.socket, seconds: float, dribble: bytes = b"") -> float | None:
    """Send ``dribble`` a byte every 0.1 s; the time until the server closes, or None if it did not."""
    started = time.monotonic()
    sock.settimeout(0.1)
    sent = 0
    while time.monotonic() - started < seconds:
        if sent < len(dribble):
            try:
                sock.send(dribble[sent : sent + 1])
            except OSError:
                return time.monotonic() - started
            sent += 1
        try:
            if sock.recv(4096) == b"":
                return time.monotonic() - started
        except TimeoutError:
            continue
        except OSError:
            return time.monotonic() - started
    return None


def test_folio_serve_cuts_off_slow_headers_and_silent_connections(tmp_path: Path) -> None:
    env = {**os.environ, "FOLIO_DATA": str(tmp_path / "data"), "FOLIO_OCR": "0", "FOLIO_QUERY_PROCESSES": "0",
           "FOLIO_HEADER_TIMEOUT_S": "2", "FOLIO_KEEP_ALIVE_S": "3"}  # fmt: skip
    with open(tmp_path / "serve.log", "wb") as log:
        proc, url = folio_serve(env, log)
        try:
            port = urlsplit(url).port
            head = f"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Pad: {'a' * 400}\r\n\r\n".encode()
            with _connect(url) as slow:
                closed = _closed_within(slow, 20, dribble=head)
            assert closed is not None and closed < 6, closed
            with _connect(url) as silent:
                closed = _closed_within(silent, 20)
            assert closed is not None and 2 < closed < 7, closed
            # A client that sends its request at once is served, and keeps its connection between requests.
            with httpx.Client(timeout=10) as c:
                assert c.get(f"{url}/v1/health").status_code == 200
                time.sleep(1)
                assert c.get(f"{url}/v1/health").status_code == 200
        finally:
            proc.terminate()
            proc.wait(30)
