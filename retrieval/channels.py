"""Retrieval channels: each ranked list that fusion combines, registered with all the retriever needs to know.

A channel answers one question, "which stored units of this scope match the query, best first?", in its
own way. Its registration (``ChannelSpec``, added with ``register``) says how it is opened (from the store,
the shared text retriever and its keyword options of ``Retriever``, with their defaults), which strategies
run it, how the settings turn it on (``from_settings``: its model and status entry), what writes its table
at ingest (``indexer``) and its status entry while it is off. The channel itself has a name, the table its
query reads, its weight in fusion, a query (``search``), a cache to forget (``clear``) and a status entry.
``CHANNELS`` holds the registrations in the order their lists are built: ColPali also rescores the pages the
lists before it found, and the page references add the other lists' candidates on the named pages. The
retriever (``retrieval.search``) opens every registered channel and runs a strategy's in this order, then
fuses, applies quotas and reranks; it names none of them.

=============  =======================================  ===========  =========================================
channel        model or method                          table        ingest-side indexer
=============  =======================================  ===========  =========================================
``bm25``       LanceDB's full-text index                ``chunks``   ``ingest.pipeline.ChunkIndexer`` (always)
``dense``      the text encoder (MiniLM)                ``chunks``   ``ingest.pipeline.ChunkIndexer`` (always)
               (and without the document's own name:
               ``retrieval.scopenames``)
``clip``       an open_clip model (optional)            ``figures``  ``ClipFigureIndexer``
``colpali``    a colpali-engine model (optional)        ``pages``    ``ColPaliPageIndexer``
``pagelex``    BM25 over whole page texts               ``regions``  none: reads the page regions
``statement``  pages headed by a statement's title      ``regions``  none: reads the page regions
``pageref``    the pages the question names             ``regions``  none: reads the page regions
``labelref``   the tables and figures it names          ``regions``  none: reads the regions
=============  =======================================  ===========  =========================================

The lexical channels (``bm25``, ``pagelex``) search the question followed by the line items of the financial
metrics it names (``ChannelQuery.lexical``, ``retrieval.glossary``); ``statement`` adds a list only when the
question names or needs a financial statement, ``pageref`` and ``labelref`` only when it names a page or a
numbered object (``hybrid`` and ``summary`` only).

The text channels' indexer runs in every ingest, before the others (``ingest`` never imports
``retrieval``; the other indexers are handed to it, ``retrieval.visual.indexers_from_settings``).

A new channel is a class with the ``Channel`` members and one ``register(ChannelSpec(...))``, in one file
imported before the retriever opens (``tests/retrieval/test_channels.py`` registers one in a test).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from folio.ingest.storage.interface import StoreReader
from folio.kernel.hit import RetrievalStrategy
from folio.kernel.pageref import parse_page_refs
from folio.kernel.scope import Scope
from folio.retrieval.clip import CLIP_ENABLE_HINT, FIGURES_TABLE, ClipFigureIndexer, ClipRetriever
from folio.retrieval.colpali import COLPALI_ENABLE_HINT, PAGES_TABLE, ColPaliPageIndexer, ColPaliRetriever
from folio.retrieval.fusion import DEFAULT_RRF_K
from folio.retrieval.labelref import LabelRefs, parse_label_refs
from folio.retrieval.named_pages import EXACT_REF_BOOST, REF_WEIGHT, named_pages
from folio.retrieval.optional_models import load_clip, load_colpali, off_status, on_status
from folio.retrieval.pagelex import PAGE_LEX_WEIGHT, PageLexRetriever
from folio.retrieval.scopenames import ScopeNames, merge_ranked, scope_names, without_words
from folio.retrieval.statements import STATEMENT_WEIGHT, StatementPages
from folio.retrieval.text import Candidate, TextRetriever
from folio.settings import Settings

if TYPE_CHECKING:
    from folio.ingest.pipeline import VersionIndexer

# How many of each earlier list's best candidates ColPali also rescores (their pages).
COLPALI_SEEN_PER_LIST = 20
FUSED: frozenset[RetrievalStrategy] = frozenset({"hybrid", "summary"})  # the strategies that fuse several lists


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


@dataclass(frozen=True)
class Ranking:
    """A channel's list for one query: its candidates, best first, and a factor on the channel's weight in
    fusion for this query (an exact page reference counts ``EXACT_REF_BOOST`` times)."""

    candidates: list[Candidate]
    boost: float = 1.0


class Channel(Protocol):
    """One ranked list for fusion (module docstring)."""

    name: str  # the list's name in fusion and in each hit's ``sources``
    table: str  # the table its query reads
    weight: float  # its weight in fusion (reciprocal-rank fusion, ``retrieval.fusion.rrf``)

    def search(self, query: ChannelQuery) -> Ranking | None:
        """Its candidates, best first, at most ``query.limit``; None to add no list at all."""
        ...

    def clear(self) -> None:
        """Forget derived caches (``Retriever.refresh``)."""
        ...

    def status(self) -> dict[str, Any] | None:
        """Its entry in ``Retriever.status()`` while it is on (None: it has none)."""
        ...


@dataclass(frozen=True)
class ChannelContext:
    """What a channel is opened with: the store, the text retriever the text channels share, and the keyword
    options of ``Retriever`` (``channel_options``: every registered channel's, defaults filled in)."""

    store: StoreReader
    text: TextRetriever
    options: Mapping[str, Any]


@dataclass(frozen=True)
class Configured:
    """What the settings make of one channel: its keyword options of ``Retriever`` (its model) and its status
    entry (why it is off, when it is)."""

    options: Mapping[str, Any]
    status: dict[str, Any] | None = None


@dataclass(frozen=True)
class ChannelSpec:
    """A channel's registration: all that the retriever and the ingest need to know of it (module docstring)."""

    name: str
    open: Callable[[ChannelContext], Channel | None]  # its query side; None: off (its model is not there)
    options: Mapping[str, Any] = field(default_factory=dict)  # its keyword options of Retriever, with defaults
    strategies: frozenset[RetrievalStrategy] = FUSED  # the strategies that run it
    from_settings: Callable[[Settings], Configured] | None = None  # its options and status from the settings
    indexer: Callable[[Settings], VersionIndexer | None] | None = None  # what writes its table at ingest, if any
    off: Callable[[], dict[str, Any]] | None = None  # its status entry while it is off (None: none)


CHANNELS: dict[str, ChannelSpec] = {}
"""Every registered channel by name, in the order their lists are built (``register``)."""


def register(spec: ChannelSpec) -> ChannelSpec:
    """Add a channel after the ones registered before it. Its name must be new, and an option it shares
    with another channel must have the same default there."""
    if spec.name in CHANNELS:
        raise ValueError(f"a channel named {spec.name!r} is already registered")
    defaults = option_defaults()
    clash = sorted(k for k, v in spec.options.items() if k in defaults and defaults[k] != v)
    if clash:
        raise ValueError(f"channel {spec.name!r} gives other defaults to options other channels read: {clash}")
    CHANNELS[spec.name] = spec
    return spec


def option_defaults() -> dict[str, Any]:
    """The registered channels' keyword options of ``Retriever`` and their defaults."""
    return {name: value for spec in CHANNELS.values() for name, value in spec.options.items()}


def channel_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """Every registered channel's options: ``given`` where given, else the channel's default. An option no
    channel reads is a ``TypeError``, as an unknown keyword argument is."""
    defaults = option_defaults()
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise TypeError(f"Retriever() got unexpected keyword arguments {unknown}; the channels read {sorted(defaults)}")
    return {**defaults, **given}


def open_channels(context: ChannelContext) -> dict[str, Channel]:
    """The channels that are on (their models are there), by name, in ``CHANNELS`` order."""
    opened = ((spec.name, spec.open(context)) for spec in CHANNELS.values())
    return {name: channel for name, channel in opened if channel is not None}


def strategy_channels(strategy: RetrievalStrategy) -> list[str]:
    """The channels a strategy runs, in ``CHANNELS`` order."""
    return [spec.name for spec in CHANNELS.values() if strategy in spec.strategies]


def configure_channels(settings: Settings) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The keyword options of ``Retriever`` that the settings give (the models they name, loaded once per
    process) and the status entries they explain (``Retriever.from_settings``)."""
    options: dict[str, Any] = {}
    statuses: dict[str, dict[str, Any]] = {}
    for spec in CHANNELS.values():
        if spec.from_settings is not None:
            configured = spec.from_settings(settings)
            options.update(configured.options)
            if configured.status is not None:
                statuses[spec.name] = configured.status
    return options, statuses


def channel_status(channels: Mapping[str, Channel], overrides: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """Each registered channel's status entry, in ``CHANNELS`` order: its own while it is open, else the one
    ``overrides`` gives (why its model did not load), else its registration's ``off``; none if it has none."""
    out: dict[str, Any] = {}
    for spec in CHANNELS.values():
        channel = channels.get(spec.name)
        if channel is not None:
            entry = channel.status()
        else:
            entry = overrides.get(spec.name, spec.off() if spec.off is not None else None)
        if entry is not None:
            out[spec.name] = entry
    return out


def channel_indexers(settings: Settings) -> list[VersionIndexer]:
    """The ingest-side indexers of the channels that have one and whose model the settings turn on, in
    ``CHANNELS`` order."""
    made = (spec.indexer(settings) for spec in CHANNELS.values() if spec.indexer is not None)
    return [indexer for indexer in made if indexer is not None]


# ----------------------------------------------------------------------------- the channels
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


@dataclass
class TextDenseChannel:
    """Cosine similarity of the chunks' text vectors to the query's (``TextRetriever.dense``). In a scope of one
    version, when the question names the document (``retrieval.scopenames``: "PepsiCo", "3M's"), the ranking for
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
        return on_status(self.text.encoder.name)


@dataclass
class ClipChannel:
    """Text-to-image search over the CLIP vectors of figure crops (``ClipRetriever``)."""

    clip: ClipRetriever
    name: str = "clip"
    table: str = FIGURES_TABLE
    weight: float = 1.0

    def search(self, query: ChannelQuery) -> Ranking | None:
        return Ranking(self.clip.search(query.text, query.scope, query.limit))

    def clear(self) -> None:
        self.clip.clear()

    def status(self) -> dict[str, Any] | None:
        return on_status(self.clip.model.name, dim=self.clip.model.dim)


@dataclass
class ColPaliChannel:
    """Late-interaction page scoring (``ColPaliRetriever``); also rescores the pages earlier lists found."""

    colpali: ColPaliRetriever
    name: str = "colpali"
    table: str = PAGES_TABLE
    weight: float = 1.0

    def search(self, query: ChannelQuery) -> Ranking | None:
        seen = {(c.doc_id, c.version_id, c.page) for lst in query.found.values() for c in lst[:COLPALI_SEEN_PER_LIST]}
        return Ranking(self.colpali.search(query.text, query.scope, query.limit, extra_pages=seen))

    def clear(self) -> None:
        self.colpali.clear()

    def status(self) -> dict[str, Any] | None:
        return on_status(self.colpali.model.name, family=self.colpali.model.family)


@dataclass
class PageLexChannel:
    """Okapi BM25 over each page's whole text (``retrieval.pagelex``); adds a list only when it found a page."""

    pagelex: PageLexRetriever
    weight: float
    name: str = "pagelex"
    table: str = "regions"

    def search(self, query: ChannelQuery) -> Ranking | None:
        if self.weight <= 0:
            return None
        found = self.pagelex.search(query.lexical, query.scope, query.limit)
        return Ranking(found) if found else None

    def clear(self) -> None:
        self.pagelex.clear()

    def status(self) -> dict[str, Any] | None:
        return None


@dataclass
class StatementChannel:
    """The pages headed by the statements the question needs (``retrieval.statements``); no list when it needs none."""

    statements: StatementPages
    weight: float = STATEMENT_WEIGHT
    name: str = "statement"
    table: str = "regions"

    def search(self, query: ChannelQuery) -> Ranking | None:
        if self.weight <= 0 or not query.statements:
            return None
        found = self.statements.search(query.statements, query.scope, query.limit)
        return Ranking(found) if found else None

    def clear(self) -> None:
        self.statements.clear()

    def status(self) -> dict[str, Any] | None:
        return None


@dataclass
class PageRefChannel:
    """The pages the question names (``retrieval.named_pages``), then the lists before it on those pages; no list
    when it names none. An exact reference counts ``EXACT_REF_BOOST`` times."""

    store: StoreReader
    weight: float = REF_WEIGHT
    name: str = "pageref"
    table: str = "regions"

    def search(self, query: ChannelQuery) -> Ranking | None:
        refs = parse_page_refs(query.text)
        if not refs:
            return None
        found, exact = named_pages(self.store, refs, query.scope, query.found.values())
        return Ranking(found, EXACT_REF_BOOST if exact else 1.0)

    def clear(self) -> None:
        """Nothing to forget: the store keeps the region indexes."""

    def status(self) -> dict[str, Any] | None:
        return None


@dataclass
class LabelRefChannel:
    """The tables, figures and captions the question names ("Table 1", ``retrieval.labelref``); no list when it
    names none or none is found."""

    labels: LabelRefs
    weight: float = REF_WEIGHT
    name: str = "labelref"
    table: str = "regions"

    def search(self, query: ChannelQuery) -> Ranking | None:
        refs = parse_label_refs(query.text)
        found = self.labels.search(refs, query.scope) if refs else []
        return Ranking(found) if found else None

    def clear(self) -> None:
        self.labels.clear()

    def status(self) -> dict[str, Any] | None:
        return None


# ----------------------------------------------------------------------------- their registrations
def _clip_from_settings(settings: Settings) -> Configured:
    model, status = load_clip(settings)
    return Configured({"clip": model}, status)


def _clip_indexer(settings: Settings) -> VersionIndexer | None:
    model = load_clip(settings)[0]
    return ClipFigureIndexer(model) if model is not None else None


def _colpali_from_settings(settings: Settings) -> Configured:
    model, status = load_colpali(settings)
    return Configured({"colpali": model}, status)


def _colpali_indexer(settings: Settings) -> VersionIndexer | None:
    model = load_colpali(settings)[0]
    return ColPaliPageIndexer(model, pool_factor=settings.models.colpali_pool_factor) if model is not None else None


def _open_clip(context: ChannelContext) -> Channel | None:
    model = context.options["clip"]
    return ClipChannel(ClipRetriever(context.store, model)) if model else None


def _open_dense(context: ChannelContext) -> Channel:
    return TextDenseChannel(context.text, ScopeNames(context.store) if context.options["scope_names"] else None)


def _open_colpali(context: ChannelContext) -> Channel | None:
    model = context.options["colpali"]
    return ColPaliChannel(ColPaliRetriever(context.store, model)) if model else None


register(ChannelSpec("bm25", lambda c: TextFullTextChannel(c.text), strategies=FUSED | {"bm25"}))
register(ChannelSpec("dense", _open_dense, {"scope_names": True}, strategies=FUSED | {"dense"}))
register(ChannelSpec("clip", _open_clip, {"clip": None}, from_settings=_clip_from_settings, indexer=_clip_indexer,
                     off=lambda: off_status("no CLIP model configured", CLIP_ENABLE_HINT)))
register(ChannelSpec("colpali", _open_colpali, {"colpali": None}, from_settings=_colpali_from_settings,
                     indexer=_colpali_indexer,
                     off=lambda: off_status("no ColPali model configured", COLPALI_ENABLE_HINT)))
register(ChannelSpec("pagelex", lambda c: PageLexChannel(PageLexRetriever(c.store), c.options["page_lex_weight"]),
                     {"page_lex_weight": PAGE_LEX_WEIGHT}))
register(ChannelSpec("statement", lambda c: StatementChannel(StatementPages(c.store), c.options["statement_weight"]),
                     {"statement_weight": STATEMENT_WEIGHT}))
register(ChannelSpec("pageref", lambda c: PageRefChannel(c.store, c.options["ref_weight"]),
                     {"ref_weight": REF_WEIGHT}))
register(ChannelSpec("labelref", lambda c: LabelRefChannel(LabelRefs(c.store), c.options["ref_weight"]),
                     {"ref_weight": REF_WEIGHT}))
