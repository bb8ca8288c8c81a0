"""RRF and quota properties (Hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from folio.kernel.errors import InvalidRequest
from folio.retrieval.ranking.fusion import apply_quotas, check_quotas, page_first, rrf

ids = st.sampled_from([f"r{i}" for i in range(12)])
ranked_list = st.lists(ids, max_size=10, unique=True).map(
    lambda xs: [(x, float(len(xs) - i)) for i, x in enumerate(xs)]
)
lists = st.dictionaries(st.sampled_from(["bm25", "dense", "clip", "colpali"]), ranked_list, max_size=4)


@given(lists, st.randoms(use_true_random=False), st.integers(min_value=1, max_value=200))
def test_rrf_is_invariant_to_input_order(ranked: dict[str, list[tuple[str, float]]], rnd, k: int) -> None:  # type: ignore[no-untyped-def]
    items = list(ranked.items())
    rnd.shuffle(items)
    assert rrf(dict(items), k=k) == rrf(ranked, k=k)


@given(lists, st.integers(min_value=1, max_value=200))
def test_item_ranked_first_everywhere_is_first(ranked: dict[str, list[tuple[str, float]]], k: int) -> None:
    ranked = {name: [("top", 99.0), *[(i, s) for i, s in lst if i != "top"]] for name, lst in ranked.items()}
    fused = rrf(ranked, k=k)
    if ranked:
        assert fused[0][0] == "top"
        assert {s.retriever for s in fused[0][2]} == set(ranked)
        assert all(s.rank == 1 for s in fused[0][2])


@given(lists)
def test_rrf_scores_are_sorted_and_every_item_appears_once(
    ranked: dict[str, list[tuple[str, float]]],
) -> None:
    fused = rrf(ranked)
    scores = [s for _, s, _ in fused]
    assert scores == sorted(scores, reverse=True)
    assert {i for i, _, _ in fused} == {i for lst in ranked.values() for i, _ in lst}
    assert len(fused) == len({i for i, _, _ in fused})


def test_rrf_formula_and_sources() -> None:
    fused = rrf({"a": [("x", 5.0), ("y", 4.0)], "b": [("y", 0.9)]}, k=10)
    assert fused[0][0] == "y"
    assert fused[0][1] == pytest.approx(1 / 12 + 1 / 11)
    assert [(s.retriever, s.rank, s.score) for s in fused[0][2]] == [("a", 2, 4.0), ("b", 1, 0.9)]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "60"])
def test_rrf_k_must_be_positive_int(bad: object) -> None:
    with pytest.raises(InvalidRequest):
        rrf({"a": [("x", 1.0)]}, k=bad)  # type: ignore[arg-type]


@given(
    st.lists(st.sampled_from(["text", "table", "figure", "page"]), max_size=30),
    st.integers(min_value=1, max_value=15),
    st.dictionaries(st.sampled_from(["table", "figure", "page"]), st.integers(min_value=0, max_value=3), max_size=3),
)
def test_quotas_are_minimums_and_keep_order(mods: list[str], k: int, quotas: dict[str, int]) -> None:
    if sum(quotas.values()) > k:
        with pytest.raises(InvalidRequest):
            check_quotas(quotas, k)
        return
    q = check_quotas(quotas, k)
    items = [(m, i) for i, m in enumerate(mods)]
    out = apply_quotas(items, k, q, lambda it: it[0])
    assert len(out) == min(k, len(items))
    assert [i for _, i in out] == sorted(i for _, i in out)
    for m, n in q.items():
        assert sum(1 for x, _ in out if x == m) >= min(n, mods.count(m))
    if not q:
        assert out == items[:k]


def test_unknown_quota_modality_is_an_error_not_a_silent_no_match() -> None:
    with pytest.raises(InvalidRequest, match="unknown modality 'figures'"):
        check_quotas({"figures": 1}, 10)  # type: ignore[dict-item]


def test_negative_quota_rejected() -> None:
    with pytest.raises(InvalidRequest):
        check_quotas({"figure": -1}, 10)


page_hits = st.lists(st.tuples(st.sampled_from("abcde"), st.integers(0, 99)), max_size=20, unique=True)


@given(page_hits, st.floats(min_value=0.05, max_value=1.0))
def test_page_first_keeps_every_hit_once_in_score_order(hits: list[tuple[str, int]], decay: float) -> None:
    ranked = {"bm25": [(p,) for p, _ in hits], "dense": [(p,) for p, _ in reversed(hits)]}
    out = page_first(hits, lambda h: (h[0],), ranked, decay=decay)
    assert sorted(h for h, _ in out) == sorted(hits)
    scores = [s for _, s in out]
    assert scores == sorted(scores, reverse=True)
    # within a page, the original order is kept
    for page in {p for p, _ in hits}:
        assert [h for h, _ in out if h[0] == page] == [h for h in hits if h[0] == page]


def test_page_first_covers_distinct_pages_before_deepening() -> None:
    hits = ["a1", "a2", "a3", "b1", "c1"]
    page = {"a1": ("a",), "a2": ("a",), "a3": ("a",), "b1": ("b",), "c1": ("c",)}
    ranked = {"bm25": [page[h] for h in hits]}
    got = [h for h, _ in page_first(hits, page.__getitem__, ranked, decay=0.5)]
    assert got[:3] == ["a1", "b1", "c1"]  # each page once before page a's second hit
    grouped = [h for h, _ in page_first(hits, page.__getitem__, ranked, decay=1.0)]
    assert grouped == hits  # decay 1: a page's hits stay together
