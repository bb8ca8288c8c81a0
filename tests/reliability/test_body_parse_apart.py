"""A large JSON body is parsed in another process, with query threads too (issue 44, item 10).

With ``FOLIO_QUERY_PROCESSES=0`` a large ``/v1/verify`` body was parsed and validated on a query thread of the
server process: ``json.loads`` and pydantic-core hold the interpreter lock for the whole call, and a 6 MB
package with 250,000 bad values held ``/v1/health`` for 0.9 s (``benchmarks/bench_body_health.py``). Now it
is parsed in a body-parsing process (``api.http.offloop.parse_apart``, ``QueryPool.parse``), a package is
verified there, and the answers are FastAPI's own, byte for byte where they are JSON.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from fastapi.testclient import TestClient

from folio.api.errors import InvalidBody
from folio.api.http import offloop, query_worker
from folio.api.http.app import create_app
from folio.api.http.body_limits import LARGE_BODY_MEMBERS, json_shape
from folio.assembly import AssemblyOptions, assemble
from folio.kernel.index import RegionIndex
from tests.api.conftest import assert_error, folio_serve, make_settings
from tests.assembly.builders import by_kind, hit, make_doc

HEADERS = {"Content-Type": "application/json"}
HEALTH_BOUND_S = 0.3  # before: 0.9 s on an idle 2-core machine; after: under 20 ms


def _package() -> dict[str, Any]:
    sentences = [f"Rule {n}: incidents of class {n} are acknowledged within {n} minutes." for n in range(40)]
    regs = make_doc("rules", [("Rules", [sentences])])
    hits = [hit(r, 1.0 / (n + 1), n + 1) for n, r in enumerate(by_kind(regs, "sentence"))]
    package = assemble("acknowledged?", hits, RegionIndex(regs), AssemblyOptions(budget=100_000))
    return package.model_dump(mode="json")


def _dense(package: dict[str, Any], box: list[Any]) -> bytes:
    """A verify body of about 6 MB: 1,000 copies of the package's first item, each with 80 line boxes ``box``:
    about 420,000 JSON values, under the route's limit."""
    first = package["items"][0]
    item = {**first, "text": first["text"][:2000], "trigger_ids": first["trigger_ids"][:3],
            "locators": [{**first["locators"][0], "line_boxes": [box] * 80}]}  # fmt: skip
    body = {"answer": "Class 7 is acknowledged within 7 minutes [S1].", "package": {**package, "items": [item] * 1000}}
    return json.dumps(body).encode()


@pytest.fixture(scope="module")
def bodies() -> dict[str, bytes]:
    package = _package()
    out = {
        "valid": _dense(package, [72.02, 101.33, 540.22, 112.88]),
        "words": _dense(package, ["left", "top", "right", "base"]),
    }
    for body in out.values():
        assert 5_000_000 < len(body) < 7_000_000 and json_shape(body).members < LARGE_BODY_MEMBERS
    return out


