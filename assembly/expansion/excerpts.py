"""Page excerpts: a slice of a page's text around a hit, cut where the text breaks.

A window of a section's sentences carries only that section's prose; a slice of the page text around the
hit (``excerpt_bounds``) carries what sits beside it on the page too, such as table cells, captions and
list items. ``char_span`` is where a region lies in its page's text (its char locator). ``answer_line``: the
line of the page that shares most of the question's words, which the slice stretches to keep when it fits.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from folio.assembly.words import content_words
from folio.kernel.model import Region

EXCERPT_SNAP = 80  # chars: an excerpt ends at a line end this near (or a quarter of its size), else a sentence end


def cut_at(text: str, pos: int, bounds: tuple[int, int], snap: int, *, start: bool) -> int:
    """Where an excerpt starts (``start``) or ends near ``pos``, searching back from ``pos`` to no earlier
    than ``floor`` (and, for a start, no later than ``ceil``), ``bounds`` being ``(floor, ceil)``: the nearest
    line end within ``snap`` chars, else a sentence end, else a space; ``pos`` itself when none is there
    (``floor`` for an end).

    >>> t = "one two. three four\\nfive"
    >>> t[cut_at(t, 12, (0, 25), 80, start=True):], t[:cut_at(t, 12, (0, 25), 80, start=False)]
    ('three four\\nfive', 'one two.')
    """
    floor, ceil = bounds
    lo = max(floor, pos - snap)
    for sep in ("\n", ". ", " "):
        k = text.rfind(sep, lo, min(pos, ceil) + len(sep) - 1 if start else pos)
        if k >= 0 and (not start or k + len(sep) <= ceil):
            if start:
                return k + len(sep)
            return k + 1 if sep == ". " else k
    return min(pos, ceil) if start else max(floor, min(pos, ceil))


def char_span(r: Region) -> tuple[int, int] | None:
    """``[start, end)`` of ``r`` in its page's text, when it lies on one page and its locator has offsets."""
    loc = r.locators[0] if r.locators else None
    if loc is None or loc.char_start is None or len({x.page for x in r.locators}) != 1:
        return None
    a, b = loc.char_start, loc.char_end if loc.char_end is not None else loc.char_start
    return (a, b) if 0 <= a <= b else None


def excerpt_bounds(text: str, a: int, b: int, limit: int, count: Callable[[str], int]) -> tuple[int, int]:
    """The slice of ``text`` around ``[a, b)`` of about ``limit`` tokens, a third before and two thirds
    after (the matched text always, however long), cut at line ends where one is near, else at sentence
    ends, else between words (``cut_at``): a compact page has a paragraph on one line. ``count`` gives a
    text's tokens."""
    per_token = max(1.0, len(text) / max(1, count(text)))
    room = max(0, int(limit * per_token) - (b - a))
    snap = max(EXCERPT_SNAP, room // 4)
    lo, hi = max(0, a - room // 3), min(len(text), b + room - room // 3)
    lo = cut_at(text, lo, (0, a), snap, start=True) if lo > 0 else 0
    hi = cut_at(text, min(len(text), hi + snap), (b, len(text)), snap, start=False) if hi < len(text) else hi
    n = count(text[lo:hi])
    while hi > b and n > limit:  # the estimate was generous: trim the tail
        target = max(b, hi - max(1, int((n - limit) * per_token)))
        cut = cut_at(text, target, (b, hi - 1), snap, start=False)
        if cut >= hi:
            break
        hi = cut
        n = count(text[lo:hi])
    return lo, hi


ANSWER_MIN_SHARED = 2  # question words a line outside the slice shares before the slice stretches to keep it


_SEGMENT = re.compile(r"[^\n]+?(?:[.!?](?=\s)|(?=\n)|$)")


def answer_line(text: str, lo: int, hi: int, query_words: frozenset[str]) -> tuple[int, int] | None:
    """``[start, end)`` of the line (or sentence of a line) of ``text`` outside ``[lo, hi)`` that shares most of
    ``query_words`` (the first of equals), when it shares at least ``ANSWER_MIN_SHARED`` and no fewer than the best
    one inside: the row or sentence that answers is often a few lines past a slice cut around the words that found
    the page (a statement's row below the sentence that names it). None when there is none.

    >>> t = "Revenue grew in 2019.\\nOther notes here. Total revenue 2019 was 5,300. More."
    >>> a, b = answer_line(t, 0, 21, frozenset({"total", "revenue", "2019"})); t[a:b]
    ' Total revenue 2019 was 5,300.'
    >>> answer_line(t, 0, len(t), frozenset({"total", "revenue", "2019"})) is None
    True
    """
    if not query_words:
        return None
    inside, best = 0, None
    best_n = ANSWER_MIN_SHARED - 1
    for m in _SEGMENT.finditer(text):
        a, b = m.span()
        n = len(query_words & content_words(m.group()))
        if lo <= a and b <= hi:
            inside = max(inside, n)
        elif (b <= lo or a >= hi) and n > best_n:
            best, best_n = (a, b), n
    return best if best is not None and best_n >= inside else None
