"""Text children: BM25 through LanceDB's native full-text index, dense MiniLM search, both scoped.

Dense search runs in process over cached numpy copies of each version's chunk vectors. A version's rows
change only when they are replaced as a whole (``redo_degraded``), so the cache is keyed by
``(doc_id, version_id, stamp)`` (``StoreReader.version_stamp``) and never goes stale; it is bounded by
rows. Brute force over normalised float32 vectors costs ~6 ms per 100k vectors on two cores, which beats
LanceDB's unindexed scan (~250 ms per 100k) and needs no index build, and it is exact: every query scoped to
a few documents takes it. Scopes over ``ann_threshold`` regions (``FOLIO_ANN_SCOPE_REGIONS``: unscoped
queries over a large store) are searched in the store instead, never copied into the query process: through the
chunks' ANN index when the store has one (``folio.ingest.storage.indexes``; recall against exact search:
``benchmarks/ann_recall.py``), else by LanceDB's flat scan (exact, ~250 ms per 100k rows, and no memory held
between queries; maintenance builds the index once the table passes ``FOLIO_ANN_MIN_ROWS``).

BM25 goes to LanceDB FTS with the scope as a prefilter. User text is reduced to its word tokens
first, so punctuation, quotes, operators and field syntax are never interpreted as query syntax.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from folio.ingest.embed import TextEncoder
from folio.ingest.storage.interface import StoreReader, StoreWriter
from folio.kernel.scope import Scope
from folio.kernel.textnorm import fts_text
from folio.retrieval.threads import torch_single_thread

logger = logging.getLogger(__name__)

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_TERMS = 64
# Standard abbreviations of document nouns, both ways: a question says "catalog number", the footer
# "Cat. No."; a question says "Fig. 3", the caption "Figure 3". Added to the full-text query only (an
# OR query: an extra term can add a match, never remove one).
_ABBREVIATIONS = {
    "number": "no", "catalog": "cat", "catalogue": "cat", "figure": "fig", "figures": "figs", "volume": "vol",
    "section": "sec", "chapter": "ch", "equation": "eq", "reference": "ref", "department": "dept",
    "approximately": "approx", "corporation": "corp", "incorporated": "inc", "company": "co", "limited": "ltd",
    "international": "intl", "government": "govt", "quantity": "qty", "amount": "amt", "account": "acct",
    "telephone": "tel", "manufacturer": "mfr", "maximum": "max", "minimum": "min", "average": "avg",
    "standard": "std", "version": "ver", "revision": "rev", "appendix": "app", "nummer": "nr",
    "abbildung": "abb", "tabelle": "tab",
}
_EXPANSIONS = dict(_ABBREVIATIONS)
for _full, _short in _ABBREVIATIONS.items():  # "cat" -> "catalog" (the first full form), not "catalogue"
    if _short not in ("no", "co", "min", "max"):  # too common as words to expand
        _EXPANSIONS.setdefault(_short, _full)


class Candidate(NamedTuple):
    """One retriever's hit on a stored row, before fusion."""

    region_id: str
    doc_id: str
    version_id: str
    kind: str
    page: int
    score: float


def fts_query(text: str) -> str:
    """The words of ``text`` joined by spaces: safe to hand to the FTS engine as a match query.

    >>> fts_query('C++ "unbalanced (AND title:foo) 75%')
    'C unbalanced AND title foo 75'
    >>> fts_query("Which catalog number is printed?")
    'Which catalog number is printed cat no'
    """
    terms = [t for t in _WORD.findall(text) if len(t) <= 64][:MAX_QUERY_TERMS]
    have = {t.casefold() for t in terms}
    extra = [_EXPANSIONS[t] for t in dict.fromkeys(x.casefold() for x in terms) if t in _EXPANSIONS
             and _EXPANSIONS[t] not in have]
    return " ".join(terms + extra[: max(0, MAX_QUERY_TERMS - len(terms))])


@dataclass
class VersionVectors:
    """One version's chunk vectors and the columns needed to filter and report them."""

    region_ids: np.ndarray  # object
    doc_ids: np.ndarray  # object
    version_ids: np.ndarray  # object
    kinds: np.ndarray  # object
    pages: np.ndarray  # int32
    vectors: np.ndarray  # float32 (n, d), L2-normalised

    @property
    def rows(self) -> int:
        return len(self.region_ids)

    @classmethod
    def concat(cls, parts: Sequence[VersionVectors]) -> VersionVectors:
        if len(parts) == 1:
            return parts[0]
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in cls.__dataclass_fields__))

    def take(self, idx: np.ndarray, scores: np.ndarray) -> list[Candidate]:
        return [
            Candidate(
                str(self.region_ids[i]),
                str(self.doc_ids[i]),
                str(self.version_ids[i]),
                str(self.kinds[i]),
                int(self.pages[i]),
                float(s),
            )
            for i, s in zip(idx, scores, strict=True)
        ]


