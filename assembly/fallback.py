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
- table: header plus the leading rows that fit (status ``truncated``; see ``assembly.core``).
- figure image: its text surrogate (caption and in-figure/OCR text), modality still ``figure``,
  no image part (expansion ``figure_text``).
- page image: the page text (when it is within the parent cap), then the page's paragraphs that
  share most words with the question (up to the cap), then the best such paragraph.
- page text: the best paragraphs, then the best paragraph.

A rung is recorded on the item (``expansion`` names the rung, ``fallback_from`` the representation
that did not fit) and in the manifest. Hits whose evidence a rung no longer carries (a trigger whose
sentence was dropped, a table that a page image had absorbed) get their own ``excluded_budget``
manifest entry, so nothing is changed silently.

Fallbacks are off in ``packing="monotone"``: which rung fits depends on the room left by earlier
candidates, so a bigger budget could swap a small rung for nothing (the larger rung then still not
fitting at a later candidate's expense) and break "more budget never removes evidence".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from assembly.dedupe import merge_intervals
from assembly.expand import Expander, SectionView, Unit
from assembly.render import Body, runs_body
from ingest.model import Region


@dataclass(frozen=True)
class Rung:
    body: Body
    expansion: str
    carries_all: bool = False  # the whole page text carries every hit on the page


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


def page_rungs(u: Unit, current: Body, ex: Expander) -> Iterator[Rung]:
    page = u.regions[0]
    seen = {current.text}
    text = page.text.strip()
    if u.image and text and ex.count(text) <= ex.page_cap:
        seen.add(text)
        yield Rung(Body(text, (page, *u.absorbed), page, page.region_id), "page_text", True)
    paras = ex.best_paragraphs(page, ex.page_cap)
    if not paras:
        return
    chosen = sorted(paras, key=lambda p: (p.first_page, p.locators[0].bbox.y0, p.seq))
    for group in (chosen, paras[:1]):
        body_text = "\n\n".join(p.text.strip() for p in group)
        if body_text in seen:
            continue
        seen.add(body_text)
        yield Rung(Body(body_text, tuple(group), page, page.region_id), "page_paragraphs")


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


def rungs(u: Unit, current: Body, anchors: Sequence[tuple[int, int]], ex: Expander) -> Iterator[Rung]:
    """The ladder below ``current`` (the unit's full body), largest first; tables are cut in core."""
    if u.kind == "span":
        yield from span_rungs(u, anchors, ex.o.window_before, ex.o.window_after)
    elif u.kind == "figure" and u.image:
        yield Rung(current, "figure_text")
    elif u.kind == "page":
        yield from page_rungs(u, current, ex)


def carried(trigger: Region, body: Body) -> bool:
    """Whether ``body`` still carries the evidence of the hit on region ``trigger``: the region is
    the body's context or one of its regions, contains one of them, or lies inside one of them."""
    rid = trigger.region_id
    if rid == body.context_id:
        return True
    ids = {r.region_id for r in body.regions}
    return rid in ids or trigger.parent_id in ids or any(r.parent_id == rid for r in body.regions)
