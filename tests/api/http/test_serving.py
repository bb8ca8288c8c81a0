"""Serving under load: caches that outlive a request but not a commit, and a health probe that
never waits behind query work (issue 9); a server's start and stop (issues 31 and 34). No timings here:
tests/reliability/test_load.py and benchmarks/bench_api.py measure those."""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from folio.api.service.context import version_filenames
from tests.api.conftest import assert_error, make_settings


def test_region_source_and_file_names_live_until_a_commit(data_copy: Path, samples: Path) -> None:
    from folio.assembly.expansion.structure import _cache_for
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store
    from folio.retrieval.search import Retriever

    store = Store(data_copy)
    retriever = Retriever(store)
    pairs = [(v.doc_id, v.version_id) for v in store.list_versions() if v.latest]
    first = retriever.source_for(pairs)
    assert retriever.source_for(list(reversed(pairs))) is first  # same versions, same source
    assert _cache_for(retriever.source_for(pairs)) is _cache_for(first)  # assembly's views survive
    names = version_filenames(store)
    assert version_filenames(store) is names

    ingest_path(store, samples / "R-data-import-export.pdf", doc_id="rdata", ocr=False)
    after = retriever.source_for(pairs)
    assert after is not first  # the versions table moved: nothing cached before it is reused
    assert after.get(pairs[0][0]) == first.get(pairs[0][0])
    new_names = version_filenames(store)
    assert new_names is not names
    assert "R-data-import-export.pdf" in new_names.values()
    assert "R-data-import-export.pdf" not in names.values()


