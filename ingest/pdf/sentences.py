"""Sentence segmentation over paragraph text, returning character spans.

A rule-based splitter tuned for technical manuals: a sentence ends at ``.``, ``!``, ``?`` (or the
CJK ``。！？``) followed by whitespace and an upper-case letter, digit, quote or bracket — but
not after a known abbreviation (``e.g.``, ``i.e.``, ``Fig.``, ``Dr.``, ``etc.`` when the next word is
lower-case, single initials), and never inside a token such as ``3.14``, ``v2.0.1`` or ``a.b.c``
(no whitespace follows those dots). Text without sentence punctuation (code, logs, tables of
values) falls back to bounded chunks of at most ``max_words`` words, cut at line ends where
possible, so no "sentence" is unbounded.

>>> [t for t, _, _ in split_sentences("Use e.g. v2.0.1 here. Then pi is 3.14. Done!")]
['Use e.g. v2.0.1 here.', 'Then pi is 3.14.', 'Done!']
"""

from __future__ import annotations

import re

MAX_WORDS = 60

_ABBREVIATIONS = frozenset(
    """e.g i.e etc fig figs eq eqs no nos vol vols dr mr mrs ms prof st vs cf al approx ca resp
    sec secs ch chap p pp ed eds inc ltd co corp jr sr dept est min max ref refs tab appx abb
    abbr art jan feb mar apr jun jul aug sep sept oct nov dec viz ibid op""".split()
)
# Candidate boundary: terminal punctuation (optionally closed by quotes/brackets), then whitespace.
_BOUNDARY = re.compile(r"([.!?]+[\"')\]’”]*|[。！？]+[」』）]*)((?<=[。！？」』）])\s*|\s+|$)")
_CJK_END = re.compile(r"[。！？]")
_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")


def _word_before(text: str, end: int) -> str:
    """The whitespace-free run ending at ``end``; a backwards scan (an ``(\\S+)$`` search is quadratic)."""
    i = end
    while i > 0 and not text[i - 1].isspace():
        i -= 1
    return text[i:end]


def _is_abbreviation(word: str) -> bool:
    w = word.rstrip(".").lstrip("(\"'[").lower()
    if not w:
        return False
    if w in _ABBREVIATIONS:
        return True
    # Single initials ("J. Smith") and dotted abbreviations ("U.S.", "a.k.a").
    if len(w) == 1 and w.isalpha():
        return True
    return bool(_DOTTED.fullmatch(w))


def _raw_boundaries(text: str) -> list[int]:
    """End offsets (exclusive) of sentences, before length bounding."""
    ends: list[int] = []
    for m in _BOUNDARY.finditer(text):
        punct = m.group(1)
        end = m.end(1)
        nxt = text[m.end() : m.end() + 1]
        if _CJK_END.search(punct):
            ends.append(end)
            continue
        if m.end() >= len(text):
            continue  # end of text is always a boundary anyway
        if punct.startswith(".") and len(punct.rstrip("\"')]’”")) == 1:
            word = _word_before(text, m.start(1))
            if _is_abbreviation(word + "."):
                # "etc." / "Inc." can end a sentence: split only before a capitalised word that is
                # not itself likely a continuation ("e.g. Python" stays together).
                if word.lower().rstrip(".") not in {"etc", "inc", "ltd", "co", "al"} or not nxt.isupper():
                    continue
        if not (nxt.isupper() or nxt.isdigit() or nxt in "\"'([“‘*•-" or not nxt.isascii()):
            continue
        ends.append(end)
    if not ends or ends[-1] < len(text):
        ends.append(len(text))
    return ends


def _bound(text: str, start: int, end: int, max_words: int) -> list[tuple[int, int]]:
    """Cut ``text[start:end]`` into chunks of at most ``max_words`` words, preferring line breaks."""
    if len(text[start:end].split()) <= max_words:
        return [(start, end)]
    words = [(m.start() + start, m.end() + start) for m in re.finditer(r"\S+", text[start:end])]
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        j = min(i + max_words, len(words))
        if j < len(words):
            # Prefer the last line break within the window's second half.
            for k in range(j - 1, i + max_words // 2, -1):
                if "\n" in text[words[k][1] : words[k + 1][0]]:
                    j = k + 1
                    break
        out.append((words[i][0], words[j - 1][1]))
        i = j
    return out


def split_sentences(text: str, *, max_words: int = MAX_WORDS) -> list[tuple[str, int, int]]:
    """Split ``text`` into ``(sentence, start, end)`` with ``text[start:end]`` stripped of edge spaces."""
    out: list[tuple[str, int, int]] = []
    start = 0
    for end in _raw_boundaries(text):
        s, e = start, end
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            for a, b in _bound(text, s, e, max_words):
                out.append((text[a:b], a, b))
        start = end
    return out
