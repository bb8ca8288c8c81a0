"""A page's words as visual rows, each split into its label and its figures: the first two steps of reading a
statement from word positions (``tables.words``, whose docstring tells the whole reading).

1. the words are grouped into visual rows (one text line across the page: centres within ``ROW_TOL`` of a
   word's height);
2. each row is split into its label and its figures: the value tokens (``2,853``, ``(370)``, ``—``,
   ``16.2``) peeled off its right end, ``$`` / ``%`` tokens attached to their figure, kept as figures
   when a gap of ``LABEL_GAP`` line heights separates them from the label (a sentence that ends in a
   number is not a row); a label with a wide gap after a line of prose or after a figure is two things
   side by side (page columns, panels), not a table line (``Row.split``).

What comes after (runs of rows, columns, header, title, statement lines) needs several rows at once and is
``tables.words``'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import median

Word = tuple[float, float, float, float, str]

NUMBER = re.compile(r"[(\[]?[-−–+]?[$€£¥]?[(\[]?\d(?:[\d,.]*\d)?\)?%?\)?\]?\*?")
DASH = re.compile(r"[-−–—]+%?")
CURRENCY = frozenset({"$", "€", "£", "¥", "US$"})
_NOT_AVAILABLE = re.compile(r"(?i)n/?a|n\.?m\.?")
_YEAR = re.compile(r"(?:19|20)\d\d")
LEADER = re.compile(r"(?:\s?[.…·_]){3,}")
_GROUP = re.compile(r"\d{3}\)?")
_LEAD_GROUP = re.compile(r"\(?\d{1,3}")

ROW_TOL = 0.4  # of a word's height: words whose centres are this close lie on one visual row
LABEL_GAP = 1.0  # line heights between a label and its first figure (a sentence's word gap is ~0.3)
LABEL_SPLIT = 1.5  # line heights: a wider gap after PROSE_WORDS words of a label: prose beside a table
PROSE_WORDS = 5
PROSE_CHARS = 25


@dataclass(slots=True)
class Value:
    """One figure at a row's right end, with where it is printed."""

    text: str  # as printed, currency and percent signs attached; "" for a dash
    x0: float  # the figure's own box (without an attached currency sign)
    x1: float
    lead: float  # left edge including an attached currency sign
    n: int = 0  # tokens of the row's right end up to and including this figure


@dataclass(slots=True)
class Row:
    """One visual text line: its words left to right, split into a label and figures."""

    words: list[Word]
    y0: float
    y1: float
    h: float  # median word height
    label: list[Word] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)
    split: bool = False  # a wide gap inside the label: not a table line

    @property
    def label_text(self) -> str:
        return clean_label(" ".join(w[4] for w in self.label))

    @property
    def x0(self) -> float:
        return self.words[0][0]

    @property
    def x1(self) -> float:
        return self.words[-1][2]

    @property
    def years_only(self) -> bool:
        """Figures that are all years (``2018  2017``, ``(Millions)  2018  2017``): a header line."""
        return bool(self.values) and all(_YEAR.fullmatch(v.text) for v in self.values)

    @property
    def figures(self) -> bool:
        return bool(self.values) and not self.split and not self.years_only


def clean_label(text: str) -> str:
    return " ".join(LEADER.sub(" ", text).split()).rstrip(" .")


def is_value(tok: str) -> bool:
    return bool(NUMBER.fullmatch(tok) or DASH.fullmatch(tok) or _NOT_AVAILABLE.fullmatch(tok))


def visual_rows(words: Sequence[Word]) -> list[Row]:
    """Words grouped into visual rows, top to bottom, each row's words left to right."""
    rows: list[tuple[float, list[Word]]] = []
    for w in sorted((w for w in words if w[4].strip() and w[3] > w[1]), key=lambda w: ((w[1] + w[3]) / 2, w[0])):
        yc, h = (w[1] + w[3]) / 2, w[3] - w[1]
        if rows and abs(yc - rows[-1][0]) <= ROW_TOL * h:
            rows[-1][1].append(w)
        else:
            rows.append((yc, [w]))
    out = []
    for _, ws in rows:
        ws.sort(key=lambda w: w[0])
        row = Row(ws, min(w[1] for w in ws), max(w[3] for w in ws), median(w[3] - w[1] for w in ws))
        _split_row(row)
        out.append(row)
    return out


def label_end(label: Sequence[Word]) -> float:
    """Right edge of a label's text, dot leaders left out."""
    for w in reversed(label):
        kept = LEADER.sub("", w[4]).rstrip(". ")
        if kept:
            return w[0] + (w[2] - w[0]) * len(kept) / max(1, len(w[4]))
    return label[0][0] if label else 0.0


def _split_row(row: Row) -> None:
    """Peel the figures off the row's right end; what is left of them is the label."""
    ws = row.words
    k = len(ws)
    while k > 0 and (is_value(ws[k - 1][4]) or ws[k - 1][4] in CURRENCY or ws[k - 1][4] == "%"):
        k -= 1
    values = _values(ws[k:], row.h)
    label = ws[:k]
    # A figure too close to the label is part of it ("Note 16", "December 31, 2018"): move it back.
    while values and label and values[0].x0 - label_end(label) < LABEL_GAP * row.h:
        label = ws[: k + values.pop(0).n]
    row.label, row.values = label, values
    # A wide gap after a word or two is a group label ("Single   BM25 + DPR"); after a line of prose, or
    # after a figure ("Shares (m): 167.01     Revenue"), two things stand side by side.
    row.split = any(
        b[0] - a[2] > LABEL_SPLIT * row.h and _beside(label[:k], a[4])
        for k, (a, b) in enumerate(zip(label, label[1:], strict=False), start=1)
    )


def _beside(before: Sequence[Word], last: str) -> bool:
    """Whether the words ``before`` a wide gap in a label are something of their own: a line of prose
    (``PROSE_WORDS`` words, or ``PROSE_CHARS`` characters in scripts without spaces) or end in a figure."""
    return len(before) >= PROSE_WORDS or sum(len(w[4]) for w in before) >= PROSE_CHARS or is_value(last)


def _values(tokens: Sequence[Word], h: float) -> list[Value]:
    """The figures of a row's right end: currency signs attached to the figure after them, ``%`` to the one
    before, a three-digit group set off by a narrow space joined to the figure before (``1 234``)."""
    out: list[Value] = []
    currency: Word | None = None
    for i, w in enumerate(tokens, start=1):
        tok = w[4]
        if tok in CURRENCY:
            currency = w
        elif tok == "%" or (
            out
            and currency is None
            and _GROUP.fullmatch(tok)
            and w[0] - out[-1].x1 < 0.35 * h
            and _LEAD_GROUP.fullmatch(out[-1].text)
        ):
            if out:
                out[-1].text += tok
                out[-1].x1, out[-1].n = max(out[-1].x1, w[2]), i
        else:
            text = "" if DASH.fullmatch(tok) else tok
            if currency is not None and text:
                text = currency[4] + text
            out.append(Value(text, w[0], w[2], currency[0] if currency is not None else w[0], i))
            currency = None
    return out
