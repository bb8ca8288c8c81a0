"""Summary-to-detail routing: search section summaries first, then the children of the best sections.

Summaries are extractive by default (heading path, the section's first sentences, table/figure
captions, key terms by tf-idf against the other sections of the same version), computed at ingest
by :class:`SummaryIndexer` into the ``summaries`` table (MiniLM vectors, FTS index on ``text``), or
lazily in memory for versions ingested without it. An OpenAI-compatible LLM can write the summaries
instead (``llm=``); a failed call falls back to the extractive summary for that section.

The seed's warning applies: a concept missing from a summary can hide its section. Routing keeps
several sections per query and every summary carries the section's key terms for that reason.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from folio.ingest.embed import MiniLM, TextEncoder
from folio.ingest.storage.interface import StoreReader, StoreWriter
from folio.ingest.storage.schema import TableSpec, VersionScopedRow, vector_row
from folio.ingest.storage.sql import TEXT_DIM
from folio.kernel.errors import ModelUnavailable
from folio.kernel.index import RegionIndex
from folio.kernel.model import CHILD_KINDS, FigurePayload, Region, TablePayload
from folio.kernel.scope import Scope
from folio.retrieval.cache.version_cache import VersionCache
from folio.retrieval.ranking.fusion import rrf
from folio.retrieval.ranking.rerank import Completer
from folio.retrieval.text import top_k

if TYPE_CHECKING:
    from folio.ingest.pdf.parse import ParsedDocument

logger = logging.getLogger(__name__)

SUMMARIES_TABLE = "summaries"


class SummaryFields(VersionScopedRow):
    """A row of ``summaries`` without its vector: one section's summary and how it was made."""

    text: str
    method: str  # extractive | llm


# A row of ``summaries``: the fields above and the summary's MiniLM ``vector`` (last, as always stored).
SummaryRow = vector_row("SummaryRow", TEXT_DIM, SummaryFields)
SUMMARIES = TableSpec(SUMMARIES_TABLE, SummaryRow)
_TOKEN = re.compile(r"\w{3,}", re.UNICODE)
_STOP = frozenset(
    "the and for that with this from are was were which when where will shall must can may not but "
    "have has had been their there these those into than then also such each other more most some "
    "any all its our your you "
    "der die das und ist des den dem ein eine mit von".split()
)


def _terms(text: str) -> list[str]:
    return [t for t in (w.lower() for w in _TOKEN.findall(text)) if t not in _STOP and not t.isdigit()]


def extractive_summaries(
    regions: Iterable[Region] | RegionIndex, *, sentences: int = 2, key_terms: int = 8, max_chars: int = 700
) -> list[tuple[Region, str]]:
    """``(section, summary)`` for every section of one version that has any text under it."""
    index = regions if isinstance(regions, RegionIndex) else RegionIndex(regions)
    sections = [r for r in index.regions() if r.kind == "section"]
    bodies: dict[str, str] = {}
    for s in sections:
        bodies[s.region_id] = " ".join(r.text for r in index.descendants(s.region_id)) or s.text
    df: Counter[str] = Counter()
    tf: dict[str, Counter[str]] = {}
    for sid, body in bodies.items():
        tf[sid] = Counter(_terms(body))
        df.update(tf[sid].keys())
    n = max(1, len(sections))
    out: list[tuple[Region, str]] = []
    for s in sorted(sections, key=lambda r: r.seq):
        sid = s.region_id
        if not bodies[sid].strip():
            continue
        lead = [r.text for r in index.in_section(sid, "sentence")[:sentences]]
        if not lead:
            lead = [bodies[sid][:300]]
        figures = [r.payload for r in index.in_section(sid, "figure")]
        tables = [r.payload for r in index.in_section(sid, "table")]
        captions = [p.caption if isinstance(p, FigurePayload) else "" for p in figures]
        captions += [" | ".join(p.header) if isinstance(p, TablePayload) else "" for p in tables]
        weights = {t: c * math.log(1 + n / df[t]) for t, c in tf[sid].items()}
        terms = [t for t, _ in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:key_terms]]
        parts = [" > ".join(s.heading_path) or s.text.split("\n", 1)[0], " ".join(lead)]
        parts += [c for c in captions[:3] if c]
        if terms:
            parts.append("Key terms: " + ", ".join(terms))
        out.append((s, "\n".join(p for p in parts if p)[:max_chars]))
    return out


def llm_summary(client: Completer, section: Region, body: str) -> str:
    messages = [
        {
            "role": "system",
            "content": "Summarize this passage for retrieval in 2-3 concise sentences. Preserve "
            "important concepts, terms, numbers and names. Add no new facts.",
        },
        {"role": "user", "content": f"Section: {' > '.join(section.heading_path)}\n\n{body[:6000]}"},
    ]
    return " > ".join(section.heading_path) + "\n" + client.complete(messages, max_tokens=200).strip()


