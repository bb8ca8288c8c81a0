"""Exact MaxSim against a hand computation and against colpali-engine's scorer; two-stage search."""

from __future__ import annotations

import numpy as np
import pytest

from folio.retrieval.channels.maxsim import PageMatrix, maxsim, pool_hierarchical, pool_mean


def test_maxsim_by_hand() -> None:
    q = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    p1 = np.array([[1.0, 0.0], [0.0, 0.5]], dtype=np.float32)
    p2 = np.array([[0.0, 1.0]], dtype=np.float32)
    # p1: q1 -> max(1, 0) = 1; q2 -> max(0, .5) = .5; q3 -> max(.6, .4) = .6  => 2.1
    # p2: q1 -> 0; q2 -> 1; q3 -> .8  => 1.8
    np.testing.assert_allclose(maxsim(q, [p1, p2, np.zeros((0, 2), np.float32)]), [2.1, 1.8, 0.0], rtol=1e-6)


def test_maxsim_matches_colpali_engine() -> None:
    import torch
    from colpali_engine.utils.processing_utils import BaseVisualRetrieverProcessor

    rng = np.random.default_rng(0)
    qs = [rng.standard_normal((n, 16)).astype(np.float32) for n in (3, 7)]
    ps = [rng.standard_normal((n, 16)).astype(np.float32) for n in (5, 1, 40, 12)]
    ref = BaseVisualRetrieverProcessor.score_multi_vector(
        [torch.from_numpy(q) for q in qs], [torch.from_numpy(p) for p in ps]
    ).numpy()
    # colpali-engine pads ragged pages with zero vectors, so a page whose every similarity is
    # negative scores max(..., 0) there; folio strips padding. Padding ours the same way must agree.
    longest = max(len(p) for p in ps)
    padded = [np.concatenate([p, np.zeros((longest - len(p), 16), np.float32)]) for p in ps]
    np.testing.assert_allclose(np.stack([maxsim(q, padded) for q in qs]), ref, rtol=1e-4, atol=1e-4)
    same = [p[:5] for p in ps if len(p) >= 5]
    ref_same = BaseVisualRetrieverProcessor.score_multi_vector(
        [torch.from_numpy(q) for q in qs], [torch.from_numpy(p) for p in same]
    ).numpy()
    np.testing.assert_allclose(np.stack([maxsim(q, same) for q in qs]), ref_same, rtol=1e-4, atol=1e-4)


def test_two_stage_search_is_exact_on_its_candidates_and_finds_a_planted_page() -> None:
    rng = np.random.default_rng(1)

    def unit(a: np.ndarray) -> np.ndarray:
        return (a / np.linalg.norm(a, axis=-1, keepdims=True)).astype(np.float32)

    pages = [unit(rng.standard_normal((int(rng.integers(20, 60)), 32))) for _ in range(300)]
    q = unit(rng.standard_normal((6, 32)))
    pages[123] = np.concatenate([pages[123], q + 0.01])  # contains the query tokens
    m = PageMatrix(pages, sketch_size=8, dtype=np.float16)
    exact = maxsim(q, pages)
    res = m.search(q, candidates=20)
    assert res[0][0] == 123 == int(np.argmax(exact))
    for i, s in res:
        assert s == pytest.approx(float(exact[i]), rel=2e-3)  # float16 storage
    np.testing.assert_allclose(m.score_all(q), exact, rtol=2e-3, atol=2e-3)
    extra = m.search(q, candidates=5, extra=[7])
    assert 7 in {i for i, _ in extra}


def test_pooling_shrinks_and_normalises() -> None:
    rng = np.random.default_rng(2)
    v = rng.standard_normal((30, 8)).astype(np.float32)
    for pooled in (pool_mean(v, 3), pool_hierarchical(v, 3)):
        assert len(pooled) <= 10
        np.testing.assert_allclose(np.linalg.norm(pooled, axis=1), 1.0, rtol=1e-5)
    assert pool_mean(v, 1) is v


def test_from_flat_matches_per_page_construction() -> None:
    rng = np.random.default_rng(3)
    pages = [rng.standard_normal((int(n), 16)).astype(np.float32) for n in rng.integers(1, 50, 40)]
    a = PageMatrix(pages, sketch_size=8)
    b = PageMatrix.from_flat(np.concatenate(pages), np.array([len(p) for p in pages]), sketch_size=8)
    q = rng.standard_normal((4, 16)).astype(np.float32)
    np.testing.assert_allclose(a.score_all(q), b.score_all(q), rtol=1e-5)
    np.testing.assert_allclose(a.sk, b.sk, atol=1e-5)
    assert a.search(q, candidates=5) == b.search(q, candidates=5)
    np.testing.assert_allclose(b.score_pages(q, [3, 0]), maxsim(q, [pages[3], pages[0]]), rtol=1e-5)
