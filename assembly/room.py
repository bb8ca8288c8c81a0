"""The evidence room and the expansion caps that follow it.

``Frame`` is the prompt without evidence, counted once per request; what it leaves of the limit is the
evidence room.

Everything before packing is budget-independent except three documented caps that scale with the
evidence room (``room``: the limit minus system text, question and template), so a unit larger than
the budget falls back to a smaller one instead of being skipped outright:

* the parent cap (``parent_cap``): ``min(parent_max_tokens, room)``; with ``strategy="auto"`` also at
  most ``max(PARENT_FLOOR, room // 3)``, so one parent cannot take most of a small budget;
* the page cap (``page_cap``, auto): ``max(PARENT_FLOOR, page_max_share * room)``, the largest page sent
  whole as text; with ``page_units`` a text, table or text-found figure hit is sent as its page when the
  page fits (the page is the unit people cite, and the answer is usually elsewhere on the page than the
  sentence that matched), else as its section or window;
* the window size (``window_tokens``, auto): ``max(WINDOW_FLOOR, window_share * room)`` tokens of
  sentences around the hit, so dense tabular text and long prose get about the same context.

The caps follow the room only in greedy packing. Monotone and breadth packing promise that a larger budget
never drops an item (never covers fewer pages), which needs the same candidates at every budget, so there the
caps do not follow the room. Breadth packing's are ``parent_max_tokens``, ``page_max_tokens`` and
``excerpt_tokens``; monotone packing's are the floors above (what the caps are at a small budget): a parent
of at most ``min(parent_max_tokens, PARENT_FLOOR)`` in auto (``parent_max_tokens`` otherwise), a page of at
most ``PARENT_FLOOR`` and windows of ``WINDOW_FLOOR`` tokens (sentence counts with ``window_share=None``).
Small units suit the entry-budget rule, where a large top candidate holds back every later one (measured on
the sample PDFs at budgets 1k/2k/4k: 16/36/80 pages covered, against 6/17/38 with breadth's caps and
13/19/31 when the caps followed the room).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from folio.assembly.options import AssemblyOptions
from folio.assembly.prompt import CONTEXT_HEADER, block_close, message_overhead, question_part, system_text

PARENT_FLOOR = 256
WINDOW_FLOOR = 96
ROLES = ("user", "system")  # openai: system + user messages; anthropic: system string + user


@dataclass(frozen=True)
class Frame:
    """The prompt without evidence: its parts' token counts and the room they leave (``room``)."""

    limit: int
    sys_tokens: int
    q_tokens: int
    overhead: int
    close_tokens: int  # one block's closing line
    room: int


def frame_of(query: str, options: AssemblyOptions, count: Callable[[str], int]) -> Frame:
    """The prompt of ``query`` without evidence, counted with ``count``."""
    sys_tokens = count(system_text(options))
    q_tokens = count(question_part(query))
    overhead = message_overhead(count, ROLES)
    fixed = sys_tokens + q_tokens + count(CONTEXT_HEADER) + overhead
    return Frame(limit=options.limit, sys_tokens=sys_tokens, q_tokens=q_tokens, overhead=overhead,
                 close_tokens=count(block_close(options.block_format)), room=options.limit - fixed)


def parent_cap(o: AssemblyOptions, room: int) -> int:
    """The largest parent section (and, in auto, page text) sent whole; see the module docstring."""
    if o.packing == "breadth":  # caps that do not follow the room: the same candidates at every budget
        return o.parent_max_tokens
    if o.packing == "monotone":  # the cap's floor, whatever the room
        return min(o.parent_max_tokens, PARENT_FLOOR) if o.strategy == "auto" else o.parent_max_tokens
    cap = min(o.parent_max_tokens, room)
    if o.strategy == "auto":
        cap = min(cap, max(PARENT_FLOOR, room // 3))
    return max(1, cap)


def page_cap(o: AssemblyOptions, room: int) -> int:
    """The largest page sent whole as text in place of a window (auto with ``page_units``)."""
    if o.packing == "breadth":
        return o.page_max_tokens
    if o.packing == "monotone":
        return PARENT_FLOOR
    return max(1, min(room, max(PARENT_FLOOR, int(o.page_max_share * room))))


def window_tokens(o: AssemblyOptions, room: int) -> int | None:
    """Auto: the size of a sentence window in tokens (``window_share`` of the room, at least
    ``WINDOW_FLOOR``), or None for windows of ``window_before``/``window_after`` sentences."""
    if o.packing == "breadth":
        return o.excerpt_tokens
    if o.window_share is None:
        return None
    if o.packing == "monotone":
        return WINDOW_FLOOR
    return max(WINDOW_FLOOR, int(o.window_share * room))
