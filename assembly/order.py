"""Order of the packed blocks in the prompt.

Items are first grouped by parent (same document version and section; tables and text of one
section travel together) and each group is kept contiguous, in document order inside the group.
Groups are then ordered by the best score in the group:

- ``relevance``: strongest group first.
- ``document``: by document, version, then position (page, top of first box).
- ``edges`` (default): strongest group first, second strongest last, the rest alternating inwards,
  so the weakest evidence sits in the middle ("lost in the middle": models use the start and the
  end of a long context more reliably). With two groups it equals relevance order, and the last
  block sits next to the question.

Order never changes token counts (blocks are separate prompt parts), so it is free to experiment with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from folio.assembly.options import Order

T = TypeVar("T")


def order_items(
    items: Sequence[T],
    *,
    group: Callable[[T], tuple[str, ...]],
    score: Callable[[T], float],
    position: Callable[[T], tuple[float, ...]],
    how: Order,
) -> list[T]:
    """``items`` grouped (by section, see ``assembly.core.assemble``), members in document position, groups in
    ``how`` order: ``document`` (reading order), ``relevance`` (best group first) or ``edges`` (the
    strongest groups at both ends of the prompt, the weakest in the middle: ``edges_positions``)."""
    groups: dict[tuple[str, ...], list[T]] = {}
    for it in items:
        groups.setdefault(group(it), []).append(it)
    glist = list(groups.items())
    first_seen = {k: n for n, (k, _) in enumerate(glist)}
    for _, members in glist:
        members.sort(key=position)
    if how == "document":
        glist.sort(key=lambda kv: (kv[0][:2], position(kv[1][0])))
        return [it for _, m in glist for it in m]
    glist.sort(key=lambda kv: (-max(score(x) for x in kv[1]), first_seen[kv[0]]))
    if how == "relevance":
        return [it for _, m in glist for it in m]
    front: list[list[T]] = []
    back: list[list[T]] = []
    for n, (_, m) in enumerate(glist):
        (front if n % 2 == 0 else back).append(m)
    seq = front + back[::-1]
    return [it for m in seq for it in m]


def edges_positions(n: int) -> list[int]:
    """Where the k-th strongest of ``n`` groups lands under ``edges``.

    >>> edges_positions(5)
    [0, 4, 1, 3, 2]
    """
    front = list(range(0, n, 2))
    back = list(range(1, n, 2))
    slots = front + back[::-1]
    pos = [0] * n
    for place, k in enumerate(slots):
        pos[k] = place
    return pos
