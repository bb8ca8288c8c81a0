"""The expander: one unit of evidence for each hit, chosen by ``strategy`` and sized by the caps.

``Expander.expand`` picks a hit's unit (a page as text or image, a page excerpt, a section, a paragraph, a
window of sentences, a table, a figure) from its kind, the retrievers that found it (``visual_hit``) and the
caps of this budget (``parent_cap``, ``page_cap``, ``window_tokens``: ``assembly.room``). What it reads of the
source (sections, tables, the blocks of a page, page text) is ``SourceStructure``'s, kept with the source;
what depends on the question (``best_paragraphs``: a page's blocks sharing most of its words) is kept for
the expander's lifetime, one request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from folio.assembly.expansion.pagetext import compact_table
from folio.assembly.expansion.sections import SectionView, token_window
from folio.assembly.expansion.structure import SourceStructure
from folio.assembly.expansion.tables import fitted_rows, table_markdown
from folio.assembly.expansion.units import Unit
from folio.assembly.options import AssemblyOptions
from folio.assembly.wholedoc import DOCUMENT_RETRIEVER
from folio.kernel.hit import Hit
from folio.kernel.index import RegionSource
from folio.kernel.model import Region

log = logging.getLogger(__name__)

Target = tuple[int, Hit, Region]
"""The hit being expanded: its index among the hits, the hit and its region."""


def visual_hit(hit: Hit, text_retrievers: Collection[str]) -> bool:
    """True unless every retriever that found ``hit`` read text (``text_retrievers``: the options' retrieval
    channels that read text, ``AssemblyOptions.text_retrievers``, and the whole-document pages assembly adds,
    ``wholedoc.DOCUMENT_RETRIEVER``); rerankers do not count. Hits without provenance count as visual. (A scanned
    page goes as its OCR text unless ``scanned_pages="image"``: ``Expander._page``.)"""
    names = [s.retriever for s in hit.sources if not s.retriever.startswith("rerank")]
    return not names or not all(n in text_retrievers for n in names)


@dataclass(frozen=True)
class Caps:
    """This budget's caps on one unit, in tokens (``assembly.room``): a parent section, a page sent as text
    (None: the parent cap) and a window of sentences (None: ``window_before``/``window_after`` sentences)."""

    parent: int
    page: int | None = None
    window: int | None = None


@dataclass(frozen=True)
class RequestFacts:
    """What one request fixes for the expander's lifetime: the tokenizer's name (the source's structure is
    counted per tokenizer), the question's content words, the hits' region ids and how many hits fall on
    each (version, page)."""

    tokenizer: str = ""
    query_words: frozenset[str] = frozenset()
    hit_ids: frozenset[str] = frozenset()
    page_hits: Mapping[tuple[str, int], int] = field(default_factory=dict)


class Expander:
    """Builds units for hits against one ``RegionSource``, reading its structure through ``structure``
    (``SourceStructure``: cached per source)."""

    def __init__(self, source: RegionSource, options: AssemblyOptions, count: Callable[[str], int], caps: Caps,
                 request: RequestFacts | None = None) -> None:
        if request is None:
            request = RequestFacts()
        self.source = source
        self.page_hits = dict(request.page_hits)
        self.window_tokens = caps.window
        self.page_cap = caps.parent if caps.page is None else caps.page
        self.query_words = request.query_words
        self.hit_ids = request.hit_ids
        self.o = options
        self.count = count
        self.parent_cap = caps.parent
        self.text_retrievers = options.text_retrievers | {DOCUMENT_RETRIEVER}  # who read text: ``visual_hit``
        self.structure = SourceStructure(source, count, request.tokenizer, options.page_render)
        self._best: dict[tuple[str, str, int, int, frozenset[str]], list[Region]] = {}  # best_paragraphs, this request

    # -- the blocks of a page that answer the question --------------------------------------
    def best_paragraphs(self, page: Region, cap: int, own: frozenset[str] = frozenset()) -> list[Region]:
        """The page's paragraphs and tables sharing most query words, best first, while their sum fits
        ``cap`` (at least one). A table too large for what is left comes as its header and the rows
        sharing most words with the question (a copy of the table region with that text: same id and
        box), when it shares a word. Blocks that are hits themselves are left to their own candidates,
        except the hits in ``own`` (the region ids of the hits the page's candidate carries).
        (Leaving out blocks that share no word was measured: it lost 2 answers on the wide set at 2k,
        slides whose evidence is code output or numbers.)

        Expansion and the fallback ladder ask for the same pages: the answer is kept for this
        expander's lifetime (one request: the query words and hit ids are fixed)."""
        key = (page.doc_id, page.version_id, page.first_page, cap, own)
        best = self._best.get(key)
        if best is None:
            best = self._best[key] = self._best_paragraphs(page, cap, own)
        return list(best)

    def _best_paragraphs(self, page: Region, cap: int, own: frozenset[str]) -> list[Region]:
        pb = self.structure.blocks_of_page(page)
        hit_ids = self.hit_ids
        keep = [k for k, rid in enumerate(pb.ids) if rid not in hit_ids or rid in own]
        if not keep:
            return []
        qw = self.query_words
        shared = [len(qw & w) for w in pb.words]
        ranked = sorted(keep, key=lambda k: (-shared[k], k))  # k grows with the position among the kept
        tokens = self.structure.block_tokens(pb)
        out: list[Region] = []
        total = 0
        for k in ranked:
            block: Region | None = pb.blocks[k]
            n = tokens[k]
            if total + n > cap and pb.blocks[k].kind == "table" and shared[k]:
                block = self.table_rows(pb.blocks[k], cap - total)
                n = self.count(block.text) if block is not None else 0
            if block is None or (out and total + n > cap):
                continue
            out.append(block)
            total += n
        return out

    def hit_tables(self, page: Region) -> frozenset[str]:
        """The tables on ``page`` that are hits themselves. A page sent as its best paragraphs may carry them
        (cut to their header and best rows), and a table's own unit then merges into the page's when the page
        ranks first (``dedupe``, rule 1c): a statement page that a page list ranks first is sent as its
        statement, not as the notes around it ("See accompanying Notes…") with the statement left to a later
        candidate that the budget no longer reaches."""
        pb = self.structure.blocks_of_page(page)
        return frozenset(rid for rid, b in zip(pb.ids, pb.blocks, strict=True) if b.kind == "table"
                         and rid in self.hit_ids)

    def table_rows(self, table: Region, limit: int) -> Region | None:
        """``table`` cut to its header and the rows sharing most query words that fit ``limit`` tokens,
        in table order (None when not even one row fits)."""
        rows = table_markdown(table) if self.o.page_render == "stored" else compact_table(table)
        text = fitted_rows(rows, self.query_words, limit, self.count)
        return None if text is None else table.model_copy(update={"text": text})

    # -- units -----------------------------------------------------------------------------
    def _span(self, at: Target, v: SectionView, span: tuple[int, int], expansion: str) -> Unit:
        """Sentences ``span`` (first, last; clipped to the section) of ``v``; a whole section is
        ``parent_section``."""
        i, hit, r = at
        lo, hi = max(0, span[0]), min(len(v) - 1, span[1])
        return Unit("span", ("span", v.key), r.doc_id, r.version_id, [i], hit.score, hit.rank,
                    {expansion}, view=v, lo=lo, hi=hi, full=expansion == "parent_section")

    def _region(self, i: int, hit: Hit, r: Region, expansion: str) -> Unit:
        return Unit("region", ("region", r.region_id), r.doc_id, r.version_id, [i], hit.score, hit.rank,
                    {expansion}, regions=[r])

    def _page(self, i: int, hit: Hit, r: Region, page_no: int) -> Unit | None:
        page = r if r.kind == "page" else self.source.page(r.doc_id, r.version_id, page_no)
        if page is None:
            return None
        page = self.structure.sent_page(page)
        image = self.o.include_images
        if image and self.o.strategy == "auto" and not visual_hit(hit, self.text_retrievers) and (
                not self.structure.scanned(page) or (self.o.scanned_pages == "text" and page.text.strip())):
            image = False
        u = Unit("page", ("page", page.region_id), r.doc_id, r.version_id, [i], hit.score, hit.rank,
                 {"page_image" if image else "page_text"}, regions=[page], image=image)
        if not image:
            if not page.text.strip():
                return None
            self.page_as_text(u)
        if r.kind in ("table", "figure"):
            u.absorbed.append(r)
        return u

    def page_as_text(self, u: Unit) -> None:
        """Auto: a page sent as text is its whole text if that fits the page cap, else its
        paragraphs and tables that share most words with the question (up to the cap), its tables that are
        hits of their own among them (``hit_tables``)."""
        page = u.regions[0]
        u.paras = []
        if self.o.strategy != "auto" or self.count(page.text.strip()) <= self.page_cap:
            return
        paras = self.best_paragraphs(page, self.page_cap, self.hit_tables(page))
        if paras:
            u.paras = self.structure.in_reading_order(page, paras)
            u.expansions = (u.expansions - {"page_text"}) | {"page_paragraphs"}

    def expand(self, i: int, hit: Hit, r: Region) -> Unit | None:
        """One unit for hit ``i`` (already resolved to region ``r``), or None if it has no content."""
        s = self.o.strategy
        if s == "page":
            return self._page(i, hit, r, r.first_page)
        if s == "auto" and self.o.page_units == "all" and (
            r.kind in ("sentence", "paragraph", "table", "section")
            or (r.kind == "figure" and not visual_hit(hit, self.text_retrievers))
        ):
            u = self._page_text(i, hit, r)
            if u is not None:
                return u
        if r.kind in ("table", "figure", "page", "section"):
            return self._object(i, hit, r)
        if r.kind not in ("sentence", "paragraph"):
            return self._region(i, hit, r, "raw")
        return self._in_section(i, hit, r)

    def _object(self, i: int, hit: Hit, r: Region) -> Unit | None:
        """A table, figure, page or section hit's unit."""
        s = self.o.strategy
        if r.kind == "table":
            parts = [r] if s == "raw" else self.structure.table_parts(r)
            return Unit("table", ("table", parts[0].region_id), r.doc_id, r.version_id, [i], hit.score,
                        hit.rank, {"table"}, regions=parts)
        if r.kind == "figure":
            # auto: a figure that only text retrievers found goes as its caption and in-figure text, like
            # a text-found page; its pixels are sent when a visual retriever (or OCR) vouches for them
            img = self.o.include_images and (s != "auto" or visual_hit(hit, self.text_retrievers))
            return Unit("figure", ("figure", r.region_id), r.doc_id, r.version_id, [i], hit.score,
                        hit.rank, {"figure" if img else "figure_text"}, regions=[r], image=img)
        if r.kind == "page":
            if not self.o.include_images and not r.text.strip():
                return None
            return self._page(i, hit, r, r.first_page)
        return self._section_hit(i, hit, r)

    def _in_section(self, i: int, hit: Hit, r: Region) -> Unit:
        """A sentence or paragraph hit's unit, from its place in its section's listing."""
        v = self.structure.view_for(r)
        if r.kind == "paragraph":
            if r.region_id not in v.para_range:
                return self._region(i, hit, r, "paragraph")
            pos = v.para_range[r.region_id][0]
        else:
            if r.region_id not in v.pos:
                log.warning("sentence %s missing from its section listing", r.region_id)
                return self._region(i, hit, r, "sentence")
            pos = v.pos[r.region_id]
        return self._text(i, hit, r, v, pos)

    def _text(self, i: int, hit: Hit, r: Region, v: SectionView, pos: int) -> Unit:
        s, o, at = self.o.strategy, self.o, (i, hit, r)
        if r.kind == "paragraph":
            return self._paragraph(at, v, pos)
        if s == "raw":
            return self._span(at, v, (pos, pos), "sentence")
        if s == "neighbors":
            return self._neighbors(i, hit, r, v, pos)
        if s in ("parent", "auto") and self.structure.section_tokens(v) <= self.parent_cap:
            return self._span(at, v, (0, len(v) - 1), "parent_section")
        if s == "auto" and o.page_units == "large_sections":
            u = self._page_text(i, hit, r)
            if u is not None:
                return u
        if s == "parent":
            para = v.paragraph_span(pos)
            ptoks = sum(self.count(v.sentences[k].text) for k in range(para[0], para[1] + 1))
            if ptoks <= self.parent_cap:
                return self._span(at, v, para, "paragraph")
        return self._window(at, v, pos)

    def _paragraph(self, at: Target, v: SectionView, pos: int) -> Unit:
        """A paragraph hit: its section when it fits the parent cap (``parent``, ``auto``), its neighbours, its
        page as text (``auto``, ``large_sections``), else the paragraph."""
        s, (i, hit, r) = self.o.strategy, at
        if s in ("parent", "auto") and self.structure.section_tokens(v) <= self.parent_cap:
            return self._span(at, v, (0, len(v) - 1), "parent_section")
        if s == "neighbors":
            return self._neighbors(i, hit, r, v, pos)
        if s == "auto" and self.o.page_units == "large_sections":
            u = self._page_text(i, hit, r)
            if u is not None:
                return u
        return self._span(at, v, v.paragraph_span(pos), "paragraph")

    def _window(self, at: Target, v: SectionView, pos: int) -> Unit:
        """A window around sentence ``pos``: ``auto`` with a window cap cuts a page excerpt (``window_source``
        ``page``) or a token window; otherwise ``window_before``/``window_after`` sentences."""
        o, (i, hit, r) = self.o, at
        if o.strategy == "auto" and self.window_tokens is not None:
            if o.window_source == "page":
                n = self.page_hits.get((r.version_id, r.first_page), 1)
                u = self._page_excerpt(i, hit, r, self.window_tokens * max(1, min(o.excerpt_growth, n)))
                if u is not None:
                    return u
            return self._span(at, v, token_window(v, pos, self.window_tokens, self.count), "window")
        return self._span(at, v, (pos - o.window_before, pos + o.window_after), "window")

    def _page_text(self, i: int, hit: Hit, r: Region) -> Unit | None:
        """The hit's page as text, when it lies on one page and that page fits ``page_cap``."""
        page = self.structure.page_of(r)
        if page is None or self.count(page.text) > self.page_cap:
            return None
        return self._whole_page(i, hit, r, page)

    def _whole_page(self, i: int, hit: Hit, r: Region, page: Region) -> Unit:
        """Hit ``i`` sent as the whole text of ``page`` (promoted: spans on the page merge into it)."""
        return Unit("page", ("page", page.region_id), r.doc_id, r.version_id, [i], hit.score, hit.rank,
                    {"page_text"}, regions=[page], image=False, promoted=True)

    def _page_excerpt(self, i: int, hit: Hit, r: Region, limit: int) -> Unit | None:
        """A window cut from the page text around the hit (about ``limit`` tokens, a third before and two
        thirds after, at line boundaries): unlike a window of the section's sentences it carries what
        sits beside the hit on the page, such as table cells, captions and list items. The page's line that
        answers goes with it (``more_excerpts``) when the window does not reach it (``answering_excerpt``)."""
        page = self.structure.page_of(r)
        span = None if page is None else self.structure.page_span(r, page)
        if page is None or span is None:
            return None
        text = page.text
        (lo, hi), more = self.structure.excerpt(r, text, span, limit, self.query_words)
        if lo == 0 and hi >= len(text.rstrip()):
            return self._whole_page(i, hit, r, page)
        return Unit("page", ("excerpt", page.region_id, str(lo)), r.doc_id, r.version_id, [i], hit.score,
                    hit.rank, {"page_excerpt"}, regions=[page], image=False, excerpt=(lo, hi),
                    more_excerpts=list(more))

    def _neighbors(self, i: int, hit: Hit, r: Region, v: SectionView, pos: int) -> Unit:
        pid = v.sent_para[pos]
        if pid is None or pid not in v.para_index:
            return self._span((i, hit, r), v, v.paragraph_span(pos), "neighbors")
        k, n = v.para_index[pid], self.o.neighbors
        lo_k, hi_k = max(0, k - n), min(len(v.paragraphs) - 1, k + n)
        ranges = [v.para_range[p.region_id] for p in v.paragraphs[lo_k:hi_k + 1]
                  if p.region_id in v.para_range]
        lo = min(a for a, _ in ranges)
        hi = max(b for _, b in ranges)
        return self._span((i, hit, r), v, (lo, hi), "neighbors")

    def _section_hit(self, i: int, hit: Hit, r: Region) -> Unit | None:
        # a section's own content: sentences whose innermost section is this one
        proxy = r.model_copy(update={"section_id": r.region_id})
        v = self.structure.view_for(proxy)
        if len(v) == 0:
            return self._region(i, hit, r, "section") if r.text.strip() else None
        if self.o.strategy == "raw" or self.structure.section_tokens(v) <= self.parent_cap:
            return self._span((i, hit, r), v, (0, len(v) - 1), "parent_section")
        return self._span((i, hit, r), v, v.paragraph_span(0), "section_lead")

