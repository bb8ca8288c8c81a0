"""Indexes that do not grow a commit's cost (issue 47): a commit into indexed tables leaves the indexes as they
are, queries still see its rows (flat search of the unindexed fragments), a removed document is not found,
maintenance folds new rows in, the ANN index comes past a size and serves unscoped queries while scoped ones
stay exact, a small table (or one whose new rows pass a share of it) is indexed whole again at its commit so
that BM25 scores as a fresh index, and a document costs one commit per table (two of ``versions``: claim and
flip). Real PDFs, real LanceDB on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pytest

from folio.ingest.storage.indexes import IndexOptions
from folio.kernel.scope import Scope
from folio.retrieval.search import Retriever, RetrieverConfig, SearchQuery

ROOT = Path(__file__).resolve().parents[2]
# These documents in the tables of a large store: no rebuild for being small, none for the share of new rows
LARGE = IndexOptions(fts_rebuild_rows=0, fts_stale_share=1e9)
A_TERM = "escalation"  # support-policy-v1 has it, R-data-import-export does not
B_TERM = "spreadsheet"  # the other way round


def table_versions(data: Path) -> dict[str, int]:
    """The LanceDB version of every table: each commit (add, update, delete, index build) adds one."""
    db = lancedb.connect(str(data / "lancedb"))
    return {name: db.open_table(name).version for name in db.list_tables().tables}


def index_dirs(data: Path, table: str) -> set[str]:
    """The index files (one folder per index build, named by its UUID) of a table."""
    return {p.name for p in (data / "lancedb" / f"{table}.lance" / "_indices").iterdir()}


def fts_rows(data: Path, term: str, doc_id: str | None = None) -> list[dict[str, Any]]:
    """The full-text table's rows matching ``term``, read straight from LanceDB (no scope, no writer filter)."""
    table = lancedb.connect(str(data / "lancedb")).open_table("chunks_text-default")
    query = table.search(term, query_type="fts", fts_columns="fts").limit(1000)
    if doc_id is not None:
        query = query.where(f"doc_id = '{doc_id}'", prefilter=True)
    rows: list[dict[str, Any]] = query.to_arrow().to_pylist()
    return rows


def _ingest(store: Any, samples: Path, name: str, doc_id: str) -> None:
    from folio.ingest.pipeline import ingest_path

    ingest_path(store, samples / name, doc_id=doc_id, ocr=False)


