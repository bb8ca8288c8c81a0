"""The retrieval entry point: one ``Retriever`` that runs a strategy's channels and fuses their lists.

``search`` returns small units (sentences, tables, figures, pages) as ranked :class:`Hit`s; each hit
keeps every retriever that found it (``sources``: retriever, 1-based rank, raw score). The channels
(``retrieval.channels``: text full-text and dense, CLIP, ColPali, whole-page BM25) each own their model,
table, indexer and query; the retriever maps a strategy to its channels (``STRATEGY_CHANNELS``), runs
them in order, adds the lists of pages and objects the question names, fuses (``retrieval.fusion``),
applies quotas and reranks. Strategies:

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

from folio.ingest.embed import TextEncoder, default_text_encoder
from folio.ingest.storage.interface import StoreReader
from folio.kernel.errors import InvalidRequest
from folio.kernel.hit import Hit, Modality, RetrievalStrategy, Source
from folio.kernel.index import MergedSource, RegionIndex
from folio.kernel.model import Region
from folio.kernel.pageref import PageRef, parse_page_refs, resolve
from folio.kernel.scope import Scope
from folio.retrieval.channels import (
    STRATEGY_CHANNELS,
    Channel,
    ChannelModels,
    ChannelQuery,
    ClipChannel,
    ColPaliChannel,
    build_channels,
)
from folio.retrieval.clip import CLIP_ENABLE_HINT, ClipModel
from folio.retrieval.colpali import COLPALI_ENABLE_HINT, ColPaliModel
from folio.retrieval.fusion import DEFAULT_RRF_K, apply_quotas, check_quotas, page_first, rrf
from folio.retrieval.glossary import expand, statements_for
from folio.retrieval.labelref import LabelIndex, LabelRef, parse_label_refs
from folio.retrieval.rerank import Completer, LLMReranker, Reranker
from folio.retrieval.scope import modality_of, resolve_scope
from folio.retrieval.statements import STATEMENT_WEIGHT
from folio.retrieval.summary import RoutedSection, SummaryRouter
from folio.retrieval.text import Candidate, TextRetriever
from folio.retrieval.visual import load_clip, load_colpali, off_status, on_status
from folio.settings import LLM_ENABLE_HINT, Settings

logger = logging.getLogger(__name__)

STRATEGIES: tuple[RetrievalStrategy, ...] = get_args(RetrievalStrategy)
DEFAULT_QUOTAS: dict[Modality, int] = {"table": 2, "figure": 2, "page": 2}
MAX_K = 1000
SOURCE_CACHE_SIZE = 64  # region sources kept by source_for (distinct version sets)
# Weight in fusion of the lists of pages and objects a question names ("page 12", "Table 1"). Measured with
# benchmarks/eval_quality.py: 2.0 lost wide-set answers at 1k/2k against 1.0 (README, "Quality").
REF_WEIGHT = 1.0
EXACT_REF_BOOST = 2.0  # a page reference that resolves to one page per number counts this much more
# Weight in fusion of the whole-page BM25 list (``retrieval.pagelex``); 0 turns the channel off. Measured with
# benchmarks/eval_quality.py on all of mmlb (README, "Quality"): against no channel, 0.5 changed answers by
# +5.9/-2.0/0 (half A) and +4.7/+4.8/+2.4 (half B) at 1k/2k/4k, but cost wide answers at 1k/2k (-4.5/-2.3);
# 0.25 still lost 3.4 on wide at 1k and gained less on mmlb; 1.0 and 1.5 lost half-B answers at 1k.
PAGE_LEX_WEIGHT = 0.5
MAX_PAGEREF_VERSIONS = 50  # page and label references are resolved in at most this many versions of the scope
LABEL_CACHE_VERSIONS = 64  # versions whose label index (retrieval.labelref) is kept


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
        clip: ClipModel | None = None,
        colpali: ColPaliModel | None = None,
        reranker: Reranker | None = None,
        llm: Completer | None = None,
        rrf_k: int = DEFAULT_RRF_K,
        route_sections: int = 8,
        status_overrides: Mapping[str, dict[str, Any]] | None = None,
        page_order: bool = False,
        page_decay: float = 0.5,
        llm_summaries: bool = False,
        ref_weight: float = REF_WEIGHT,
        page_lex_weight: float = PAGE_LEX_WEIGHT,
        glossary: bool = True,
        statement_weight: float = STATEMENT_WEIGHT,
    ) -> None:
        if text_encoder is None:
            text_encoder = default_text_encoder()
        self.store = store
        self.ref_weight = ref_weight
        # financial metrics: the lexical channels also search their line items, the statement list finds
        # the statements they are printed in (retrieval.glossary, retrieval.statements)
        self.glossary = glossary
        self._label_cache: dict[tuple[str, str, str], LabelIndex[Region]] = {}  # (doc, version, stamp)
        self._label_lock = threading.Lock()
        self.text_encoder = text_encoder
        self.text = TextRetriever(store, text_encoder)
        self.channels: dict[str, Channel] = build_channels(
            ChannelModels(store, self.text, clip=clip, colpali=colpali, page_lex_weight=page_lex_weight,
                          statement_weight=statement_weight)
        )
        if reranker is None and llm is not None:
            reranker = LLMReranker(llm)
        self.reranker = reranker
        self.llm = llm
        self.llm_summaries = llm_summaries and llm is not None  # ingest writes summaries with the LLM
        self.summaries = SummaryRouter(store, text_encoder)
        check_rrf_k(rrf_k)
        self.rrf_k = rrf_k
        self.route_sections = route_sections
        self.page_order = page_order
        self.page_decay = page_decay
        self._status_overrides = dict(status_overrides or {})
        # source_for's results, so that assembly's per-source caches (section views, page
        # paragraphs, token counts) live across requests; keyed by the versions table's version.
        self._sources: OrderedDict[tuple[int, frozenset[tuple[str, str]]], MergedSource] = OrderedDict()
        self._sources_lock = threading.Lock()

    @property
    def page_lex_weight(self) -> float:
        """Weight in fusion of the whole-page BM25 list; 0 turns the channel off."""
        return self.channels["pagelex"].weight

    @page_lex_weight.setter
    def page_lex_weight(self, value: float) -> None:
        self.channels["pagelex"].weight = value

    @classmethod
    def from_settings(cls, store: StoreReader, settings: Settings, *, llm: Completer | None = None) -> Retriever:
        """Load the models the settings name; the ones that fail stay off, with the reason in ``status()``.
        ``llm`` (the application's chat client, if one is configured) reranks and is named in ``status()``."""
        clip, clip_status = load_clip(settings)
        colpali, colpali_status = load_colpali(settings)
        return cls(
            store,
            text_encoder=default_text_encoder(settings.embedding),
            clip=clip,
            colpali=colpali,
            llm=llm,
            status_overrides={"clip": clip_status, "colpali": colpali_status},
            llm_summaries=settings.llm.summaries,
        )

    # ------------------------------------------------------------------ search
    def search(
        self,
        query: str,
        *,
        doc_ids: Sequence[str] | None = None,
        versions: Mapping[str, str] | None = None,
        pages: Sequence[int] | None = None,
        kinds: Sequence[str] | None = None,
        k: int = 50,
        strategy: RetrievalStrategy = "hybrid",
        quotas: Mapping[Modality, int] | None = None,
        rerank: bool = False,
    ) -> list[Hit]:
        return self.search_detailed(
            query,
            doc_ids=doc_ids,
            versions=versions,
            pages=pages,
            kinds=kinds,
            k=k,
            strategy=strategy,
            quotas=quotas,
            rerank=rerank,
        ).hits

    def search_detailed(
        self,
        query: str,
        *,
        doc_ids: Sequence[str] | None = None,
        versions: Mapping[str, str] | None = None,
        pages: Sequence[int] | None = None,
        kinds: Sequence[str] | None = None,
        k: int = 50,
        strategy: RetrievalStrategy = "hybrid",
        quotas: Mapping[Modality, int] | None = None,
        rerank: bool = False,
    ) -> SearchResult:
        """Like :meth:`search`, also returning which retrievers ran and any notes (reranker fallbacks)."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidRequest("query must be a non-empty string")
        if strategy not in STRATEGIES:
            raise InvalidRequest(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            raise InvalidRequest(f"k must be an integer from 1 to {MAX_K}, got {k!r}")
        if rerank and self.reranker is None:
            raise InvalidRequest(f"rerank was asked for but no reranker is configured: {LLM_ENABLE_HINT}")
        if quotas is not None:
            quota_map = check_quotas(quotas, k)
        else:  # default reservations only when k leaves room for them
            quota_map = dict(DEFAULT_QUOTAS) if k >= 4 * sum(DEFAULT_QUOTAS.values()) else {}
        scope = resolve_scope(self.store, doc_ids=doc_ids, versions=versions, pages=pages, kinds=kinds)
        result = SearchResult(hits=[], scope=scope)
        if scope.empty:
            return result
        depth = max(2 * k, 100)
        routes: dict[str, RoutedSection] = {}
        region_ids: Collection[str] | None = None
        if strategy == "summary":
            routed = self.summaries.route(query, self.text.embed_query(query), scope, self.route_sections)
            routes = self.summaries.children(routed)
            if routes:
                region_ids = routes.keys()
            else:
                result.notes.append("no section summaries in scope; searched all text instead")
        expansion, statements = (expand(query), statements_for(query)) if self.glossary else ("", ())
        lists = self._channel_lists(strategy, ChannelQuery(query, scope, depth, region_ids=region_ids,
                                                            expansion=expansion, statements=statements))
        weights = {name: channel.weight for name, channel in self.channels.items()}
        weights["pageref"] = weights["labelref"] = self.ref_weight
        refs = parse_page_refs(query)
        if refs and strategy in ("hybrid", "summary"):
            lists["pageref"], exact = self._page_ref_candidates(refs, scope, lists)
            if exact:
                weights["pageref"] *= EXACT_REF_BOOST
        labels = parse_label_refs(query)
        if labels and strategy in ("hybrid", "summary"):
            named = self._label_ref_candidates(labels, scope)
            if named:
                lists["labelref"] = named
        result.retrievers = [n for n, lst in lists.items()]
        hits = self._fuse(lists, routes, weights)
        if self.page_order and hits:
            hits = self._page_order(hits, lists)
        modality = {h.region_id: h.modality for h in hits}
        hits = apply_quotas(hits, k, quota_map, lambda h: modality[h.region_id])
        hits = [h.model_copy(update={"rank": i + 1}) for i, h in enumerate(hits)]
        if rerank and self.reranker is not None and hits:
            rr = self.reranker.rerank(query, hits, self.texts_for(hits))
            hits = rr.hits
            result.notes.extend(rr.notes)
            if rr.applied:
                result.retrievers.append(f"rerank:{self.reranker.name}")
        result.hits = hits
        return result

    def _channel_lists(self, strategy: RetrievalStrategy, query: ChannelQuery) -> dict[str, list[Candidate]]:
        """Each of the strategy's channels that is on, in order; a channel sees the lists built before it."""
        lists: dict[str, list[Candidate]] = {}
        for name in STRATEGY_CHANNELS[strategy]:
            channel = self.channels.get(name)
            if channel is None:
                continue
            found = channel.search(replace(query, found=lists))
            if found is not None:
                lists[name] = found
        return lists

    def _page_ref_candidates(self, refs: Sequence[PageRef], scope: Scope, lists: Mapping[str, Sequence[Candidate]]
                             ) -> tuple[list[Candidate], bool]:
        """One ranked list for the pages a question names (``retrieval.pageref``): each resolved page,
        then the other retrievers' candidates on those pages in their order. Also whether the reference
        is exact: one version in scope and one page per named number (the printed label and the
        physical index agree, or only one exists)."""
        out: list[Candidate] = []
        wanted: set[tuple[str, str, int]] = set()
        named = sum(len(r.numbers) for r in refs)
        exact = len(scope.versions) == 1
        for doc_id, version_id in scope.versions[:MAX_PAGEREF_VERSIONS]:
            by_no = {r.first_page: r for r in
                     self.store.region_index(doc_id, version_id).of_kind(doc_id, version_id, "page")}
            last = max(by_no, default=0)
            labels = [(by_no[p].meta_get("label") or "") if p in by_no else "" for p in range(1, last + 1)]
            resolved = resolve(refs, labels, last)
            exact = exact and len(resolved) == named
            for pno in resolved:
                r = by_no.get(pno)
                if r is None or (scope.pages is not None and pno not in scope.pages):
                    continue
                wanted.add((doc_id, version_id, pno))
                out.append(Candidate(r.region_id, doc_id, version_id, "page", pno, 1.0))
        seen = {c.region_id for c in out}
        for lst in lists.values():
            for c in lst:
                if (c.doc_id, c.version_id, c.page) in wanted and c.region_id not in seen:
                    seen.add(c.region_id)
                    out.append(c)
        return out, exact and bool(out)

    def _label_ref_candidates(self, refs: Sequence[LabelRef], scope: Scope) -> list[Candidate]:
        """One ranked list for the numbered objects a question names (``retrieval.labelref``): tables
        and figures whose caption starts with the label, then paragraphs that do (as their first sentence,
        the unit retrievers rank), each preceded by the table or figure right above or below it: a caption
        parsed as a line of text names the object next to it."""
        out: list[Candidate] = []
        for doc_id, version_id in scope.versions[:MAX_PAGEREF_VERSIONS]:
            index = self.store.region_index(doc_id, version_id)
            for found in self._labels(doc_id, version_id, index).find(refs):
                named = [found]
                if found.kind == "paragraph":  # a caption line: the object it captions, then its sentence
                    first = next((c for c in index.children(found.region_id) if c.kind == "sentence"), None)
                    named = [r for r in (captioned_object(index, found), first) if r is not None]
                for r in named:
                    page = r.first_page
                    if scope.pages is not None and page not in scope.pages:
                        continue
                    if scope.kinds is not None and r.kind not in scope.kinds:
                        continue
                    out.append(Candidate(r.region_id, doc_id, version_id, r.kind, page, 1.0))
        return out

    def _labels(self, doc_id: str, version_id: str, index: RegionIndex) -> LabelIndex[Region]:
        """The version's label index, built once per stamp (``StoreReader.version_stamp``: a version's rows
        change only when replaced as a whole); the newest 64 are kept."""
        key = (doc_id, version_id, self.store.version_stamp(doc_id, version_id))
        with self._label_lock:
            labels = self._label_cache.pop(key, None)
        if labels is None:
            labels = LabelIndex(index.regions())
        with self._label_lock:
            self._label_cache[key] = labels
            while len(self._label_cache) > LABEL_CACHE_VERSIONS:
                self._label_cache.pop(next(iter(self._label_cache)))
        return labels

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
                sources = (*sources, Source(retriever="summary", rank=route.rank, score=route.score))
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
        """Per retriever: enabled, model, reason when off, how to enable."""
        out: dict[str, dict[str, Any]] = {
            "bm25": on_status("lancedb-fts"),
            "dense": on_status(self.text_encoder.name),
            "summary": on_status(f"extractive+llm:{self.llm.model}" if self.llm is not None and self.llm_summaries
                                 else "extractive"),
        }
        clip, colpali = self.channels.get("clip"), self.channels.get("colpali")
        out["clip"] = (
            on_status(clip.clip.model.name, dim=clip.clip.model.dim)
            if isinstance(clip, ClipChannel)
            else self._status_overrides.get("clip", off_status("no CLIP model configured", CLIP_ENABLE_HINT))
        )
        out["colpali"] = (
            on_status(colpali.colpali.model.name, family=colpali.colpali.model.family)
            if isinstance(colpali, ColPaliChannel)
            else self._status_overrides.get(
                "colpali", off_status("no ColPali model configured", COLPALI_ENABLE_HINT)
            )
        )
        out["rerank"] = (
            on_status(self.reranker.name)
            if self.reranker is not None
            else off_status("no reranker configured (none by default)", LLM_ENABLE_HINT)
        )
        return out


CAPTION_GAP = 36.0  # points between a caption line and the table or figure it names (half an inch)


def captioned_object(index: RegionIndex, caption: Region) -> Region | None:
    """The table or figure on ``caption``'s page nearest to it above or below, within ``CAPTION_GAP``
    points and overlapping it horizontally (None if there is none)."""
    if len({loc.page for loc in caption.locators}) != 1:
        return None
    cap = caption.locators[0].bbox
    best: tuple[float, Region] | None = None
    for kind in ("table", "figure"):
        for r in index.of_kind(caption.doc_id, caption.version_id, kind):
            if r.first_page != caption.first_page or not r.locators:
                continue
            box = r.locators[0].bbox
            if box.x1 <= cap.x0 or box.x0 >= cap.x1:
                continue
            gap = max(box.y0 - cap.y1, cap.y0 - box.y1)
            if gap <= CAPTION_GAP and (best is None or gap < best[0]):  # negative: they overlap
                best = (gap, r)
    return best[1] if best else None


def check_rrf_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
        raise InvalidRequest(f"RRF constant K must be a positive integer, got {k!r}")
