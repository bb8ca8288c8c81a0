"""A re-parse killed after its swap is finished by the next store to open (issue 44, item 9).

A re-parse writes its rows beside the version's ready rows, swaps its versions row in (one commit) and removes
the replaced rows ``RETIRE_AFTER_S`` later. On 39bc16c a kill -9 in between left those rows for good: ``folio
check`` exited 1 (``orphan_rows``, ``duplicate_ids``), a restart did not remove them, and BM25 counted them
(the full-text index was built over both parses' rows, 12.0052 -> 12.0185). Even a re-parse that lived kept
that index until some later commit rebuilt it. Now the new ready row names the replaced writer until its rows
are gone, and opening a store, claiming a version or ``folio check`` finish the removal once the readers'
grace has passed, and rebuild the index.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from folio.ingest import pipeline
from folio.ingest.pipeline import ingest_path
from folio.ingest.storage import recovery
from folio.ingest.storage.catalogue import version_key
from folio.ingest.storage.claims import LIVE_WRITERS
from folio.ingest.storage.maintenance import check
from folio.ingest.storage.sql import fts_table
from folio.ingest.storage.store import Store
from folio.kernel.scope import Scope
from tests.reliability.helpers import DOC, ROOT, SAMPLE, counts, env, table_versions, wait_for

FOLIO = Path(sys.executable).with_name("folio")
QUERY = "support response time"
TABLES = ("regions", "chunks", fts_table("default"))

# A re-parse of argv[2] into argv[1] that stops (prints SWAPPED and sleeps) right after its swap committed, where
# it would remove the rows it replaced: the parent kills it there.
CHILD = r"""
import sys, time
from folio.ingest import pipeline
from folio.ingest.pipeline import ingest_path
from folio.ingest.storage.store import Store

def retire_rows(self, *args, **kwargs):
    print("SWAPPED", flush=True)
    time.sleep(120)

pipeline.RETIRE_AFTER_S = 0.0  # straight from the swap to the removal, where it stops
Store.retire_rows = retire_rows
ingest_path(Store(sys.argv[1]), sys.argv[2], doc_id="policy", ocr=False)
print("NOT KILLED", flush=True)
"""


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One clean ingest of the sample (copied for each test), its version, region ids and BM25 scores."""
    data = tmp_path_factory.mktemp("reparse") / "data"
    rep = ingest_path(Store(data), SAMPLE, doc_id=DOC, ocr=False)
    store = Store(data)
    ids = sorted(r.region_id for r in store.region_index(DOC, rep.version_id).regions())
    return {"data": data, "version": rep.version_id, "ids": ids, "scores": _scores(store, rep.version_id)}


def _copy(ingested: dict[str, Any], tmp_path: Path) -> Path:
    """A copy of the clean store whose version an older parser wrote (so ingesting it again parses it again)."""
    data = tmp_path / "data"
    shutil.copytree(ingested["data"], data)
    key = version_key(DOC, ingested["version"])
    Store(data).versions.update(where=key, values={"parser_version": "0"})
    return data


def _scores(store: Store, version: str) -> dict[str, float]:
    hits = store.fts(QUERY, Scope(((DOC, version),)), 20)
    assert hits
    return {h["region_id"]: float(h["_score"]) for h in hits}


def _writers(data: Path) -> dict[str, set[str]]:
    """The writers whose rows each table holds, read straight from LanceDB (no ``Store`` opens, so none finishes
    anything)."""
    import lancedb

    db = lancedb.connect(str(data / "lancedb"))
    rows = {t: db.open_table(t).search().select(["writer"]).limit(None).to_arrow().to_pylist() for t in TABLES}
    return {t: {r["writer"] for r in got} for t, got in rows.items()}


