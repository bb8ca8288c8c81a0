"""Serving under load: caches that outlive a request but not a commit, and a health probe that
never waits behind query work (issue 9). No timings here: tests/reliability/test_load.py and
benchmarks/bench_api.py measure those."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.service import version_filenames
from tests.api.conftest import make_settings


def test_region_source_and_file_names_live_until_a_commit(data_copy: Path, samples: Path) -> None:
    from assembly.expand import _cache_for
    from ingest.pipeline import ingest_path
    from ingest.store import Store
    from retrieval.search import Retriever

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
    from api.routes import query

    release = threading.Event()
    started = threading.Event()
    real = query._context

    def slow_context(*args: object, **kwargs: object) -> object:
        started.set()
        release.wait(30)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(query, "_context", slow_context)
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
        finally:
            release.set()
            busy.join(60)
        assert results == [200]
        assert client.post("/v1/context", json=body).status_code == 200  # the worker is free again