@pytest.fixture(scope="module")
def two_docs(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> dict[str, Any]:
    """Document a committed and indexed (its full-text index built at its commit, scalar indexes built), then
    document b committed into the indexed tables; nothing optimized. What the tables looked like in between."""
    from folio.ingest.storage.store import Store

    data = tmp_path_factory.mktemp("indexes")
    store = Store(data, compact_every=0).configure_indexes(LARGE)
    _ingest(store, samples, "support-policy-v1.pdf", "a")
    assert store.ensure_scalar_indexes() == ["version_id", "doc_id"]
    before = {"fts": index_dirs(data, "chunks_text-default"), "chunks": index_dirs(data, "chunks"),
              "versions": table_versions(data)}
    _ingest(store, samples, "R-data-import-export.pdf", "b")
    return {"data": data, "store": store, "before": before, "after": table_versions(data)}


def test_a_commit_leaves_the_indexes_in_use_and_its_rows_unindexed(two_docs: dict[str, Any]) -> None:
    data, store, before = two_docs["data"], two_docs["store"], two_docs["before"]
    assert index_dirs(data, "chunks_text-default") == before["fts"]  # the same index (UUID): not rebuilt
    assert index_dirs(data, "chunks") == before["chunks"]
    b_rows = store.chunk_table.table.count_rows("doc_id = 'b'")
    assert b_rows > 50
    status = {(s["table"], s["name"]): s for s in store.index_status()}
    assert status[("chunks_text-default", "fts_idx")]["unindexed_rows"] == b_rows
    assert status[("chunks", "doc_id_idx")]["unindexed_rows"] == b_rows
    assert status[("chunks", "version_id_idx")]["indexed_rows"] == store.chunk_table.table.count_rows("doc_id = 'a'")


def test_a_document_costs_one_commit_per_table(two_docs: dict[str, Any]) -> None:
    before, after = two_docs["before"]["versions"], two_docs["after"]
    made = {name: after[name] - before.get(name, 0) for name in after}
    # versions: the pending claim, then the flip to ready; every other table: one add; no index build
    assert made == {"versions": 2, "regions": 1, "chunks": 1, "chunks_text-default": 1}


def test_queries_see_rows_committed_after_the_last_index_update(two_docs: dict[str, Any]) -> None:
    data, store = two_docs["data"], two_docs["store"]
    assert fts_rows(data, B_TERM, "b")  # LanceDB's flat search of the unindexed fragment
    hits = Retriever(store).search(SearchQuery(f"{B_TERM} import", k=5))
    assert hits and all(h.doc_id == "b" for h in hits[:3])
    b_version = store.latest_versions(["b"])[0].version_id
    scope = Scope(versions=(("b", b_version),), regions=1)
    vector = np.asarray(store.chunk_table.table.search().where("doc_id = 'b'").limit(1).to_arrow()
                        .column("vector").to_pylist()[0], dtype=np.float32)
    near = store.vector_search(vector, scope, 1)
    assert near and near[0]["doc_id"] == "b" and near[0]["_distance"] == pytest.approx(0.0, abs=1e-5)


def test_maintenance_folds_new_rows_into_the_indexes(tmp_path: Path, two_docs: dict[str, Any]) -> None:
    import shutil

    from folio.ingest.storage.store import Store

    data = tmp_path / "copy"
    shutil.copytree(two_docs["data"], data)
    store = Store(data, compact_every=0).configure_indexes(LARGE)
    store.maintain()
    status = {(s["table"], s["name"]): s for s in store.index_status()}
    assert status[("chunks_text-default", "fts_idx")]["unindexed_rows"] == 0
    assert status[("chunks", "doc_id_idx")]["unindexed_rows"] == 0
    assert fts_rows(data, B_TERM, "b")


def test_a_deleted_document_is_not_found_without_a_rebuild(tmp_path: Path, two_docs: dict[str, Any]) -> None:
    import shutil

    from folio.ingest.storage.store import Store

    data = tmp_path / "copy"
    shutil.copytree(two_docs["data"], data)
    store = Store(data, compact_every=0).configure_indexes(LARGE)
    store.maintain()  # b indexed too: its rows are in the index when it goes
    fts_before = index_dirs(data, "chunks_text-default")
    assert fts_rows(data, A_TERM, "a")
    store.delete_document("a")
    assert index_dirs(data, "chunks_text-default") == fts_before  # no rebuild
    assert fts_rows(data, A_TERM) == []  # deletion vectors hide the rows from the index
    assert not [h for h in Retriever(store).search(SearchQuery(A_TERM, k=10)) if h.doc_id == "a"]


def test_ann_index_past_the_threshold_serves_unscoped_queries_scoped_stay_exact(
    tmp_path: Path, two_docs: dict[str, Any]
) -> None:
    import shutil

    from folio.ingest.storage.store import Store

    data = tmp_path / "copy"
    shutil.copytree(two_docs["data"], data)
    rows = lancedb.connect(str(data / "lancedb")).open_table("chunks").count_rows()
    Store(data, compact_every=0).configure_indexes(IndexOptions(ann_min_rows=rows + 1)).maintain()
    assert not Store(data).has_vector_index()  # under the threshold: exact only
    store = Store(data, compact_every=0).configure_indexes(IndexOptions(ann_min_rows=rows, nprobes=4, refine_factor=5))
    store.maintain()
    assert store.has_vector_index()

    calls: list[bool] = []
    search = store.vector_search

    def spy(*args: Any, **kw: Any) -> Any:
        calls.append(bool(kw.get("exact", False)))
        return search(*args, **kw)

    store.vector_search = spy  # type: ignore[method-assign]
    one_doc = max(v.regions for v in store.latest_versions())  # a scope of one document stays under it
    ann = Retriever(store, config=RetrieverConfig(ann_scope_regions=one_doc))
    exact = Retriever(Store(data), config=RetrieverConfig(ann_scope_regions=10**9))
    question = "how do I read data from a spreadsheet into R"
    scope = ann.search_detailed(SearchQuery(question, k=10)).scope
    assert calls == [False] and scope is not None  # an unscoped query goes through the index
    unscoped = ann.text.dense(question, scope, 10)
    exact_hits = exact.text.dense(question, scope, 10)
    assert len(unscoped) == 10 and len({c.region_id for c in unscoped} & {c.region_id for c in exact_hits}) >= 8
    calls.clear()
    scoped = SearchQuery(question, doc_ids=["b"], k=10)
    assert [h.region_id for h in ann.search(scoped)] == [h.region_id for h in exact.search(scoped)]
    assert calls == []  # a one-document scope never touches the index


def test_a_wide_scope_without_an_ann_index_is_searched_in_the_store(two_docs: dict[str, Any]) -> None:
    """No ANN index yet: a scope over ``ann_scope_regions`` is searched by LanceDB's flat scan, exact, and the query
    process holds none of its vectors."""
    store = two_docs["store"]
    assert not store.has_vector_index()
    one_doc = max(v.regions for v in store.latest_versions())
    wide = Retriever(store, config=RetrieverConfig(ann_scope_regions=one_doc))
    exact = Retriever(store, config=RetrieverConfig(ann_scope_regions=10**9))
    question = "how do I read data from a spreadsheet into R"
    scope = wide.search_detailed(SearchQuery(question, k=10)).scope
    assert scope is not None and scope.regions > one_doc
    flat = wide.text.dense(question, scope, 10)
    in_process = exact.text.dense(question, scope, 10)
    assert [c.region_id for c in flat] == [c.region_id for c in in_process]
    assert np.allclose([c.score for c in flat], [c.score for c in in_process], atol=1e-5)
    assert not wide.text.cache._versions and not wide.text.cache._scopes  # nothing copied into the process
    assert exact.text.cache._versions


def test_a_wide_scope_keeps_the_hits_of_its_best_versions(two_docs: dict[str, Any], monkeypatch: Any) -> None:
    """With the bounds lowered so that two documents make a wide scope (``retrieval.channels.base.WIDE_SCOPE``),
    the hits keep the versions that rank best, and the per-version channels read those the text channels found."""
    import folio.retrieval.channels.base as base
    import folio.retrieval.channels.pagelex as pagelex_channel
    import folio.retrieval.search as search

    retriever = Retriever(two_docs["store"])
    query = SearchQuery("priority incident escalation or spreadsheet import", k=20)
    before = retriever.search_detailed(query)
    assert {h.doc_id for h in before.hits} == {"a", "b"}
    monkeypatch.setattr(search, "WIDE_SCOPE", 1)
    monkeypatch.setattr(base, "WIDE_SCOPE_VERSIONS", 1)
    monkeypatch.setattr(pagelex_channel, "MAX_VERSIONS", 1)
    pagelex = retriever.channels["pagelex"].pagelex
    read: list[str] = []
    build = pagelex._build
    monkeypatch.setattr(pagelex, "_build", lambda d, v: (read.append(d), build(d, v))[1])
    pagelex.clear()
    wide = retriever.search_detailed(query)
    first = before.hits[0].doc_id
    assert {h.doc_id for h in wide.hits} == {first} and wide.hits[0].region_id == before.hits[0].region_id
    assert len(read) == 1  # one version: the one the text channels ranked first


def test_folio_compact_reindex_rebuilds_the_indexes(tmp_path: Path, two_docs: dict[str, Any]) -> None:
    import shutil

    data = tmp_path / "copy"
    shutil.copytree(two_docs["data"], data)
    before = index_dirs(data, "chunks_text-default")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FOLIO_ANN_MIN_ROWS": "0"}
    out = subprocess.run(
        [sys.executable, "-m", "folio.api.cli", "compact", "--reindex", "--json", "--data", str(data)],
        capture_output=True, text=True, env=env, timeout=300, check=True,
    )
    result = json.loads(out.stdout)
    assert "chunks_text-default.fts" in result["reindexed"]
    assert sorted(c for c in result["reindexed"] if c.startswith("chunks.")) == ["chunks.doc_id", "chunks.version_id"]
    assert index_dirs(data, "chunks_text-default") - before  # a new index build
    assert fts_rows(data, B_TERM, "b") and fts_rows(data, A_TERM, "a")


def test_a_small_table_is_indexed_whole_at_each_commit_and_scores_as_a_fresh_index(
    tmp_path: Path, samples: Path
) -> None:
    """Default options: the sample store is small, so each commit indexes its full-text table whole again (no row
    left to the flat scan, whose BM25 statistics differ), and its scores equal those of one index built over
    every row at once."""
    from folio.ingest.storage.store import Store

    data = tmp_path / "small"
    store = Store(data, compact_every=0)
    _ingest(store, samples, "support-policy-v1.pdf", "a")
    first = index_dirs(data, "chunks_text-default")
    _ingest(store, samples, "R-data-import-export.pdf", "b")
    assert index_dirs(data, "chunks_text-default") != first  # built again at b's commit
    status = {(s["table"], s["name"]): s for s in store.index_status()}
    assert status[("chunks_text-default", "fts_idx")]["unindexed_rows"] == 0
    committed = [(r["region_id"], round(r["_score"], 5)) for r in fts_rows(data, "data import")]
    store.reindex()
    fresh = [(r["region_id"], round(r["_score"], 5)) for r in fts_rows(data, "data import")]
    assert committed == fresh and len(committed) > 10


def test_a_large_table_is_indexed_again_once_its_new_rows_pass_the_share(tmp_path: Path, samples: Path) -> None:
    """Past ``fts_rebuild_rows``: b's rows (many more than a tenth of a's) make its commit index the table whole
    again; c's few rows (under a tenth of a and b) are left to the flat scan."""
    from folio.ingest.storage.store import Store

    data = tmp_path / "large"
    store = Store(data, compact_every=0).configure_indexes(IndexOptions(fts_rebuild_rows=0, fts_stale_share=0.1))
    _ingest(store, samples, "support-policy-v1.pdf", "a")
    after_a = index_dirs(data, "chunks_text-default")
    _ingest(store, samples, "R-data-import-export.pdf", "b")
    after_b = index_dirs(data, "chunks_text-default")
    assert after_b != after_a
    _ingest(store, samples, "support-policy-v2.pdf", "c")
    assert index_dirs(data, "chunks_text-default") == after_b
    status = {(s["table"], s["name"]): s for s in store.index_status()}
    c_rows = store.chunk_table.table.count_rows("doc_id = 'c'")
    assert status[("chunks_text-default", "fts_idx")]["unindexed_rows"] == c_rows > 0
