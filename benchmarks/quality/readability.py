"""Readability of a package (issue 45, item 6): whether a statement goes as rows a model can place, how many tokens
go to contents pages, and which specific answers were on a packed page but cut out of what was sent.

Measured on plain text, so the same for folio's items and the peers' units:

* A **statement item** holds a financial statement: a title of :data:`benchmarks.statement_rows.TITLE` (balance
  sheet; statement of operations, income, earnings, cash flows, comprehensive income or financial position; spaces
  inside words ignored) ends one of its first :data:`HEAD_LINES` non-empty lines (a company name may precede it, a
  parenthesis such as "(in millions)" follow it), no three such titles lie within :data:`LIST_SPAN` lines (a
  contents list names them all), and it holds at least :data:`MIN_FIGURES` figures. For folio the head is the
  item's ``section`` (the block tag a model reads), then its text.
* Its **figure-bearing lines** are the lines with a figure that is not a year (``2,853``, ``(370)``, ``$6,006``,
  ``12.5%``; ``$``/``%`` signs, dashes and table pipes are not words). A **row** is such a line with a label (a
  word with a letter); a **bare figure** is such a line with one figure and nothing else but a currency sign.
* It goes **as rows with unit and period** when at least :data:`ROWS_SHARE` of its figure-bearing lines are rows,
  and its text states a unit (millions, thousands, billions, a currency or "per share") and a period (a year or a
  date); **with figures one per line** when at least :data:`BARE_SHARE` of them are bare figures.
* A **contents page** is a page of the document's text layer (PyMuPDF, read apart from folio's parser) with at
  least :data:`MIN_ENTRIES` entries ending in a page number (a label, then 1 to 3 digits at the end of its line or
  alone on the next line), their numbers ascending (not needed under an Index heading with the numbers beside their
  terms: filings head every page "Index" or "Table of Contents" as a link), the entries taking
  :data:`MOSTLY_SHARE` of its lines, or :data:`HEADED_SHARE` under a heading Contents / Table of Contents / Index.
  The tokens of a packed unit on a contents page count (a unit over several pages in proportion), for the
  questions that do not ask for contents (:func:`asks_for_contents`).
* A question's answer is **cut** when it is specific (``answer_exact_rare`` is defined: the answer on 1 to 3 pages
  of the text layer), a packed unit carries text of a gold page whose text layer holds the answer, and the answer
  is not in the packed text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.statement_rows import FIGURE, LEADER, SKIPPED, TITLE, YEAR

HEAD_LINES = 8
MIN_FIGURES = 15
ROWS_SHARE = 0.9
BARE_SHARE = 0.25
LIST_SPAN = 10  # three statement titles within this many lines are a list of them (contents), not a statement
MIN_ENTRIES = 8
ASCENDING_SHARE = 0.8
MOSTLY_SHARE = 0.5  # of a page's lines taken by contents entries
HEADED_SHARE = 0.3  # the same under a Contents / Index heading (many filings head every page "Table of Contents")
INDEX_INLINE = 0.7  # an index's numbers need not ascend, but most sit beside their terms ("Alpha, 12, 45")

TITLE_LINE = re.compile(f"(?:{TITLE.pattern})(?:[(:\\-–—].*)?$")  # on a line with all space removed, lower case
_MARKUP = re.compile(r"[|#*_>]+")
UNIT = re.compile(
    r"\b(?:millions?|thousands?|billions?|mn|bn|mio|mrd|tsd|teur|usd|eur|gbp|jpy|chf|cny|rmb|dollars?|euros?|yen)\b"
    r"|[$€£¥₹]|per\s+(?:common\s+)?share|'000|\b000s\b|百万|千円|億円",
    re.IGNORECASE,
)
MONTH = r"jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
PERIOD = re.compile(
    rf"(?<![\d,.])(?:19|20)\d\d(?!\d|[,.]\d)|\b(?:{MONTH})[a-z]*\.?\s+\d{{1,2}}\b|\b\d{{1,2}}/\d{{1,2}}/\d{{2,4}}\b|\bfy\s?\d\d",
    re.IGNORECASE,
)
CONTENTS_HEAD = re.compile(
    r"(?:table\s+of\s+)?contents|index|inhalt(?:sverzeichnis)?|(?:stichwort)?verzeichnis|目次|目录|索引", re.IGNORECASE
)
INDEX_HEAD = re.compile(r"index|(?:stichwort)?verzeichnis|索引", re.IGNORECASE)
PAGE_REF = re.compile(r"(?:^|\s)(?:[A-Z]-)?(\d{1,3})$")  # after leaders are dropped
BARE_REF = re.compile(r"(?:[A-Z]-)?\d{1,3}")
NUMBERED = re.compile(
    r"(?:item|part|note|chapter|section|schedule|exhibit|article|step|figure|table|level|tier|phase|stage|class)$",
    re.IGNORECASE,
)
ASKS_CONTENTS = re.compile(
    r"\b(?:contents|index(?:es)?|indices|page\s+numbers?|chapters?|inhalt\w*|seitenzahl\w*|kapitel\w*)\b"
    r"|目次|目录|目錄|索引|页码|ページ番号|章",
    re.IGNORECASE,
)


# --------------------------------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------------------------------


def _words(line: str) -> list[str]:
    return [w.rstrip(",;:") for w in line.replace("|", " ").split() if w.rstrip(",;:")]


def _figure(word: str) -> bool:
    """A figure that is not a year (years head the period columns)."""
    return bool(FIGURE.fullmatch(word)) and not YEAR.fullmatch(word.strip("()$€£"))


def line_kind(line: str) -> str | None:
    """``"row"`` (a label and figures), ``"bare"`` (one figure, perhaps a currency sign, no label), ``"other"``
    (figures without a label) or None (no figure but years).

    >>> [line_kind(x) for x in ("Cash $ 6,006 $ 8,555", "$ 6,006", "6,006 8,555", "December 2017 2016")]
    ['row', 'bare', 'other', None]
    """
    words = [w for w in _words(line) if not SKIPPED.fullmatch(w)]
    figures = sum(1 for w in words if _figure(w))
    if not figures:
        return None
    if any(ch.isalpha() for w in words if not FIGURE.fullmatch(w) for ch in w):
        return "row"
    return "bare" if figures == 1 and len(words) == 1 else "other"


def _title_line(line: str) -> bool:
    return bool(TITLE_LINE.search(re.sub(r"\s+", "", _MARKUP.sub(" ", line).lower())))


@dataclass(frozen=True)
class StatementReading:
    """How one statement item reads: its figures, figure-bearing lines, rows and bare figures among them, and
    whether it states a unit and a period."""

    figures: int
    lines: int
    rows: int
    bare: int
    unit: bool
    period: bool

    @property
    def as_rows(self) -> bool:
        return self.rows >= ROWS_SHARE * self.lines and self.unit and self.period

    @property
    def one_per_line(self) -> bool:
        return self.bare >= BARE_SHARE * self.lines


def read_statement(text: str) -> StatementReading | None:
    """The reading of ``text`` if it holds a statement (module docstring), else None."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    titles = [i for i, ln in enumerate(lines) if _title_line(ln)]
    listed = any(c - a < LIST_SPAN for a, c in zip(titles, titles[2:], strict=False))
    if not titles or titles[0] >= HEAD_LINES or listed:
        return None
    figures = sum(1 for w in _words(text) if _figure(w))
    if figures < MIN_FIGURES:
        return None
    kinds = [k for k in (line_kind(ln) for ln in lines) if k]
    return StatementReading(
        figures, len(kinds), kinds.count("row"), kinds.count("bare"), bool(UNIT.search(text)),
        bool(PERIOD.search(text)),
    )  # fmt: skip


