"""JSON bodies are measured before anything parses them (issue 31, items 5 and 13).

Each test fails on c427992: there a 9.3 MB body of 500,000 keys was parsed in full by every JSON route
(seconds holding the interpreter lock, and ``/v1/health`` with it), and a deeply nested body over 64 KB
was a 500 (``RecursionError``). Now a body past its route's limits (``api.http.body_limits``) is refused
with 413 or 400 before it is parsed, and with query processes a large body is parsed only in the worker
process that runs the query. The load figures are ``benchmarks/bench_api.py --bodies``; the tests here
assert behaviour, not timings.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from folio.api.http.app import create_app
from folio.api.http.body_limits import LARGE_BODY_MEMBERS, MAX_DEPTH, SMALL_BODY_BYTES, SMALL_BODY_MEMBERS, json_shape
from folio.assembly import AssemblyOptions, assemble
from folio.kernel.index import RegionIndex
from tests.api.conftest import assert_error, folio_serve, live_server, make_settings
from tests.assembly.builders import by_kind, hit, make_doc

JSON_ROUTES = ["/v1/search", "/v1/context", "/v1/verify", "/v1/answer", "/mcp"]
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def empty_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    data = tmp_path_factory.mktemp("body-limits") / "data"
    with TestClient(create_app(make_settings(data))) as c:
        yield c


def _many_keys(n: int = 500_000) -> bytes:
    """The body of the report: ``{"query": "q", "json_schema": {500,000 keys}}``, 9.3 MB."""
    keys = ",".join(f'"k{i:06d}":{i}' for i in range(n))
    return b'{"query":"q","json_schema":{' + keys.encode() + b"}}"


def _nested(depth: int) -> bytes:
    """A request object nested ``depth`` levels in all (itself the first)."""
    return b'{"query": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


# ------------------------------------------------------------------------------------ json_shape


def _exact(value: Any, level: int = 0) -> tuple[int, int]:
    """(members, depth) by walking the parsed value: members are array elements and object members."""
    if isinstance(value, dict | list):
        children = list(value.values()) if isinstance(value, dict) else value
        inner = [_exact(c, level + 1) for c in children]
        return len(children) + sum(m for m, _ in inner), max([level + 1] + [d for _, d in inner])
    return 0, level


_TEXT = st.text(alphabet=st.sampled_from(list('ab"\\[]{},: \n\u00e9\u2028')), max_size=12)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.booleans())
def test_json_shape_counts_what_lies_outside_strings(value: Any, ascii_only: bool) -> None:
    """Quotes, backslashes and brackets inside strings never count; the depth is exact and the members
    are at least the real ones (one more for each empty array or object)."""
    body = json.dumps(value, ensure_ascii=ascii_only).encode()
    shape = json_shape(body)
    members, depth = _exact(value)
    assert shape.depth == depth
    assert members <= shape.members <= members + body.count(b"[]") + body.count(b"{}") + 1


# ---------------------------------------------------------------------------- item 13: deep nesting


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 40_000, 200_000])
@pytest.mark.parametrize("path", JSON_ROUTES)
def test_a_deeply_nested_body_is_a_400_at_any_size(empty_client: TestClient, path: str, depth: int) -> None:
    """On c427992 a nested body over 64 KB got a 500 (RecursionError on the query pool); under it, a 400
    that did not say why."""
    resp = empty_client.post(path, content=_nested(depth), headers=HEADERS)
    err = assert_error(resp, 400, "bad_request")
    assert f"nests JSON {depth} levels deep, over the limit of {MAX_DEPTH}" in str(err["message"])


def test_nesting_within_the_limit_reaches_the_route(empty_client: TestClient) -> None:
    resp = empty_client.post("/v1/search", content=_nested(MAX_DEPTH - 1), headers=HEADERS)
    assert_error(resp, 422, "validation_error")  # a list is no query string: the model said so
    deep_string = {"query": "[" * 100_000}  # brackets in a string are text, not nesting
    assert empty_client.post("/v1/search", json=deep_string).status_code == 422  # over max_length


# ----------------------------------------------------------------------------- item 5: large bodies


@pytest.mark.parametrize("path", ["/v1/search", "/v1/context", "/v1/answer"])
def test_small_routes_refuse_a_body_over_one_mib(empty_client: TestClient, path: str) -> None:
    body = json.dumps({"query": "q", "doc_ids": ["d" * 100] * 12_000}).encode()
    assert SMALL_BODY_BYTES < len(body) < 10 * 1024 * 1024
    err = assert_error(empty_client.post(path, content=body, headers=HEADERS), 413, "limit_exceeded")
    assert f"over the limit of {SMALL_BODY_BYTES} bytes for {path}" in str(err["message"])


def test_mcp_takes_a_large_body_of_few_values_only(empty_client: TestClient) -> None:
    """``/mcp`` carries the ingest tool's PDF (one base64 string): up to ``FOLIO_MAX_REQUEST_BYTES``, but no more
    values than any small body (issue 48)."""
    many = json.dumps({"query": "q", "doc_ids": ["d"] * (SMALL_BODY_MEMBERS + 10)}).encode()
    assert len(many) < SMALL_BODY_BYTES
    err = assert_error(empty_client.post("/mcp", content=many, headers=HEADERS), 413, "limit_exceeded")
    assert f"over the limit of {SMALL_BODY_MEMBERS} for /mcp" in str(err["message"])
    huge = json.dumps({"pdf": "A" * (10 * 1024 * 1024)}).encode()
    err = assert_error(empty_client.post("/mcp", content=huge, headers=HEADERS), 413, "limit_exceeded")
    assert f"over the limit of {10 * 1024 * 1024} bytes" in str(err["message"])
    one_string = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": "A" * 2_000_000}})
    assert empty_client.post("/mcp", content=one_string, headers=HEADERS).status_code != 413  # past the guard


def test_verify_refuses_a_package_of_too_many_values(empty_client: TestClient) -> None:
    boxes = [[0, 0, 1, 1]] * 300
    item = {"citation_id": "S1", "locators": [{"page": 1, "bbox": [0, 0, 1, 1], "line_boxes": boxes}]}
    body = json.dumps({"answer": "a [S1].", "package": {"query": "q", "items": [item] * 500}}).encode()
    assert json_shape(body).members > LARGE_BODY_MEMBERS and len(body) < 10 * 1024 * 1024
    err = assert_error(empty_client.post("/v1/verify", content=body, headers=HEADERS), 413, "limit_exceeded")
    assert f"over the limit of {LARGE_BODY_MEMBERS} for /v1/verify" in str(err["message"])


def _health_while(url: str, send: Any) -> tuple[httpx.Response, list[int]]:
    """``send()``'s response, and the statuses of ``/v1/health`` polled while it ran."""
    statuses: list[int] = []
    done = threading.Event()

    def poll() -> None:
        with httpx.Client(timeout=60) as c:
            while True:  # at least once: a refusal can come before the first poll
                statuses.append(c.get(f"{url}/v1/health").status_code)
                if done.wait(0.02):
                    return

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        resp: httpx.Response = send()
    finally:
        done.set()
        poller.join()
    return resp, statuses


