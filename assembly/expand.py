"""Expansion: from a scored hit on a small unit to the unit of evidence the model will see.

Expansion happens *after* scoring (score-then-expand): hits arrive already ranked and expansion
never changes a score.

Text inside one section is modelled as an interval over that section's sentences (in reading order,
``source.in_section(section_id, "sentence")``): a sentence window, a paragraph, a run of neighbour
paragraphs and the whole section are all ``Unit(kind="span", lo, hi)``; the whole section also sets
``full`` so its tables and sentence-less paragraphs are rendered too. Because every text unit of a
section is an interval of the same sequence, dedupe is an interval union (``assembly.dedupe``), and
a window can never leave its document, version or section: the sequence it indexes holds only that
section's sentences. Sentences without a section belong to one implicit section per version.

Figures in a section are *not* part of the parent text: they travel as image items with their
caption, triggered by their own hits.
"""

from __future__ import annotations

import logging
import weakref
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from folio.assembly.pagetext import CompactPage, compact_page
from folio.assembly.types import AssemblyOptions
from folio.assembly.wholedoc import DOCUMENT_RETRIEVER
from folio.assembly.words import content_words
from folio.kernel.hit import Hit, Modality
from folio.kernel.index import RegionSource
from folio.kernel.model import Region, RegionKind

log = logging.getLogger(__name__)

UnitKind = Literal["span", "table", "figure", "page", "region"]
EXCERPT_CACHE_SIZE = 100_000  # page-excerpt bounds kept per source (region x limit x tokenizer)


def _reading_key(r: Region) -> tuple[int, float, int]:
    return (r.first_page, r.locators[0].bbox.y0 if r.locators else 0.0, r.seq)


class SectionView:
    """The text of one section as a sentence sequence plus its paragraphs and tables."""

    def __init__(self, key: str, section: Region | None, sentences: Sequence[Region],
                 paragraphs: Sequence[Region], tables: Sequence[Region]) -> None:
        self.key = key
        self.section = section
        self.heading = section.heading_path[-1] if section is not None and section.heading_path else None
        self.sentences = list(sentences)
        self.pos = {s.region_id: i for i, s in enumerate(self.sentences)}
        self.paragraphs = list(paragraphs)
        self.tables = list(tables)
        self.para_range: dict[str, tuple[int, int]] = {}
        self.sent_para: list[str | None] = []
        for i, s in enumerate(self.sentences):
            pid = s.parent_id
            self.sent_para.append(pid)
            if pid is not None:
                lo, _ = self.para_range.get(pid, (i, i))
                self.para_range[pid] = (lo, i)
        self.para_index = {p.region_id: i for i, p in enumerate(self.paragraphs)}
        self._blocks: list[Region] | None = None
        self.full_render: object | None = None  # cached by assembly.render
        self.token_totals: dict[str, int] = {}  # tokenizer name -> whole-section tokens (Expander)

    def __len__(self) -> int:
        return len(self.sentences)

    def paragraph_span(self, pos: int) -> tuple[int, int]:
        pid = self.sent_para[pos]
        return self.para_range.get(pid, (pos, pos)) if pid is not None else (pos, pos)

    def blocks(self) -> list[Region]:
        """Paragraphs and tables in reading order, for rendering the whole section.

        Paragraphs keep ``seq`` order (the parser's reading order); each table goes before the first
        paragraph that starts below it on the same or a later page.
        """
        if self._blocks is None:
            out: list[Region] = []
            tables = sorted(self.tables, key=_reading_key)
            ti = 0
            for p in self.paragraphs:
                pk = _reading_key(p)[:2]
                while ti < len(tables) and _reading_key(tables[ti])[:2] <= pk:
                    out.append(tables[ti])
                    ti += 1
                out.append(p)
            out.extend(tables[ti:])
            # sentences whose paragraph is not in this section's paragraph list still render
            known = {p.region_id for p in self.paragraphs}
            self._orphans = [i for i, pid in enumerate(self.sent_para) if pid not in known]
            self._blocks = out
        return self._blocks

    def orphans(self) -> list[int]:
        self.blocks()
        return self._orphans