def _fastapi_answers(data: Path, bodies: dict[str, bytes], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What FastAPI's own path answers each body (validated inline: the off-loop threshold out of reach)."""
    with monkeypatch.context() as m, TestClient(create_app(make_settings(data))) as c:
        m.setattr(offloop, "OFF_LOOP_BYTES", 1 << 30)
        return {name: c.post("/v1/verify", content=body, headers=HEADERS) for name, body in bodies.items()}


def _health_during(url: str, body: bytes) -> tuple[httpx.Response, list[float]]:
    """The answer to ``body`` on ``/v1/verify``, and the seconds of each ``/v1/health`` asked every 50 ms
    while it was sent and handled."""
    answer: list[httpx.Response] = []
    sender = threading.Thread(target=lambda: answer.append(httpx.post(f"{url}/v1/verify", content=body,
                                                                      headers=HEADERS, timeout=120)))  # fmt: skip
    took: list[float] = []
    with httpx.Client(timeout=60) as c:
        sender.start()
        while sender.is_alive() or len(took) < 5:
            t0 = time.perf_counter()
            assert c.get(f"{url}/v1/health").status_code == 200
            took.append(time.perf_counter() - t0)
            time.sleep(0.05)
    sender.join()
    return answer[0], took


def _spawned(pid: int) -> dict[int, psutil.Process]:
    """``pid``'s children that multiprocessing spawned to run work, by process id."""
    return {p.pid: p for p in psutil.Process(pid).children() if "spawn_main" in " ".join(p.cmdline())}


@pytest.mark.slow
def test_folio_serve_with_query_threads_parses_a_large_body_apart(
    tmp_path: Path, bodies: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _fastapi_answers(tmp_path / "inline", bodies, monkeypatch)
    env = {**os.environ, "FOLIO_DATA": str(tmp_path / "data"), "FOLIO_OCR": "0", "FOLIO_QUERY_PROCESSES": "0"}
    with open(tmp_path / "serve.log", "wb") as log:
        proc, url = folio_serve(env, log)
        try:
            before = list(_spawned(proc.pid))  # the parsing process starts with the first large body
            got = {name: _health_during(url, body) for name, body in bodies.items()}
            after = list(_spawned(proc.pid))
        finally:
            proc.terminate()
            proc.wait(30)
    assert before == [] and len(after) == 1, (before, after)
    valid, health_valid = got["valid"]
    assert valid.status_code == expected["valid"].status_code == 200, valid.text
    assert valid.content == expected["valid"].content
    words, health_words = got["words"]
    err = assert_error(words, 422, "validation_error")
    want = expected["words"].json()["error"]
    assert (err["message"], err["detail"]) == (want["message"], want["detail"])
    assert "(and " in str(err["message"])  # 250,000 errors: the count, the first ones in detail
    for took in (health_valid, health_words):
        assert max(took) < HEALTH_BOUND_S, [round(t, 3) for t in took]


def test_a_large_body_with_query_threads_is_parsed_in_another_process(tmp_path: Path) -> None:
    """Not on a thread of the server process: in a child process, started by the first large body; one that
    was killed is a 503 once, then replaced."""
    body = json.dumps({"answer": "Class 7 is acknowledged within 7 minutes [S1].", "package": _package()}).encode()
    body = body[:-1] + b" " * 70_000 + b"}"  # over OFF_LOOP_BYTES
    with TestClient(create_app(make_settings(tmp_path / "data"))) as c:
        me = os.getpid()
        before = _spawned(me)  # (a session-wide app of another module may have its own)
        first = c.post("/v1/verify", content=body, headers=HEADERS)
        assert first.status_code == 200, first.text
        started = {pid: p for pid, p in _spawned(me).items() if pid not in before}
        assert len(started) == 1, started
        (parser,) = started.values()
        parser.kill()
        parser.wait(10)
        killed = c.post("/v1/verify", content=body, headers=HEADERS)
        assert_error(killed, 503, "overloaded")
        assert "retry-after" in killed.headers
        again = c.post("/v1/verify", content=body, headers=HEADERS)
        assert again.status_code == 200 and again.content == first.content
        assert len([pid for pid in _spawned(me) if pid not in before]) == 1


def test_a_worker_process_suggests_a_near_field_as_the_server_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A misspelt field in a body validated in a query worker process gets the "did you mean" that FastAPI's
    path gives (api.errors.validation_message with the body's model)."""
    body = b'{"answr": "a", "package": null}'
    with TestClient(create_app(make_settings(tmp_path / "data"))) as c:
        want = c.post("/v1/verify", content=body, headers=HEADERS).json()["error"]
    monkeypatch.setattr(query_worker, "_FOLIO", object())
    with pytest.raises(InvalidBody) as e:
        query_worker.call("verify", body, None)
    assert "did you mean 'answer'?" in json.dumps(want["detail"])
    assert (str(e.value), e.value.detail) == (want["message"], want["detail"])
