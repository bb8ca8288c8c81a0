"""The store stays bounded across re-ingests once compacted; ``folio check`` finds and repairs orphans."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pytest

from folio.ingest.pipeline import ingest_path
from folio.ingest.storage.compaction import compact, sizes
from folio.ingest.storage.maintenance import check
from folio.ingest.storage.store import Store
from tests.reliability.helpers import DOC, SAMPLE

REINGESTS = 5


def _lance_bytes(store: Store) -> int:
    s = sizes(store)
    return s["total"] - s["assets"]


def test_size_stays_bounded_across_reingests(tmp_path: Path) -> None:
    fresh = Store(tmp_path / "fresh", compact_every=0)
    ingest_path(fresh, SAMPLE, doc_id=DOC, ocr=False)
    compact(fresh, timedelta(0))
    baseline = _lance_bytes(fresh)

    store = Store(tmp_path / "churn", compact_every=0)
    ingest_path(store, SAMPLE, doc_id=DOC, ocr=False)
    for _ in range(REINGESTS):
        store.delete_document(DOC)
        assert ingest_path(store, SAMPLE, doc_id=DOC, ocr=False).status == "created"
    grown = _lance_bytes(store)
    assert grown > 3 * baseline  # the problem: every commit and deleted row stays on disk
    result = compact(store, timedelta(0))
    after = _lance_bytes(store)
    assert result["after"]["total"] < result["before"]["total"]
    assert after < 1.5 * baseline, (baseline, grown, after)
    assert check(store)["ok"]
    assert store.chunks.count_rows() == fresh.chunks.count_rows()
    print(f"\nlance bytes: fresh {baseline}, after {REINGESTS} re-ingests {grown}, compacted {after}")


def test_writers_compact_periodically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(Store, "maintain", lambda self: calls.append(self.uri))
    store = Store(tmp_path, compact_every=2)
    ingest_path(store, SAMPLE, doc_id=DOC, ocr=False)
    assert calls == []
    store.delete_document(DOC)  # a delete is a commit too
    assert len(calls) == 1


def _with(t: pa.Table, column: str, value: str) -> pa.Table:
    return t.set_column(t.schema.get_field_index(column), column, pa.array([value] * t.num_rows))


def test_check_reports_and_repair_removes_orphans(tmp_path: Path) -> None:
    store = Store(tmp_path)
    ingest_path(store, SAMPLE, doc_id=DOC, ocr=False)
    assert check(store)["ok"]
    good = store.list_versions()[0]
    # A dead writer's claim with rows, rows of an unknown writer inside the ready version, an
    # asset folder of no version.
    row = store.versions.search().limit(1).to_arrow().to_pylist()[0]
    dead = {**row, "version_id": "deaddeaddeaddead", "status": "pending", "writer": "dead", "writer_pid": 0}
    dead["writer_host"] = ""
    store.versions.add(pa.Table.from_pylist([dead], schema=store.versions.schema))
    regions = store.regions.search().limit(3).to_arrow()
    store.regions.add(_with(_with(regions, "version_id", "deaddeaddeaddead"), "writer", "dead"))
    store.regions.add(_with(regions, "writer", "stray"))
    (tmp_path / "assets" / "nobody@0000000000000000").mkdir(parents=True)

    found = check(store)
    kinds = {p["kind"] for p in found["problems"]}
    # The stray rows repeat region ids of the ready version: the duplicate rows.
    assert kinds == {"dead_claim", "orphan_rows", "duplicate_ids", "orphan_assets"}, found["problems"]
    assert store.list_versions()[0].version_id == good.version_id

    fixed = check(store, repair=True)
    assert fixed["ok"], fixed["problems"]
    assert "policy@deaddeaddeaddead" in fixed["repaired"]
    assert store.regions.count_rows() == good.regions
    assert not (tmp_path / "assets" / "nobody@0000000000000000").exists()


def test_cli_compact_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from folio.api.cli import main

    assert main(["ingest", str(SAMPLE), "--data", str(tmp_path), "--no-ocr", "--json"]) == 0
    capsys.readouterr()
    assert main(["compact", "--data", str(tmp_path), "--older-than", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["after"]["total"] <= out["before"]["total"]
    assert main(["check", "--data", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "ok" in text and "regions" in text
    (tmp_path / "assets" / "nobody@0000000000000000").mkdir()
    assert main(["check", "--data", str(tmp_path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["problems"][0]["kind"] == "orphan_assets"
    assert main(["check", "--data", str(tmp_path), "--repair"]) == 0
