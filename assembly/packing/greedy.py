"""Greedy packing (``packing="greedy"``, the default): each candidate in priority order, if it still fits.

A candidate whose full form does not fit walks its fallback ladder (``packing.fallback``; a table is cut to
its header and best rows, ``packing.candidates.truncate``) and is sent as the largest smaller form that
fits, unless ``fallbacks`` is off. Image parts are capped at ``max_image_share`` of the room. With
``breadth_reserve`` (from ``breadth_min_room`` tokens of room up; or the ``keeps`` of nested packing,
``packing.nesting``) a candidate goes in whole only while it leaves room for the next candidates' small forms,
else as a smaller form that does.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import islice

from folio.assembly.packing.candidates import FLOOR_SLACK, Cand, Fitting, drop_repeats, fallback, truncate
from folio.assembly.packing.nesting import added_by_documents


def pack_greedy(packable: Sequence[Cand], room: int, fit: Fitting, keeps: Sequence[int] | None = None,
                hard: Collection[int] = ()) -> int:
    """Greedy in priority order; a candidate that does not fit walks its fallback ladder. ``keeps[k]``: tokens
    that candidate ``k`` should leave free (else ``breadth_reserve``'s); for the candidates in ``hard`` it must:
    they are left out rather than take that room. Returns slack."""
    if room <= 0:
        return room
    o = fit.o
    state = _Greedy(room, room if o.max_image_share is None else int(o.max_image_share * room))
    sent: list[tuple[Cand, str]] = []  # packed text candidates with their flattened text
    reserving = o.breadth_reserve > 0 and room >= o.breadth_min_room
    # the reserve is for the hits: pages that whole_documents added follow them only with room to spare
    hit_cands = [None if added_by_documents(c, fit.shits) else c for c in packable] if reserving else []
    for k, c in enumerate(packable):
        if not o.fallbacks:
            keep = 0
        elif keeps is not None:
            keep = keeps[k]
        else:
            keep = _reserve(hit_cands[k + 1:], o.breadth_reserve, fit.ex.window_tokens) if reserving else 0
        if _place(c, keep, k in hard, state, fit) and not c.image_tokens:
            state.slack = drop_repeats(c, sent, state.slack)
    return state.slack


@dataclass
class _Greedy:
    """Greedy packing's running totals: the tokens left, the image cap and the image tokens used."""

    slack: int
    img_cap: int
    img_used: int = 0

    def include(self, c: Cand) -> bool:
        c.status = "included"
        self.slack -= c.cost
        self.img_used += c.image_tokens
        return True


def _place(c: Cand, keep: int, hard: bool, state: _Greedy, fit: Fitting) -> bool:
    """Put ``c`` in whole, or as a smaller form, leaving ``keep`` tokens free when it can (when it must:
    ``hard``); whether it went in."""
    slack, floor = state.slack, fit.close_tokens + FLOOR_SLACK
    fits = state.img_used + c.image_tokens <= state.img_cap
    if c.cost <= slack - keep and fits:
        return state.include(c)
    if keep and slack - keep >= floor and _shrink(c, slack - keep, fit):
        state.slack -= c.cost
        return True
    if keep and hard:  # the room is kept for later candidates
        return False
    if keep and c.cost <= slack and fits:  # nothing smaller fits beside the next candidates
        return state.include(c)
    if not fit.o.fallbacks or slack < floor:  # no block fits in less
        return False
    if _shrink(c, slack, fit):
        state.slack -= c.cost
        return True
    return False


def _reserve(rest: Sequence[Cand | None], n: int, window: int | None) -> int:
    """Tokens that the next ``n`` candidates need in their small forms (a window's size, or their cost); None
    stands for a candidate that holds no room (a page that ``whole_documents`` added)."""
    return sum(min(r.cost, (window or 0) + r.wrapper_tokens) for r in islice(filter(None, rest), n))


def _shrink(c: Cand, slack: int, fit: Fitting) -> bool:
    """Send ``c`` as its largest smaller form that fits ``slack`` (a table's header and best rows, else the first
    rung of its ladder that fits); False when none does."""
    if c.unit.kind == "table":
        return truncate(c, slack, fit) is not None
    return fallback(c, slack, fit)