@dataclass(eq=False, slots=True)
class Unit:
    """A candidate item. Mutable while merging; ``assembly.pack`` turns survivors into items."""

    kind: UnitKind
    key: tuple[str, ...]
    doc_id: str
    version_id: str
    triggers: list[int]  # indices into the sorted hit list
    score: float
    rank: int
    expansions: set[str]
    view: SectionView | None = None
    lo: int = 0
    hi: int = 0
    full: bool = False
    regions: list[Region] = field(default_factory=list)  # table parts, figure, page, raw region
    absorbed: list[Region] = field(default_factory=list)  # tables/figures shown by a page image
    image: bool = False
    merged_into: Unit | None = None
    covers: list[int] = field(default_factory=list)
    paras: list[Region] = field(default_factory=list)  # page sent as text: its chosen paragraphs
    promoted: bool = False  # a page sent as text in place of a smaller unit (``page_units``)
    excerpt: tuple[int, int] | None = None  # page sent as this [start, end) slice of its text
    more_excerpts: list[tuple[int, int]] = field(default_factory=list)  # further slices of that page, in order

    @property
    def modality(self) -> Modality:
        if self.kind == "span" or self.kind == "region":
            return "text"
        return self.kind

    def root(self) -> Unit:
        u = self
        while u.merged_into is not None:
            u = u.merged_into
        return u

    @property
    def section_key(self) -> str | None:
        if self.view is not None:
            return self.view.key
        if self.kind in ("table", "region") and self.regions:
            r = self.regions[0]
            return r.section_id or f"{r.doc_id}@{r.version_id}:nosection"
        return None


class _PageBlocks:
    """The paragraphs, then the tables, that start on one page (each kind in reading order), with what
    ``Expander.best_paragraphs`` reads of them on every request: their content words, and their token
    counts per tokenizer name."""

    def __init__(self, blocks: Sequence[Region]) -> None:
        self.blocks = list(blocks)
        self.words = [content_words(b.text) for b in self.blocks]
        self.tokens: dict[str, list[int]] = {}
        self.ids = [b.region_id for b in self.blocks]
        self.order = {b.region_id: _reading_key(b) for b in self.blocks}  # reading-order key by region id


class _SourceCache:
    def __init__(self) -> None:
        self.views: dict[str, SectionView] = {}
        self.cont: dict[tuple[str, str], dict[str, Region]] = {}
        self.page_paras: dict[tuple[str, str, str], dict[int, list[Region]]] = {}
        self.page_blocks: dict[tuple[str, str, int], _PageBlocks] = {}
        self.one_page: dict[str, Region | None] = {}  # region id -> the page it lies on wholly (Expander.page_of)
        self.scanned: dict[str, bool] = {}  # page region id -> Expander.scanned
        self.excerpts: dict[tuple[str, int, str, str], tuple[int, int]] = {}  # Expander._page_excerpt's bounds
        self.compact: dict[str, tuple[Region, CompactPage]] = {}  # page region id -> Expander.sent_page


# Structural views derived from a source, kept while the source object lives. Sources are
# read-only snapshots (``RegionIndex`` is built once per version and never mutated), so views
# derived from one stay valid; a source that cannot be weakly referenced gets a per-call cache.
_CACHES: weakref.WeakKeyDictionary[object, _SourceCache] = weakref.WeakKeyDictionary()


def _cache_for(source: object) -> _SourceCache:
    try:
        c = _CACHES.get(source)
        if c is None:
            c = _SourceCache()
            _CACHES[source] = c
        return c
    except TypeError:
        return _SourceCache()