# --------------------------------------------------------------------------------------------------
# Contents pages
# --------------------------------------------------------------------------------------------------


def page_ref(line: str) -> int | None:
    """The page number a contents line ends in: 1 to 3 digits (``F-3`` too) alone, or after a label (leader dots
    dropped), not a numbering (``Item 9``, ``Note 4``) nor the last of a row of figures (``Level 1 40``); an index
    line's list (``Alpha, 12, 45``) counts.

    >>> [page_ref(x) for x in ("Risk Factors ....... 13", "F-3", "Item 9", "Level 1 40", "Alpha, 12, 45", "2019")]
    [13, 3, None, None, 45, None]
    """
    kept = LEADER.sub(" ", line).strip()
    m = PAGE_REF.search(kept)
    if m is None:
        return None
    before = kept[: m.start()].split()
    if before and (
        not any(ch.isalpha() for w in before for ch in w)
        or NUMBERED.search(before[-1])
        or (FIGURE.fullmatch(before[-1]) and not before[-1].endswith(","))
    ):
        return None
    return int(m.group(1))


def _label(line: str) -> bool:
    return any(ch.isalpha() for ch in line) and page_ref(line) is None


@dataclass(frozen=True)
class Entries:
    """The contents entries of a page: their page numbers in order, how many hold label and number on one line,
    the lines they take, and the page's non-empty lines."""

    numbers: list[int]
    inline: int
    taken: int
    lines: int


