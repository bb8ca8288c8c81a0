"""Late-interaction (ColBERT/ColPali) MaxSim scoring in numpy.

``score(q, page) = sum_i max_j <q_i, p_j>``: every query token picks its best page token. For many
pages the page vectors are kept as one flat matrix with row offsets, so scoring is one matrix
product followed by a segmented max (``np.maximum.reduceat``), not a Python loop per page.

At scale (10,000 pages x ~1,000 vectors) even that is too much work for an interactive query, so
:class:`PageMatrix` supports two-stage scoring: a cheap candidate stage over a few pooled vectors
per page ("sketch"), then exact MaxSim over the full vectors of the candidates only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from folio.retrieval.threads import blas_single_thread


def maxsim(q: np.ndarray, pages: Sequence[np.ndarray]) -> np.ndarray:
    """Exact MaxSim of one query ``(nq, d)`` against each page ``(n_i, d)``; returns ``(len(pages),)``.

    Empty pages score 0. Vectors are used as given (ColPali models already L2-normalise them).

    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> float(maxsim(q, [np.array([[1.0, 0.0], [0.5, 0.5]])])[0])
    1.5
    """
    if not len(pages):
        return np.zeros(0, dtype=np.float32)
    lens = np.array([len(p) for p in pages])
    nonempty = [p for p in pages if len(p)]
    out = np.zeros(len(pages), dtype=np.float32)
    if not nonempty:
        return out
    flat = np.concatenate(nonempty).astype(np.float32, copy=False)
    offsets = np.concatenate([[0], np.cumsum(lens[lens > 0])[:-1]])
    out[lens > 0] = flat_maxsim(np.asarray(q, dtype=np.float32), flat, offsets)
    return out


def flat_maxsim(q: np.ndarray, flat: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """MaxSim against pages stored as consecutive rows of ``flat``; page i starts at ``offsets[i]``.

    Every page must be non-empty (``reduceat`` of an empty segment returns the next row's value).
    """
    if flat.dtype != np.float32:
        flat = flat.astype(np.float32)
    sims = q @ flat.T  # (nq, N)
    out: np.ndarray = np.maximum.reduceat(sims, offsets, axis=1).sum(axis=0)
    return out


def pool_mean(vectors: np.ndarray, factor: int) -> np.ndarray:
    """Mean-pool consecutive groups of ``factor`` vectors, then re-normalise (factor <= 1: unchanged)."""
    if factor <= 1 or len(vectors) <= 1:
        return vectors
    n = len(vectors)
    groups = np.arange(n) // factor
    sums = np.zeros((groups[-1] + 1, vectors.shape[1]), dtype=np.float32)
    np.add.at(sums, groups, vectors.astype(np.float32))
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    pooled: np.ndarray = (sums / np.maximum(norms, 1e-12)).astype(np.float32)
    return pooled


def pool_hierarchical(vectors: np.ndarray, factor: int) -> np.ndarray:
    """Cluster similar vectors (Ward linkage on cosine geometry) into ``ceil(n/factor)`` means.

    This is the pooling of colpali-engine's ``HierarchicalTokenPooler`` (Clavié et al.): neighbouring
    patches of white space collapse into one vector, distinct content keeps its own.
    """
    n = len(vectors)
    if factor <= 1 or n <= 2:
        return vectors
    from scipy.cluster.hierarchy import fcluster, linkage

    v = vectors.astype(np.float32)
    target = max(1, int(np.ceil(n / factor)))
    labels = fcluster(linkage(v.astype(np.float64), method="ward"), t=target, criterion="maxclust")
    out = np.zeros((labels.max(), v.shape[1]), dtype=np.float32)
    np.add.at(out, labels - 1, v)
    out = out[np.abs(out).sum(axis=1) > 0]
    pooled: np.ndarray = (out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)).astype(
        np.float32
    )
    return pooled


def sketch(vectors: np.ndarray, size: int) -> np.ndarray:
    """At most ``size`` representative vectors of one page for the candidate stage (mean pooling)."""
    if len(vectors) <= size:
        v = vectors.astype(np.float32)
        normed: np.ndarray = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        return normed
    return pool_mean(vectors, int(np.ceil(len(vectors) / size)))


class PageMatrix:
    """Many pages' multivectors in memory, with a sketch per page for two-stage scoring.

    Full vectors are held as float32 by default. ``dtype=np.float16`` halves the memory, but
    numpy converts float16 slowly (~1 s per million 128-dim vectors on two cores), so candidates
    then cost more to rescore. Sketches are float32. ``score_all`` is exact over every page;
    ``search`` scores the sketches of all pages, keeps the best ``candidates`` (plus any ``extra``
    pages the caller knows are relevant) and scores those exactly, one small matrix product per
    page (no concatenation).
    """

    def __init__(
        self, pages: Sequence[np.ndarray], *, sketch_size: int = 16, dtype: Any = np.float32
    ) -> None:
        self.n = len(pages)
        lens = np.array([max(1, len(p)) for p in pages], dtype=np.int64)
        dim = next((p.shape[1] for p in pages if len(p)), 1)
        fixed = [p if len(p) else np.zeros((1, dim), dtype=np.float32) for p in pages]
        self.offsets = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        self.lens = lens
        self.full = np.concatenate(fixed).astype(dtype) if fixed else np.zeros((0, dim), dtype)
        sk = [sketch(p, sketch_size) for p in fixed]
        sk_lens = np.array([len(s) for s in sk], dtype=np.int64)
        self.sk_offsets = np.concatenate([[0], np.cumsum(sk_lens)[:-1]]).astype(np.int64)
        self.sk = np.concatenate(sk).astype(np.float32) if sk else np.zeros((0, dim), np.float32)

    @classmethod
    def from_flat(cls, full: np.ndarray, lens: np.ndarray, *, sketch_size: int = 16) -> PageMatrix:
        """Build from an already concatenated ``(sum(lens), d)`` matrix (no per-page copies).

        Sketches are group means computed with ``np.add.reduceat`` in slices, so memory stays
        near the size of ``full`` even for millions of vectors.
        """
        self = cls.__new__(cls)
        lens = np.asarray(lens, dtype=np.int64)
        self.n = len(lens)
        self.lens = lens
        self.offsets = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        self.full = full
        group = np.maximum(1, np.ceil(lens / sketch_size).astype(np.int64))
        starts: list[np.ndarray] = []
        for off, n, g in zip(self.offsets, lens, group, strict=True):
            starts.append(np.arange(off, off + n, g))
        sk_starts = np.concatenate(starts)
        sk_lens = np.array([len(s) for s in starts], dtype=np.int64)
        sk = np.empty((len(sk_starts), full.shape[1]), dtype=np.float32)
        bounds = np.append(sk_starts, len(full))
        step = 4096
        for i in range(0, len(sk_starts), step):
            lo, hi = int(bounds[i]), int(bounds[min(i + step, len(sk_starts))])
            sk[i : i + step] = np.add.reduceat(
                self.full[lo:hi].astype(np.float32), sk_starts[i : i + step] - lo
            )
        sk /= np.maximum(np.linalg.norm(sk, axis=1, keepdims=True), 1e-12)
        self.sk = sk
        self.sk_offsets = np.concatenate([[0], np.cumsum(sk_lens)[:-1]]).astype(np.int64)
        return self

    def page(self, i: int) -> np.ndarray:
        o = int(self.offsets[i])
        return self.full[o : o + int(self.lens[i])]

    def score_all(self, q: np.ndarray) -> np.ndarray:
        if not self.n:
            return np.zeros(0, dtype=np.float32)
        return flat_maxsim(q.astype(np.float32), self.full, self.offsets)

    def score_pages(self, q: np.ndarray, idx: Sequence[int] | np.ndarray) -> np.ndarray:
        """Exact MaxSim for the pages at ``idx`` only."""
        q32 = q.astype(np.float32, copy=False)
        out = np.empty(len(idx), dtype=np.float32)
        for j, i in enumerate(idx):
            page = self.page(int(i))
            out[j] = (q32 @ page.astype(np.float32, copy=False).T).max(axis=1).sum()
        return out

    def search(
        self, q: np.ndarray, *, candidates: int = 100, extra: Sequence[int] = ()
    ) -> list[tuple[int, float]]:
        """``(page index, exact MaxSim)`` best first, over sketch candidates plus ``extra``."""
        if not self.n:
            return []
        q32 = q.astype(np.float32)
        with blas_single_thread():
            if self.n <= candidates:
                idx = np.arange(self.n)
            else:
                approx = flat_maxsim(q32, self.sk, self.sk_offsets)
                idx = np.argpartition(-approx, candidates - 1)[:candidates]
            pool = np.unique(np.concatenate([idx, np.asarray(list(extra), dtype=np.int64)])).astype(np.int64)
            exact = self.score_pages(q32, pool)
        order = np.argsort(-exact, kind="stable")
        return [(int(pool[j]), float(exact[j])) for j in order]
