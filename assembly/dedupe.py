"""Dedupe and merge candidate units by source-region identity (never by text).

Identity always includes the version: every key below is built from region ids, which carry
``doc@version``, or from section views, which hold one version's sentences.

Rules, applied in this order (each is budget-independent):

1. Same key, one unit: two hits on one table (or its continuation), figure or page image. When
   one hit on a page asks for its image (a visual retriever) and another for its text, the page
   is sent as an image.
2. Spans in one section are interval-unioned over the sentence sequence: overlapping *or adjacent*
   intervals become one (``merge_intervals``; transitive and idempotent). A whole-section parent
   covers every interval of its section, so windows inside an included parent merge into it.
3. A table whose section is sent whole (``full`` span) is merged into that span: the parent
   renders it.
4. A figure that is a crop of a table (same page, bboxes overlapping by at least half of the
   smaller box) is merged into the table (or into whatever the table merged into).
5. A page image shows everything on its page: tables and figures on a page whose page *image* is a
   candidate are merged into the page item, which carries their text (table Markdown, caption)
   beside the image, so the region is sent once with both representations. A page sent as text
   keeps them as their own items.
   Page excerpts (``window_source="page"``) merge into their whole page when it is sent as text, else
   overlapping or adjacent excerpts of one page, or excerpts at most ``BRIDGE_LINES`` lines apart, are
   unioned (the lines between them come along); excerpts of one page still apart travel as one item, the
   gaps marked ``[…]`` (as disjoint runs of one section do), so a page is never sent twice; and a page
   sent as its best paragraphs merges into the strongest excerpt on it (rule 1b). A page sent as its best
   paragraphs that carry a table which is a hit of its own (``Expander.hit_tables``) takes the table's unit
   when the page ranks first; otherwise its paragraphs leave the table to its unit (rule 1c).
6. A page sent as its whole text repeats every sentence on it. When a text span of the same version
   has a sentence on that page, the page unit is merged into the strongest such span: the evidence
   is sent once, with the span's precise locators (line boxes) rather than a whole-page citation.
   Pages sent as images, as chosen paragraphs, or carrying absorbed tables/figures are kept. A page
   *promoted* to be the unit (``page_units``) works the other way: spans lying wholly on it merge into it.

The surviving unit of a merge is the one with the higher priority (score, then rank); the merged
unit's triggers become provenance (``trigger_ids``) of the survivor, whose score is the maximum.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from folio.assembly.expansion.units import Unit
from folio.kernel.model import BBox, Region

OVERLAP_MIN = 0.5
# Excerpts of one page this few lines apart join (rule 1b). Measured over both development sets:
# 3 lines +1 covered page (wide, 1k) and nothing lost; 6 lines won one manuals answer and lost a wide one.
# A compact page (``expansion.pagetext``) has a paragraph on one line: there the gap is at most
# ``BRIDGE_CHARS`` characters, about 3 lines of a stored page.
BRIDGE_LINES = 3
BRIDGE_CHARS = 240


def merge_intervals(intervals: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Union of closed integer intervals, joining overlapping and adjacent ones.

    >>> merge_intervals([(5, 7), (0, 2), (3, 3), (9, 9)])
    [(0, 3), (5, 7), (9, 9)]
    """
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _absorb(survivor: Unit, other: Unit) -> None:
    other.merged_into = survivor
    survivor.triggers.extend(other.triggers)
    survivor.expansions |= other.expansions
    if survivor.covers or other.covers:  # (both empty until sub-question coverage is set, after dedupe)
        survivor.covers = sorted(set(survivor.covers) | set(other.covers))
    if other.score > survivor.score or (other.score == survivor.score and other.rank < survivor.rank):
        survivor.score, survivor.rank = other.score, other.rank


def _prio(u: Unit) -> tuple[float, int]:
    return (-u.score, u.rank)


def contains(outer: BBox, inner: BBox, min_fraction: float = OVERLAP_MIN) -> bool:
    """True when ``outer`` covers at least ``min_fraction`` of the smaller of the two boxes."""
    smaller = min(outer.area, inner.area)
    if smaller <= 0:
        return outer.x0 <= inner.x0 and outer.y0 <= inner.y0 and outer.x1 >= inner.x1 and outer.y1 >= inner.y1
    return outer.intersection_area(inner) >= min_fraction * smaller


def overlaps_on_page(a: Region, b: Region) -> bool:
    if a.version_id != b.version_id or a.doc_id != b.doc_id:
        return False
    for la in a.locators:
        for lb in b.locators:
            if la.page == lb.page and contains(la.bbox, lb.bbox):
                return True
    return False