class Expander:
    """Builds units for hits against one ``RegionSource``; section views are cached per source."""

    def __init__(self, source: RegionSource, options: AssemblyOptions, count: Callable[[str], int],
                 parent_cap: int, tokenizer: str = "", query_words: frozenset[str] = frozenset(),
                 hit_ids: frozenset[str] = frozenset(), page_cap: int | None = None,
                 window_tokens: int | None = None,
                 page_hits: dict[tuple[str, int], int] | None = None) -> None:
        self.source = source
        self.page_hits = dict(page_hits or {})
        self.window_tokens = window_tokens
        self.page_cap = parent_cap if page_cap is None else page_cap
        self.query_words = query_words
        self.hit_ids = hit_ids
        self.o = options
        self.count = count
        self.parent_cap = parent_cap
        cache = _cache_for(source)
        self._views = cache.views
        self._cont = cache.cont
        self._page_paras = cache.page_paras
        self._page_blocks = cache.page_blocks
        self._one_page = cache.one_page
        self._scanned = cache.scanned
        self._excerpts = cache.excerpts
        self._compact = cache.compact
        self._best: dict[tuple[str, str, int, int, frozenset[str]], list[Region]] = {}  # best_paragraphs, this request
        self._tok = tokenizer

    # -- structure -------------------------------------------------------------------------
    def view_for(self, r: Region) -> SectionView:
        key = r.section_id or f"{r.doc_id}@{r.version_id}:nosection"
        v = self._views.get(key)
        if v is not None:
            return v
        src = self.source
        if r.section_id is not None:
            sents = [s for s in src.in_section(r.section_id, "sentence")
                     if s.doc_id == r.doc_id and s.version_id == r.version_id]
            paras = list(src.in_section(r.section_id, "paragraph"))
            tables = list(src.in_section(r.section_id, "table"))
            section = src.get(r.section_id)
        else:
            def loose(kind: Literal["sentence", "paragraph", "table"]) -> list[Region]:
                return [x for x in src.of_kind(r.doc_id, r.version_id, kind) if x.section_id is None]

            sents, paras, tables, section = loose("sentence"), loose("paragraph"), loose("table"), None
        v = SectionView(key, section, sents, paras, tables)
        self._views[key] = v
        return v

    def section_tokens(self, v: SectionView) -> int:
        """Size of the whole section for the parent cap: the sum of its parts' token counts."""
        # Cached on the view, which lives as long as its (immutable) source: sections are summed once
        # per tokenizer, not once per request.
        n = v.token_totals.get(self._tok)
        if n is None:
            n = sum(self.count(s.text) for s in v.sentences)
            with_sents = set(v.para_range)
            n += sum(self.count(p.text) for p in v.paragraphs if p.region_id not in with_sents)
            n += sum(self.count(table_markdown(t)) for t in v.tables)
            v.token_totals[self._tok] = n
        return n

    def table_parts(self, t: Region) -> list[Region]:
        """The whole table: follow ``continued_from`` back to the first part, then forward."""
        key = (t.doc_id, t.version_id)
        nxt = self._cont.get(key)
        if nxt is None:
            nxt = {}
            for x in self.source.of_kind(t.doc_id, t.version_id, "table"):
                prev = x.meta_get("continued_from")
                if prev:
                    nxt[prev] = x
            self._cont[key] = nxt
        root, seen = t, {t.region_id}
        while (prev := root.meta_get("continued_from")) and prev not in seen:
            p = self.source.get(prev)
            if p is None or p.kind != "table":
                break
            seen.add(prev)
            root = p
        parts, cur = [root], root
        while cur.region_id in nxt and nxt[cur.region_id].region_id not in {x.region_id for x in parts}:
            cur = nxt[cur.region_id]
            parts.append(cur)
        return parts

    def paragraphs_on(self, page: Region) -> list[Region]:
        """Paragraphs that start on ``page``'s page, in reading order (cached per version)."""
        return self._blocks_on(page, "paragraph")

    def tables_on(self, page: Region) -> list[Region]:
        """Tables that start on ``page``'s page, in reading order (cached per version)."""
        return self._blocks_on(page, "table")

    def _blocks_on(self, page: Region, kind: RegionKind) -> list[Region]:
        key = (page.doc_id, page.version_id, kind)
        by_page = self._page_paras.get(key)
        if by_page is None:
            by_page = defaultdict(list)
            for p in self.source.of_kind(page.doc_id, page.version_id, kind):
                if p.text.strip() and p.locators:
                    by_page[p.first_page].append(p)
            for lst in by_page.values():
                lst.sort(key=_reading_key)
            self._page_paras[key] = by_page
        return by_page.get(page.first_page, [])

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
        pb = self._blocks_of_page(page)
        hit_ids = self.hit_ids
        keep = [k for k, rid in enumerate(pb.ids) if rid not in hit_ids or rid in own]
        if not keep:
            return []
        qw = self.query_words
        shared = [len(qw & w) for w in pb.words]
        ranked = sorted(keep, key=lambda k: (-shared[k], k))  # k grows with the position among the kept
        tokens = self._block_tokens(pb)
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

    def in_reading_order(self, page: Region, blocks: Sequence[Region]) -> list[Region]:
        """``blocks`` of ``page`` (``best_paragraphs``) in reading order: page, top, ``seq`` (the keys are
        kept with the page's blocks; a table cut to rows keeps its region id and place)."""
        order = self._blocks_of_page(page).order
        return sorted(blocks, key=lambda p: order.get(p.region_id) or _reading_key(p))

    def _blocks_of_page(self, page: Region) -> _PageBlocks:
        key = (page.doc_id, page.version_id, page.first_page)
        pb = self._page_blocks.get(key)
        if pb is None:
            pb = self._page_blocks[key] = _PageBlocks([*self.paragraphs_on(page), *self.tables_on(page)])
        return pb

    def _block_tokens(self, pb: _PageBlocks) -> list[int]:
        """Token counts of ``pb``'s blocks, kept per tokenizer name (counted afresh without one)."""
        tokens = pb.tokens.get(self._tok) if self._tok else None
        if tokens is None:
            tokens = [self.count(b.text) for b in pb.blocks]
            if self._tok:
                pb.tokens[self._tok] = tokens
        return tokens

    def table_rows(self, table: Region, limit: int) -> Region | None:
        """``table`` cut to its header and the rows sharing most query words that fit ``limit`` tokens,
        in table order (None when not even one row fits)."""
        text = fitted_rows(table_markdown(table), self.query_words, limit, self.count)
        return None if text is None else table.model_copy(update={"text": text})

    # -- units -----------------------------------------------------------------------------
    def _span(self, i: int, hit: Hit, r: Region, v: SectionView, lo: int, hi: int, full: bool,
              expansion: str) -> Unit:
        lo, hi = max(0, lo), min(len(v) - 1, hi)
        return Unit("span", ("span", v.key), r.doc_id, r.version_id, [i], hit.score, hit.rank,
                    {expansion}, view=v, lo=lo, hi=hi, full=full)

    def _region(self, i: int, hit: Hit, r: Region, expansion: str) -> Unit:
        return Unit("region", ("region", r.region_id), r.doc_id, r.version_id, [i], hit.score, hit.rank,
                    {expansion}, regions=[r])

    def _page(self, i: int, hit: Hit, r: Region, page_no: int) -> Unit | None:
        page = r if r.kind == "page" else self.source.page(r.doc_id, r.version_id, page_no)
        if page is None:
            return None
        page = self.sent_page(page)
        image = self.o.include_images
        if image and self.o.strategy == "auto" and not visual_hit(hit) and (
                not self.scanned(page) or (self.o.scanned_pages == "text" and page.text.strip())):
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

    def scanned(self, page: Region) -> bool:
        """A page whose text came only from OCR of the page image: its pixels are the evidence.

        Pages carry ``scanned`` meta since parser v3; for older data, an OCR'd page counts as scanned
        unless some paragraph on it has native text (a native page whose figures were OCR'd). Kept with
        the source."""
        known = self._scanned.get(page.region_id)
        if known is None:
            known = self._scanned[page.region_id] = self._is_scanned(page)
        return known

    def _is_scanned(self, page: Region) -> bool:
        flag = page.meta_get("scanned")
        if flag is not None:
            return flag == "1"
        if page.meta_get("ocr") != "1":
            return False
        return all(p.meta_get("ocr") == "1" for p in self.paragraphs_on(page))

    def page_as_text(self, u: Unit) -> None:
        """Auto: a page sent as text is its whole text if that fits the page cap, else its
        paragraphs that share most words with the question (up to the cap)."""
        page = u.regions[0]
        u.paras = []
        if self.o.strategy != "auto" or self.count(page.text.strip()) <= self.page_cap:
            return
        paras = self.best_paragraphs(page, self.page_cap)
        if paras:
            u.paras = self.in_reading_order(page, paras)
            u.expansions = (u.expansions - {"page_text"}) | {"page_paragraphs"}

    def expand(self, i: int, hit: Hit, r: Region) -> Unit | None:
        """One unit for hit ``i`` (already resolved to region ``r``), or None if it has no content."""
        s = self.o.strategy
        if s == "page":
            return self._page(i, hit, r, r.first_page)
        if s == "auto" and self.o.page_units == "all" and (
            r.kind in ("sentence", "paragraph", "table", "section")
            or (r.kind == "figure" and not visual_hit(hit))
        ):
            u = self._page_text(i, hit, r)
            if u is not None:
                return u
        if r.kind == "table":
            parts = [r] if s == "raw" else self.table_parts(r)
            return Unit("table", ("table", parts[0].region_id), r.doc_id, r.version_id, [i], hit.score,
                        hit.rank, {"table"}, regions=parts)
        if r.kind == "figure":
            # auto: a figure that only text retrievers found goes as its caption and in-figure text, like
            # a text-found page; its pixels are sent when a visual retriever (or OCR) vouches for them
            img = self.o.include_images and (s != "auto" or visual_hit(hit))
            return Unit("figure", ("figure", r.region_id), r.doc_id, r.version_id, [i], hit.score,
                        hit.rank, {"figure" if img else "figure_text"}, regions=[r], image=img)
        if r.kind == "page":
            if not self.o.include_images and not r.text.strip():
                return None
            return self._page(i, hit, r, r.first_page)
        if r.kind == "section":
            return self._section_hit(i, hit, r)
        if r.kind not in ("sentence", "paragraph"):
            return self._region(i, hit, r, "raw")
        v = self.view_for(r)
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
        s, o = self.o.strategy, self.o
        para = v.paragraph_span(pos)
        if r.kind == "paragraph":
            if s in ("parent", "auto") and self.section_tokens(v) <= self.parent_cap:
                return self._span(i, hit, r, v, 0, len(v) - 1, True, "parent_section")
            if s == "neighbors":
                return self._neighbors(i, hit, r, v, pos)
            if s == "auto" and o.page_units == "large_sections":
                u = self._page_text(i, hit, r)
                if u is not None:
                    return u
            return self._span(i, hit, r, v, para[0], para[1], False, "paragraph")
        if s == "raw":
            return self._span(i, hit, r, v, pos, pos, False, "sentence")
        if s == "neighbors":
            return self._neighbors(i, hit, r, v, pos)
        if s in ("parent", "auto") and self.section_tokens(v) <= self.parent_cap:
            return self._span(i, hit, r, v, 0, len(v) - 1, True, "parent_section")
        if s == "auto" and o.page_units == "large_sections":
            u = self._page_text(i, hit, r)
            if u is not None:
                return u
        if s == "parent":
            ptoks = sum(self.count(v.sentences[k].text) for k in range(para[0], para[1] + 1))
            if ptoks <= self.parent_cap:
                return self._span(i, hit, r, v, para[0], para[1], False, "paragraph")
        if s == "auto" and self.window_tokens is not None:
            if o.window_source == "page":
                n = self.page_hits.get((r.version_id, r.first_page), 1)
                u = self._page_excerpt(i, hit, r, self.window_tokens * max(1, min(o.excerpt_growth, n)))
                if u is not None:
                    return u
            lo, hi = self.token_window(v, pos, self.window_tokens)
            return self._span(i, hit, r, v, lo, hi, False, "window")
        return self._span(i, hit, r, v, pos - o.window_before, pos + o.window_after, False, "window")

    def token_window(self, v: SectionView, pos: int, limit: int) -> tuple[int, int]:
        """The sentences around ``pos`` that fit ``limit`` tokens, grown one sentence at a time after,
        then before (the hit sentence always, however long): a window sized in tokens, so that dense
        tabular text and long prose both get about the same amount of context."""
        lo = hi = pos
        total = self.count(v.sentences[pos].text)
        grew = True
        while grew:
            grew = False
            if hi + 1 < len(v):
                n = self.count(v.sentences[hi + 1].text)
                if total + n <= limit:
                    hi, total, grew = hi + 1, total + n, True
            if lo > 0:
                n = self.count(v.sentences[lo - 1].text)
                if total + n <= limit:
                    lo, total, grew = lo - 1, total + n, True
        return lo, hi

    def _page_text(self, i: int, hit: Hit, r: Region) -> Unit | None:
        """The hit's page as text, when it lies on one page and that page fits ``page_cap``."""
        page = self.page_of(r)
        if page is None or self.count(page.text) > self.page_cap:
            return None
        return self._whole_page(i, hit, r, page)

    def page_of(self, r: Region) -> Region | None:
        """The page ``r`` lies on, when it lies on one page and that page has text (kept with the source),
        as it is sent (``sent_page``)."""
        try:
            page = self._one_page[r.region_id]
        except KeyError:
            page = None
            if len({loc.page for loc in r.locators}) == 1:
                page = self.source.page(r.doc_id, r.version_id, r.first_page)
                if page is not None and not page.text.strip():
                    page = None
            self._one_page[r.region_id] = page
        return None if page is None else self.sent_page(page)

    def sent_page(self, page: Region) -> Region:
        """``page`` with the text it is sent with: its compact text (``assembly.pagetext``; a copy of the
        region, same id and locators) unless ``page_render="stored"``. Kept with the source."""
        if self.o.page_render == "stored" or not page.text.strip():
            return page
        kept = self._compact.get(page.region_id)
        if kept is None:
            cp = compact_page(page, self.paragraphs_on(page), self.tables_on(page))
            kept = self._compact[page.region_id] = (page.model_copy(update={"text": cp.text}), cp)
        return kept[0]

    def page_span(self, r: Region, page: Region) -> tuple[int, int] | None:
        """``char_span(r)`` in the text ``page`` is sent with (``sent_page``), or None."""
        span = char_span(r)
        if span is None:
            return None
        kept = self._compact.get(page.region_id) if self.o.page_render == "compact" else None
        if kept is None or kept[1].text != page.text:
            return span if span[1] <= len(page.text) else None
        cp = kept[1]
        if span[1] > cp.stored_chars:
            return None
        a = cp.to_compact(span[0])
        return a, max(a, cp.to_compact(max(span[0], span[1] - 1)) + 1)

    def _whole_page(self, i: int, hit: Hit, r: Region, page: Region) -> Unit:
        """Hit ``i`` sent as the whole text of ``page`` (promoted: spans on the page merge into it)."""
        return Unit("page", ("page", page.region_id), r.doc_id, r.version_id, [i], hit.score, hit.rank,
                    {"page_text"}, regions=[page], image=False, promoted=True)

    def _page_excerpt(self, i: int, hit: Hit, r: Region, limit: int) -> Unit | None:
        """A window cut from the page text around the hit (about ``limit`` tokens, a third before and two
        thirds after, at line boundaries): unlike a window of the section's sentences it carries what
        sits beside the hit on the page, such as table cells, captions and list items."""
        page = self.page_of(r)
        span = None if page is None else self.page_span(r, page)
        if page is None or span is None:
            return None
        text = page.text
        key = (r.region_id, limit, self._tok, self.o.page_render)  # few limits (the window size): kept with the source
        kept = self._excerpts.get(key) if self._tok else None
        if kept is None:
            kept = self.excerpt_bounds(text, span[0], span[1], limit)
            if self._tok:
                if len(self._excerpts) >= EXCERPT_CACHE_SIZE:  # the limit follows the budget, which clients choose
                    self._excerpts.clear()
                self._excerpts[key] = kept
        lo, hi = kept
        if lo == 0 and hi >= len(text.rstrip()):
            return self._whole_page(i, hit, r, page)
        return Unit("page", ("excerpt", page.region_id, str(lo)), r.doc_id, r.version_id, [i], hit.score,
                    hit.rank, {"page_excerpt"}, regions=[page], image=False, excerpt=(lo, hi))

    def excerpt_bounds(self, text: str, a: int, b: int, limit: int) -> tuple[int, int]:
        """The slice of ``text`` around ``[a, b)`` of about ``limit`` tokens, a third before and two thirds
        after (the matched text always, however long), cut at line ends where one is near, else at sentence
        ends, else between words (``cut_at``): a compact page has a paragraph on one line."""
        per_token = max(1.0, len(text) / max(1, self.count(text)))
        room = max(0, int(limit * per_token) - (b - a))
        snap = max(EXCERPT_SNAP, room // 4)
        lo, hi = max(0, a - room // 3), min(len(text), b + room - room // 3)
        lo = cut_at(text, lo, 0, a, snap, start=True) if lo > 0 else 0
        hi = cut_at(text, min(len(text), hi + snap), b, len(text), snap, start=False) if hi < len(text) else hi
        n = self.count(text[lo:hi])
        while hi > b and n > limit:  # the estimate was generous: trim the tail
            target = max(b, hi - max(1, int((n - limit) * per_token)))
            cut = cut_at(text, target, b, hi - 1, snap, start=False)
            if cut >= hi:
                break
            hi = cut
            n = self.count(text[lo:hi])
        return lo, hi

    def _neighbors(self, i: int, hit: Hit, r: Region, v: SectionView, pos: int) -> Unit:
        pid = v.sent_para[pos]
        if pid is None or pid not in v.para_index:
            lo, hi = v.paragraph_span(pos)
            return self._span(i, hit, r, v, lo, hi, False, "neighbors")
        k, n = v.para_index[pid], self.o.neighbors
        lo_k, hi_k = max(0, k - n), min(len(v.paragraphs) - 1, k + n)
        ranges = [v.para_range[p.region_id] for p in v.paragraphs[lo_k:hi_k + 1]
                  if p.region_id in v.para_range]
        lo = min(a for a, _ in ranges)
        hi = max(b for _, b in ranges)
        return self._span(i, hit, r, v, lo, hi, False, "neighbors")

    def _section_hit(self, i: int, hit: Hit, r: Region) -> Unit | None:
        # a section's own content: sentences whose innermost section is this one
        proxy = r.model_copy(update={"section_id": r.region_id})
        v = self.view_for(proxy)
        if len(v) == 0:
            return self._region(i, hit, r, "section") if r.text.strip() else None
        if self.o.strategy == "raw" or self.section_tokens(v) <= self.parent_cap:
            return self._span(i, hit, r, v, 0, len(v) - 1, True, "parent_section")
        lo, hi = v.paragraph_span(0)
        return self._span(i, hit, r, v, lo, hi, False, "section_lead")


# The retrievers that read text: a page only they found goes as text (``statement``: a page headed by a
# financial statement's title, ``retrieval.statements``).
TEXT_RETRIEVERS = frozenset({"bm25", "dense", "summary", "pageref", "labelref", "pagelex", "statement",
                             DOCUMENT_RETRIEVER})


def visual_hit(hit: Hit) -> bool:
    """True unless every retriever that found ``hit`` read text (bm25, dense, summary, pageref);
    rerankers do not count. Hits without provenance count as visual. (A scanned page goes as its OCR
    text unless ``scanned_pages="image"``: ``Expander._page``.)"""
    names = [s.retriever for s in hit.sources if not s.retriever.startswith("rerank")]
    return not names or not all(n in TEXT_RETRIEVERS for n in names)




EXCERPT_SNAP = 80  # chars: an excerpt ends at a line end this near (or a quarter of its size), else a sentence end


def cut_at(text: str, pos: int, floor: int, ceil: int, snap: int, *, start: bool) -> int:
    """Where an excerpt starts (``start``) or ends near ``pos``, searching back from ``pos`` to no earlier
    than ``floor`` (and, for a start, no later than ``ceil``): the nearest line end within ``snap`` chars,
    else a sentence end, else a space; ``pos`` itself when none is there (``floor`` for an end).

    >>> t = "one two. three four\\nfive"
    >>> t[cut_at(t, 12, 0, 25, 80, start=True):], t[:cut_at(t, 12, 0, 25, 80, start=False)]
    ('three four\\nfive', 'one two.')
    """
    lo = max(floor, pos - snap)
    for sep in ("\n", ". ", " "):
        k = text.rfind(sep, lo, min(pos, ceil) + len(sep) - 1 if start else pos)
        if k >= 0 and (not start or k + len(sep) <= ceil):
            if start:
                return k + len(sep)
            return k + 1 if sep == ". " else k
    return min(pos, ceil) if start else max(floor, min(pos, ceil))


def char_span(r: Region) -> tuple[int, int] | None:
    """``[start, end)`` of ``r`` in its page's text, when it lies on one page and its locator has offsets."""
    loc = r.locators[0] if r.locators else None
    if loc is None or loc.char_start is None or len({x.page for x in r.locators}) != 1:
        return None
    a, b = loc.char_start, loc.char_end if loc.char_end is not None else loc.char_start
    return (a, b) if 0 <= a <= b else None


def table_markdown(t: Region) -> str:
    return t.meta_get("markdown") or t.text


def split_table(md: str) -> tuple[list[str], list[str]]:
    """(header lines, row lines) of a Markdown table; the header keeps its ``|---|`` rule."""
    lines = [ln for ln in md.splitlines() if ln.strip()]
    if len(lines) >= 2 and set(lines[1].replace("|", "").replace(":", "").strip()) <= {"-", " "} \
            and "-" in lines[1]:
        return lines[:2], lines[2:]
    return lines[:1], lines[1:]


ROW_PREFIX_MIN = 12  # tokens of room below which a cut row says nothing
ROW_PREFIX_SPAN = 3  # a best row up to this many times the room is cut to fit; a longer one is a layout cell


def ranked_rows(rows: Sequence[str], query_words: frozenset[str]) -> list[int]:
    """Row indices, the rows sharing most words with the question first, then table order: a row is
    found through its labels and the header words it repeats, and a table cut to fit keeps it.

    >>> ranked_rows(["| a | 1 |", "| total revenue | 9 |", "| b | 2 |"], frozenset({"total", "revenue"}))
    [1, 0, 2]
    """
    shared = [len(query_words & content_words(r)) for r in rows]
    return sorted(range(len(rows)), key=lambda i: (-shared[i], i))


def fitted_rows(md: str, query_words: frozenset[str], limit: int, count: Callable[[str], int]) -> str | None:
    """Markdown table ``md`` cut to its header and the rows that fit ``limit`` tokens, taken in
    ``ranked_rows`` order and skipping any row too long for what is left (a layout table can hold a
    whole page in one cell), in table order; None when not even one row fits. When the row sharing
    most words with the question is too long but at most ``ROW_PREFIX_SPAN`` times the room, the
    table is its header and that row's prefix (a row's label and first cells name the answer)."""
    header, rows = split_table(md)
    used = count("\n".join(header))
    keep: list[int] = []
    order = ranked_rows(rows, query_words)
    if order and query_words & content_words(rows[order[0]]):
        n, room = count(rows[order[0]]) + 1, limit - used
        if n > room and ROW_PREFIX_MIN <= room and n <= ROW_PREFIX_SPAN * room:
            cut = row_prefix(rows[order[0]], room - 1, count)
            return None if cut is None else "\n".join([*header, cut])
    for i in order:
        n = count(rows[i]) + 1
        if used + n <= limit:
            keep.append(i)
            used += n
    if not keep:
        return None
    return "\n".join(header + [rows[i] for i in sorted(keep)])


def row_prefix(row: str, limit: int, count: Callable[[str], int]) -> str | None:
    """The longest prefix of ``row`` that, with " …", fits ``limit`` tokens (None if nothing does).

    >>> row_prefix("| mz | full marks or zero |", 6, lambda t: len(t.split()))
    '| mz | full marks …'
    """
    lo, hi = 0, len(row)
    while lo < hi:  # the longest cut whose text still fits
        mid = (lo + hi + 1) // 2
        if count(row[:mid].rstrip() + " …") <= limit:
            lo = mid
        else:
            hi = mid - 1
    cut = row[:lo].rstrip()
    return cut + " …" if cut.strip(" |") else None


def table_text(parts: Sequence[Region]) -> str:
    """Markdown of a (possibly continued) table: continuation parts drop a repeated header."""
    if not parts:
        return ""
    first_header, rows = split_table(table_markdown(parts[0]))
    for p in parts[1:]:
        h, r = split_table(table_markdown(p))
        rows.extend(r if h == first_header else h + r)
    return "\n".join(first_header + rows)
