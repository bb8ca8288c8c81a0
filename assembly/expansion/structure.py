"""What expansion reads of a region source, kept with the source: its structure.

Sources are read-only snapshots (``RegionIndex`` is built once per version and never mutated), so what is
derived from one stays valid while the source object lives: section views (``SectionView``), the parts of
continued tables, the paragraphs and tables that start on each page (``PageBlocks``), which pages are
scanned, the page a region lies on, the page text as it is sent (``expansion.pagetext``) and page-excerpt
bounds. ``SourceStructure`` reads them for one request (its token counter and tokenizer name); a source
that cannot be weakly referenced gets a per-call cache.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Literal

from folio.assembly.expansion.excerpts import Slice, answering_excerpt, char_span
from folio.assembly.expansion.pagetext import CompactPage, compact_page, compact_table
from folio.assembly.expansion.sections import SectionView, reading_key
from folio.assembly.expansion.tables import table_markdown
from folio.assembly.navigation import boilerplate_kind, is_caution, page_kind
from folio.assembly.words import content_words
from folio.kernel.index import RegionSource
from folio.kernel.model import Region, RegionKind

EXCERPT_CACHE_SIZE = 100_000  # page-excerpt bounds kept per source (region x limit x tokenizer)
PageRender = Literal["compact", "stored"]


class PageBlocks:
    """The paragraphs, then the tables, that start on one page (each kind in reading order), with what
    ``Expander.best_paragraphs`` reads of them on every request: their content words, and their token
    counts per tokenizer name."""

    def __init__(self, blocks: Sequence[Region]) -> None:
        self.blocks = list(blocks)
        self.words = [content_words(b.text) for b in self.blocks]
        self.tokens: dict[str, list[int]] = {}
        self.ids = [b.region_id for b in self.blocks]
        self.order = {b.region_id: reading_key(b) for b in self.blocks}  # reading-order key by region id


class _SourceCache:
    """What ``SourceStructure`` keeps of one source (by its method names)."""

    def __init__(self) -> None:
        self.views: dict[str, SectionView] = {}
        self.cont: dict[tuple[str, str], dict[str, Region]] = {}
        self.page_paras: dict[tuple[str, str, str], dict[int, list[Region]]] = {}
        self.page_blocks: dict[tuple[str, str, int, bool], PageBlocks] = {}  # ..., tables as rows
        self.one_page: dict[str, Region | None] = {}  # region id -> the page it lies on wholly (page_of)
        self.scanned: dict[str, bool] = {}  # page region id -> scanned
        self.excerpts: dict[tuple[str, int, str, str, frozenset[str]], tuple[Slice, tuple[Slice, ...]]] = {}  # bounds
        self.compact: dict[str, tuple[Region, CompactPage]] = {}  # page region id -> sent_page
        self.contents: dict[str, str | None] = {}  # page region id -> its navigation_kind


# The structure derived from each source, kept while the source object lives (see the module docstring).
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


class SourceStructure:
    """The structure of one ``RegionSource`` as expansion and the fallback ladder read it, cached with the
    source; counts are ``count``'s, kept per ``tokenizer`` name (counted afresh without one)."""

    def __init__(self, source: RegionSource, count: Callable[[str], int], tokenizer: str,
                 page_render: PageRender) -> None:
        self.source = source
        self.count = count
        self.page_render = page_render
        cache = _cache_for(source)
        self._views = cache.views
        self._cont = cache.cont
        self._page_paras = cache.page_paras
        self._page_blocks = cache.page_blocks
        self._one_page = cache.one_page
        self._scanned = cache.scanned
        self._excerpts = cache.excerpts
        self._compact = cache.compact
        self._contents = cache.contents
        self._tok = tokenizer

    # -- sections and tables ----------------------------------------------------------------
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

    # -- the blocks of a page ---------------------------------------------------------------
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
                lst.sort(key=reading_key)
            self._page_paras[key] = by_page
        return by_page.get(page.first_page, [])

    def in_reading_order(self, page: Region, blocks: Sequence[Region]) -> list[Region]:
        """``blocks`` of ``page`` (``best_paragraphs``) in reading order: page, top, ``seq`` (the keys are
        kept with the page's blocks; a table cut to rows keeps its region id and place)."""
        order = self.blocks_of_page(page).order
        return sorted(blocks, key=lambda p: order.get(p.region_id) or reading_key(p))

    def blocks_of_page(self, page: Region) -> PageBlocks:
        """The paragraphs and tables that start on ``page``'s page (``PageBlocks``)."""
        rows = self.page_render != "stored"
        key = (page.doc_id, page.version_id, page.first_page, rows)
        pb = self._page_blocks.get(key)
        if pb is None:
            tables = self.tables_on(page)
            if rows:  # a page's table goes as rows, as it would in the whole page's text
                tables = [t.model_copy(update={"text": compact_table(t)}) for t in tables]
            pb = self._page_blocks[key] = PageBlocks([*self.paragraphs_on(page), *tables])
        return pb

    def block_tokens(self, pb: PageBlocks) -> list[int]:
        """Token counts of ``pb``'s blocks, kept per tokenizer name (counted afresh without one)."""
        tokens = pb.tokens.get(self._tok) if self._tok else None
        if tokens is None:
            tokens = [self.count(b.text) for b in pb.blocks]
            if self._tok:
                pb.tokens[self._tok] = tokens
        return tokens

    # -- pages ------------------------------------------------------------------------------
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

    def navigation_kind(self, r: Region) -> str | None:
        """What ``r`` is when it is no evidence for most questions (``assembly.navigation``): on one page that is a
        table of contents, a signature page or an exhibit index (the page as sent), or a passage of the
        forward-looking-statements caution (its text, its paragraph's or its heading); else None."""
        if r.kind in ("sentence", "paragraph", "section"):
            parent = self.source.get(r.parent_id) if r.kind == "sentence" and r.parent_id else None
            texts = [r.text, parent.text if parent is not None else "", *r.heading_path[-1:]]
            if is_caution(" ".join(texts)):  # one of them, or the heading over the passage
                return "caution"
        page = self.page_of(r)
        if page is None:
            return None
        if page.region_id not in self._contents:
            stored = self._one_page.get(r.region_id)
            kind = page_kind(page.text)
            if kind is None and stored is not None and stored.text != page.text:
                kind = boilerplate_kind(stored.text)
            self._contents[page.region_id] = kind
        return self._contents[page.region_id]

    def sent_page(self, page: Region) -> Region:
        """``page`` with the text it is sent with: its compact text (``expansion.pagetext``; a copy of the
        region, same id and locators) unless ``page_render="stored"``. Kept with the source."""
        if self.page_render == "stored" or not page.text.strip():
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
        kept = self._compact.get(page.region_id) if self.page_render == "compact" else None
        if kept is None or kept[1].text != page.text:
            return span if span[1] <= len(page.text) else None
        cp = kept[1]
        if span[1] > cp.stored_chars:
            return None
        a = cp.to_compact(span[0])
        return a, max(a, cp.to_compact(max(span[0], span[1] - 1)) + 1)

    def excerpt(self, r: Region, text: str, span: tuple[int, int], limit: int,
                query_words: frozenset[str] = frozenset()) -> tuple[Slice, tuple[Slice, ...]]:
        """``answering_excerpt`` of ``span`` (where ``r`` lies) in ``text`` (its page as sent), of about ``limit``
        tokens: the slice around the hit, and the page's ``answer_line`` for ``query_words`` (in the slice, or
        as a slice of its own); kept with the source per region, limit, tokenizer and question words (few
        limits: the window size)."""
        key = (r.region_id, limit, self._tok, self.page_render, query_words)
        kept = self._excerpts.get(key) if self._tok else None
        if kept is None:
            kept = answering_excerpt(text, span, limit, self.count, query_words)
            if self._tok:
                if len(self._excerpts) >= EXCERPT_CACHE_SIZE:  # the limit follows the budget, which clients choose
                    self._excerpts.clear()
                self._excerpts[key] = kept
        return kept
