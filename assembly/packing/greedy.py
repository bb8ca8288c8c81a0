"""Greedy packing (``packing="greedy"``, the default): each candidate in priority order, if it still fits.

A candidate whose full form does not fit walks its fallback ladder (``packing.fallback``; a table is cut to
its header and best rows, ``packing.candidates.truncate``) and is sent as the largest smaller form that
fits, unless ``fallbacks`` is off. Image parts are capped at ``max_image_share`` of the room. With
``breadth_reserve`` (from ``breadth_min_room`` tokens of room up; or the ``keeps`` of nested packing,
``packing.nesting``) a candidate goes in whole only while it leaves room for the next candidates' small forms,
else as a smaller form that does.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import islice

from folio.assembly.expansion.expander import Expander
from folio.assembly.options import AssemblyOptions
from folio.assembly.packing.candidates import FLOOR_SLACK, Cand, drop_repeats, fallback, truncate
from folio.assembly.packing.nesting import added_by_documents
from folio.kernel.hit import Hit
from folio.kernel.model import Region


def pack_greedy(packable: Sequence[Cand], room: int, o: AssemblyOptions, ex: Expander, shits: Sequence[Hit],  # noqa: C901, PLR0913
                regions: Mapping[int, Region], count: Callable[[str], int], close_tokens: int,
                keeps: Sequence[int] | None = None, hard: Collection[int] = ()) -> int:
    """Greedy in priority order; a candidate that does not fit walks its fallback ladder. ``keeps[k]``: tokens
    that candidate ``k`` should leave free (else ``breadth_reserve``'s); for the candidates in ``hard`` it must:
    they are left out rather than take that room. Returns slack."""
    slack = room
    if room <= 0:
        return slack
    img_cap = room if o.max_image_share is None else int(o.max_image_share * room)
    img_used = 0
    sent: list[tuple[Cand, str]] = []  # packed text candidates with their flattened text
    reserving = o.breadth_reserve > 0 and room >= o.breadth_min_room
    # the reserve is for the hits: pages that whole_documents added follow them only with room to spare
    hit_cands = [None if added_by_documents(c, shits) else c for c in packable] if reserving else []
    for k, c in enumerate(packable):
        if not o.fallbacks:
            keep = 0
        elif keeps is not None:
            keep = keeps[k]
        else:
            keep = _reserve(hit_cands[k + 1:], o.breadth_reserve, ex.window_tokens) if reserving else 0
        fits = img_used + c.image_tokens <= img_cap
        if c.cost <= slack - keep and fits:
            c.status = "included"
            slack -= c.cost
            img_used += c.image_tokens
        elif keep and slack - keep >= close_tokens + FLOOR_SLACK and _shrink(
                c, slack - keep, ex, shits, regions, count, close_tokens):
            slack -= c.cost
        elif keep and k in hard:  # the room is kept for later candidates
            continue
        elif keep and c.cost <= slack and fits:  # nothing smaller fits beside the next candidates
            c.status = "included"
            slack -= c.cost
            img_used += c.image_tokens
        elif not o.fallbacks or slack < close_tokens + FLOOR_SLACK:  # no block fits in less
            continue
        elif _shrink(c, slack, ex, shits, regions, count, close_tokens):
            slack -= c.cost
        else:
            continue
        if not c.image_tokens:
            slack = drop_repeats(c, sent, slack)
    return slack


def _reserve(rest: Sequence[Cand | None], n: int, window: int | None) -> int:
    """Tokens that the next ``n`` candidates need in their small forms (a window's size, or their cost); None
    stands for a candidate that holds no room (a page that ``whole_documents`` added)."""
    return sum(min(r.cost, (window or 0) + r.wrapper_tokens) for r in islice(filter(None, rest), n))


def _shrink(c: Cand, slack: int, ex: Expander, shits: Sequence[Hit], regions: Mapping[int, Region],  # noqa: PLR0913
            count: Callable[[str], int], close_tokens: int) -> bool:
    """Send ``c`` as its largest smaller form that fits ``slack`` (a table's header and best rows, else the first
    rung of its ladder that fits); False when none does."""
    if c.unit.kind == "table":
        return truncate(c, slack, shits, count, close_tokens, ex.query_words) is not None
    return fallback(c, slack, ex, regions, count, close_tokens)