def dedupe(units: Sequence[Unit]) -> list[Unit]:
    """Merge ``units`` in place (setting ``merged_into``); return the survivors in priority order.

    The rules of the module docstring run in order; each sees only the units still alive."""
    alive = sorted(units, key=_prio)
    # Every rule takes (alive, units) so that they run as one list; only _table_crops reads ``units``
    # (a table merged away still absorbs the figures cropped from it).
    for rule in (_same_key, _page_excerpts, _page_tables, _span_union, _tables_in_sections, _table_crops, _page_images,
                 _text_pages):
        rule(alive, units)
        alive = [u for u in alive if u.merged_into is None]
    return sorted(alive, key=_prio)  # a survivor takes the best score of what it absorbed


def _same_key(alive: list[Unit], units: Sequence[Unit]) -> None:
    """1. Identical keys (tables, figures, pages, raw regions); a visual hit wins a page's image."""
    by_key: dict[tuple[str, ...], Unit] = {}
    for u in alive:
        if u.kind == "span":
            continue
        first = by_key.get(u.key)
        if first is None:
            by_key[u.key] = u
        else:
            _absorb(first, u)
            if u.absorbed:
                first.absorbed.extend(x for x in u.absorbed if x not in first.absorbed)
            if u.kind == "page" and (u.image or first.image):
                first.image, first.paras = True, []
                first.expansions = (first.expansions - {"page_text", "page_paragraphs"}) | {"page_image"}


def _page_excerpts(alive: list[Unit], units: Sequence[Unit]) -> None:
    """1b. Page excerpts: into the whole page when it is sent as text, else unioned per page; a page sent as
    its best paragraphs goes into the excerpt of a hit on it (the excerpt is centred on what matched)."""
    whole = {u.regions[0].region_id: u for u in alive if u.kind == "page" and u.excerpt is None and not u.image
             and not u.paras}
    by_paras = {u.regions[0].region_id: u for u in alive if u.kind == "page" and u.excerpt is None and u.paras}
    excerpts: dict[str, list[Unit]] = defaultdict(list)
    for u in alive:
        if u.excerpt is not None:
            page_id = u.regions[0].region_id
            if page_id in whole:
                _absorb(whole[page_id], u)
            else:
                excerpts[page_id].append(u)
    for page_id, group in excerpts.items():
        _merge_excerpts(group, by_paras.get(page_id))


def _merge_excerpts(group: list[Unit], paras_unit: Unit | None) -> None:
    """The excerpts of one page: those close enough to bridge merge, the rest travel with the strongest; the
    page's best-paragraphs unit (``paras_unit``) goes into what is left."""
    group.sort(key=lambda x: x.excerpt or (0, 0))
    further = [s for u in group for s in u.more_excerpts]  # answering lines the excerpts carry
    cur: Unit | None = None
    for u in group:
        assert u.excerpt is not None
        if cur is not None and cur.excerpt is not None and _bridgeable(cur.regions[0].text, cur.excerpt[1],
                                                                       u.excerpt[0]):
            lo, hi = cur.excerpt[0], max(cur.excerpt[1], u.excerpt[1])
            keep, drop = (cur, u) if _prio(cur) <= _prio(u) else (u, cur)
            _absorb(keep, drop)
            keep.excerpt = (lo, hi)
            cur = keep
        else:
            cur = u
    live = [u for u in group if u.merged_into is None]
    if len(live) > 1:  # one page, one item: further slices travel with the strongest, gaps marked
        best = min(live, key=_prio)
        for u in live:
            if u is not best:
                _absorb(best, u)
        assert best.excerpt is not None
        further += [x.excerpt for x in live if x is not best and x.excerpt is not None]
        live = [best]
    if live and further:
        _further_slices(live[0], further)
    if paras_unit is not None and live:
        _absorb(live[0], paras_unit)


def _further_slices(u: Unit, further: Sequence[tuple[int, int]]) -> None:
    """``u``'s excerpt and ``further`` slices of its page as disjoint slices: the one that holds the excerpt stays
    its ``excerpt``, the others go in order as ``more_excerpts``."""
    assert u.excerpt is not None
    slices = merge_intervals([u.excerpt, *further])
    main = next(s for s in slices if s[0] <= u.excerpt[0] and u.excerpt[1] <= s[1])
    u.excerpt = main
    u.more_excerpts = [s for s in slices if s != main]


def _page_tables(alive: list[Unit], units: Sequence[Unit]) -> None:
    """1c. A page sent as its best paragraphs that carry a table hit (``Expander.hit_tables``): when the page
    ranks before the table's own unit, the table merges into the page, which sends its header and best rows;
    otherwise the table keeps its unit and the page's paragraphs leave it out (the page merges into the table
    when nothing else is left of it)."""
    tables = {part.region_id: u for u in alive if u.kind == "table" for part in u.regions}
    if not tables:
        return
    for p in alive:
        if p.kind != "page" or p.image or not p.paras or p.merged_into is not None:
            continue
        for r in list(p.paras):
            t = tables.get(r.region_id)
            if t is None or t.merged_into is not None:
                continue
            if _prio(p) <= _prio(t):
                _absorb(p, t)
            elif len(p.paras) > 1:
                p.paras = [x for x in p.paras if x.region_id != r.region_id]
            else:
                _absorb(t, p)
                break


