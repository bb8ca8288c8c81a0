"""What a hostile client tries (issue 12): server paths as tokenizers, other origins and Host names,
huge numbers and lists, error messages that echo input, 500s that break keep-alive.

Each test failed against the code before the fix and names the behaviour it pins."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import tests.api.conftest as api_fixtures
from folio.api.http.app import create_app
from folio.api.schemas import ContextRequest, SearchRequest
from folio.settings import Settings
from tests.api.conftest import assert_error, live_server, make_settings

# The API suite's fixtures (its session data dir); tests/reliability/conftest.py has the store suites'.
api_master, client, data_copy, register_excerpt = (
    api_fixtures.api_master,
    api_fixtures.client,
    api_fixtures.data_copy,
    api_fixtures.register_excerpt,
)

PATH_TOKENIZERS = ["hf:/dev/zero", "hf:/etc/passwd", "hf:/proc/self/environ", "hf:.", "/etc/passwd", "../x"]


def _context_endpoints(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [("/v1/context", body), ("/v1/verify", {"answer": "x", "context_request": body})]


# ------------------------------------------------------------------------------------ tokenizers
@pytest.mark.parametrize("tokenizer", PATH_TOKENIZERS)
def test_request_cannot_name_a_tokenizer_path(
    client: TestClient, tokenizer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hf:/dev/zero`` grew the server to 4 GB; ``hf:/etc/passwd`` was a 500. Now a 422 that opens nothing."""
    import folio.kernel.tokens

    opened: list[str] = []
    monkeypatch.setattr(folio.kernel.tokens, "tokenizer_file", lambda path: opened.append(path) or path)
    for path, body in _context_endpoints({"query": "incident", "tokenizer": tokenizer}):
        assert_error(client.post(path, json=body), 422, "validation_error")
    assert opened == []


def test_tokenizer_not_configured_is_422(client: TestClient) -> None:
    for path, body in _context_endpoints({"query": "incident", "tokenizer": "llama3"}):
        err = assert_error(client.post(path, json=body), 422)
        assert "llama3" in err["message"]


def test_tokenizer_files_must_be_regular_and_small(tmp_path: Path) -> None:
    """Even the local ``hf:`` path (CLI, library) never reads a device or a huge file."""
    from folio.kernel.tokens import get_tokenizer, register_tokenizer, tokenizer_file

    for bad in ("/dev/zero", "/proc/self/environ", str(tmp_path / "missing")):
        with pytest.raises(ValueError):
            tokenizer_file(bad)
    with pytest.raises(ValueError):
        get_tokenizer("hf:/dev/zero")
    junk = tmp_path / "tokenizer.json"
    junk.write_text("not json")
    with pytest.raises(ValueError, match="cannot load"):
        get_tokenizer(f"hf:{tmp_path}")
    for name in ("cl100k_base", "a/b", "hf:x", ""):
        with pytest.raises(ValueError):
            register_tokenizer(name, str(tmp_path))


def test_configured_tokenizer_is_usable_by_name(data_copy: Path) -> None:
    """A Hugging Face tokenizer comes from settings (name -> dir); requests use the name."""
    from folio.ingest.embed import minilm_path

    settings = make_settings(data_copy, tokenizers={"minilm": str(minilm_path())})
    with TestClient(create_app(settings)) as c:
        resp = c.post("/v1/context", json={"query": "incident acknowledged", "tokenizer": "minilm", "budget": 400})
        assert resp.status_code == 200, resp.text
        assert resp.json()["budget"]["tokenizer"] == "minilm"
        assert str(minilm_path()) not in resp.text  # the server path is not shown


def test_server_refuses_to_start_with_a_bad_tokenizer_path(data_copy: Path) -> None:
    settings = make_settings(data_copy, tokenizers={"zero": "/dev/zero"})
    with pytest.raises(ValueError, match="not a regular file"), TestClient(create_app(settings)):
        pass