@pytest.mark.slow
def test_kill_after_the_swap_then_the_installed_folio_check_finishes_it(
    tmp_path: Path, ingested: dict[str, Any], reference: dict[str, Any]
) -> None:
    data = _copy(ingested, tmp_path)
    old = Store(data).version_stamp(DOC, ingested["version"])
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(data), str(SAMPLE)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env(),
    )  # fmt: skip
    wait_for(proc, b"SWAPPED")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    left = _writers(data)
    assert all(len(w) == 2 and old in w for w in left.values()), left  # the window: both parses' rows

    done = subprocess.run(
        [str(FOLIO), "check", "--data", str(data), "--json"], capture_output=True, text=True, env=env(), timeout=300
    )
    result = json.loads(done.stdout)
    assert done.returncode == 0, (result["problems"], done.stderr[-2000:])
    assert result["problems"] == [] and result["versions"] == {"ready": 1, "pending": 0, "writing": 0}
    new = Store(data).version_stamp(DOC, ingested["version"])
    assert new != old and _writers(data) == {t: {new} for t in TABLES}
    assert counts(data) == reference
    store = Store(data)
    assert sorted(r.region_id for r in store.region_index(DOC, ingested["version"]).regions()) == ingested["ids"]
    assert _scores(store, ingested["version"]) == pytest.approx(ingested["scores"], rel=1e-9)
    # Finished for good: opening again writes nothing, and the check still passes.
    before = table_versions(data)
    Store(data)
    assert table_versions(data) == before
    again = subprocess.run([str(FOLIO), "check", "--data", str(data)], capture_output=True, env=env(), timeout=300)
    assert again.returncode == 0, again.stdout[-2000:]


def test_a_dead_reparse_waits_out_the_readers_grace_then_the_next_open_finishes_it(
    tmp_path: Path, ingested: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In one process, deterministically: the writer "dies" where it would remove the replaced rows (nothing
    removes them; its claim is no live writer's). While the swap is younger than ``RETIRE_AFTER_S`` they stay,
    for the readers that resolved the version before it; every reader sees the version once. A live writer's
    are left to it, by ``folio check --repair`` too. Then ``check`` waits out the grace and finishes it."""
    data, vid = _copy(ingested, tmp_path), ingested["version"]
    old = Store(data).version_stamp(DOC, vid)
    monkeypatch.setattr(pipeline, "RETIRE_AFTER_S", 0.0)
    monkeypatch.setattr(Store, "retire_rows", lambda *args, **kwargs: None)
    monkeypatch.setattr(recovery, "RETIRE_AFTER_S", 3600.0)
    assert ingest_path(Store(data), SAMPLE, doc_id=DOC, ocr=False).status == "created"

    reader = Store(data)  # the swap is young: opening removes nothing yet
    new = reader.version_stamp(DOC, vid)
    assert _writers(data) == {t: {old, new} for t in TABLES}
    ids = [r.region_id for r in reader.region_index(DOC, vid).regions()]
    assert sorted(ids) == ingested["ids"]  # once, not twice
    hits = [h["region_id"] for h in reader.fts(QUERY, Scope(((DOC, vid),)), 50)]
    assert hits and len(hits) == len(set(hits))

    LIVE_WRITERS.add(new)  # as if its writer still lived: its rows to remove are its own, not orphans
    try:
        live = check(Store(data), repair=True)
    finally:
        LIVE_WRITERS.discard(new)
    assert live["problems"] == [] and live["repaired"] == [] and live["finished"] == []
    assert _writers(data) == {t: {old, new} for t in TABLES}

    [row] = reader.catalogue.rows_now(version_key(DOC, vid))
    assert row["retiring"] == old
    monkeypatch.setattr(recovery, "RETIRE_AFTER_S", time.time() - row["heartbeat"] + 1.0)  # one second to go
    result = check(Store(data))
    assert result["finished"] == [f"{DOC}@{vid}"] and result["problems"] == [], result
    assert _writers(data) == {t: {new} for t in TABLES}
    assert _scores(Store(data), vid) == pytest.approx(ingested["scores"], rel=1e-9)
    assert reader.catalogue.rows_now(version_key(DOC, vid))[0]["retiring"] is None


def test_a_reparse_leaves_the_bm25_statistics_of_a_clean_store(
    tmp_path: Path, ingested: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The full-text index is rebuilt once the replaced rows are gone (on 39bc16c it was built over both
    parses' rows at the commit and kept: the sample's best score 2.6267 became 2.7097)."""
    data, vid = _copy(ingested, tmp_path), ingested["version"]
    monkeypatch.setattr(pipeline, "RETIRE_AFTER_S", 0.0)
    assert ingest_path(Store(data), SAMPLE, doc_id=DOC, ocr=False).status == "created"
    store = Store(data)
    assert _writers(data) == {t: {store.version_stamp(DOC, vid)} for t in TABLES}
    assert _scores(store, vid) == pytest.approx(ingested["scores"], rel=1e-9)
    assert check(store)["ok"]