def page_entries(text: str) -> Entries:
    """A contents line ends in a page number after its label (:func:`page_ref`), holds the number alone under its
    label, or in a column of numbers beside labels ending in leader dots (as many labels as half the numbers), or
    is such a label."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    dotted = {i for i, ln in enumerate(lines) if LEADER.search(ln) and _label(ln)}
    column = len(dotted) >= 0.5 * sum(1 for ln in lines if BARE_REF.fullmatch(ln))
    numbers: list[int] = []
    inline = 0
    taken = set(dotted)
    for i, ln in enumerate(lines):
        number, bare = page_ref(ln), bool(BARE_REF.fullmatch(ln))
        under = bare and i > 0 and _label(lines[i - 1])
        if number is None or (bare and not (under or column)):
            continue
        numbers.append(number)
        inline += not bare
        taken.update((i - 1, i) if under else (i,))
    return Entries(numbers, inline, len(taken), len(lines))


def is_contents_page(text: str) -> bool:
    """Whether a page of the text layer is a table of contents or an index (module docstring).

    >>> is_contents_page("Contents\\n" + "\\n".join(f"Part {i}: Setup ..... {3 * i}" for i in range(1, 10)))
    True
    >>> is_contents_page("Revenue grew 12 percent in 2019\\nSee page 45")
    False
    """
    e = page_entries(text)
    if len(e.numbers) < MIN_ENTRIES:
        return False
    head = [re.sub(r"[\W\d_]+", " ", ln).strip() for ln in text.splitlines() if ln.strip()][:5]
    headed = [h for h in head if CONTENTS_HEAD.fullmatch(h)]
    ascending = sum(1 for a, b in zip(e.numbers, e.numbers[1:], strict=False) if b >= a) / (len(e.numbers) - 1)
    index = any(INDEX_HEAD.fullmatch(h) for h in headed) and e.inline >= INDEX_INLINE * len(e.numbers)
    if ascending < ASCENDING_SHARE and not index:
        return False
    return e.taken >= (HEADED_SHARE if headed else MOSTLY_SHARE) * e.lines


def contents_pages(page_texts: Sequence[str]) -> list[int]:
    """The 1-based pages of a document's text layer that are contents pages."""
    return [i + 1 for i, t in enumerate(page_texts) if is_contents_page(t)]


def asks_for_contents(question: str) -> bool:
    """Whether a question asks for contents, an index, page numbers or chapters (then contents pages are fair
    evidence: "How many chapters are in this report?" is answered by its contents page).

    >>> asks_for_contents("On which page number does Part II start?"), asks_for_contents("Total revenue in 2019?")
    (True, False)
    >>> asks_for_contents("How many chapters are in this report?")
    True
    """
    return bool(ASKS_CONTENTS.search(question))


# --------------------------------------------------------------------------------------------------
# One package
# --------------------------------------------------------------------------------------------------

Unit = tuple[Sequence[int], str, int | None]
"""A packed unit: its pages, its text as a model reads it, its tokens (None: not counted)."""


def contents_tokens(units: Iterable[Unit], contents: Iterable[int]) -> int:
    """Tokens of the units on contents pages; a unit over several pages counts in proportion."""
    cp = set(contents)
    total = 0.0
    for pages, _, tokens in units:
        on = len(set(pages) & cp)
        if on:
            total += (tokens or 0) * on / len(set(pages))
    return round(total)


