"""Page excerpts: a slice of a page's text around a hit, cut where the text breaks.

A window of a section's sentences carries only that section's prose; a slice of the page text around the
hit (``excerpt_bounds``) carries what sits beside it on the page too, such as table cells, captions and
list items. ``char_span`` is where a region lies in its page's text (its char locator). ``answer_line``: the
line of the page that shares most of the question's words, which the slice stretches to keep when it fits, or
which goes as a slice of its own beside a shorter one (``answering_excerpt``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

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


ANSWER_MIN_SHARED = 2  # question words a line outside the slice shares before the excerpt keeps it
ANSWER_SHARE = 3  # an answering line kept as a slice of its own costs at most 1/ANSWER_SHARE of the excerpt
GAP_TOKENS = 4  # what the "[…]" line between two slices costs, about


_SEGMENT = re.compile(r"[^\n]+?(?:[.!?](?=\s)|(?=\n)|$)")

Slice = tuple[int, int]


def _stems(words: frozenset[str]) -> frozenset[str]:
    """``words`` with a plural's final ``s`` dropped (``products`` meets ``product``; ``class`` stays).

    >>> sorted(_stems(frozenset({"products", "class", "is", "2019"})))
    ['2019', 'class', 'is', 'product']
    """
    return frozenset(w[:-1] if len(w) > 3 and w[-1] == "s" and w[-2] != "s" else w for w in words)


def answer_line(text: str, slices: Sequence[Slice], query_words: frozenset[str], gain: int = 0) -> Slice | None:
    """``[start, end)`` of the line (or sentence of a line) of ``text`` outside every slice of ``slices`` that
    shares most of ``query_words`` (the first of equals), when it shares at least ``ANSWER_MIN_SHARED`` and
    ``gain`` more than the best one inside them: the row or sentence that answers is often a few lines past a slice cut
    around the words that found the page (a statement's row below the sentence that names it). None when there
    is none.

    >>> t = "Revenue grew in 2019.\\nOther notes here. Total revenue 2019 was 5,300. More."
    >>> a, b = answer_line(t, [(0, 21)], frozenset({"total", "revenue", "2019"})); t[a:b]
    ' Total revenue 2019 was 5,300.'
    >>> answer_line(t, [(0, len(t))], frozenset({"total", "revenue", "2019"})) is None
    True
    """
    if not query_words:
        return None
    wanted = _stems(query_words)
    inside, best = 0, None
    best_n = ANSWER_MIN_SHARED - 1
    for m in _SEGMENT.finditer(text):
        a, b = m.span()
        n = len(wanted & _stems(content_words(m.group())))
        if any(lo <= a and b <= hi for lo, hi in slices):
            inside = max(inside, n)
        elif all(b <= lo or a >= hi for lo, hi in slices) and n > best_n:
            best, best_n = (a, b), n
    return best if best is not None and best_n >= inside + gain else None


def line_of_its_own(text: str, slices: Sequence[Slice], query_words: frozenset[str], limit: int,
                    count: Callable[[str], int]) -> tuple[Slice, int] | None:
    """The page's ``answer_line`` to send as a slice of its own beside ``slices`` (an excerpt of about ``limit``
    tokens), with what it costs (its tokens and the ``[…]`` line): when it shares more question words than any
    line of them and costs at most ``1/ANSWER_SHARE`` of ``limit``; else None."""
    line = answer_line(text, slices, query_words, gain=1)
    if line is None:
        return None
    cost = count(text[line[0]:line[1]]) + GAP_TOKENS
    return (line, cost) if cost <= limit // ANSWER_SHARE else None


def answering_excerpt(text: str, span: Slice, limit: int, count: Callable[[str], int],
                      query_words: frozenset[str]) -> tuple[Slice, tuple[Slice, ...]]:
    """The excerpt of ``text`` around ``span`` (``excerpt_bounds``, about ``limit`` tokens) and the further
    slices that go with it: when the page's ``answer_line`` for ``query_words`` lies outside it, the excerpt
    stretches to keep both when they fit ``limit`` together; else the line goes as a slice of its own (when it
    shares more question words than any line of the excerpt and costs at most ``1/ANSWER_SHARE`` of
    ``limit``) beside an excerpt of the hit cut shorter by what it costs. The answering line then reaches the
    model even when it is far from the words that found the page.

    >>> t = "Intro line.\\n" + "Filler words here. " * 40 + "\\nTotal revenue 2019 was 5,300.\\nEnd."
    >>> n = lambda s: len(s.split())
    >>> (a, b), more = answering_excerpt(t, (0, 11), 30, n, frozenset({"total", "revenue", "2019"}))
    >>> [t[x:y].strip() for x, y in more], b < len(t) - 40
    (['Total revenue 2019 was 5,300.'], True)
    """
    kept = excerpt_bounds(text, span[0], span[1], limit, count)
    line = answer_line(text, [kept], query_words)
    if line is None:
        return kept, ()
    a, b = min(span[0], line[0]), max(span[1], line[1])
    if count(text[a:b]) <= limit:
        return excerpt_bounds(text, a, b, limit, count), ()
    own = line_of_its_own(text, [kept], query_words, limit, count)
    if own is None:
        return kept, ()
    line, cost = own
    kept = excerpt_bounds(text, span[0], span[1], limit - cost, count)
    if kept[1] > line[0] and kept[0] < line[1]:  # the shorter excerpt reaches the line after all
        return kept, ()
    return kept, (line,)

