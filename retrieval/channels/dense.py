"""The ``dense`` channel: cosine similarity of the chunks' text vectors to the question's (``TextRetriever.dense``),
also without the words that name the document itself (``channels.scopenames``, option ``scope_names``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from folio.retrieval.cache.models import on_status
from folio.retrieval.channels.base import FUSED, Channel, ChannelContext, ChannelQuery, ChannelSpec, Ranking, register
from folio.retrieval.channels.scopenames import ScopeNames, merge_ranked, scope_names, without_words
from folio.retrieval.ranking.fusion import DEFAULT_RRF_K
from folio.retrieval.text import TextRetriever


@dataclass
class TextDenseChannel:
    """Cosine similarity of the chunks' text vectors to the query's (``TextRetriever.dense``). In a scope of one
    version, when the question names the document (``channels.scopenames``: "PepsiCo", "3M's"), the ranking for
    the question without those words is merged with the ranking for the question as asked."""

    text: TextRetriever
    names: ScopeNames | None = None  # None: the question as asked only
    name: str = "dense"
    table: str = "chunks"
    weight: float = 1.0

    def search(self, query: ChannelQuery) -> Ranking | None:
        found = self.text.dense(query.text, query.scope, query.limit, region_ids=query.region_ids)
        if self.names is None or len(query.scope.versions) != 1:
            return Ranking(found)
        words = scope_names(query.text, self.names.terms(*query.scope.versions[0]))
        bare = without_words(query.text, words)
        if not words or not bare.strip():
            return Ranking(found)
        unnamed = self.text.dense(bare, query.scope, query.limit, region_ids=query.region_ids)
        return Ranking(merge_ranked(unnamed, found, DEFAULT_RRF_K, query.limit))

    def clear(self) -> None:
        self.text.clear()
        if self.names is not None:
            self.names.clear()

    def status(self) -> dict[str, Any] | None:
        """On, with the model and, for ``ingest.embed.MiniLM``, where its encoders run (``devices``: backend and
        device of the document and query encoders, ``FOLIO_EMBED_DEVICE``)."""
        devices = getattr(self.text.encoder, "devices", None)  # another TextEncoder says nothing of its device
        return on_status(self.text.encoder.name, **({"devices": devices()} if devices is not None else {}))


def _open_dense(context: ChannelContext) -> Channel:
    return TextDenseChannel(context.text, ScopeNames(context.store) if context.options["scope_names"] else None)


register(ChannelSpec("dense", _open_dense, {"scope_names": True}, strategies=FUSED | {"dense"}, text=True))
