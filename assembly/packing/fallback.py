"""The fallback ladder: smaller representations of a unit that does not fit the remaining room.

Greedy packing (``AssemblyOptions.fallbacks``, the default) does not skip a candidate whose cost
exceeds the remaining room; it walks the candidate's ladder, largest rung first, and sends the first
rung that fits. Only when no rung fits is the candidate ``excluded_budget``. The rungs:

- text span (a parent section, a merged span of several hits, a window): the *windows* of its
  triggering hits (``window_before``/``window_after`` around each, interval-unioned, clipped to the
  span), then the triggering sentences alone (a paragraph hit keeps its paragraph), then the
  sentences of the highest-priority triggers only (dropping the weakest one at a time). Several
  disjoint runs of one section travel as one block, gaps marked ``[…]``; they never leave the
  section, so they never cross a document or version either.
- table: header plus the leading rows that fit (status ``truncated``; see ``packing.greedy``).
- figure image: its text surrogate (caption and in-figure/OCR text), modality still ``figure``,
  no image part (expansion ``figure_text``).
- page image: the page text (when it is within the parent cap), then the page's paragraphs that
  share most words with the question (up to the cap), then the rungs of a page text.
- page text: the best paragraphs (up to the cap); then, in at most half of the room left and no more
  than a window, the page text around its strongest text hits (slices joined by ``[…]``) and the best
  paragraphs that fit, the hits' own tables among them cut to their header and matching rows (a table
  among the hits puts those first); then the best paragraph. Half, so that the distinct pages after it
  still get room (measured: sized to all that is left, coverage fell on both sets).

A rung is recorded on the item (``expansion`` names the rung, ``fallback_from`` the representation
that did not fit) and in the manifest. Hits whose evidence a rung no longer carries (a trigger whose
sentence was dropped, a table that a page image had absorbed) get their own ``excluded_budget``
manifest entry, so nothing is changed silently.

Fallbacks are off in ``packing="monotone"``: which rung fits depends on the room left by earlier
candidates, so a bigger budget could swap a small rung for nothing (the larger rung then still not
fitting at a later candidate's expense) and break "more budget never removes evidence".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from folio.assembly.dedupe import merge_intervals
from folio.assembly.expansion.excerpts import Slice, excerpt_bounds, line_of_its_own
from folio.assembly.expansion.expander import Expander
from folio.assembly.expansion.sections import SectionView
from folio.assembly.expansion.units import Unit
from folio.assembly.render import Body, paragraphs_body, runs_body
from folio.kernel.model import Region

EXCERPT_HITS = 3
GAP_LINE = "\n[…]\n"


@dataclass(frozen=True)
class Rung:
    body: Body
    expansion: str
    carries_all: bool = False  # the whole page text carries every hit on the page
    keep: frozenset[int] | None = None  # the hits it carries, when the rung knows them (page excerpts)


def anchor_of(v: SectionView, r: Region) -> tuple[int, int] | None:
    """The sentence interval a trigger region stands for inside section view ``v``, if any."""
    if r.region_id in v.pos:
        p = v.pos[r.region_id]
        return p, p
    if r.region_id in v.para_range:
        return v.para_range[r.region_id]
    if r.kind == "section" and r.region_id == v.key and len(v):
        return v.paragraph_span(0)
    return None


def span_rungs(u: Unit, anchors: Sequence[tuple[int, int]], before: int, after: int) -> Iterator[Rung]:
    """Windows of the triggers, then their sentences, then the sentences of fewer triggers."""
    v = u.view
    if v is None or not anchors:
        return
    lo, hi = u.lo, u.hi
    anchors = [(max(lo, a), min(hi, b)) for a, b in anchors if b >= lo and a <= hi]
    if not anchors:
        return
    seen: set[tuple[tuple[int, int], ...]] = set() if u.full else {((lo, hi),)}
    plan: list[tuple[str, list[tuple[int, int]]]] = [
        ("window", merge_intervals([(max(lo, a - before), min(hi, b + after)) for a, b in anchors])),
        ("sentence", merge_intervals(anchors)),
    ]
    plan += [("sentence", merge_intervals(anchors[:k])) for k in range(len(anchors) - 1, 0, -1)]
    for name, runs in plan:
        key = tuple(runs)
        if key in seen:
            continue
        seen.add(key)
        yield Rung(runs_body(v, runs), name)


def page_rungs(u: Unit, current: Body, ex: Expander, room: int | None = None,
               triggers: Sequence[tuple[int, Region]] = ()) -> Iterator[Rung]:
    """Page text (for an image), the best paragraphs up to the page cap; then, sized to half of ``room``
    (the tokens left for the body) and at most a window, the page around its hits and the best paragraphs
    that fit (a table among the hits: its matching rows first); then the best paragraph."""
    page = u.regions[0]
    seen = {current.text}
    text = page.text.strip()
    if u.image and text and ex.count(text) <= ex.page_cap:
        seen.add(text)
        yield Rung(Body(text, (page, *u.absorbed), page, page.region_id), "page_text", True)
    groups: list[tuple[list[Region], str]] = []
    own = frozenset(r.region_id for _, r in triggers)
    paras = ex.best_paragraphs(page, ex.page_cap, own)
    if paras:
        groups.append((paras, "page_paragraphs"))
    if room is not None:  # at most half of what is left and a window's size: the next pages still get room
        room = room // 2 if ex.window_tokens is None else min(room // 2, ex.window_tokens)
    if room is not None and room > 0:
        yield from _unseen(_group_rungs(groups, page, ex), seen)
        groups = []
        fit = ex.best_paragraphs(page, room, own)
        sized = [*_group_rungs([(fit, "page_paragraphs")] if fit else [], page, ex)]
        excerpt = excerpt_rung(page, triggers, room, ex)
        if excerpt is not None:  # a table among the hits: its matching rows first, else the text around the hits
            table_hit = any(r.kind == "table" for _, r in triggers)
            sized = [*sized, excerpt] if table_hit else [excerpt, *sized]
        yield from _unseen(sized, seen)
    if paras:
        groups.append((paras[:1], "page_paragraphs"))
    yield from _unseen(_group_rungs(groups, page, ex), seen)
    yield from _unseen(figure_rungs(page, triggers), seen)


def figure_rungs(page: Region, triggers: Sequence[tuple[int, Region]]) -> Iterator[Rung]:
    """The caption and in-figure text of each figure hit on ``page`` (in priority order): what a figure found
    by text retrievers is sent as when its page is not (the page was sent in its place)."""
    for i, r in triggers:
        if r.kind == "figure" and r.first_page == page.first_page and r.text.strip():
            yield Rung(Body(r.text.strip(), (r,), r, r.region_id), "figure_text", keep=frozenset({i}))


def _group_rungs(groups: Sequence[tuple[list[Region], str]], page: Region, ex: Expander) -> Iterator[Rung]:
    for group, name in groups:
        yield Rung(paragraphs_body(page, ex.structure.in_reading_order(page, group)), name)


def _unseen(rs: Iterable[Rung], seen: set[str]) -> Iterator[Rung]:
    for r in rs:
        if r.body.text not in seen:
            seen.add(r.body.text)
            yield r


def excerpt_rung(page: Region, triggers: Sequence[tuple[int, Region]], room: int, ex: Expander) -> Rung | None:
    """The page text around its strongest text hits (at most ``EXCERPT_HITS``, in priority order), ``room``
    tokens shared among them, with the page's answering line (``_hit_slices``), slices joined by ``[…]``; fewer
    hits while it does not fit."""
    text = page.text
    spans = [(i, sp) for i, r in triggers if r.kind in ("sentence", "paragraph") and r.first_page == page.first_page
             and (sp := ex.structure.page_span(r, page)) is not None]
    for k in range(min(EXCERPT_HITS, len(spans)), 0, -1):
        slices = _hit_slices(text, [sp for _, sp in spans[:k]], room, ex)
        body = GAP_LINE.join(text[a:b].strip() for a, b in slices)
        if body.strip() and ex.count(body) <= room:
            return Rung(Body(body, (page,), page, page.region_id), "page_excerpt",
                        keep=frozenset(i for i, _ in spans[:k]))
    return None


def _hit_slices(text: str, spans: Sequence[Slice], room: int, ex: Expander) -> list[Slice]:
    """The slices of ``text`` around ``spans`` (``room`` tokens shared among them), and the page's answering
    line as a slice of its own when it shares more question words than any line of them and costs at most
    ``1/ANSWER_SHARE`` of ``room`` (the slices around the hits cut shorter by what it costs)."""
    def around(total: int) -> list[Slice]:
        return merge_intervals(sorted(excerpt_bounds(text, a, b, total // len(spans), ex.count) for a, b in spans))

    slices = around(room)
    own = line_of_its_own(text, slices, ex.query_words, room, ex.count)
    if own is None:
        return slices
    line, cost = own
    return merge_intervals([*around(room - cost), line])


def span_floor(u: Unit, anchors: Sequence[tuple[int, int]]) -> str | None:
    """Text of the smallest span rung (the top trigger's sentences): every rung contains it, so a
    candidate whose floor does not fit can skip its ladder (a speed shortcut, not a budget rule)."""
    v = u.view
    if u.kind != "span" or v is None or not anchors:
        return None
    a, b = anchors[0]
    a, b = max(u.lo, a), min(u.hi, b)
    if a > b:
        return None
    return runs_body(v, [(a, b)]).text


def rungs(u: Unit, current: Body, anchors: Sequence[tuple[int, int]], ex: Expander, room: int | None = None,  # noqa: PLR0913
          triggers: Sequence[tuple[int, Region]] = ()) -> Iterator[Rung]:
    """The ladder below ``current`` (the unit's full body), largest first; tables are cut in core.
    ``room`` (tokens left for the body) and ``triggers`` (the unit's hits with their regions, in priority
    order) size the page rungs to what is left."""
    if u.kind == "span":
        yield from span_rungs(u, anchors, ex.o.window_before, ex.o.window_after)
    elif u.kind == "figure" and u.image:
        yield Rung(current, "figure_text")
    elif u.kind == "page":
        yield from page_rungs(u, current, ex, room, triggers)


def carried(trigger: Region, body: Body) -> bool:
    """Whether ``body`` still carries the evidence of the hit on region ``trigger``: the region is
    the body's context or one of its regions, contains one of them, or lies inside one of them."""
    rid = trigger.region_id
    if rid == body.context_id:
        return True
    ids = {r.region_id for r in body.regions}
    return rid in ids or trigger.parent_id in ids or any(r.parent_id == rid for r in body.regions)
