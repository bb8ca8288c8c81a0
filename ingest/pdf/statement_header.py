"""A financial statement's header: the unit and period lines above its figures, which are not page furniture.

A statement's header repeats at the same place on consecutive statement pages: "(in millions)" and
"December 28, 2019  December 29, 2018" head the balance sheet, the income statement and both pages of the cash
flow statement alike. Repeated at the top of the page, it looks like a running head to ``furniture.mark_furniture``,
which would drop it, and the statement's figures could then no longer be placed in a year or a unit. A block that
furniture detection would drop is kept when it is a statement header (``statement_header``):

* one of its lines at least is a unit line ("(in millions)", "($ in thousands, except per share data)") or a
  period line (dates, years and fiscal-period words: "For the years ended June 30,", "2019 2018 2017"), and none
  is longer than a title line (``HEADER_WORDS``: a block may hold the issuer and the statement's name above its
  unit); and
* a statement body lies just below it: the top of a table read on the page, or else the first of the page's
  figure rows (a label, then figures at the line's end: ``MIN_FIGURE_ROWS`` of them below the block), within
  ``HEADER_STACK`` line heights, with only short lines (title, column heads) between them.

Running heads (the company's name, "Table of Contents", "Form 10-K", page numbers) are neither unit nor period
lines and stay furniture; a date line set as a running head on a page of prose has no statement below it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from folio.ingest.pdf.tables.base import TableData
from folio.ingest.pdf.tables.wordrows import LEADER, NUMBER
from folio.ingest.pdf.text import Block, Line

HEADER_WORDS = 16  # words of a header line at most (a title line, "(In millions, except per share data)")
HEADER_STACK = 8.0  # line heights from a header line down to the statement's first row (title, unit, periods)
MIN_FIGURE_ROWS = 3  # figure rows below a header line that make a statement body where no table was read

_UNIT = re.compile(
    r"(?i)^\(?\s*(?:(?:in|dollars|amounts|figures|expressed|presented|all|unaudited|u\.s\.|us|usd|eur|[$€£¥])"
    r"[,;]?\s*){0,4}(?:millions?|thousands?|billions?)\b"
)
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_PERIOD_WORDS = frozenset(
    _MONTHS
    + "year years ended ending end months month weeks week quarter quarters quarterly three six nine twelve "
    "thirteen fifty-two fifty-three first second third fourth half fiscal as of at for the and period periods "
    "to through from date unaudited audited restated ytd year-to-date fy h1 h2 q1 q2 q3 q4".split()
)
_YEAR = re.compile(r"(?:fy)?(?:19|20)\d\d|fy\d\d")
_DAY = re.compile(r"\d{1,2}")
_ANCHORS = frozenset([*_MONTHS, "ended", "ending"])
_TOKEN = re.compile(r"[^\s,.;:()\[\]/|*–—]+")


def is_unit_line(text: str) -> bool:
    """A line that says what the figures count: "(in millions)", "Dollars in thousands, except per share".

    >>> [is_unit_line(t) for t in ["(in millions)", "($ in millions, except per share data)", "In thousands"]]
    [True, True, True]
    >>> [is_unit_line(t) for t in ["The Kraft Heinz Company", "Revenue grew by 3 million units in the year"]]
    [False, False]
    """
    return len(text.split()) <= HEADER_WORDS and bool(_UNIT.match(text.strip()))


def is_period_line(text: str) -> bool:
    """A line of dates, years and fiscal-period words, with a year, a month or "ended" among them.

    >>> [is_period_line(t) for t in ["December 28, 2019 December 29, 2018", "2019 2018 2017", "Years Ended"]]
    [True, True, True]
    >>> [is_period_line(t) for t in ["Table of Contents", "54", "Annual Report 2019", "As of"]]
    [False, False, False, False]
    """
    tokens = [t.casefold() for t in _TOKEN.findall(text)]
    if not tokens or len(tokens) > HEADER_WORDS:
        return False
    if not all(t in _PERIOD_WORDS or _YEAR.fullmatch(t) or _DAY.fullmatch(t) for t in tokens):
        return False
    return any(t in _ANCHORS or _YEAR.fullmatch(t) for t in tokens)


def _is_figure_row(ln: Line) -> bool:
    """A statement line: a label with a letter, then a figure (not a year) as the line's last word; not a line of
    contents (dot leaders before a page number)."""
    words = ln.text.split()
    last = words[-1].strip("$€£¥") if words else ""
    return (
        not LEADER.search(ln.text)
        and len(words) >= 2
        and bool(NUMBER.fullmatch(last))
        and not _YEAR.fullmatch(last)
        and any(ch.isalpha() for ch in words[0])
    )


def _body_top(b: Block, blocks: Sequence[Block], tables: Sequence[TableData]) -> float | None:
    """The top of the statement body below ``b``: a table under it, else the first of the figure rows below it."""
    x0, _, x1, y1 = b.bbox
    below = [t.bbox[1] for t in tables if t.bbox[1] >= y1 - 1.0 and t.bbox[0] < x1 and x0 < t.bbox[2]]
    if below:
        return min(below)
    rows = sorted(
        ln.bbox[1] for o in blocks if o is not b for ln in o.lines if ln.bbox[1] >= y1 - 1.0 and _is_figure_row(ln)
    )
    return rows[0] if len(rows) >= MIN_FIGURE_ROWS else None


def statement_header(b: Block, blocks: Sequence[Block], tables: Sequence[TableData]) -> bool:
    """Whether ``b``, a block of a page with ``blocks`` and ``tables``, is a statement's unit or period header
    (module docstring): such a block is never furniture."""
    lines = [ln for ln in b.lines if ln.text.strip()]
    if not lines or any(len(ln.text.split()) > HEADER_WORDS for ln in lines):
        return False
    if not any(is_unit_line(ln.text) or is_period_line(ln.text) for ln in lines):
        return False
    top = _body_top(b, blocks, tables)
    height = max(ln.bbox[3] - ln.bbox[1] for ln in lines)
    if top is None or top - b.bbox[3] > HEADER_STACK * height:
        return False
    between = [o for o in blocks if o is not b and b.bbox[3] <= (o.bbox[1] + o.bbox[3]) / 2 < top]
    return all(len(ln.text.split()) <= HEADER_WORDS for o in between for ln in o.lines)
