"""The channel contract and the registry: what a channel is (``Channel``), how it is registered (``ChannelSpec``,
``register``) and what the retriever asks of the registered ones (``open_channels``, ``strategy_channels``, ...).

Each channel lives in a module of its own beside this one, with its adapter and its ``register`` call; the
package (``retrieval/channels/__init__.py``) says how a channel module is imported, and in which order.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from folio.ingest.storage.interface import StoreReader
from folio.kernel.hit import RetrievalStrategy
from folio.kernel.scope import Scope
from folio.retrieval.text import Candidate, TextRetriever
from folio.settings import Settings

if TYPE_CHECKING:
    from folio.ingest.pipeline import VersionIndexer


class _Versioned(Protocol):
    """What ``best_versions`` reads of a hit or a candidate."""

    @property
    def doc_id(self) -> str: ...

    @property
    def version_id(self) -> str: ...


H = TypeVar("H", bound=_Versioned)

FUSED: frozenset[RetrievalStrategy] = frozenset({"hybrid", "summary"})  # the strategies that fuse several lists


@dataclass(frozen=True)
class ChannelQuery:
    """One search as a channel sees it."""

    text: str
    scope: Scope
    limit: int
    region_ids: Collection[str] | None = None  # summary routing: the text channels search only these
    found: Mapping[str, Sequence[Candidate]] = field(default_factory=dict)  # the lists built before this one
    expansion: str = ""  # line items the question's metrics are read from (``retrieval.routing.glossary.expand``)
    statements: tuple[str, ...] = ()  # statements it names or needs (``retrieval.routing.glossary.statements_for``)

    @property
    def lexical(self) -> str:
        """What the lexical channels search: the question, then its glossary expansion (if any)."""
        return f"{self.text}\n{self.expansion}" if self.expansion else self.text


# A channel that builds something per version (page lexicons, statement pages) searches a wide scope's versions
# in at most this many: those the lists built before it found (``versions_to_search``). Each new version costs it
# a read of the version's regions (about half a second for a 10-K), so a wide scope is bounded by what was found,
# not by what the store holds.
WIDE_SCOPE_VERSIONS = 16
# A scope of more than this many versions is wide: its hits keep the ``WIDE_SCOPE_VERSIONS`` versions that rank
# best (``best_versions``), so that assembling its package reads at most that many versions' regions.
WIDE_SCOPE = 64


def versions_to_search(query: ChannelQuery, most: int) -> Sequence[tuple[str, str]]:
    """The versions a per-version channel searches for ``query``: all of the scope's when it holds at most
    ``most``; else those of the lists built before it (``query.found``), by their best rank in any list (every
    list's first hit before any list's second), at most ``WIDE_SCOPE_VERSIONS``. An unscoped question over a store
    of thousands of documents then reads the documents the text channels found, not the first ones stored."""
    if len(query.scope.versions) <= most:
        return query.scope.versions
    lists = list(query.found.values())
    out: dict[tuple[str, str], None] = {}
    for rank in range(max((len(lst) for lst in lists), default=0)):
        for lst in lists:
            if rank < len(lst):
                out.setdefault((lst[rank].doc_id, lst[rank].version_id))
                if len(out) == WIDE_SCOPE_VERSIONS:
                    return list(out)
    return list(out)


def best_versions(hits: Sequence[H], most: int | None = None) -> list[H]:
    """The hits of the ``most`` (default ``WIDE_SCOPE_VERSIONS``) versions whose best hit ranks highest, in their
    order (a wide scope's hits: ``WIDE_SCOPE``)."""
    most = WIDE_SCOPE_VERSIONS if most is None else most
    keep: set[tuple[str, str]] = set()
    out = []
    for h in hits:
        key = (h.doc_id, h.version_id)
        if key not in keep and len(keep) < most:
            keep.add(key)
        if key in keep:
            out.append(h)
    return out


@dataclass(frozen=True)
class Ranking:
    """A channel's list for one query: its candidates, best first, and a factor on the channel's weight in
    fusion for this query (an exact page reference counts ``EXACT_REF_BOOST`` times)."""

    candidates: list[Candidate]
    boost: float = 1.0


class Channel(Protocol):
    """One ranked list for fusion (the package docstring, ``folio.retrieval.channels``)."""

    name: str  # the list's name in fusion and in each hit's ``sources``
    table: str  # the table its query reads
    weight: float  # its weight in fusion (reciprocal-rank fusion, ``retrieval.ranking.fusion.rrf``)

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
    """A channel's registration: all that the retriever and the ingest need to know of it (the package
    docstring, ``folio.retrieval.channels``)."""

    name: str
    open: Callable[[ChannelContext], Channel | None]  # its query side; None: off (its model is not there)
    options: Mapping[str, Any] = field(default_factory=dict)  # its keyword options of Retriever, with defaults
    strategies: frozenset[RetrievalStrategy] = FUSED  # the strategies that run it
    from_settings: Callable[[Settings], Configured] | None = None  # its options and status from the settings
    indexer: Callable[[Settings], VersionIndexer | None] | None = None  # what writes its table at ingest, if any
    off: Callable[[], dict[str, Any]] | None = None  # its status entry while it is off (None: none)
    text: bool = False  # it reads text: a page only text channels found goes to the prompt as text (assembly)


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


def unregister(name: str) -> ChannelSpec:
    """Take a channel out of the registry (a test's toy channel, when the test is done); ``KeyError`` if no
    channel of that name is registered."""
    return CHANNELS.pop(name)


def text_channels() -> frozenset[str]:
    """The registered channels that read text (their registration's ``text``): the api hands them to assembly
    in its options (``AssemblyOptions.text_retrievers``), which names no channel itself."""
    return frozenset(spec.name for spec in CHANNELS.values() if spec.text)


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