def test_the_500k_key_body_is_refused_on_every_route_before_it_is_parsed(tmp_path: Path) -> None:
    """The report's 9.3 MB body took 4.2 s per request on /v1/answer. Now it is a 413 on every JSON route
    (the byte limit of the small routes, the value limit of /v1/verify), and health is answered meanwhile."""
    body = _many_keys()
    with live_server(make_settings(tmp_path / "data")) as url, httpx.Client(timeout=120) as c:
        for path in JSON_ROUTES:
            for chunked in (False, True):  # with and without Content-Length
                content: Any = iter([body[i : i + 65536] for i in range(0, len(body), 65536)]) if chunked else body
                resp, health = _health_while(
                    url, lambda p=path, b=content: c.post(f"{url}{p}", content=b, headers=HEADERS)
                )
                assert_error(resp, 413, "limit_exceeded")
                assert set(health) == {200}, (path, health)


@pytest.mark.slow
def test_folio_serve_parses_a_large_query_body_in_the_worker_process(tmp_path: Path) -> None:
    """With query processes, a large /v1/verify body is parsed only in the worker process that runs the
    query: a valid one is answered as a thread would answer it, an invalid one gets the same 422."""
    sentences = [f"Rule {n}: incidents of class {n} are acknowledged within {n} minutes." for n in range(400)]
    regs = make_doc("rules", [("Rules", [sentences])])
    hits = [hit(r, 1.0 / (n + 1), n + 1) for n, r in enumerate(by_kind(regs, "sentence"))]
    packed = assemble("acknowledged?", hits, RegionIndex(regs), AssemblyOptions(budget=100_000))
    package = packed.model_dump(mode="json")
    valid = json.dumps({"answer": "Class 7 is acknowledged within 7 minutes [S1].", "package": package}).encode()
    invalid = json.dumps({"answer": "a", "package": {**package, "items": [{"pages": ["x"]}]}, "x": 1}).encode()
    assert min(len(valid), len(invalid)) > 64 * 1024  # over OFF_LOOP_BYTES: passed on to the worker unparsed
    with TestClient(create_app(make_settings(tmp_path / "threads"))) as c:  # threads: FastAPI validates
        expected = [c.post("/v1/verify", content=b, headers=HEADERS) for b in (valid, invalid)]
    env = {**os.environ, "FOLIO_DATA": str(tmp_path / "data"), "FOLIO_OCR": "0", "FOLIO_QUERY_PROCESSES": "1"}
    with open(tmp_path / "serve.log", "wb") as log:
        proc, url = folio_serve(env, log)
        try:
            with httpx.Client(timeout=120) as c:
                got = [c.post(f"{url}/v1/verify", content=b, headers=HEADERS) for b in (valid, invalid)]
                refused, health = _health_while(
                    url, lambda: c.post(f"{url}/v1/answer", content=_many_keys(), headers=HEADERS)
                )
        finally:
            proc.terminate()
            proc.wait(30)
    assert got[0].status_code == expected[0].status_code == 200, got[0].text
    assert got[0].json() == expected[0].json()
    err = assert_error(got[1], 422, "validation_error")
    assert err["message"] == expected[1].json()["error"]["message"]
    assert err["detail"] == expected[1].json()["error"]["detail"]
    assert_error(refused, 413, "limit_exceeded")
    assert set(health) == {200}