# --------------------------------------------------------------------------------- Origin / Host
def test_host_must_be_configured(client: TestClient, data_copy: Path) -> None:
    """DNS rebinding: ``Host: evil.example`` got a 200."""
    for path in ("/v1/documents", "/v1/health"):
        assert_error(client.get(path, headers={"Host": "evil.example"}), 400, "invalid_host")
    assert client.get("/v1/documents", headers={"Host": "localhost:8000"}).status_code == 200
    assert client.get("/v1/documents", headers={"Host": "127.0.0.1"}).status_code == 200
    assert client.get("/v1/documents", headers={"Host": "[::1]:8000"}).status_code == 200
    # Without the test-only setting, TestClient's own "testserver" is refused.
    with TestClient(create_app(Settings(data=str(data_copy), ocr=False))) as plain:
        assert_error(plain.get("/v1/documents"), 400, "invalid_host")
    with TestClient(create_app(make_settings(data_copy, allowed_hosts=["*"]))) as anyhost:
        assert anyhost.get("/v1/documents", headers={"Host": "evil.example"}).status_code == 200


def test_default_allowed_hosts() -> None:
    from folio.api.http.middleware import allowed_host_names

    assert allowed_host_names("127.0.0.1", []) == {"localhost", "127.0.0.1", "[::1]"}
    assert "folio.internal" in (allowed_host_names("folio.internal", []) or ())
    assert "0.0.0.0" not in (allowed_host_names("0.0.0.0", ["Docs.Example:443"]) or ())
    assert "docs.example" in (allowed_host_names("0.0.0.0", ["Docs.Example:443"]) or ())
    assert allowed_host_names("::1", []) == {"localhost", "127.0.0.1", "[::1]"}