def test_health_answers_while_every_query_worker_is_busy(
    data_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from folio.api.http import query_ops

    release = threading.Event()
    started = threading.Event()
    model, real = query_ops.OPS["context"]

    def slow_context(*args: object, **kwargs: object) -> object:
        started.set()
        release.wait(30)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setitem(query_ops.OPS, "context", (model, slow_context))
    app = create_app(make_settings(data_copy, query_workers=1, query_queue=0))
    with TestClient(app) as client:
        body = {"query": "How fast must a P1 incident be acknowledged?", "budget": 600}
        results: list[int] = []
        busy = threading.Thread(target=lambda: results.append(client.post("/v1/context", json=body).status_code))
        busy.start()
        try:
            assert started.wait(30)
            assert client.get("/v1/health").status_code == 200  # the one worker is blocked
            shed = client.post("/v1/context", json=body)
            assert shed.status_code == 503
            assert shed.json()["error"]["code"] == "overloaded"
            assert int(shed.headers["retry-after"]) >= 1
            junk = client.post("/v1/context", content=b"{not json",  # shed before its body is read (ShedQueries)
                               headers={"content-type": "application/json", "x-request-id": "shed-1"})
            assert junk.status_code == 503 and junk.headers["x-request-id"] == "shed-1"
            assert junk.json()["error"] == {**shed.json()["error"], "request_id": "shed-1"}
        finally:
            release.set()
            busy.join(60)
        assert results == [200]
        assert client.post("/v1/context", json=body).status_code == 200  # the worker is free again
        assert client.post("/v1/context", content=b"{not json",
                           headers={"content-type": "application/json"}).status_code in (400, 422)


def test_query_processes_answer_like_the_threads(data_copy: Path) -> None:
    """``query_processes``: search, context and verify run in worker processes with their own store
    handle; answers are the same as the in-process threads', errors cross back as the API's errors,
    and a version ingested by the server after the workers started is visible to them."""
    from tests.api.conftest import assert_error

    body = {"query": "How fast must a P1 incident be acknowledged?", "budget": 600}
    with TestClient(create_app(make_settings(data_copy))) as client:
        threads = client.post("/v1/context", json=body).json()
        hits = client.post("/v1/search", json={"query": body["query"]}).json()
    with TestClient(create_app(make_settings(data_copy, query_processes=1, query_workers=1))) as client:
        pool = client.app.state.query_pool  # type: ignore[attr-defined]
        assert pool.processes is not None
        got = client.post("/v1/context", json=body).json()
        assert got["items"] and got["prompt"] == threads["prompt"] and got["budget"] == threads["budget"]
        assert client.post("/v1/search", json={"query": body["query"]}).json() == hits
        assert_error(client.post("/v1/context", json={**body, "doc_ids": ["no-such-doc"]}), 404, "document_not_found")
        verify = {"answer": "Within 15 minutes [S1].", "context_request": body}
        assert client.post("/v1/verify", json=verify).status_code == 200
        assert client.get("/v1/health").status_code == 200
        up = client.post("/v1/documents", files={"file": ("care.pdf", _one_page_pdf())}, data={"doc_id": "care"},
                         params={"wait": "true"})
        assert up.status_code in (200, 201), up.text
        found = client.post("/v1/search", json={"query": "coolant flush interval", "doc_ids": ["care"]}).json()
        assert found["count"] > 0 and {h["doc_id"] for h in found["data"]} == {"care"}


def _one_page_pdf() -> bytes:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Maintenance", fontsize=16)
    page.insert_text((72, 110), "The coolant flush is due every 2000 hours of operation.", fontsize=11)
    data: bytes = doc.tobytes()
    return data


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc (Linux)")
def test_query_workers_leave_with_the_server(tmp_path: Path) -> None:
    """``folio serve`` stopped with SIGTERM used to leave its query worker processes running,
    reparented to PID 1, each holding its models and a store handle."""
    import os
    import signal
    import subprocess
    import time

    import httpx

    from tests.api.conftest import folio_serve

    env = {**os.environ, "FOLIO_QUERY_PROCESSES": "2", "FOLIO_OCR": "false"}
    server, url = folio_serve(env, subprocess.DEVNULL, "--data", str(tmp_path / "data"))
    try:
        r = httpx.post(f"{url}/v1/context", json={"query": "anything"}, timeout=60)
        assert r.status_code == 200  # the workers answer (an empty store: a refusal package)
        workers = [p for p in _children(server.pid) if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text()]
        assert len(workers) == 2
        server.send_signal(signal.SIGTERM)
        server.wait(60)
        deadline = time.monotonic() + 20
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [p for p in workers if _alive(p)], "query workers outlived the server"
    finally:
        if server.poll() is None:
            server.kill()


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _start_serve(data: Path, env: dict[str, str], out: Path) -> tuple[Any, str]:
    """``folio serve`` on ``data`` as its own process, not waited for: the process and its URL (stdout to ``out``)."""
    import subprocess
    import sys

    from tests.api.conftest import free_port

    port = free_port()
    with out.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "folio.api.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
             "--data", str(data)],
            env=env, cwd=Path(__file__).resolve().parents[3], stdout=log, stderr=subprocess.DEVNULL,
        )
    return proc, f"http://127.0.0.1:{port}"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc (Linux)")
def test_a_server_stopped_while_it_starts_leaves_no_process_behind(data_copy: Path, tmp_path: Path) -> None:
    """Issue 31, item 6: SIGTERM after the query workers were spawned and before the server was ready: the server
    exited, but both query workers (still loading) and the resource tracker ran on as orphans."""
    import os
    import signal
    import time

    import httpx

    env = {**os.environ, "FOLIO_QUERY_PROCESSES": "2", "FOLIO_OCR": "false"}
    server, url = _start_serve(data_copy, env, tmp_path / "serve.out")
    family: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while len([p for p in _children(server.pid) if "spawn_main" in _cmdline(p)]) < 2:
            assert server.poll() is None and time.monotonic() < deadline, "folio serve spawned no query workers"
            time.sleep(0.05)
        family = set(_children(server.pid))
        family |= {grandchild for child in family for grandchild in _children(child)}
        with contextlib.suppress(httpx.TransportError):
            assert httpx.get(f"{url}/v1/ready", timeout=5).status_code != 200  # still starting: the case at hand
        server.send_signal(signal.SIGTERM)
        server.wait(60)
        deadline = time.monotonic() + 20
        while any(_alive(p) for p in family) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = {p: _cmdline(p)[:120] for p in family if _alive(p)}
        assert not left, f"processes outlived a server stopped while starting: {left}"
    finally:
        if server.poll() is None:
            server.kill()
        for p in family:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)


