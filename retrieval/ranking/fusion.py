"""Reciprocal-rank fusion and per-modality quotas: pure functions over ranked id lists.

RRF gives each item ``sum_r w_r / (K + rank_r)`` over the lists ``r`` that contain it (rank is 1-based),
the formula of Cormack et al. and of LanceDB's ``RRFReranker``; ``K`` must be positive. Raw scores of
different retrievers (BM25, cosine, MaxSim) are not comparable, ranks are, which is why fusion uses
only ranks. Ties are broken by id so the result does not depend on the order the lists are given in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar, get_args

from folio.kernel.errors import InvalidRequest
from folio.kernel.hit import Modality, Source

DEFAULT_RRF_K = 60
T = TypeVar("T")
K = TypeVar("K")


def rrf(
    ranked: Mapping[str, Sequence[tuple[str, float]]],
    *,
    k: int = DEFAULT_RRF_K,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[str, float, tuple[Source, ...]]]:
    """Fuse ranked lists ``{retriever: [(id, raw_score), ...]}`` (best first) into one list.

    Returns ``(id, fused_score, sources)`` best first; ``sources`` keep each retriever's 1-based rank
    and raw score. An id repeated within one list counts only at its best rank.

    >>> [i for i, _, _ in rrf({"bm25": [("a", 9.0), ("b", 3.0)], "dense": [("b", 0.9), ("c", 0.5)]})]
    ['b', 'a', 'c']
    """
    if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
        raise InvalidRequest(f"RRF constant K must be a positive integer, got {k!r}")
    scores: dict[str, float] = {}
    sources: dict[str, list[Source]] = {}
    for name in sorted(ranked):
        w = 1.0 if weights is None else float(weights.get(name, 1.0))
        if w < 0:
            raise InvalidRequest(f"RRF weight for {name!r} must be >= 0, got {w}")
        seen: set[str] = set()
        rank = 0
        for item_id, raw in ranked[name]:
            if item_id in seen:
                continue
            seen.add(item_id)
            rank += 1
            scores[item_id] = scores.get(item_id, 0.0) + w / (k + rank)
            sources.setdefault(item_id, []).append(Source(retriever=name, rank=rank, score=float(raw)))
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return [(i, scores[i], tuple(sources[i])) for i in order]


def page_first(
    hits: Sequence[T],
    page_of: Callable[[T], tuple[str, ...]],
    ranked_pages: Mapping[str, Sequence[tuple[str, ...]]],
    *,
    k: int = DEFAULT_RRF_K,
    decay: float = 0.5,
) -> list[tuple[T, float]]:
    """Order hits by the strength of their page, covering distinct pages before deepening one.

    Pages are fused like items: a page's score is ``sum_r 1 / (K + page_rank_r)`` where ``page_rank_r`` is
    the rank of the page's first candidate in list ``r``. A hit's new score is its page's score times
    ``decay`` per hit of the same page before it (the page's best hit keeps the page score), and hits are
    ordered by that score (ties: the original order). ``decay=0.5`` nearly covers every page once before
    any second hit; ``decay=1`` sends a page's hits together. ``ranked_pages`` gives each list's
    candidates' page keys, best first.

    >>> hs = ["a1", "a2", "b1"]
    >>> pages = {"a1": ("a",), "a2": ("a",), "b1": ("b",)}
    >>> [h for h, _ in page_first(hs, pages.__getitem__, {"bm25": [("a",), ("a",), ("b",)], "dense": [("b",)]})]
    ['b1', 'a1', 'a2']
    """
    score: dict[tuple[str, ...], float] = {}
    for name in sorted(ranked_pages):
        seen: set[tuple[str, ...]] = set()
        for key in ranked_pages[name]:
            if key in seen:
                continue
            seen.add(key)
            score[key] = score.get(key, 0.0) + 1.0 / (k + len(seen))
    depth: dict[tuple[str, ...], int] = {}
    keyed = []
    for pos, h in enumerate(hits):
        key = page_of(h)
        d = depth.get(key, 0)
        depth[key] = d + 1
        keyed.append((pos, h, score.get(key, 0.0) * decay**d))
    keyed.sort(key=lambda x: (-x[2], x[0]))
    return [(h, s) for _, h, s in keyed]


def check_quotas(quotas: Mapping[Modality, int] | None, k: int) -> dict[Modality, int]:
    """Validate ``{modality: minimum slots}``; the minimums together may not exceed ``k``.

    >>> check_quotas({"figure": 2}, 10)
    {'figure': 2}
    >>> check_quotas({"video": 1}, 10)
    Traceback (most recent call last):
    ...
    folio.kernel.errors.InvalidRequest: unknown modality 'video' in quotas; use text, table, figure or page
    """
    if not quotas:
        return {}
    out: dict[Modality, int] = {}
    for name, n in quotas.items():
        if name not in get_args(Modality):  # Python callers: an unknown name would never match
            raise InvalidRequest(f"unknown modality {name!r} in quotas; use text, table, figure or page")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InvalidRequest(f"quota for {name!r} must be a non-negative integer, got {n!r}")
        if n:
            out[name] = n
    if sum(out.values()) > k:
        raise InvalidRequest(f"quotas add up to {sum(out.values())}, more than k={k}")
    return out


def apply_quotas(
    items: Sequence[T], k: int, quotas: Mapping[K, int], modality: Callable[[T], K]
) -> list[T]:
    """The best ``k`` items such that each modality gets at least its quota when it has enough items.

    ``items`` are best first. Reserved slots go to each modality's best items, the remaining slots to
    the best of the rest; the result keeps the input order, so a reserved item never outranks a
    better one. Quotas are minimums, never caps.

    >>> apply_quotas(["t1", "t2", "t3", "f1"], 2, {"f": 1}, lambda s: s[0])
    ['t1', 'f1']
    """
    if not quotas:
        return list(items[:k])
    chosen: set[int] = set()
    taken: dict[K, int] = {}
    for i, item in enumerate(items):
        m = modality(item)
        if taken.get(m, 0) < quotas.get(m, 0):
            chosen.add(i)
            taken[m] = taken.get(m, 0) + 1
    for i in range(len(items)):
        if len(chosen) >= k:
            break
        chosen.add(i)
    # Reserved slots can only exceed k when quotas exceed k, which check_quotas forbids.
    return [items[i] for i in sorted(chosen)][:k]
