"""Retrieval channels: each ranked list that fusion combines, with its model, table, indexer and query.

A channel answers one question, "which stored units of this scope match the query, best first?", in its
own way, and says what it needs to do so: the model it runs, the table it reads (``table``), what writes
that table at ingest (its ``ChannelSpec.indexer``) and its weight in fusion (``weight``). ``CHANNELS`` lists them in the
order their lists are built (an order ColPali depends on: it also rescores the pages the lists before it
found); ``STRATEGY_CHANNELS`` says which channels a strategy runs. The retriever (``retrieval.search``)
runs a strategy's channels, then fuses, applies quotas and reranks.

================  ======================================  ===========  ==========================================
channel           model                                   table        ingest-side indexer
================  ======================================  ===========  ==========================================
``bm25``          LanceDB's full-text index               ``chunks``   ``ingest.pipeline.ChunkIndexer`` (always)
``dense``         the text encoder (MiniLM)               ``chunks``   ``ingest.pipeline.ChunkIndexer`` (always)
``clip``          an open_clip model (optional)           ``figures``  ``ClipFigureIndexer``
``colpali``       a colpali-engine model (optional)       ``pages``    ``ColPaliPageIndexer``
``pagelex``       BM25 over whole page texts              ``regions``  none: reads the page regions
``statement``     pages headed by a statement's title     ``regions``  none: reads the page regions
================  ======================================  ===========  ==========================================

The lexical channels (``bm25``, ``pagelex``) search the question followed by the line items of the financial
metrics it names (``ChannelQuery.lexical``, ``retrieval.glossary``); ``statement`` adds a list only when the
question names or needs a financial statement.

The text channels' indexer runs in every ingest, before the others (``ingest`` never imports
``retrieval``; the optional indexers are handed to it, ``retrieval.visual.indexers_from_settings``).

A new channel is a class with these members and one entry in ``CHANNELS``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from folio.ingest.storage.interface import StoreReader
from folio.kernel.hit import RetrievalStrategy
from folio.kernel.scope import Scope
from folio.retrieval.clip import FIGURES_TABLE, ClipFigureIndexer, ClipModel, ClipRetriever
from folio.retrieval.colpali import PAGES_TABLE, ColPaliModel, ColPaliPageIndexer, ColPaliRetriever
from folio.retrieval.pagelex import PageLexRetriever
from folio.retrieval.statements import STATEMENT_WEIGHT, StatementPages
from folio.retrieval.text import Candidate, TextRetriever

if TYPE_CHECKING:
    from folio.ingest.pipeline import VersionIndexer

# How many of each earlier list's best candidates ColPali also rescores (their pages).
COLPALI_SEEN_PER_LIST = 20


@dataclass(frozen=True)
class ChannelQuery:
    """One search as a channel sees it."""

    text: str
    scope: Scope
    limit: int
    region_ids: Collection[str] | None = None  # summary routing: the text channels search only these
    found: Mapping[str, Sequence[Candidate]] = field(default_factory=dict)  # the lists built before this one
    expansion: str = ""  # line items the question's metrics are read from (``retrieval.glossary.expand``)
    statements: tuple[str, ...] = ()  # statements it names or needs (``retrieval.glossary.statements_for``)

    @property
    def lexical(self) -> str:
        """What the lexical channels search: the question, then its glossary expansion (if any)."""
        return f"{self.text}\n{self.expansion}" if self.expansion else self.text


class Channel(Protocol):
    """One ranked list for fusion (module docstring)."""

    name: str  # the list's name in fusion and in each hit's ``sources``
    table: str  # the table its query reads
    weight: float  # its weight in fusion (reciprocal-rank fusion, ``retrieval.fusion.rrf``)

    def search(self, query: ChannelQuery) -> list[Candidate] | None:
        """Its candidates, best first, at most ``query.limit``; None to add no list at all."""
        ...

    def clear(self) -> None:
        """Forget derived caches (``Retriever.refresh``)."""
        ...


@dataclass
class TextFullTextChannel:
    """BM25 over the chunks through LanceDB's full-text index (``TextRetriever.bm25``)."""

    text: TextRetriever
    name: str = "bm25"
    table: str = "chunks"
    weight: float = 1.0

    def search(self, query: ChannelQuery) -> list[Candidate] | None:
        return self.text.bm25(query.lexical, query.scope, query.limit, region_ids=query.region_ids)

    def clear(self) -> None:
        self.text.clear()


@dataclass
class TextDenseChannel:
    """Cosine similarity of the chunks' text vectors to the query's (``TextRetriever.dense``)."""

    text: TextRetriever
    name: str = "dense"
    table: str = "chunks"
    weight: float = 1.0

    def search(self, query: ChannelQuery) -> list[Candidate] | None:
        return self.text.dense(query.text, query.scope, query.limit, region_ids=query.region_ids)

    def clear(self) -> None:
        self.text.clear()


