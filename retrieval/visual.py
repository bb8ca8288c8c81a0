"""The ingest-side indexers from settings: section summaries, then each registered channel's.

The indexers belong to the channels that read their tables (``retrieval.channels``: CLIP figure vectors,
ColPali page multivectors); this module gathers them for an ingest, with the summary indexer that summary
routing (``retrieval.routing.summary``) reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from folio.ingest.embed import MiniLM
from folio.retrieval.channels.base import channel_indexers
from folio.settings import Settings

if TYPE_CHECKING:
    from folio.ingest.pipeline import VersionIndexer
    from folio.retrieval.ranking.rerank import Completer


def indexers_from_settings(settings: Settings, *, llm: Completer | None = None) -> list[VersionIndexer]:
    """Ingest-time indexers: section summaries (embedded by the MiniLM of ``settings.embedding``) always, then
    each channel's when its model is configured and loadable.

    LLM-written summaries, with ``llm`` (the application's chat client), are used only when
    ``settings.llm.summaries`` is true (one LLM call per section at ingest is slow and may cost money).
    """
    # function-level: the summary indexer loads only where ingest indexers are built
    from folio.retrieval.routing.summary import SummaryIndexer

    summaries = SummaryIndexer(MiniLM(settings=settings.embedding), llm=llm if settings.llm.summaries else None)
    return [summaries, *channel_indexers(settings)]
