"""``POST /v1/answer`` and every model call under a hostile client or a misbehaving model (issue 20).

- A client's ``json_schema`` never fetches a URL or reads a file (a real loopback listener and a real
  temp file), is bounded in size and depth, and its patterns cannot freeze the server (ReDoS).
- Every model call has a total deadline (an endpoint that drips one byte at a time), is cancelled
  when the client leaves, and answers run under their own bound, shedding with 503 like queries.
- Replies of the wrong shape or size are clear coded errors, and no error shows the endpoint's URL.

The model is ``tests/api/llm_standin.py`` (real HTTP on loopback, scripted replies, not a model).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from tests.api.conftest import assert_error, free_port, live_server, make_settings
from tests.api.llm_standin import Reply, StandInLLM
from tests.reliability.helpers import SAMPLE

Q = "How fast must a priority-one incident be acknowledged?"
DOC = ["support-policy"]
REDOS = r"^([\w\s\[\]]*)*$"  # the issue's pattern: 94.7 s on `re` against a 30-character reply
REDOS_REGEX_TOO = r"^(a|a)*$"  # backtracks on the `regex` module as well: only its timeout ends it


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    dst = tmp_path_factory.mktemp("answer-limits") / "data"
    ingest_path(Store(dst), SAMPLE, doc_id="support-policy", ocr=False)
    return dst


@pytest.fixture(scope="module")
def llm() -> Iterator[StandInLLM]:
    with StandInLLM() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh(llm: StandInLLM) -> None:
    llm.replies.clear()
    llm.requests.clear()


@pytest.fixture(scope="module")
def ac(data: Path, llm: StandInLLM) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(data, llm_base_url=llm.url, llm_model="stand-in"))) as c:
        yield c


class Listener:
    """A loopback HTTP server that records every request and serves a schema with a secret in it."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                outer.hits.append(self.path)
                body = json.dumps({"enum": ["FETCHED-SECRET"]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def listener() -> Iterator[Listener]:
    srv = Listener()
    yield srv
    srv.close()


def _ask(ac: TestClient, **body: Any) -> Any:
    return ac.post("/v1/answer", json={"query": Q, "doc_ids": DOC, "budget": 800, **body})


def _events(text: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in text.split("\n\n"):
        lines = block.strip().splitlines()
        if lines:
            event = next(ln[7:] for ln in lines if ln.startswith("event: "))
            out.append((event, json.loads("".join(ln[6:] for ln in lines if ln.startswith("data: ")))))
    return out


# ------------------------------------------------------------------------------ json_schema: $ref, size, depth
def test_remote_and_file_refs_are_422_before_the_model_and_never_read(
    ac: TestClient, llm: StandInLLM, listener: Listener, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"enum": ["FILE-SECRET"]}))
    schemas = [
        {"$ref": f"{listener.url}/x"},
        {"type": "object", "properties": {"answer": {"$ref": f"{listener.url}/y"}}},
        {"$ref": secret.as_uri()},
        {"$defs": {"a": {"$ref": secret.as_uri()}}, "$ref": "#/$defs/a"},
        {"$id": f"{listener.url}/root.json", "properties": {"a": {"$ref": "other.json"}}},  # relative: remote too
        {"$dynamicRef": f"{listener.url}/z"},
    ]
    for schema in schemas:
        llm.replies.append(Reply('{"answer": "x"}'))
        err = assert_error(_ask(ac, json_schema=schema), 422, "validation_error")
        text = json.dumps(err)
        assert "only '#' and '#/...' references are followed" in text, text
        assert "FETCHED-SECRET" not in text and "FILE-SECRET" not in text
    assert listener.hits == [] and llm.requests == []  # nothing fetched, the model never asked


def test_the_check_itself_never_retrieves(listener: Listener, tmp_path: Path) -> None:
    """Defence in depth: ``validate`` called directly (no request check) still fetches nothing."""
    from folio.api.service.schema_check import validate

    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"enum": ["FILE-SECRET"]}))
    for schema in (
        {"$ref": f"{listener.url}/x"},
        {"$ref": secret.as_uri()},
        {"$id": f"{listener.url}/", "$ref": "#/$defs/missing"},
    ):
        errors = validate("a value", schema)
        assert errors and all("SECRET" not in e for e in errors), errors
    assert listener.hits == []


