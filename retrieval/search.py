"""The retrieval entry point: one ``Retriever`` that runs a strategy's channels and fuses their lists.

``search`` returns small units (sentences, tables, figures, pages) as ranked :class:`Hit`s; each hit
keeps every retriever that found it (``sources``: retriever, 1-based rank, raw score). The channels
(``retrieval.channels``: text full-text and dense, CLIP, ColPali, whole-page BM25, statement pages, the
pages and objects the question names) each own their model, table, indexer and query, and say in their
registration which strategies run them and which keyword options of ``Retriever`` they read; the retriever
opens every registered channel, runs a strategy's in registry order, fuses (``retrieval.ranking.fusion``), applies
quotas and reranks. It names no channel. Strategies:

- ``hybrid``: BM25 + dense over text children, CLIP over figure crops and ColPali over pages when those
  models are on; ColPali also rescores the pages the text retrievers hit. Fused with RRF.
- ``bm25`` / ``dense``: one text retriever alone (for comparison and debugging).
- ``summary``: summary-to-detail routing; BM25 + dense run only inside the routed sections (visual
  retrievers still run over the whole scope, since figures and pages have no summaries).

Per-modality quotas reserve slots so figures, tables and pages are not drowned by sentences. An
optional reranker reorders the fused small units before anything is expanded.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, get_args

from folio.ingest.embed import MiniLM, TextEncoder
from folio.ingest.storage.interface import StoreReader
from folio.kernel.errors import InvalidRequest
from folio.kernel.hit import Hit, Modality, RetrievalStrategy, Source
from folio.kernel.index import MergedSource
from folio.kernel.scope import Scope
from folio.retrieval.cache.models import off_status, on_status
from folio.retrieval.channels.base import (
    WIDE_SCOPE,
    Channel,
    ChannelContext,
    ChannelQuery,
    best_versions,
    channel_options,
    channel_status,
    configure_channels,
    open_channels,
    strategy_channels,
    text_channels,
)
from folio.retrieval.query import SearchQuery
from folio.retrieval.ranking.fusion import DEFAULT_RRF_K, apply_quotas, check_quotas, page_first, rrf
from folio.retrieval.ranking.rerank import Completer, LLMReranker, Reranker
from folio.retrieval.routing.glossary import expand, statements_for
from folio.retrieval.routing.summary import RoutedSection, SummaryRouter
from folio.retrieval.scope import ScopeFilter, modality_of, resolve_scope
from folio.retrieval.text import DEFAULT_ANN_SCOPE_REGIONS, Candidate, TextRetriever
from folio.settings import LLM_ENABLE_HINT, Settings

logger = logging.getLogger(__name__)

STRATEGIES: tuple[RetrievalStrategy, ...] = get_args(RetrievalStrategy)
DEFAULT_QUOTAS: dict[Modality, int] = {"table": 2, "figure": 2, "page": 2}
MAX_K = 1000
SOURCE_CACHE_SIZE = 64  # region sources kept by source_for (distinct version sets)
SUMMARY_RETRIEVER = "summary"  # the source summary routing adds to the hits it routed to (a text source)


def text_retrievers() -> frozenset[str]:
    """The retriever names in a hit's ``sources`` that read text: the registered text channels and summary
    routing. The api hands them to assembly in its options (``AssemblyOptions.text_retrievers``: a page only
    they found goes to the prompt as text)."""
    return text_channels() | {SUMMARY_RETRIEVER}


@dataclass(frozen=True)
class RetrieverConfig:
    """The retriever's own options (the channels' are keyword options of ``Retriever``). ``glossary``: the
    lexical channels also search the line items of the financial metrics a question names, and the statement
    list finds the statements they are printed in (``retrieval.routing.glossary``). ``llm_summaries``: ingest
    writes section summaries with the LLM (``status()`` says so). ``status_overrides``: status entries of
    channels that are off, by name (``from_settings``: why a configured model did not load).
    ``ann_scope_regions``: dense search of scopes over this many regions runs in the store, through the chunks'
    ANN index when it has one (``TextRetriever``)."""

    rrf_k: int = DEFAULT_RRF_K
    route_sections: int = 8
    page_order: bool = False
    page_decay: float = 0.5
    llm_summaries: bool = False
    glossary: bool = True
    ann_scope_regions: int = DEFAULT_ANN_SCOPE_REGIONS
    status_overrides: Mapping[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class SearchResult:
    """Hits plus what happened on the way (retrievers used, reranker notes, routing)."""

    hits: list[Hit]
    retrievers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    scope: Scope | None = None


class Retriever:
    def __init__(
        self,
        store: StoreReader,
        *,
        text_encoder: TextEncoder | None = None,
        reranker: Reranker | None = None,
        llm: Completer | None = None,
        config: RetrieverConfig | None = None,
        **options: Any,
    ) -> None:
        """``text_encoder``: the query encoder (None: MiniLM with the documented defaults of
        ``Settings.embedding``; ``from_settings`` hands in the configured one). ``config``: the retriever's own
        options (None: ``RetrieverConfig()``, its defaults). ``options``: the keyword options the registered
        channels read (each registration's ``options``: their models and weights), each channel's default where
        not given; one that no channel reads is a ``TypeError``."""
        if text_encoder is None:
            text_encoder = MiniLM()
        if config is None:
            config = RetrieverConfig()
        self.store = store
        self.glossary = config.glossary
        self.text_encoder = text_encoder
        self.text = TextRetriever(store, text_encoder, ann_threshold=config.ann_scope_regions)
        self.channels: dict[str, Channel] = open_channels(
            ChannelContext(store, self.text, channel_options(options))
        )
        if reranker is None and llm is not None:
            reranker = LLMReranker(llm)
        self.reranker = reranker
        self.llm = llm
        self.llm_summaries = config.llm_summaries and llm is not None  # ingest writes summaries with the LLM
        self.summaries = SummaryRouter(store, text_encoder)
        check_rrf_k(config.rrf_k)
        self.rrf_k = config.rrf_k
        self.route_sections = config.route_sections
        self.page_order = config.page_order
        self.page_decay = config.page_decay
        self._status_overrides = dict(config.status_overrides)
        # source_for's results, so that assembly's per-source caches (section views, page
        # paragraphs, token counts) live across requests; keyed by the versions table's version.
        self._sources: OrderedDict[tuple[int, frozenset[tuple[str, str]]], MergedSource] = OrderedDict()
        self._sources_lock = threading.Lock()

    @classmethod
    def from_settings(cls, store: StoreReader, settings: Settings, *, llm: Completer | None = None) -> Retriever:
        """The query encoder of ``settings.embedding`` and the models the settings name for the channels
        (``retrieval.channels.base.configure_channels``); the ones that fail stay off, with the reason in ``status()``.
        ``llm`` (the application's chat client, if one is configured) reranks and is named in ``status()``."""
        options, statuses = configure_channels(settings)
        return cls(
            store,
            text_encoder=MiniLM(settings=settings.embedding),
            llm=llm,
            config=RetrieverConfig(
                llm_summaries=settings.llm.summaries,
                status_overrides=statuses,
                ann_scope_regions=settings.storage.ann_scope_regions,
            ),
            **options,
        )

    # ------------------------------------------------------------------ search
    def search(self, query: SearchQuery) -> list[Hit]:
        """The hits of ``query`` (``search_detailed`` without what happened on the way)."""
        return self.search_detailed(query).hits

    def search_detailed(self, query: SearchQuery) -> SearchResult:
        """Like :meth:`search`, also returning which retrievers ran and any notes (reranker fallbacks)."""
        quota_map = self._check(query)
        scope = resolve_scope(self.store, ScopeFilter(
            query.doc_ids, query.versions, query.pages, query.kinds, metadata=query.metadata))
        result = SearchResult(hits=[], scope=scope)
        if scope.empty:
            return result
        text, k = query.text, query.k
        routes, region_ids = self._route(query, scope, result)
        expansion, statements = (expand(text), statements_for(text)) if self.glossary else ("", ())
        lists, weights = self._channel_lists(query.strategy, ChannelQuery(
            text, scope, max(2 * k, 100), region_ids=region_ids, expansion=expansion, statements=statements))
        result.retrievers = list(lists)
        hits = self._fuse(lists, routes, weights)
        if self.page_order and hits:
            hits = self._page_order(hits, lists)
        if len(scope.versions) > WIDE_SCOPE:  # a wide scope's package reads the regions of the versions found best
            hits = best_versions(hits)
        modality = {h.region_id: h.modality for h in hits}
        hits = apply_quotas(hits, k, quota_map, lambda h: modality[h.region_id])
        hits = [h.model_copy(update={"rank": i + 1}) for i, h in enumerate(hits)]
        if query.rerank and self.reranker is not None and hits:
            hits = self._rerank(self.reranker, text, hits, result)
        result.hits = hits
        return result

    def _check(self, query: SearchQuery) -> dict[Modality, int]:
        """Refuse a bad query (``InvalidRequest``); its quotas, or the default reservations when ``k`` leaves
        room for them."""
        text, k, strategy = query.text, query.k, query.strategy
        if not isinstance(text, str) or not text.strip():
            raise InvalidRequest("query must be a non-empty string")
        if strategy not in STRATEGIES:
            raise InvalidRequest(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            raise InvalidRequest(f"k must be an integer from 1 to {MAX_K}, got {k!r}")
        if query.rerank and self.reranker is None:
            raise InvalidRequest(f"rerank was asked for but no reranker is configured: {LLM_ENABLE_HINT}")
        if query.quotas is not None:
            return check_quotas(query.quotas, k)
        return dict(DEFAULT_QUOTAS) if k >= 4 * sum(DEFAULT_QUOTAS.values()) else {}

    def _route(self, query: SearchQuery, scope: Scope, result: SearchResult
               ) -> tuple[dict[str, RoutedSection], Collection[str] | None]:
        """Summary routing (strategy ``summary``): the routed sections' children and the region ids the text
        channels search (None: all; a note when the scope has no summaries)."""
        if query.strategy != "summary":
            return {}, None
        routed = self.summaries.route(query.text, self.text.embed_query(query.text), scope, self.route_sections)
        routes = self.summaries.children(routed)
        if routes:
            return routes, routes.keys()
        result.notes.append("no section summaries in scope; searched all text instead")
        return routes, None

    def _rerank(self, reranker: Reranker, text: str, hits: list[Hit], result: SearchResult) -> list[Hit]:
        """``reranker``'s order of ``hits``; its notes and, when it applied, its name go into ``result``."""
        rr = reranker.rerank(text, hits, self.texts_for(hits))
        result.notes.extend(rr.notes)
        if rr.applied:
            result.retrievers.append(f"rerank:{reranker.name}")
        return rr.hits

    def _channel_lists(self, strategy: RetrievalStrategy, query: ChannelQuery
                       ) -> tuple[dict[str, list[Candidate]], dict[str, float]]:
        """Each of the strategy's channels that is on, in registry order (a channel sees the lists built before
        it): their lists, and each list's weight in fusion for this query."""
        lists: dict[str, list[Candidate]] = {}
        weights: dict[str, float] = {}
        for name in strategy_channels(strategy):
            channel = self.channels.get(name)
            if channel is None:
                continue
            ranking = channel.search(replace(query, found=lists))
            if ranking is not None:
                lists[name] = ranking.candidates
                weights[name] = channel.weight * ranking.boost
        return lists, weights

    def _page_order(self, hits: list[Hit], lists: Mapping[str, Sequence[Candidate]]) -> list[Hit]:
        """Distinct strong pages first (``fusion.page_first``): the page is the unit users cite and the
        evidence usually lives on the page that several retrievers and several hits point at."""
        ranked = {n: [(c.doc_id, c.version_id, str(c.page)) for c in lst] for n, lst in lists.items()}
        ordered = page_first(hits, lambda h: (h.doc_id, h.version_id, str(h.pages[0] if h.pages else 0)),
                             ranked, k=self.rrf_k, decay=self.page_decay)
        return [h.model_copy(update={"score": sc, "rank": i + 1}) for i, (h, sc) in enumerate(ordered)]

    def _fuse(self, lists: Mapping[str, Sequence[Candidate]], routes: Mapping[str, Any],
              weights: Mapping[str, float]) -> list[Hit]:
        info: dict[str, Candidate] = {}
        ranked: dict[str, list[tuple[str, float]]] = {}
        for name, cands in lists.items():
            ranked[name] = [(c.region_id, c.score) for c in cands]
            for c in cands:
                info.setdefault(c.region_id, c)
        hits: list[Hit] = []
        for rid, score, sources in rrf(ranked, k=self.rrf_k, weights=weights):
            c = info[rid]
            route = routes.get(rid)
            if route is not None:
                sources = (*sources, Source(retriever=SUMMARY_RETRIEVER, rank=route.rank, score=route.score))
            hits.append(
                Hit(
                    region_id=rid,
                    doc_id=c.doc_id,
                    version_id=c.version_id,
                    kind=c.kind,
                    modality=modality_of(c.kind),
                    pages=(c.page,),
                    score=score,
                    rank=len(hits) + 1,
                    sources=sources,
                )
            )
        return hits

    # ----------------------------------------------------------------- helpers
    def refresh(self) -> None:
        """Forget derived caches. Never needed for correctness (caches are keyed by versions and their
        stamps and the scope is read per query); frees memory after large deletions."""
        for channel in self.channels.values():
            channel.clear()
        self.summaries.clear()

    def texts_for(self, hits: Sequence[Hit]) -> dict[str, str]:
        """The stored text of each hit's region (what a reranker reads)."""
        src = self.source_for(hits)
        out: dict[str, str] = {}
        for h in hits:
            r = src.get(h.region_id)
            if r is not None:
                out[h.region_id] = r.text
        return out

    def source_for(
        self, hits_or_versions: Sequence[Hit] | Mapping[str, str] | Sequence[tuple[str, str]],
    ) -> MergedSource:
        """A ``RegionSource`` over the versions the hits come from (or given ``{doc: version}`` / pairs),
        kept per versions-table version: the request's (``Store.pinned_versions``), else read here (a
        round trip through LanceDB's event loop)."""
        if isinstance(hits_or_versions, Mapping):
            pairs = list(hits_or_versions.items())
        else:
            pairs = []
            for item in hits_or_versions:
                pairs.append((item.doc_id, item.version_id) if isinstance(item, Hit) else (item[0], item[1]))
        unique = list(dict.fromkeys(pairs))
        # One object per set of versions while the versions table is unchanged: the regions of a
        # version never change, and a commit or delete starts afresh (the table version moves).
        key = (self.store.versions_version(), frozenset(unique))
        with self._sources_lock:
            source = self._sources.get(key)
            if source is not None:
                self._sources.move_to_end(key)
                return source
        source = MergedSource([self.store.region_index(d, v) for d, v in unique])
        with self._sources_lock:
            source = self._sources.setdefault(key, source)
            while len(self._sources) > SOURCE_CACHE_SIZE:
                self._sources.popitem(last=False)
        return source

    def status(self) -> dict[str, dict[str, Any]]:
        """Per retriever: enabled, model, reason when off, how to enable (the channels', in registry order,
        then summary routing and the reranker)."""
        out: dict[str, dict[str, Any]] = channel_status(self.channels, self._status_overrides)
        out["summary"] = on_status(f"extractive+llm:{self.llm.model}" if self.llm is not None and self.llm_summaries
                                   else "extractive")
        out["rerank"] = (
            on_status(self.reranker.name)
            if self.reranker is not None
            else off_status("no reranker configured (none by default)", LLM_ENABLE_HINT)
        )
        return out


def check_rrf_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
        raise InvalidRequest(f"RRF constant K must be a positive integer, got {k!r}")
