"""The ``bm25`` channel: BM25 over the chunks through LanceDB's full-text index (``TextRetriever.bm25``), on the
question and its glossary expansion (``ChannelQuery.lexical``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from folio.retrieval.cache.models import on_status
from folio.retrieval.channels.base import FUSED, ChannelQuery, ChannelSpec, Ranking, register
from folio.retrieval.text import TextRetriever


@dataclass
class TextFullTextChannel:
    """BM25 over the chunks through LanceDB's full-text index (``TextRetriever.bm25``)."""

    text: TextRetriever
    name: str = "bm25"
    table: str = "chunks"
    weight: float = 1.0

    def search(self, query: ChannelQuery) -> Ranking | None:
        return Ranking(self.text.bm25(query.lexical, query.scope, query.limit, region_ids=query.region_ids))

    def clear(self) -> None:
        self.text.clear()

    def status(self) -> dict[str, Any] | None:
        return on_status("lancedb-fts")


register(ChannelSpec("bm25", lambda c: TextFullTextChannel(c.text), strategies=FUSED | {"bm25"}, text=True))