def test_local_refs_still_work(ac: TestClient, llm: StandInLLM) -> None:
    schema = {
        "$defs": {"minutes": {"type": "integer", "maximum": 60}},
        "type": "object",
        "properties": {"minutes": {"$ref": "#/$defs/minutes"}},
        "required": ["minutes"],
    }
    llm.replies.append(Reply('{"minutes": 30}'))
    assert _ask(ac, json_schema=schema).json()["structured"]["schema_valid"] is True
    llm.replies.append(Reply('{"minutes": 90}'))
    s = _ask(ac, json_schema=schema).json()["structured"]
    assert s["schema_valid"] is False and s["errors"] == ["minutes: 90 is greater than the maximum of 60"]


def test_self_reference_without_end_is_a_clear_result(ac: TestClient, llm: StandInLLM) -> None:
    llm.replies.append(Reply('{"answer": "x"}'))
    s = _ask(ac, json_schema={"allOf": [{"$ref": "#"}]}).json()["structured"]
    assert s["schema_valid"] is False and "refers to itself without end" in s["errors"][0]


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"description": "x" * 20_001}, "longer than 20000 characters"),
        (json.loads('{"items":' * 40 + "{}" + "}" * 40), "nests deeper than 32 levels"),
        ({"patternProperties": {"^a": {}}, "unevaluatedProperties": False}, "not supported"),
    ],
)
def test_schema_bounds_are_422(ac: TestClient, llm: StandInLLM, schema: dict[str, Any], message: str) -> None:
    err = assert_error(_ask(ac, json_schema=schema), 422, "validation_error")
    assert message in json.dumps(err) and llm.requests == []


# ------------------------------------------------------------------------------------------------ ReDoS
def _structured_in(url: str, schema: dict[str, Any], timeout: float = 30) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    r = httpx.post(
        f"{url}/v1/answer", json={"query": Q, "doc_ids": DOC, "budget": 800, "json_schema": schema}, timeout=timeout
    )
    assert r.status_code == 200, r.text
    return r.json()["structured"], time.monotonic() - started


def _health_while(url: str, busy: threading.Event) -> list[float]:
    """``/v1/health`` latencies, polled while ``busy`` is set."""
    out = []
    while busy.is_set():
        t = time.monotonic()
        assert httpx.get(f"{url}/v1/health", timeout=30).status_code == 200
        out.append(time.monotonic() - t)
        time.sleep(0.05)
    return out


@pytest.mark.parametrize(
    ("schema", "value", "expect"),
    [
        (
            {"type": "object", "properties": {"answer": {"type": "string", "pattern": REDOS}}},
            {"answer": "Acknowledge within 30 minutes!"},  # 30 characters
            "does not match",
        ),
        (
            {"type": "object", "properties": {"answer": {"type": "string", "pattern": REDOS_REGEX_TOO}}},
            {"answer": "a" * 29 + "!"},
            "longer than 1 s",
        ),
        (
            {"type": "object", "patternProperties": {REDOS_REGEX_TOO: {}}, "additionalProperties": False},
            {"a" * 29 + "!": 1},
            "longer than 1 s",
        ),
    ],
)
def test_catastrophic_patterns_end_fast_and_the_server_stays_up(
    data: Path, llm: StandInLLM, schema: dict[str, Any], value: dict[str, Any], expect: str
) -> None:
    settings = make_settings(data, llm_base_url=llm.url, llm_model="stand-in")
    with live_server(settings) as url:
        assert httpx.get(f"{url}/v1/health", timeout=30).status_code == 200
        llm.replies.append(Reply(json.dumps(value)))
        busy = threading.Event()
        busy.set()
        with ThreadPoolExecutor(1) as ex:
            health = ex.submit(_health_while, url, busy)
            try:
                structured, took = _structured_in(url, schema)
            finally:
                busy.clear()
            latencies = health.result()
    assert took < 8, took  # retrieval + a 1 s check, on a busy machine; `re` took 94.7 s
    assert structured["schema_valid"] is False and any(expect in e for e in structured["errors"]), structured
    assert latencies and max(latencies) < 2, latencies