CROSS_SITE = [
    {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"},
    {"Origin": "https://evil.example"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"},  # another local app
]


@pytest.mark.parametrize("headers", CROSS_SITE)
def test_cross_site_writes_are_refused(data_copy: Path, samples: Path, headers: dict[str, str]) -> None:
    """A page on another origin POSTed a PDF with ``fetch(..., {mode: "no-cors"})`` and it was ingested."""
    with TestClient(create_app(make_settings(data_copy))) as c:
        before = c.get("/v1/documents").json()["count"]
        files = {"file": ("planted.pdf", (samples / "support-policy-v1.pdf").read_bytes(), "application/pdf")}
        assert_error(c.post("/v1/documents", files=files, headers=headers), 403, "forbidden_origin")
        assert_error(c.delete("/v1/documents/register", headers=headers), 403, "forbidden_origin")
        assert_error(c.post("/v1/context", json={"query": "x"}, headers=headers), 403, "forbidden_origin")
        assert c.get("/v1/documents").json()["count"] == before
        # Reads are not state-changing (the same-origin policy keeps their answers from the page).
        assert c.get("/v1/documents", headers=headers).status_code == 200


def test_same_origin_and_plain_clients_may_write(client: TestClient) -> None:
    body = {"query": "incident acknowledged", "k": 3}
    for headers in (
        {},  # curl, httpx: no browser headers
        {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"},  # the viewer
        {"Sec-Fetch-Site": "none"},  # typed by the user
    ):
        assert client.post("/v1/search", json=body, headers=headers).status_code == 200, headers


def test_cors_is_off_by_default_and_explicit(client: TestClient, data_copy: Path) -> None:
    preflight = {"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}
    resp = client.options("/v1/context", headers=preflight)
    assert "access-control-allow-origin" not in resp.headers
    settings = make_settings(data_copy, cors_origins=["https://app.example"])
    with TestClient(create_app(settings)) as c:
        resp = c.options("/v1/context", headers={**preflight, "Access-Control-Request-Headers": "x-api-key"})
        assert resp.status_code == 200 and resp.headers["access-control-allow-origin"] == "https://app.example"
        ok = c.post("/v1/search", json={"query": "incident", "k": 2}, headers={"Origin": "https://app.example"})
        assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == "https://app.example"
        other = c.post("/v1/search", json={"query": "incident"}, headers={"Origin": "https://evil.example"})
        assert_error(other, 403, "forbidden_origin")


def test_settings_lists_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOLIO_ALLOWED_HOSTS", "docs.example, folio.lan")
    monkeypatch.setenv("FOLIO_CORS_ORIGINS", '["https://app.example"]')
    monkeypatch.setenv("FOLIO_TOKENIZERS", '{"llama3": "/models/llama3"}')
    s = Settings()
    assert s.allowed_hosts == ["docs.example", "folio.lan"] and s.cors_origins == ["https://app.example"]
    assert s.tokenizers == {"llama3": "/models/llama3"}
    assert {"cl100k_base", "o200k_base", "llama3"} <= s.request_tokenizers()


# ----------------------------------------------------------------------------------- input bounds
HUGE_PAGE = 2**31


@pytest.mark.parametrize(
    "extra",
    [
        {"pages": [HUGE_PAGE]},
        {"pages": [0]},
        {"pages": list(range(1, 5_001))},  # 50,000 are refused by their number of values first (413)
        {"doc_ids": ["register\n"]},
        {"doc_ids": [f"d{i}" for i in range(10_000)]},
        {"versions": {"register": "abc\n"}},
        {"kinds": ["sentence"] * 100},
        {"k": 10**9},
        {"quotas": {"bogus": 1}},
        {"quotas": {"figure": 10**12}},
    ],
    ids=lambda e: next(iter(e)),
)
def test_filter_bounds_are_422(client: TestClient, extra: dict[str, Any]) -> None:
    """``"pages": [2147483648]`` was a 500 from LanceDB's filter conversion on all three endpoints."""
    body = {"query": "incident", **extra}
    assert_error(client.post("/v1/search", json=body), 422, "validation_error")
    for path, b in _context_endpoints(body):
        err = assert_error(client.post(path, json=b), 422, "validation_error")
        assert len(json.dumps(err)) < 20_000  # the answer stays small whatever was sent


@pytest.mark.parametrize(
    "extra",
    [
        {"budget": 10**30},
        {"budget": 2_000_001},
        {"context_window": 10**12},
        {"sub_questions": ["why?"] * 100},
        {"sub_questions": ["x" * 5000]},
        {"system_prompt": "x" * 100_000},
        {"window_before": 10**6},
        {"neighbors": 10**6},
        {"max_items": 10**9},
        {"render_scale": 1e308},
        {"image_tokens": {"base": 10**15}},
        {"modality_slots": {"text": 10**9}},
        {"image_url_template": "/{region_id}" + "x" * 10_000},
        {"retrieval_strategy": "x" * 1000},
        {"query": "x" * 5000},
    ],
    ids=lambda e: next(iter(e)),
)
def test_assembly_bounds_are_422(client: TestClient, extra: dict[str, Any]) -> None:
    for path, body in _context_endpoints({"query": "incident", **extra}):
        assert_error(client.post(path, json=body), 422, "validation_error")


def test_nan_and_infinity_are_422(client: TestClient) -> None:
    for raw in ('{"query": "x", "render_scale": NaN}', '{"query": "x", "score_threshold": Infinity}'):
        resp = client.post("/v1/context", content=raw, headers={"Content-Type": "application/json"})
        assert_error(resp, 422, "validation_error")


def _unbounded(schema: dict[str, Any], defs: dict[str, Any], where: str) -> list[str]:
    """Request fields with no upper bound: integers and numbers without ``maximum``, arrays without
    ``maxItems``, strings without ``maxLength``/``pattern``/``enum``, objects with free values."""
    if "$ref" in schema:
        return []  # nested models (a ContextPackage to verify) are bounded by the body size limit
    if "anyOf" in schema:
        return [w for s in schema["anyOf"] for w in _unbounded(s, defs, where)]
    kind = schema.get("type")
    out = []
    if kind in ("integer", "number") and "maximum" not in schema:
        out.append(where)
    if kind == "string" and not ({"maxLength", "pattern", "enum", "const"} & set(schema)):
        out.append(where)
    if kind == "array":
        if "maxItems" not in schema:
            out.append(where)
        out += _unbounded(schema.get("items", {}), defs, f"{where}[]")
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        if "maxProperties" not in schema and "propertyNames" not in schema:
            out.append(where)
        out += _unbounded(schema["additionalProperties"], defs, f"{where}{{}}")
    return out


def test_every_request_field_is_bounded() -> None:
    for model in (SearchRequest, ContextRequest):
        schema = model.model_json_schema()
        unbounded = [
            w
            for name, prop in schema["properties"].items()
            for w in _unbounded(prop, schema.get("$defs", {}), f"{model.__name__}.{name}")
        ]
        assert unbounded == []


def test_oversized_json_body_is_413(client: TestClient) -> None:
    body = json.dumps({"query": "x", "answer": "y" * (11 * 1024 * 1024)})
    resp = client.post("/v1/verify", content=body, headers={"Content-Type": "application/json"})
    assert_error(resp, 413, "limit_exceeded")


def test_page_image_path_bound(client: TestClient) -> None:
    doc = client.get("/v1/documents/register").json()
    resp = client.get(f"/v1/documents/register/versions/{doc['version_id']}/pages/{HUGE_PAGE}/image")
    assert_error(resp, 422, "validation_error")


def test_unknown_doc_ids_message_is_capped(client: TestClient) -> None:
    """10,000 unknown doc ids were all listed in the message."""
    ids = [f"missing-{i:04d}" for i in range(1000)]
    err = assert_error(client.post("/v1/search", json={"query": "x", "doc_ids": ids}), 404, "document_not_found")
    assert "and 995 more" in err["message"] and len(err["message"]) < 500


def test_many_validation_errors_are_capped(client: TestClient) -> None:
    err = assert_error(client.post("/v1/search", json={"query": "x", "pages": [0] * 1000}), 422, "validation_error")
    assert len(err["detail"]) <= 20 and "999 more errors" in err["message"]


def test_malformed_multipart_is_422(client: TestClient) -> None:
    resp = client.post(
        "/v1/documents",
        content=b"--x\r\nContent-Disposition: form-data; name=file\r\n\r\n%PDF",
        headers={"Content-Type": "multipart/form-data; boundary=y"},
    )
    assert resp.status_code in (413, 422), resp.text
    assert_error(resp, resp.status_code)


def test_check_doc_id_rejects_trailing_newline() -> None:
    from folio.ingest.pipeline import check_doc_id
    from folio.kernel.errors import InvalidRequest

    with pytest.raises(InvalidRequest):
        check_doc_id("register\n")


# ----------------------------------------------------------------------------- errors, request ids
def test_request_id_in_header_and_every_error(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="folio.api.http.middleware.access"):
        resp = client.get("/v1/documents/nope", headers={"X-Request-ID": "trace-42"})
    err = assert_error(resp, 404)
    assert err["request_id"] == "trace-42" == resp.headers["x-request-id"]
    line = next(r.getMessage() for r in caplog.records if "trace-42" in r.getMessage())
    assert "GET /v1/documents/nope" in line and " 404 " in line and "ms" in line
    # An insane id (too long, spaces, newlines) is replaced, not echoed.
    for bad in ("x" * 500, "a b", "a\tb"):
        resp = client.get("/v1/documents/nope", headers={"X-Request-ID": bad})
        assert resp.headers["x-request-id"] != bad and len(resp.headers["x-request-id"]) == 32
    ok = client.get("/v1/health")
    assert len(ok.headers["x-request-id"]) == 32


def _raw_requests(port: int, requests: list[bytes]) -> list[bytes]:
    """Send requests one after another on ONE keep-alive connection; the raw responses."""
    out = []
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        for req in requests:
            sock.sendall(req)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    out.append(data)
                    return out
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
            )
            while len(body) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                body += chunk
            out.append(head + b"\r\n\r\n" + body)
    return out


def test_500_keeps_the_connection_usable(data_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a 500 the server dropped the keep-alive connection without ``Connection: close`` and the
    client's next request was reset. Now the 500 is the standard body and the connection lives on."""
    import folio.api.application

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret detail /etc/shadow")

    monkeypatch.setattr(folio.api.application, "search_hits", boom)  # what Folio.search and .region call
    monkeypatch.setattr(folio.api.application, "visible_region", boom)
    body = b'{"query": "incident"}'
    search = (
        b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    region = b"GET /v1/regions/r1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    health = b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with live_server(make_settings(data_copy)) as url:
        replies = _raw_requests(int(url.rsplit(":", 1)[1]), [search, region, health])
    assert len(replies) == 3 and replies[2].startswith(b"HTTP/1.1 200"), replies
    for reply in replies[:2]:
        head, _, raw = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 500"), head
        err = json.loads(raw)["error"]
        assert err["code"] == "internal_error" and err["request_id"] and "shadow" not in err["message"]
        assert set(err) == {"code", "message", "request_id"}