class SummaryIndexer:
    """``VersionIndexer``: section summaries with MiniLM vectors into the ``summaries`` table."""

    name = "summaries"

    def __init__(
        self,
        encoder: TextEncoder | None = None,
        *,
        llm: Completer | None = None,
        llm_max_sections: int = 200,
    ) -> None:
        """``encoder``: what embeds the summaries (None: MiniLM with the documented defaults of
        ``Settings.embedding``; ``retrieval.visual.indexers_from_settings`` hands in the configured one)."""
        self.encoder = encoder if encoder is not None else MiniLM()
        self.llm = llm
        self.llm_max_sections = llm_max_sections

    def summarize(self, regions: Iterable[Region]) -> list[tuple[Region, str, str]]:
        index = RegionIndex(regions)
        pairs = extractive_summaries(index)
        out: list[tuple[Region, str, str]] = []
        for i, (section, text) in enumerate(pairs):
            method = "extractive"
            if self.llm is not None and i < self.llm_max_sections:
                body = " ".join(r.text for r in index.descendants(section.region_id)) or section.text
                try:
                    text, method = llm_summary(self.llm, section, body), "llm"
                except ModelUnavailable as exc:
                    logger.warning("LLM summary of %s failed, extractive kept: %s", section.region_id, exc)
            out.append((section, text, method))
        return out

    def index_version(self, store: StoreWriter, parsed: ParsedDocument) -> int:
        rows = self.summarize(parsed.regions)
        if not rows:
            return 0
        vecs = self.encoder.encode([t for _, t, _ in rows])
        store.add(
            SUMMARIES,
            [
                SummaryRow(
                    region_id=s.region_id,
                    doc_id=s.doc_id,
                    version_id=s.version_id,
                    kind="section",
                    page=s.first_page,
                    text=t,
                    method=m,
                    vector=v.tolist(),
                )
                for (s, t, m), v in zip(rows, vecs, strict=True)
            ],
        )
        store.index_text(SUMMARIES_TABLE, "text")
        return len(rows)


class _BM25:
    """Okapi BM25 over a few thousand short texts (summaries), in memory."""

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = [Counter(_terms(t)) for t in texts]
        self.lens = np.array([sum(d.values()) for d in self.docs], dtype=np.float32)
        self.avg = float(self.lens.mean()) if len(self.lens) else 1.0
        df: Counter[str] = Counter()
        for d in self.docs:
            df.update(d.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.k1, self.b = k1, b

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(len(self.docs), dtype=np.float32)
        for t in set(_terms(query)):
            idf = self.idf.get(t)
            if idf is None:
                continue
            for i, d in enumerate(self.docs):
                f = d.get(t)
                if f:
                    out[i] += (
                        idf
                        * f
                        * (self.k1 + 1)
                        / (f + self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg))
                    )
        return out


@dataclass
class _VersionSummaries:
    section_ids: list[str]
    pages: list[int]
    texts: list[str]
    vectors: np.ndarray
    bm25: _BM25


@dataclass(frozen=True)
class RoutedSection:
    section_id: str
    doc_id: str
    version_id: str
    rank: int
    score: float


class SummaryRouter:
    """Routes a query to the best sections of the versions in scope."""

    def __init__(self, store: StoreReader, encoder: TextEncoder, *, max_versions: int = 64) -> None:
        self.store = store
        self.encoder = encoder
        self.versions: VersionCache[_VersionSummaries] = VersionCache(store, max_versions)

    def clear(self) -> None:
        """Forget the cached version summaries (``Retriever.refresh``)."""
        self.versions.clear()

    def _load(self, version: tuple[str, str]) -> _VersionSummaries:
        """The version's summaries, read (or computed) once per version stamp."""
        return self.versions.get(*version, lambda: self._read(version))

    def _read(self, version: tuple[str, str]) -> _VersionSummaries:
        data = self.store.scan_versions(SUMMARIES_TABLE, [version], ["region_id", "page", "text", "vector"])
        rows: list[dict[str, Any]] = data.to_pylist() if data is not None else []
        if rows:
            ids = [r["region_id"] for r in rows]
            pages = [int(r["page"]) for r in rows]
            texts = [r["text"] for r in rows]
            vecs = np.array([r["vector"] for r in rows], dtype=np.float32)
        else:  # computed lazily for versions ingested without the SummaryIndexer
            pairs = extractive_summaries(self.store.region_index(*version))
            ids = [s.region_id for s, _ in pairs]
            pages = [s.first_page for s, _ in pairs]
            texts = [t for _, t in pairs]
            vecs = (
                np.asarray(self.encoder.encode(texts), dtype=np.float32)
                if texts
                else np.zeros((0, TEXT_DIM), np.float32)
            )
        vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12) if len(vecs) else vecs
        return _VersionSummaries(ids, pages, texts, vecs, _BM25(texts))

    def route(self, query: str, query_vector: np.ndarray, scope: Scope, sections: int) -> list[RoutedSection]:
        dense: list[tuple[str, float]] = []
        sparse: list[tuple[str, float]] = []
        owner: dict[str, tuple[str, str]] = {}
        for key in scope.versions:
            vs = self._load(key)
            if not vs.section_ids:
                continue
            for sid in vs.section_ids:
                owner[sid] = key
            ds = vs.vectors @ query_vector
            for i in top_k(ds, sections * 4):
                dense.append((vs.section_ids[i], float(ds[i])))
            bs = vs.bm25.scores(query)
            for i in top_k(bs, sections * 4):
                if bs[i] > 0:
                    sparse.append((vs.section_ids[i], float(bs[i])))
        dense.sort(key=lambda x: -x[1])
        sparse.sort(key=lambda x: -x[1])
        fused = rrf({"summary_dense": dense, "summary_bm25": sparse})[:sections]
        return [RoutedSection(sid, *owner[sid], rank=i + 1, score=s) for i, (sid, s, _) in enumerate(fused)]

    def children(self, routed: Sequence[RoutedSection]) -> dict[str, RoutedSection]:
        """Every searchable child region under the routed sections (subsections included) → its route."""
        out: dict[str, RoutedSection] = {}
        for rs in routed:
            index = self.store.region_index(rs.doc_id, rs.version_id)
            stack, seen = [rs.section_id], set()
            while stack:
                sid = stack.pop()
                if sid in seen:
                    continue
                seen.add(sid)
                for kind in CHILD_KINDS:
                    for r in index.in_section(sid, kind):
                        out.setdefault(r.region_id, rs)
                stack.extend(c.region_id for c in index.children(sid) if c.kind == "section")
        return out