def test_references_that_multiply_the_work_are_bounded() -> None:
    """anyOf over the same definition, 30 levels deep: 2**30 evaluations if nothing stops them."""
    from folio.api.service.schema_check import validate

    defs = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]} for i in range(30)}
    defs["d30"] = {"type": "null"}
    started = time.monotonic()
    errors = validate("not null", {"$defs": defs, "$ref": "#/$defs/d0"})
    assert time.monotonic() - started < 4
    assert "longer than 1 s" in errors[0]


UNIQUE = {"type": "array", "uniqueItems": True}
DISTINCT = [{"id": i, "name": f"item {i}", "tags": ["a", "b"], "at": {"page": i % 7}} for i in range(6000)]


def test_unique_items_over_6000_objects_is_checked_within_the_deadline(data: Path, llm: StandInLLM) -> None:
    """The issue's case (31): ``uniqueItems`` and 6,000 distinct objects held ``/v1/answer`` 117.5 s,
    because jsonschema compared every pair inside one keyword, where the deadline is not looked at."""
    settings = make_settings(data, llm_base_url=llm.url, llm_model="stand-in")
    with live_server(settings) as url:
        llm.replies.append(Reply(json.dumps(DISTINCT)))
        structured, took = _structured_in(url, UNIQUE, timeout=20)
    assert took < 8, took
    assert structured["schema_valid"] is True and structured["errors"] == [], structured["errors"]


