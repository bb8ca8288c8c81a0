"""One search as a value: what ``Retriever.search`` and ``Retriever.search_detailed`` take.

A module of its own, light to import (no channel, model or store), so that the api builds its queries without
loading the retriever (``folio docs`` never does)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from folio.kernel.hit import Modality, RetrievalStrategy
from folio.kernel.metadata import FilterNode


@dataclass(frozen=True)
class SearchQuery:
    """One search: the question, the filters of its scope (``retrieval.scope.resolve_scope``), how many hits, the
    strategy, the per-modality quotas and whether to rerank (``Retriever.search``)."""

    text: str
    doc_ids: Sequence[str] | None = None
    versions: Mapping[str, str] | None = None
    pages: Sequence[int] | None = None
    kinds: Sequence[str] | None = None
    k: int = 50
    strategy: RetrievalStrategy = "hybrid"
    quotas: Mapping[Modality, int] | None = None
    rerank: bool = False
    metadata: FilterNode | None = None  # a metadata filter (``folio.kernel.metadata``), applied to the scope
