"""Line boxes: what in an item made it relevant, and which of its lines support a sentence of an answer.

A page item's locator is the whole page, so a viewer that paints it paints the page. This module gives
every packed item the lines to highlight instead (``ContextItem.lines``), and after an answer the lines
of the cited item that support each cited sentence (``supporting_lines``).

*Units* are the pieces of an item that have geometry and text: its sentences (with their line boxes, as
ingest recorded them), tables and figures (their box; ingest records no row or caption geometry). An
item's units are the regions it carries (``ContextItem.region_ids``), a paragraph as its sentences, and
a page as the sentences, tables and figures on it whose text is in what was sent (the whole page for an
image item; for a page excerpt only what the excerpt holds). "In what was sent": the unit's text, with
whitespace collapsed, is a substring of the item's text, or 90% of its content words are among the
item's (a table rendered as rows rather than Markdown).

Item lines (``item_lines``): the lines of the item's ``ITEM_TRIGGERS`` strongest carried hits that have
lines, in priority order, at most ``MAX_ITEM_LINES`` (a page often gathers a dozen weak hits; painting them
all paints the page):

- a trigger sentence or paragraph that the item carries: its line boxes;
- a trigger table or figure: its box on the item's pages;
- a trigger page (a visual or page-lexicon hit) or section: the lines of the item's sentences on it that
  share most content words with the question (at most ``PAGE_TRIGGER_UNITS``, each sharing at least one).

Supporting lines (``supporting_lines``), the rule: with ``C`` the content words of the answer sentence
(citations removed), a unit of the cited item supports the sentence when it shares at least ``min(2, |C|)``
of them and at least half as many as the unit sharing most; the ``SUPPORT_UNITS`` units sharing most (ties:
the larger share of the unit's own words, then the item's order) give their lines, at most
``MAX_SUPPORT_LINES``. ``support`` is the best unit's share of ``C`` (0..1). Lexical, like the citation
check's support: it points at the lines a reader should look at; it is not a faithfulness judge.

Nothing here changes the packed text, its tokens or the budget: lines are read beside the package.

Viewer links (``viewer_url``): ``/viewer?region=<region id>&lines=<page>:<x0>,<y0>,<x1>,<y1>;...``, the item's
lines as whole PDF points rounded outward (so each box still covers its line), at most ``MAX_ITEM_LINES``. The
viewer highlights those boxes on the region's pages instead of the region's box (a page item's box is the page),
and trusts nothing in them: it reads only unsigned integers, at most ``MAX_ITEM_LINES`` boxes, on the region's
own pages, clipped to the page (``api/http/static/viewer.js``, ``linkLines``).
"""

from __future__ import annotations

import math
import weakref
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from urllib.parse import quote

from folio.assembly.package import MAX_ITEM_LINES, ContextItem, LineOut, SentenceLines, VerifyReport
from folio.assembly.verify import strip_citations
from folio.assembly.words import content_words
from folio.kernel.index import RegionSource
from folio.kernel.model import Region, RegionKind

ITEM_TRIGGERS = 3
PAGE_TRIGGER_UNITS = 3
SUPPORT_UNITS = 3
MAX_SUPPORT_LINES = 12
CARRIED_SHARE = 0.9
_UNIT_KINDS: tuple[RegionKind, ...] = ("sentence", "table", "figure")


def _squash(text: str) -> str:
    return " ".join(text.split())


@lru_cache(maxsize=16384)
def _unit_text(text: str) -> str:
    """A unit's text, whitespace collapsed (units recur across requests: cached)."""
    return _squash(text)


@dataclass(frozen=True)
class Sent:
    """What an item sent, for deciding which units it carries: its text (collapsed), and whether it is an
    image of the whole region (then every unit on its pages is carried)."""

    raw: str
    text: str
    image: bool = False

    @classmethod
    def of(cls, text: str, image: bool = False) -> Sent:
        return cls(text, _squash(text), image)

    @cached_property
    def words(self) -> frozenset[str]:
        """The content words of what was sent (only needed when a unit's text is not found verbatim)."""
        return content_words(self.raw)

    def carries(self, unit: Region) -> bool:
        if self.image:
            return True
        t = _unit_text(unit.text)
        if not t:
            return False
        if t in self.text:
            return True
        w = content_words(unit.text)
        return bool(w) and len(w & self.words) >= CARRIED_SHARE * len(w)