@pytest.mark.parametrize(
    ("value", "schema", "expect"),
    [
        (DISTINCT + [{"at": {"page": 0}, "tags": ["a", "b"], "name": "item 0", "id": 0.0}], UNIQUE, "items 0 and 6000"),
        ([1, True, 0, False, "1", [1], {"a": 1}], UNIQUE, None),  # true is not 1, nor "1" nor [1]
        ([{"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}], UNIQUE, "items 0 and 1"),
        (list(range(50_000)), {"allOf": [{"items": {}}], "unevaluatedItems": False}, "?"),
        ([1, 2, "x"], {"prefixItems": [{}], "unevaluatedItems": False}, "items 1, 2 unexpected"),
        (
            {f"k{i}": i for i in range(50_000)},
            {"allOf": [{"additionalProperties": {}}], "unevaluatedProperties": False},
            "?",
        ),
        ({"a": 1, "b": "x"}, {"properties": {"a": {}}, "unevaluatedProperties": {"type": "integer"}}, "'b'"),
        (list(range(100_001)), {"contains": True}, "more than 100000 values"),
    ],
)
def test_keywords_whose_work_grows_with_the_value_stay_within_the_deadline(
    value: Any, schema: dict[str, Any], expect: str | None
) -> None:
    """Inside a keyword, work that grew faster than the value (every pair of items; a list searched for
    each of 50,000 indexes or keys: 20 to 30 s each before) is now linear and looks at the deadline; a
    value of over 100,000 values is not checked. ``"?"``: checked, or stopped at the deadline."""
    from folio.api.service.schema_check import validate

    started = time.monotonic()
    errors = validate(value, schema)
    assert time.monotonic() - started < 4
    if expect is None:
        assert errors == []
    elif expect == "?":
        assert errors == [] or "longer than 1 s" in errors[0], errors
    else:
        assert any(expect in e for e in errors), errors


# ----------------------------------------------------------------------------- model calls: total deadline
DRIP = Reply("a reply that arrives one byte at a time", drip=0.3)


def test_a_dripping_endpoint_is_cut_at_timeout_s(ac: TestClient, llm: StandInLLM) -> None:
    llm.replies.append(DRIP)
    started = time.monotonic()
    err = assert_error(_ask(ac, timeout_s=2), 504, "llm_timeout")
    assert time.monotonic() - started < 8 and "within 2 s" in err["message"]


def test_a_dripping_endpoint_ends_a_stream_with_an_error_event(ac: TestClient, llm: StandInLLM) -> None:
    llm.replies.append(DRIP)
    started = time.monotonic()
    with ac.stream("POST", "/v1/answer", json={"query": Q, "doc_ids": DOC, "stream": True, "timeout_s": 2}) as r:
        r.read()
    assert time.monotonic() - started < 8
    event, body = _events(r.text)[-1]
    assert event == "error" and body["error"]["code"] == "llm_timeout" and body["status"] == 504


def test_compression_and_rerank_calls_have_a_total_deadline(data: Path, llm: StandInLLM) -> None:
    from folio.api.service.compress_llm import llm_compressor
    from folio.api.service.llm import ChatClient
    from folio.kernel.errors import ModelUnavailable

    settings = make_settings(data, llm_base_url=llm.url, llm_model="stand-in")
    compress = llm_compressor(settings, timeout=1.5)
    llm.replies.append(DRIP)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        compress("question", "some text to compress", 50)
    assert time.monotonic() - started < 5
    llm.replies.append(DRIP)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as err:
        ChatClient(llm.url, "stand-in", timeout=1.5).complete([{"role": "user", "content": "rank"}])
    assert time.monotonic() - started < 5 and llm.url not in str(err.value)


def test_compression_stops_asking_when_the_package_budget_is_spent(data: Path, llm: StandInLLM) -> None:
    from folio.api.service.compress_llm import llm_compressor

    compress = llm_compressor(make_settings(data, llm_base_url=llm.url, llm_model="stand-in"), package_s=1.0)
    llm.replies.append(Reply("short", delay=0.6))
    assert compress("q", "text", 20) == "short"
    time.sleep(0.5)
    with pytest.raises(TimeoutError, match="used its 1 s"):
        compress("q", "text", 20)
    assert len(llm.requests) == 1


def test_the_blocking_stream_of_folio_ask_has_the_deadline_too(llm: StandInLLM) -> None:
    from folio.api.service.chat import AnswerClient, LLMTimeout

    llm.replies.append(DRIP)
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        list(AnswerClient(llm.url, "stand-in").stream([{"role": "user", "content": "q"}], timeout=1.5))
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("stream", [False, True])
def test_a_client_that_leaves_cancels_the_model_call(data: Path, llm: StandInLLM, stream: bool) -> None:
    settings = make_settings(data, llm_base_url=llm.url, llm_model="stand-in")
    with live_server(settings) as url:
        llm.replies.append(Reply("a slow reply", drip=0.5))
        body = {"query": Q, "doc_ids": DOC, "budget": 800, "timeout_s": 120, "stream": stream}
        with pytest.raises(httpx.ReadTimeout):
            with httpx.stream("POST", f"{url}/v1/answer", json=body, timeout=4) as r:
                for _ in r.iter_bytes():
                    pass
        assert llm.dripping == 1  # the model call was under way when the client left
        deadline = time.monotonic() + 10
        while llm.dripping and time.monotonic() < deadline:
            time.sleep(0.1)
        assert llm.dripping == 0  # folio hung up on the model, not 120 s later


# --------------------------------------------------------------------------- model calls: their own bound
def test_answers_shed_with_503_and_other_routes_stay_fast(data: Path, llm: StandInLLM) -> None:
    settings = make_settings(data, llm_base_url=llm.url, llm_model="stand-in", llm_concurrency=2, llm_queue=1)
    with live_server(settings) as url:
        llm.replies.extend(Reply("slow", delay=4) for _ in range(10))

        def ask(_: int) -> httpx.Response:
            return httpx.post(f"{url}/v1/answer", json={"query": Q, "doc_ids": DOC, "budget": 800}, timeout=60)

        with ThreadPoolExecutor(10) as ex:
            answers = [ex.submit(ask, i) for i in range(10)]
            time.sleep(1.5)
            t = time.monotonic()
            assert httpx.get(f"{url}/v1/documents", timeout=30).status_code == 200
            documents_took = time.monotonic() - t
            results = [f.result() for f in answers]
    statuses = sorted(r.status_code for r in results)
    assert statuses.count(200) == 3 and statuses.count(503) == 7, statuses
    shed = next(r for r in results if r.status_code == 503)
    err = assert_error(shed, 503, "overloaded")
    assert shed.headers["retry-after"] == "1" and "2 model calls running and 1 waiting" in err["message"]
    assert documents_took < 1.5, documents_took


# -------------------------------------------------------------------------- replies of the wrong shape or size
DEEP = "[" * 200_000 + "]" * 200_000


@pytest.mark.parametrize(
    "reply",
    [
        Reply(raw=DEEP),
        Reply(raw=json.dumps({"choices": [{"message": {"content": "hi"}, "finish_reason": {"why": "stop"}}]})),
        Reply(raw=json.dumps({"choices": 5})),
        Reply("x" * 1_100_000),  # more text than any completion
        Reply("short", pad=17 * 1024 * 1024),  # a 17 MB body
    ],
)
def test_a_reply_of_the_wrong_shape_or_size_is_a_502(ac: TestClient, llm: StandInLLM, reply: Reply) -> None:
    llm.replies.append(reply)
    r = _ask(ac)
    assert_error(r, 502, "llm_upstream_error")
    assert len(r.content) < 5000


@pytest.mark.parametrize(
    "reply",
    [
        Reply(raw_stream="data: " + DEEP + "\n\n"),
        Reply(raw_stream='data: {"choices": 5}\n\n'),
        Reply(raw_stream='data: {"choices": [{"delta": {"content": "hi"}, "finish_reason": {"a": 1}}]}\n\n'),
        Reply(raw=json.dumps({"choices": [{"message": {"content": "hi"}, "finish_reason": {"why": "stop"}}]})),
    ],
)
def test_a_stream_of_the_wrong_shape_ends_with_an_error_event(ac: TestClient, llm: StandInLLM, reply: Reply) -> None:
    llm.replies.append(reply)
    with ac.stream("POST", "/v1/answer", json={"query": Q, "doc_ids": DOC, "stream": True}) as r:
        r.read()
    event, body = _events(r.text)[-1]
    assert event == "error" and body["error"]["code"] == "llm_upstream_error" and body["status"] == 502, body


def test_a_structured_reply_nested_too_deep_is_reported_not_a_500(ac: TestClient, llm: StandInLLM) -> None:
    for content in ("[" * 5000 + "]" * 5000, "[" * 500 + "]" * 500):
        llm.replies.append(Reply(content))
        s = _ask(ac, response_format="json").json()["structured"]
        assert s["json_valid"] is False and s["value"] is None and s["errors"], s


# ----------------------------------------------------------------------------------- the endpoint stays hidden
def test_errors_and_notes_do_not_show_the_endpoint(data: Path) -> None:
    port = free_port()  # nothing listens there
    settings = make_settings(data, llm_base_url=f"http://127.0.0.1:{port}/v1", llm_model="stand-in")
    with TestClient(create_app(settings)) as c:
        r = c.post("/v1/answer", json={"query": Q, "doc_ids": DOC})
        assert_error(r, 502, "llm_upstream_error")
        ctx = c.post(  # at this budget a span ranked below the page is left to compression (as in test_compress_llm)
            "/v1/context", json={"query": Q, "doc_ids": DOC, "compress": "llm", "budget": 280, "compress_share": 0.3,
                                 "page_render": "stored"}  # compact, the page leaves no tail to compress
        )
        assert ctx.status_code == 200
        notes = json.dumps(ctx.json()["retrieval"])
        assert "failed" in notes  # the reranker (and compression) said why they fell back
    for text in (r.text, ctx.text):
        # the port as a number of its own: its digits may occur inside a score (0.0401987694425558 held 42555)
        assert not re.search(rf"(?<![\d.]){port}(?!\d)", text) and "127.0.0.1" not in text


def test_an_upstream_error_that_echoes_the_address_or_the_key_shows_neither(data: Path, llm: StandInLLM) -> None:
    """An endpoint's error may echo its address in any spelling (``HTTP://`` upper case, ``localhost``,
    ``host:port``) and the key it was sent: none of them reaches the client (issue 31)."""
    key = "sk-secret-4f1c9a7e"
    port = llm.url.split(":")[2].split("/")[0]
    echo = (
        f"upstream {llm.url.upper()}/chat/completions failed; retry at localhost:{port}, 127.0.0.1:{port} "
        f"or [::1]:{port} with Authorization: Bearer {key} (key {key})"
    )
    replies = [
        Reply(status=500, raw=json.dumps({"error": echo})),  # an error status
        Reply(raw="<html>" + echo + "</html>"),  # 200 but not JSON
        Reply(raw_stream="data: " + json.dumps({"error": {"message": echo}}) + "\n\n"),  # an error in a stream
    ]
    settings = make_settings(data, llm_base_url=llm.url, llm_model="stand-in", llm_api_key=key)
    with TestClient(create_app(settings)) as c:
        for reply in replies:
            llm.replies.append(reply)
            r = _ask(c)
            if r.status_code == 200:  # the stream reply to a non-streaming call: a 200 whose body is events
                text = r.text
            else:
                text = assert_error(r, 502, "llm_upstream_error")["message"]
            assert "the LLM endpoint" in text, text
            for secret in (port, "127.0.0.1", "localhost", "::1", key, "secret-4f1c"):
                assert secret.lower() not in text.lower(), (secret, text)
        llm.replies.append(replies[2])
        with c.stream("POST", "/v1/answer", json={"query": Q, "doc_ids": DOC, "stream": True}) as s:
            s.read()
        event, body = _events(s.text)[-1]
        assert event == "error" and body["error"]["code"] == "llm_upstream_error", body
        for secret in (port, "127.0.0.1", "localhost", key):
            assert secret not in body["error"]["message"], (secret, body)


def _compressed(encoding: str, mib: int, tail: bytes = b"") -> bytes:
    """``mib`` MiB of spaces then ``tail``, compressed a block at a time (a few KB: never held whole)."""
    import zlib

    import zstandard

    block = b" " * (1 << 20)
    if encoding == "zstd":
        z = zstandard.ZstdCompressor().compressobj()
        return b"".join(z.compress(block) for _ in range(mib)) + z.compress(tail) + z.flush()
    g = zlib.compressobj(6, zlib.DEFLATED, 31 if encoding == "gzip" else 15)  # deflate: zlib-wrapped
    return b"".join(g.compress(block) for _ in range(mib)) + g.compress(tail) + g.flush()


@pytest.mark.parametrize(
    ("encoding", "mib", "why"), [("zstd", 256, "Content-Encoding"), ("gzip", 64, "over the limit")]
)
def test_a_compressed_reply_is_never_expanded_past_the_cap(llm: StandInLLM, encoding: str, mib: int, why: str) -> None:
    """A small compressed reply that expands a thousandfold (6.4 KB of zstd cost 400 MB, issue 31) is
    stopped while it is decoded: gzip at the reply cap, an encoding folio did not ask for at once."""
    import tracemalloc

    from folio.api.service.llm import ChatClient
    from folio.api.service.llm_http import LLMUpstreamError

    bomb = _compressed(encoding, mib)
    assert len(bomb) < 300_000
    client = ChatClient(llm.url, "stand-in")
    llm.replies.append(Reply(encoded=bomb, encoding=encoding))
    tracemalloc.start()
    try:
        with pytest.raises(LLMUpstreamError) as e:
            client.chat([{"role": "user", "content": "hi"}], timeout=30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert why in str(e.value), e.value
    assert peak < 40 * 1024 * 1024, f"{peak / 2**20:.0f} MiB held while reading a {len(bomb)}-byte reply"
    assert llm.requests[-1]["accept_encoding"] == "gzip, deflate"


def test_a_compressed_reply_of_normal_size_still_reads(llm: StandInLLM, ac: TestClient) -> None:
    from folio.api.service.llm import ChatClient

    completion = json.dumps({"choices": [{"message": {"content": "fine"}, "finish_reason": "stop"}]}).encode()
    for encoding in ("gzip", "deflate"):
        llm.replies.append(Reply(encoded=_compressed(encoding, 1, completion), encoding=encoding))
        assert ChatClient(llm.url, "stand-in").chat([{"role": "user", "content": "hi"}]).text == "fine"
    llm.replies.append(Reply(encoded=_compressed("zstd", 64), encoding="zstd"))
    assert_error(_ask(ac), 502, "llm_upstream_error")
