"""What retrieval produces: ranked hits on small units, each with its provenance."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from folio.kernel.model import RegionKind

Modality = Literal["text", "table", "figure", "page"]
"""What a hit is to the reader: ``text`` (sentences, paragraphs, sections), a table, a figure or a page."""

RetrievalStrategy = Literal["hybrid", "bm25", "dense", "summary"]
"""``Retriever.search`` strategies (see ``retrieval.search``)."""


class Source(BaseModel):
    """One retriever's opinion of a hit: which retriever, at what rank (1-based), with what raw score."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    retriever: str  # "bm25" | "dense" | "clip" | "colpali" | "summary" | "rerank:<name>" ...
    rank: int
    score: float


class Hit(BaseModel):
    """A ranked search result on one region (a sentence, table, figure or page).

    ``score`` is the fused score used for ordering (higher is better); ``rank`` is 1-based in the
    final list; ``sources`` keeps every retriever that found it. ``modality`` is ``text`` for
    sentences/paragraphs/sections, ``table``, ``figure`` or ``page``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    region_id: str
    doc_id: str
    version_id: str
    kind: RegionKind
    modality: Modality
    pages: tuple[int, ...]
    score: float
    rank: int
    sources: tuple[Source, ...] = ()

    @property
    def retriever(self) -> str:
        return "+".join([s.retriever for s in self.sources]) or "unknown"