@dataclass
class ClipChannel:
    """Text-to-image search over the CLIP vectors of figure crops (``ClipRetriever``)."""

    clip: ClipRetriever
    name: str = "clip"
    table: str = FIGURES_TABLE
    weight: float = 1.0

    def search(self, query: ChannelQuery) -> list[Candidate] | None:
        return self.clip.search(query.text, query.scope, query.limit)

    def clear(self) -> None:
        self.clip.clear()


@dataclass
class ColPaliChannel:
    """Late-interaction page scoring (``ColPaliRetriever``); also rescores the pages earlier lists found."""

    colpali: ColPaliRetriever
    name: str = "colpali"
    table: str = PAGES_TABLE
    weight: float = 1.0

    def search(self, query: ChannelQuery) -> list[Candidate] | None:
        seen = {(c.doc_id, c.version_id, c.page) for lst in query.found.values() for c in lst[:COLPALI_SEEN_PER_LIST]}
        return self.colpali.search(query.text, query.scope, query.limit, extra_pages=seen)

    def clear(self) -> None:
        self.colpali.clear()


@dataclass
class PageLexChannel:
    """Okapi BM25 over each page's whole text (``retrieval.pagelex``); adds a list only when it found a page."""

    pagelex: PageLexRetriever
    weight: float
    name: str = "pagelex"
    table: str = "regions"

    def search(self, query: ChannelQuery) -> list[Candidate] | None:
        if self.weight <= 0:
            return None
        return self.pagelex.search(query.lexical, query.scope, query.limit) or None

    def clear(self) -> None:
        self.pagelex.clear()


@dataclass
class StatementChannel:
    """The pages headed by the statements the question needs (``retrieval.statements``); no list when it needs none."""

    statements: StatementPages
    weight: float = STATEMENT_WEIGHT
    name: str = "statement"
    table: str = "regions"

    def search(self, query: ChannelQuery) -> list[Candidate] | None:
        if self.weight <= 0 or not query.statements:
            return None
        return self.statements.search(query.statements, query.scope, query.limit) or None

    def clear(self) -> None:
        self.statements.clear()


@dataclass(frozen=True)
class ChannelModels:
    """What the channels are built from: the store, the text retriever and the optional models."""

    store: StoreReader
    text: TextRetriever
    clip: ClipModel | None = None
    colpali: ColPaliModel | None = None
    page_lex_weight: float = 1.0
    statement_weight: float = STATEMENT_WEIGHT


@dataclass(frozen=True)
class IndexerModels:
    """What the ingest-side indexers are built from: the optional models loaded from settings
    (``retrieval.visual.indexers_from_settings``) and how ColPali pools page vectors."""

    clip: ClipModel | None = None
    colpali: ColPaliModel | None = None
    colpali_pool_factor: int = 0


@dataclass(frozen=True)
class ChannelSpec:
    """A channel in the registry: how to build its query side (None when its model is off) and its
    ingest-side indexer (None when the pipeline writes its table, or its model is off)."""

    name: str
    build: Callable[[ChannelModels], Channel | None]
    indexer: Callable[[IndexerModels], VersionIndexer | None] = lambda _models: None


def _clip_indexer(models: IndexerModels) -> VersionIndexer | None:
    return ClipFigureIndexer(models.clip) if models.clip is not None else None


def _colpali_indexer(models: IndexerModels) -> VersionIndexer | None:
    if models.colpali is None:
        return None
    return ColPaliPageIndexer(models.colpali, pool_factor=models.colpali_pool_factor)


# Every channel, in the order their lists are built.
CHANNELS: tuple[ChannelSpec, ...] = (
    ChannelSpec("bm25", lambda m: TextFullTextChannel(m.text)),
    ChannelSpec("dense", lambda m: TextDenseChannel(m.text)),
    ChannelSpec("clip", lambda m: ClipChannel(ClipRetriever(m.store, m.clip)) if m.clip else None, _clip_indexer),
    ChannelSpec(
        "colpali",
        lambda m: ColPaliChannel(ColPaliRetriever(m.store, m.colpali)) if m.colpali else None,
        _colpali_indexer,
    ),
    ChannelSpec("pagelex", lambda m: PageLexChannel(PageLexRetriever(m.store), m.page_lex_weight)),
    ChannelSpec("statement", lambda m: StatementChannel(StatementPages(m.store), m.statement_weight)),
)
_ALL = tuple(spec.name for spec in CHANNELS)
# The channels each strategy runs. ``summary`` runs them all, its text channels inside the routed sections.
STRATEGY_CHANNELS: dict[RetrievalStrategy, tuple[str, ...]] = {
    "hybrid": _ALL,
    "summary": _ALL,
    "bm25": ("bm25",),
    "dense": ("dense",),
}


def build_channels(models: ChannelModels) -> dict[str, Channel]:
    """The channels whose models are on, by name, in ``CHANNELS`` order."""
    built = ((spec.name, spec.build(models)) for spec in CHANNELS)
    return {name: channel for name, channel in built if channel is not None}


def channel_indexers(models: IndexerModels) -> list[VersionIndexer]:
    """The ingest-side indexers of the channels that have one and whose model is on, in ``CHANNELS`` order."""
    made = (spec.indexer(models) for spec in CHANNELS)
    return [indexer for indexer in made if indexer is not None]
