"""Monotone packing (``packing="monotone"``): the packing rule made monotone in the budget.

Packing rule: *skip, don't split*, over the candidates in priority order (``assembly.priority``), after
``max_items`` and ``modality_slots`` capped the list (``assembly.selection``). ``greedy`` (the default,
``packing.greedy``) takes each candidate in priority order if it still fits; ``monotone`` is the same rule
made monotone in the budget.

Plain greedy skip-not-split ("take each candidate in priority order if it still fits") is **not**
monotone: with costs A=6, B=5, C=4 in that order, budget 10 packs {A, C} but budget 11 packs {A, B}
-- C is dropped by a bigger budget. The monotone rule gives every candidate an *entry budget*
``e_i``: the smallest evidence room at which it can be added such that, at every larger room,
the candidates before it (with their own entry budgets) and it still fit. The package at room ``R``
is ``{i : e_i <= R}``. Hence:

- feasibility: for every R, the sum of costs of ``{i : e_i <= R}`` is at most R;
- monotonicity: ``R <= R'`` implies ``{e_i <= R} subset of {e_i <= R'}``;
- priority: a later candidate never takes room an earlier one needs at any larger budget;
- skipping still works: a large candidate that does not fit does not stop smaller later ones.

The price is that a small later candidate may wait for a room where it cannot be displaced (A=6,
B=9, C=2: C enters at 17, not at 8), and it is a steep price when a top candidate is large: a
1,131-token page image ranked first at a budget of 800 keeps *every* later candidate out, because
each of them would be displaced once the budget grows enough for the page. That starves exactly
the small budgets users care about, so ``greedy`` is the default and ``monotone`` is there for
callers that need "more budget never removes evidence" (e.g. to diff packages across budgets).

Costs are exact and independent of each other (each block is its own set of prompt parts, see
``assembly.prompt``), so ``sum(costs) + fixed`` is the exact prompt size.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence


def entry_budgets(costs: Sequence[int]) -> list[int]:
    """Entry budget of each candidate (in priority order) under the monotone rule.

    >>> entry_budgets([6, 5, 4])
    [6, 11, 15]
    >>> entry_budgets([6, 9, 2])
    [6, 15, 17]
    >>> entry_budgets([3, 10, 2])
    [3, 13, 15]
    >>> entry_budgets([10, 3, 2])
    [10, 13, 15]
    """
    bps: list[int] = [0]  # distinct breakpoints, ascending
    loads: list[int] = [0]  # total cost of candidates with entry <= bps[k]
    out: list[int] = []
    for c in costs:
        if c <= 0:
            out.append(0)
            continue
        k = len(bps) - 1
        while k > 0 and bps[k] - loads[k] >= c:
            k -= 1
        e = c + loads[k]
        if k + 1 < len(bps):
            e = min(e, bps[k + 1])
        out.append(e)
        j = bisect.bisect_left(bps, e)
        if j == len(bps) or bps[j] != e:
            bps.insert(j, e)
            loads.insert(j, loads[j - 1] if j > 0 else 0)
        for m in range(j, len(loads)):
            loads[m] += c
    return out


def pack_monotone(costs: Sequence[int], room: int) -> list[bool]:
    """Which candidates (costs in priority order) the monotone rule packs into ``room``."""
    return [e <= room for e in entry_budgets(costs)]