@pytest.mark.slow
def test_serve_is_alive_at_once_says_when_it_is_ready_and_commands_ask_it(data_copy: Path, tmp_path: Path) -> None:
    """Issue 34, item 3: ``folio serve`` said "serving at" seconds before ``/v1/health`` answered, and nothing said
    when a query would be fast. Now health answers at once with the state, ``/v1/ready`` is a 503 until the models
    are loaded and warmed, a "ready" line goes to stdout, and (item 2) commands on the data directory ask it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import httpx

    env = {k: v for k, v in os.environ.items() if k not in ("FOLIO_URL", "FOLIO_API_KEY")}
    env |= {"FOLIO_QUERY_PROCESSES": "1", "FOLIO_OCR": "false"}
    out = tmp_path / "serve.out"
    server, url = _start_serve(data_copy, env, out)
    seen: list[tuple[str, int]] = []
    try:
        deadline = time.monotonic() + 180
        while not seen or seen[-1] != ("ready", 200):
            assert server.poll() is None and time.monotonic() < deadline, (seen[-3:], out.read_text())
            try:
                health = httpx.get(f"{url}/v1/health", timeout=5)
                ready = httpx.get(f"{url}/v1/ready", timeout=5)
            except httpx.TransportError:  # the port is not open yet (Python's imports)
                time.sleep(0.1)
                continue
            assert health.status_code == 200
            seen.append((health.json()["state"], ready.status_code))
            if ready.status_code == 503:
                assert_error(ready, 503, "not_ready")
                assert ready.headers["Retry-After"] == "2"
            time.sleep(0.1)
        assert ("starting", 503) in seen, seen  # alive while it loaded, and not ready
        deadline = time.monotonic() + 10
        while "folio: ready at" not in out.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert out.read_text().startswith(f"folio: ready at {url}/ after "), out.read_text()
        instance = httpx.get(f"{url}/v1/health", timeout=5).json()["instance"]
        announced = json.loads((data_copy / "server.json").read_text())
        assert announced == {"url": url, "pid": server.pid, "instance": instance, "secret": announced["secret"]}
        assert len(announced["secret"]) == 64 and (data_copy / "server.json").stat().st_mode & 0o777 == 0o600

        def context(*extra: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "folio.api.cli", "context", "P1 acknowledgement",
                                   "--data", str(data_copy), "--json", *extra],
                                  capture_output=True, text=True, env=env, timeout=300)

        asked = context()
        assert asked.returncode == 0, asked.stderr
        assert asked.stderr == f"folio: asking the server at {url} (it serves {data_copy}; --no-server runs here)\n"
        here = context("--no-server")
        assert here.returncode == 0 and here.stderr == "", here.stderr
        def cited(pkg: str) -> list[tuple[str, str]]:
            return [(i["citation_id"], i["region_id"]) for i in json.loads(pkg)["items"]]

        assert cited(asked.stdout) == cited(here.stdout) != []
        server.send_signal(signal.SIGTERM)
        server.wait(60)
        assert not (data_copy / "server.json").exists()  # a stopped server is not found again
    finally:
        if server.poll() is None:
            server.kill()


@pytest.mark.slow
def test_a_server_that_cannot_load_says_why_and_exits_1(tmp_path: Path) -> None:
    """Loading fails behind an open port (a data directory that cannot be made): one line says why, the server
    stops by itself and exits 1, leaving no process behind."""
    import os
    import subprocess
    import sys

    from tests.api.conftest import free_port

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    env = {**os.environ, "FOLIO_QUERY_PROCESSES": "1", "FOLIO_OCR": "false"}
    out = subprocess.run(
        [sys.executable, "-m", "folio.api.cli", "serve", "--host", "127.0.0.1", "--port", str(free_port()),
         "--data", str(blocker / "data")],
        env=env, cwd=Path(__file__).resolve().parents[3], capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 1, out.stderr
    assert "folio failed to start: NotADirectoryError" in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert "ready at" not in out.stdout
