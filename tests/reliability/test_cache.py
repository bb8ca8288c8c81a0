"""The per-version region cache is an LRU with a bound (it grew with every version read)."""

from __future__ import annotations

from pathlib import Path

from folio.ingest.storage.store import REGION_CACHE_SIZE, Store


def test_region_cache_is_bounded_lru(ingested_readonly: Path) -> None:
    assert REGION_CACHE_SIZE > 0
    store = Store(ingested_readonly, region_cache_size=2)
    versions = store.list_versions()
    assert len(versions) >= 3
    a, b, c = versions[:3]
    first = store.region_index(a.doc_id, a.version_id)
    store.region_index(b.doc_id, b.version_id)
    assert store.region_index(a.doc_id, a.version_id) is first  # a hit, and now the most recent
    store.region_index(c.doc_id, c.version_id)  # evicts b, the least recently used
    # Keyed by the writer of the version's rows too (a redo replaces them: a new entry).
    keys = [f"{v.version_id}|{v.doc_id}|{store.version_stamp(v.doc_id, v.version_id)}" for v in (a, c)]
    assert list(store._index_cache) == keys
    for v in versions:
        store.region_index(v.doc_id, v.version_id)
    assert len(store._index_cache) == 2
    assert len(store.region_index(b.doc_id, b.version_id)) > 0  # evicted entries reload correctly