# Units by page, per source (sources are read-only snapshots; see ``assembly.expansion.structure``).
_BY_PAGE: weakref.WeakKeyDictionary[object, dict[tuple[str, str], dict[int, list[Region]]]] = (
    weakref.WeakKeyDictionary())


def units_on_page(source: RegionSource, doc_id: str, version_id: str, page: int) -> list[Region]:
    """Sentences, tables and figures on ``page`` (any locator there), in reading order by kind."""
    try:
        cache = _BY_PAGE.setdefault(source, {})
    except TypeError:
        cache = {}
    by_page = cache.get((doc_id, version_id))
    if by_page is None:
        by_page = defaultdict(list)
        for kind in _UNIT_KINDS:
            for r in source.of_kind(doc_id, version_id, kind):
                for p in {loc.page for loc in r.locators}:
                    by_page[p].append(r)
        cache[(doc_id, version_id)] = by_page
    return by_page.get(page, [])


def item_units(region_ids: Iterable[str], sent: Sent, source: RegionSource) -> list[Region]:
    """The units an item carries (module docstring), without repeats, in the item's region order."""
    out: dict[str, Region] = {}
    for rid in region_ids:
        r = source.get(rid)
        if r is None:
            continue
        for u in _units_of(r, sent, source):
            out.setdefault(u.region_id, u)
    return list(out.values())


def _units_of(r: Region, sent: Sent, source: RegionSource) -> list[Region]:
    if r.kind in _UNIT_KINDS:
        return [r]
    if r.kind == "paragraph":
        kids = [s for s in source.children(r.region_id) if s.kind == "sentence"]
        return kids or [r]
    if r.kind == "page":
        return [u for u in units_on_page(source, r.doc_id, r.version_id, r.first_page) if sent.carries(u)]
    if r.kind == "section":
        out: list[Region] = []
        for d in source.descendants(r.region_id):
            out.extend(u for u in _units_of(d, sent, source) if sent.carries(u))
        return out
    return []


def unit_lines(u: Region, pages: Sequence[int] | None = None) -> list[LineOut]:
    """A unit's line boxes (its box where it has none), on ``pages`` (all when None)."""
    out: list[LineOut] = []
    for loc in u.locators:
        if pages is not None and loc.page not in pages:
            continue
        for b in loc.line_boxes or (loc.bbox,):
            out.append(LineOut(page=loc.page, bbox=b, region_id=u.region_id))
    return out


def _add(out: list[LineOut], seen: set[tuple[int, tuple[float, ...]]], lines: Iterable[LineOut], cap: int) -> None:
    for ln in lines:
        if len(out) >= cap:
            return
        key = (ln.page, (ln.bbox.x0, ln.bbox.y0, ln.bbox.x1, ln.bbox.y1))
        if key not in seen:
            seen.add(key)
            out.append(ln)


def _shared(words: frozenset[str], units: Sequence[Region], need: int) -> list[tuple[int, Region]]:
    """Units sharing at least ``need`` of ``words``, most first (ties: larger share of the unit's own
    words, then the units' order)."""
    scored = []
    for k, u in enumerate(units):
        uw = content_words(u.text)
        n = len(words & uw)
        if n >= need and n > 0:
            scored.append((-n, -n / max(1, len(uw)), k, u))
    scored.sort(key=lambda t: t[:3])
    return [(-t[0], t[3]) for t in scored]


@dataclass(frozen=True)
class PackedItem:
    """A packed item as its lines are looked for: the ids of the regions it sends, its pages and what it sent."""

    region_ids: Sequence[str]
    pages: Sequence[int]
    sent: Sent


