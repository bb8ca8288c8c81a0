"""A wide scope (an unscoped question over a store of many documents): the per-version channels read the versions
the text channels found, not the first ones stored, and the hits keep the versions that rank best, so that a
question's work is bounded by what it found and not by the size of the store (issue 47)."""

from __future__ import annotations

from folio.kernel.scope import Scope
from folio.retrieval.channels.base import (
    WIDE_SCOPE_VERSIONS,
    ChannelQuery,
    best_versions,
    versions_to_search,
)
from folio.retrieval.channels.pagelex import MAX_VERSIONS
from folio.retrieval.text import Candidate


def _cand(doc: str, rank: int) -> Candidate:
    return Candidate(f"{doc}@v:r{rank}", doc, "v", "sentence", 1, 1.0 / (rank + 1))


def test_a_wide_scope_is_searched_in_the_versions_found_best_first() -> None:
    versions = tuple((f"d{i:03}", "v") for i in range(MAX_VERSIONS + 1))
    scope = Scope(versions)
    found = {
        "bm25": [_cand("d100" if i == 0 else f"d{60 + i:03}", i) for i in range(30)],
        "dense": [_cand("d007", 0), _cand("d100", 1), _cand("d008", 2)],
    }
    picked = versions_to_search(ChannelQuery("q", scope, 10, found=found), MAX_VERSIONS)
    # every list's first hit before any list's second: d100 (bm25 #1), d007 (dense #1), d061 (bm25 #2; dense #2 is
    # d100 again), d062 (bm25 #3), d008 (dense #3), ...
    assert list(picked[:5]) == [("d100", "v"), ("d007", "v"), ("d061", "v"), ("d062", "v"), ("d008", "v")]
    assert len(picked) == WIDE_SCOPE_VERSIONS and ("d000", "v") not in picked  # not the first versions stored
    narrow = Scope(versions[:MAX_VERSIONS])
    assert versions_to_search(ChannelQuery("q", narrow, 10, found=found), MAX_VERSIONS) == narrow.versions


def test_the_hits_of_a_wide_scope_keep_the_versions_that_rank_best() -> None:
    hits = [_cand(f"d{i % 20:03}", i) for i in range(60)]
    kept = best_versions(hits, 3)
    assert {h.doc_id for h in kept} == {"d000", "d001", "d002"}
    assert kept == [h for h in hits if h.doc_id in {"d000", "d001", "d002"}]  # in their order
    assert best_versions(hits, 20) == hits
