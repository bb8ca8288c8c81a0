"""Structural truncation of what packing left out (``structural_truncation``), into the room left.

After packing, each candidate still ``excluded_budget`` is offered what is left, in priority order, as
its largest structural truncation that fits (``packing.candidates.truncate``: cut at sentence or row
boundaries, status ``truncated``).
"""

from __future__ import annotations

from collections.abc import Sequence

from folio.assembly.packing.candidates import Cand, Fitting, carried_pages, drop_repeats, truncate


def truncate_rest(packable: Sequence[Cand], slack: int, fit: Fitting) -> int:
    """Structural truncation of the candidates left out, into what is left; returns the slack. In greedy and
    breadth packing a truncated text already in a packed item (or holding one) is a duplicate, as in packing
    (``drop_repeats``); monotone packing drops nothing it packed. Breadth packing only truncates a candidate
    into pages its package already covers: the leftover is budget-dependent, and a page it reached at one
    budget could be lost at a larger one, where an earlier candidate of the plan takes that room."""
    o = fit.o
    dedupe = o.packing != "monotone"
    sent = [(c, " ".join(c.body.text.split())) for c in packable
            if dedupe and c.status in ("included", "truncated") and not c.image_tokens and c.body.text.strip()]
    covered = {vp for c in packable if c.status in ("included", "truncated") for vp in carried_pages(c)}
    for c in packable:
        if o.packing == "breadth" and not carried_pages(c) <= covered:
            continue
        if c.status == "excluded_budget" and slack > 0:
            t = truncate(c, slack, fit)
            if t is not None:
                slack -= t.cost
                if dedupe and not t.image_tokens:
                    slack = drop_repeats(t, sent, slack, keep_pages=o.packing == "breadth")
    return slack