def item_lines(triggers: Sequence[Region], item: PackedItem, query_words: frozenset[str],
               source: RegionSource) -> list[LineOut]:
    """``ContextItem.lines`` for one packed item (module docstring); ``triggers`` are the regions of the
    item's carried hits in priority order (the first ``ITEM_TRIGGERS`` that give lines count)."""
    region_ids, pages, sent = item.region_ids, item.pages, item.sent
    out: list[LineOut] = []
    seen: set[tuple[int, tuple[float, ...]]] = set()
    units: list[Region] | None = None
    used = 0
    for t in triggers:
        if t.kind in ("sentence", "paragraph", "table", "figure"):
            lines = _own_lines(t, region_ids, pages, sent)
        else:  # a page or section found as a whole: its lines sharing the question's words
            if units is None:
                units = item_units(region_ids, sent, source)
            near = [u for u in units if u.kind == "sentence" and set(u.pages) & set(t.pages)]
            lines = [ln for _, u in _shared(query_words, near, 1)[:PAGE_TRIGGER_UNITS] for ln in unit_lines(u, pages)]
        if lines:
            _add(out, seen, lines, MAX_ITEM_LINES)
            used += 1
        if used >= ITEM_TRIGGERS or len(out) >= MAX_ITEM_LINES:
            break
    return out


def _own_lines(t: Region, region_ids: Sequence[str], pages: Sequence[int], sent: Sent) -> list[LineOut]:
    """A hit sentence's or paragraph's lines when the item carries it; a hit table's or figure's box."""
    if t.kind in ("table", "figure"):
        return [LineOut(page=loc.page, bbox=loc.bbox, region_id=t.region_id) for loc in t.locators if loc.page in pages]
    return unit_lines(t, pages) if sent.carries(t) or t.region_id in region_ids else []


def supporting_lines(claim: str, item: ContextItem, units: Sequence[Region]) -> tuple[float, list[LineOut]]:
    """The lines of ``units`` (the cited item's, ``item_units``) that support ``claim`` (module docstring):
    the best unit's share of the claim's content words, and the lines (none: no unit shares enough)."""
    words = content_words(claim)
    if not words:
        return 0.0, []
    ranked = _shared(words, units, min(2, len(words)))
    best = [(n, u) for n, u in ranked[:SUPPORT_UNITS] if 2 * n >= ranked[0][0]]
    out: list[LineOut] = []
    seen: set[tuple[int, tuple[float, ...]]] = set()
    for _, u in best:
        _add(out, seen, unit_lines(u, item.pages), MAX_SUPPORT_LINES)
    return (round(best[0][0] / len(words), 4) if best else 0.0), out


def answer_lines(check: VerifyReport, items: Mapping[str, ContextItem], source: RegionSource) -> list[SentenceLines]:
    """``supporting_lines`` for every (sentence, valid cited id) of a checked answer, one entry per pair in
    the answer's order (``VerifyReport.sentences``; an id whose item is not in ``items`` is skipped)."""
    cache: dict[str, list[Region]] = {}
    out: list[SentenceLines] = []
    for s in check.sentences:
        n, text = s.index, strip_citations(s.text)
        for cid in s.citations:
            it = items.get(cid)
            if it is None:
                continue
            if cid not in cache:
                sent = Sent.of(it.text or it.alt_text or "", image=it.image_url is not None)
                cache[cid] = item_units(it.region_ids, sent, source)
            support, lines = supporting_lines(text, it, cache[cid])
            out.append(SentenceLines(sentence_index=n, citation_id=cid, support=support, lines=lines))
    return out


def viewer_url(region_id: str, lines: Sequence[LineOut]) -> str:
    """The viewer's link to ``region_id`` with ``lines`` highlighted (module docstring); a relative URL."""
    boxes = []
    for ln in lines[:MAX_ITEM_LINES]:
        b = ln.bbox
        if all(math.isfinite(v) for v in (b.x0, b.y0, b.x1, b.y1)):
            x0, y0 = max(0, math.floor(b.x0)), max(0, math.floor(b.y0))
            boxes.append(f"{ln.page}:{x0},{y0},{max(x0, math.ceil(b.x1))},{max(y0, math.ceil(b.y1))}")
    url = f"/viewer?region={quote(region_id, safe='@:')}"
    return f"{url}&lines={';'.join(boxes)}" if boxes else url