def _bridgeable(text: str, end: int, start: int) -> bool:
    """Two excerpts of one page join when they overlap, touch, or the text between them is at most
    ``BRIDGE_LINES`` lines: the reader gets one passage instead of two with a hole in it."""
    if start <= end + 2:
        return True
    return text.count("\n", end, start) <= BRIDGE_LINES and start - end <= BRIDGE_CHARS


def _span_union(alive: list[Unit], units: Sequence[Unit]) -> None:
    """2. Interval union of spans per section (overlapping or adjacent; a whole section takes all)."""
    spans: dict[str, list[Unit]] = defaultdict(list)
    for u in alive:
        if u.kind == "span" and u.view is not None:
            spans[u.view.key].append(u)
    for group in spans.values():
        group.sort(key=lambda x: (x.lo, x.hi))
        clusters: list[list[Unit]] = []
        hi = -2
        for u in group:
            if clusters and (u.lo <= hi + 1 or u.full or clusters[-1][0].full):
                clusters[-1].append(u)
                hi = max(hi, u.hi)
            else:
                clusters.append([u])
                hi = u.hi
        for c in clusters:
            if len(c) == 1:
                continue
            survivor = min(c, key=_prio)
            lo, hi2, full = min(x.lo for x in c), max(x.hi for x in c), any(x.full for x in c)
            for x in sorted(c, key=_prio):
                if x is not survivor:
                    _absorb(survivor, x)
            survivor.lo, survivor.hi, survivor.full = lo, hi2, full


def _tables_in_sections(alive: list[Unit], units: Sequence[Unit]) -> None:
    """3. Tables (and sentence-less paragraphs) inside a whole section that is sent."""
    full_by_section = {u.view.key: u for u in alive if u.kind == "span" and u.full and u.view is not None}
    for u in alive:
        if u.kind in ("table", "region") and u.section_key in full_by_section:
            r = u.regions[0]
            if u.kind == "region" and r.kind != "paragraph":
                continue
            _absorb(full_by_section[u.section_key or ""], u)


def _table_crops(alive: list[Unit], units: Sequence[Unit]) -> None:
    """4. A figure that is a crop of a table goes into the table (or whatever the table merged into)."""
    tables = [u for u in units if u.kind == "table"]
    for u in alive:
        if u.kind != "figure":
            continue
        fig = u.regions[0]
        for t in tables:
            if any(overlaps_on_page(part, fig) for part in t.regions):
                _absorb(t.root(), u)
                break


def _page_images(alive: list[Unit], units: Sequence[Unit]) -> None:
    """5. Page images subsume the tables and figures on their page."""
    pages = {u.regions[0].region_id: u for u in alive if u.kind == "page" and u.image}
    if not pages:
        return
    for u in alive:
        if u.kind not in ("table", "figure"):
            continue
        for p in pages.values():
            page = p.regions[0]
            if any(overlaps_on_page(page, part) for part in u.regions):
                _absorb(p, u)
                p.absorbed.extend(x for x in u.regions if x not in p.absorbed)
                break


def _text_pages(alive: list[Unit], units: Sequence[Unit]) -> None:
    """6. A whole-text page repeats the spans on it: keep the precise span instead; a promoted page
    takes the spans lying wholly on it."""
    text_pages = [u for u in alive if u.kind == "page" and not u.image and not u.paras and not u.absorbed
                  and u.excerpt is None]
    if not text_pages:
        return
    spans_by_page = _spans_by_page(alive)
    for p in text_pages:
        on_page = spans_by_page.get((p.doc_id, p.version_id, p.regions[0].first_page))
        if on_page:
            _text_page(p, on_page)


def _spans_by_page(alive: Sequence[Unit]) -> dict[tuple[str, str, int], list[Unit]]:
    """The spans by (document, version, page) of each page their sentences lie on."""
    spans_by_page: dict[tuple[str, str, int], list[Unit]] = defaultdict(list)
    for s in alive:
        if s.kind != "span" or s.view is None:
            continue
        pages_of_span = {loc.page for r in s.view.sentences[s.lo : s.hi + 1] for loc in r.locators}
        for pno in pages_of_span:
            spans_by_page[(s.doc_id, s.version_id, pno)].append(s)
    return spans_by_page


def _text_page(p: Unit, on_page: Sequence[Unit]) -> None:
    """Whole-text page ``p`` and the spans on it: a promoted page takes those lying wholly on it; else the
    strongest live span takes the page."""
    if p.promoted:
        pno = p.regions[0].first_page
        for s in on_page:
            if s.merged_into is None and s.view is not None and not s.full and all(
                    loc.page == pno for r in s.view.sentences[s.lo : s.hi + 1] for loc in r.locators):
                _absorb(p, s)
        return
    live = [s for s in on_page if s.merged_into is None]
    if live:
        _absorb(min(live, key=_prio), p)