def load_vectors(
    store: StoreReader, table: str, keys: Iterable[tuple[str, str]], *, vector_column: str = "vector"
) -> dict[tuple[str, str], VersionVectors]:
    """Read the vectors of several versions from a version-scoped table in one scan (none when it does not exist)."""
    keys = list(keys)
    if not keys:
        return {}
    data = store.scan_versions(table, keys, ["region_id", "doc_id", "version_id", "kind", "page", vector_column])
    if data is None:
        return {}
    names = set(data.schema.names)
    out: dict[tuple[str, str], VersionVectors] = {}
    if data.num_rows == 0:
        dim = data.schema.field(vector_column).type.list_size
        empty = VersionVectors(
            *(np.array([], dtype=object),) * 4, np.array([], np.int32), np.zeros((0, dim), np.float32)
        )
        return {k: empty for k in keys}
    doc = np.array(data.column("doc_id").to_pylist(), dtype=object)
    ver = np.array(data.column("version_id").to_pylist(), dtype=object)
    rid = np.array(data.column("region_id").to_pylist(), dtype=object)
    kind = (
        np.array(data.column("kind").to_pylist(), dtype=object)
        if "kind" in names
        else np.full(len(rid), "figure", object)
    )
    page = data.column("page").to_numpy().astype(np.int32)
    vec_col = data.column(vector_column).combine_chunks()
    dim = vec_col.type.list_size
    vecs = vec_col.values.to_numpy(zero_copy_only=False).reshape(-1, dim).astype(np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = vecs / np.maximum(norms, 1e-12)
    for key in keys:
        m = (doc == key[0]) & (ver == key[1])
        out[key] = VersionVectors(rid[m], doc[m], ver[m], kind[m], page[m], np.ascontiguousarray(vecs[m]))
    return out


class VectorCache:
    """LRU of per-version vectors for one table, bounded by total rows; plus a few whole-scope matrices."""

    def __init__(self, table_name: str, *, max_rows: int = 3_000_000, vector_column: str = "vector") -> None:
        self.table_name = table_name
        self.vector_column = vector_column
        self.max_rows = max_rows
        self._versions: OrderedDict[tuple[str, str, str], VersionVectors] = OrderedDict()
        self._scopes: OrderedDict[tuple[tuple[str, str, str], ...], VersionVectors] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, store: StoreReader, scope: Scope) -> VersionVectors | None:
        if scope.empty or not store.has_table(self.table_name):
            return None
        key = tuple((d, v, store.version_stamp(d, v)) for d, v in scope.versions)
        with self._lock:
            hit = self._scopes.get(key)
            if hit is not None:
                self._scopes.move_to_end(key)
                return hit
            missing = [k for k in key if k not in self._versions]
        pairs = [(d, v) for d, v, _ in missing]
        loaded = load_vectors(store, self.table_name, pairs, vector_column=self.vector_column) if missing else {}
        with self._lock:
            self._versions.update({k: loaded[k[:2]] for k in missing if k[:2] in loaded})
            parts = [self._versions[k] for k in key if k in self._versions]
            for k in key:
                if k in self._versions:
                    self._versions.move_to_end(k)
            merged = VersionVectors.concat(parts) if parts else None
            if merged is not None and len(parts) > 1:
                self._scopes[key] = merged
                while len(self._scopes) > 4:
                    self._scopes.popitem(last=False)
            while sum(v.rows for v in self._versions.values()) > self.max_rows and len(self._versions) > len(
                key
            ):
                self._versions.popitem(last=False)
        return merged


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, best first (ties by index)."""
    if k <= 0 or not len(scores):
        return np.zeros(0, dtype=np.int64)
    if k < len(scores):
        idx = np.argpartition(-scores, k - 1)[:k]
    else:
        idx = np.arange(len(scores))
    return idx[np.lexsort((idx, -scores[idx]))]


# How many times a ranked search is widened when row units of one table crowd its list (``unique_regions``).
_WIDEN_TRIES = 4


def unique_regions(search: Callable[[int], tuple[list[Candidate], bool]], limit: int, fetch: int) -> list[Candidate]:
    """The first ``limit`` hits of ``search(fetch)`` with each region once, at its best rank.

    A table's row units are chunks with the table's region id (``folio.ingest.row_units``), so a
    ranked list can hold one region several times; each occurrence after the first is dropped and
    the search is run again wider (``search`` also says whether it returned everything there is)
    until ``limit`` distinct regions are found. A list without repeats is returned as searched.
    """
    out: list[Candidate] = []
    for _ in range(_WIDEN_TRIES):
        hits, exhausted = search(fetch)
        best: dict[str, Candidate] = {}
        for h in hits:
            best.setdefault(h.region_id, h)
        out = list(best.values())
        if len(out) == len(hits) or len(out) >= limit or exhausted:
            break
        fetch *= 4
    return out[:limit]


DEFAULT_ANN_SCOPE_REGIONS = 100_000


class TextRetriever:
    """BM25 and dense search over the ``chunks`` table within a :class:`Scope`."""

    def __init__(
        self, store: StoreReader, encoder: TextEncoder, *, ann_threshold: int = DEFAULT_ANN_SCOPE_REGIONS
    ) -> None:
        self.store = store
        self.encoder = encoder
        self.ann_threshold = ann_threshold
        self._qlock = threading.Lock()
        self.clear()

    def clear(self) -> None:
        """Forget the cached vectors and query vectors (``Retriever.refresh``)."""
        self.cache = VectorCache("chunks")
        self._fts_ready = False
        with self._qlock:
            self._qcache: OrderedDict[str, np.ndarray] = OrderedDict()

    def embed_query(self, query: str) -> np.ndarray:
        with self._qlock:
            hit = self._qcache.get(query)
            if hit is not None:
                self._qcache.move_to_end(query)
                return hit
        encode_queries = getattr(self.encoder, "encode_queries", None)
        if encode_queries is not None:  # ingest.embed.MiniLM: fp32 ONNX, one thread, no global lock
            vec = np.asarray(encode_queries([query]), dtype=np.float32)[0]
        else:
            with torch_single_thread():
                vec = np.asarray(self.encoder.encode([query]), dtype=np.float32)[0]
        vec = np.asarray(vec / max(float(np.linalg.norm(vec)), 1e-12), dtype=np.float32)
        with self._qlock:
            self._qcache[query] = vec
            while len(self._qcache) > 1024:
                self._qcache.popitem(last=False)
        return vec

    def bm25(
        self, query: str, scope: Scope, limit: int, *, region_ids: Iterable[str] | None = None
    ) -> list[Candidate]:
        q = fts_text(fts_query(query))
        if not q or scope.empty or limit <= 0:
            return []
        if not self._fts_ready:
            # The index exists once any version was committed; checked until then, never after.
            self._fts_ready = self.store.has_fts()
            if not self._fts_ready:
                return []
        allowed = set(region_ids) if region_ids is not None else None

        def search(fetch: int) -> tuple[list[Candidate], bool]:
            rows = self.store.fts(q, scope, fetch)
            out = [
                Candidate(
                    r["region_id"], r["doc_id"], r["version_id"], r["kind"], int(r["page"]), float(r["_score"])
                )
                for r in rows
                if scope.accepts(r["doc_id"], r["version_id"], int(r["page"]), r["kind"])
                and (allowed is None or r["region_id"] in allowed)
            ]
            return out, len(rows) < fetch

        return unique_regions(search, limit, limit if allowed is None else max(limit * 5, 500))

    def dense(
        self, query: str, scope: Scope, limit: int, *, region_ids: Iterable[str] | None = None
    ) -> list[Candidate]:
        if scope.empty or limit <= 0:
            return []
        qv = self.embed_query(query)
        if region_ids is None and scope.regions > self.ann_threshold:
            return self._dense_store(qv, scope, limit)
        vv = self.cache.get(self.store, scope)
        if vv is None or not vv.rows:
            return []
        mask = np.ones(vv.rows, dtype=bool)
        if scope.pages is not None:
            mask &= np.isin(vv.pages, np.fromiter(scope.pages, dtype=np.int32))
        if scope.kinds is not None:
            mask &= np.isin(vv.kinds, np.array(sorted(scope.kinds), dtype=object))
        if region_ids is not None:
            mask &= np.isin(vv.region_ids, np.array(list(region_ids), dtype=object))
        scores = vv.vectors @ qv
        if not mask.all():
            scores = np.where(mask, scores, -np.inf)
        allowed = int(mask.sum())

        def search(fetch: int) -> tuple[list[Candidate], bool]:
            idx = top_k(scores, min(fetch, allowed))
            return vv.take(idx, scores[idx]), fetch >= allowed

        return unique_regions(search, limit, limit)

    def _dense_store(self, qv: np.ndarray, scope: Scope, limit: int) -> list[Candidate]:
        """Dense search of a wide scope in the store: its ANN index, or a flat scan where it has none."""
        def search(fetch: int) -> tuple[list[Candidate], bool]:
            rows = self.store.vector_search(qv, scope, fetch)
            out = [
                Candidate(
                    r["region_id"],
                    r["doc_id"],
                    r["version_id"],
                    r["kind"],
                    int(r["page"]),
                    1.0 - float(r["_distance"]),
                )
                for r in rows
            ]
            return out, len(rows) < fetch

        return unique_regions(search, limit, limit)


def ensure_scalar_indexes(store: StoreWriter) -> list[str]:
    """BTREE indexes on ``chunks.version_id`` and ``chunks.doc_id`` (the scope prefilter columns).

    Worth it once a store holds many versions: the FTS prefilter then reads the index instead of
    scanning the columns. Rows added later are still found (LanceDB scans unindexed fragments);
    re-run after large ingests. Returns the columns that got a new index (``StoreWriter.ensure_scalar_indexes``).
    """
    return store.ensure_scalar_indexes()