def readability_fields(
    q: dict[str, Any], info: dict[str, Any], units: Sequence[Unit] | None, covered: Sequence[int],
    found_rare: float | None,
) -> dict[str, Any]:  # fmt: skip
    """A record's readability fields. ``covered``: the gold pages some packed text comes from; ``found_rare``: the
    record's ``answer_exact_rare`` (None unless the answer is specific). Without ``units`` (a peer package cached
    before units were kept) the statement and contents fields are None."""
    readings = [r for r in (read_statement(text) for _, text, _ in units or []) if r is not None]
    asks = asks_for_contents(str(q.get("question", "")))
    answer_pages = set(info.get("exact_pages") or [])
    return {
        "statement_items": None if units is None else len(readings),
        "statement_rows": None if units is None else sum(r.as_rows for r in readings),
        "statement_one_per_line": None if units is None else sum(r.one_per_line for r in readings),
        "asks_contents": asks,
        "contents_tokens": None if units is None or asks else contents_tokens(units, info.get("contents_pages") or []),
        "answer_cut": None if found_rare is None else float(not found_rare and bool(answer_pages & set(covered))),
    }


# --------------------------------------------------------------------------------------------------
# Aggregation and the table
# --------------------------------------------------------------------------------------------------


def summarize_readability(recs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The readability of one system at one budget over a group of records: statement items pooled, contents
    tokens summed over the questions that do not ask for contents, the answer-cut questions by id."""
    stmt = [r for r in recs if r.get("statement_items") is not None]
    items = sum(r["statement_items"] for r in stmt)
    toc = [int(r["contents_tokens"]) for r in recs if r.get("contents_tokens") is not None]
    cut = [r for r in recs if r.get("answer_cut") is not None]
    return {
        "statement_items": items if stmt else None,
        "as_rows": sum(r["statement_rows"] for r in stmt) / items if items else None,
        "one_per_line": sum(r["statement_one_per_line"] for r in stmt) / items if items else None,
        "contents_tokens": sum(toc) if toc else None,
        "contents_packages": sum(1 for t in toc if t),
        "contents_questions": len(toc),
        "answer_cut": sum(1 for r in cut if r["answer_cut"]),
        "specific": len(cut),
        "answer_cut_ids": sorted(r["id"] for r in cut if r["answer_cut"]),
    }


def _by(recs: Sequence[dict[str, Any]], system: str, budget: int) -> list[dict[str, Any]]:
    return [r for r in recs if r["system"] == system and r["budget"] == budget]


def readability_summary(
    groups: Sequence[tuple[str, Sequence[dict[str, Any]]]], systems: Sequence[str], budgets: Sequence[int]
) -> dict[str, dict[str, Any]]:
    """``{group: {"system@budget": summarize_readability(...)}}`` for the JSON (ids only, never answers)."""
    return {
        g: {f"{s}@{b}": summarize_readability(rs) for s in systems for b in budgets if (rs := _by(recs, s, b))}
        for g, recs in groups
    }


READABILITY_COLS = [
    "system", "B", "statement items", "as rows with unit and period %", "figures one per line %",
    "contents tokens (packages)", "answer cut (of specific)",
]  # fmt: skip


def _pct(x: float | None) -> str:
    return "–" if x is None or math.isnan(x) else f"{100 * x:.1f}"


def readability_table(recs: Sequence[dict[str, Any]], systems: Sequence[str], budgets: Sequence[int]) -> list[str]:
    """The "Readability" table of a group: one row per system and budget."""
    lines = ["| " + " | ".join(READABILITY_COLS) + " |", "|---|" + "---:|" * (len(READABILITY_COLS) - 1)]
    for s in systems:
        for b in budgets:
            rs = _by(recs, s, b)
            if not rs:
                continue
            a = summarize_readability(rs)
            items = "–" if a["statement_items"] is None else str(a["statement_items"])
            toc = "–" if a["contents_tokens"] is None else f"{a['contents_tokens']} ({a['contents_packages']})"
            lines.append(
                f"| {s} | {b} | {items} | {_pct(a['as_rows'])} | {_pct(a['one_per_line'])} | {toc} | "
                f"{a['answer_cut']} ({a['specific']}) |"
            )
    return lines


READABILITY_NOTE = (
    "Readability (benchmarks/quality/readability.py): of the packed items that hold a statement (a statement's "
    "title at the item's head, 15 figures or more), the share sent as rows (90% of the lines with figures are a "
    "label and its figures) stating a unit and a period, and the share with a quarter or more of those lines a bare "
    "figure; the tokens packed from contents pages of the text layer, over the questions that do not ask for "
    "contents (packages with any in brackets); the specific answers on a packed gold page but not in the package "
    "(answer cut; their ids are in quality.json.gz)."
)
