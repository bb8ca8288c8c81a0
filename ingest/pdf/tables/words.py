"""Tables rebuilt from word positions: financial statements and other figure tables, ruled or not.

``page.find_tables`` needs ruling. Statements are mostly set without it (or with shaded cells on every
other row, which it reads as a grid whose unshaded rows keep their figures in the label cell): a label on
the left of each text line and its figures right-aligned under period columns. Read from the words'
boxes, such a table is rebuilt row by row:

1. the page's words are grouped into visual rows (one text line across the page), and
2. each row is split into its label and its figures (``tables.wordrows``: a figure too close to its label is part of
   it, a label with a wide gap after prose or a figure is two things side by side, not a table line);
3. runs of rows with figures, with the label-only rows between them (``Current assets``), become a
   table when ``MIN_VALUE_ROWS`` rows carry figures; a line reaching into the figure columns with text
   (prose, a new header) or a wide vertical gap ends a run;
4. columns are the clusters of overlapping figure spans (right-aligned figures of one column overlap);
5. the rows just above the first row whose text lies over the columns are the header (periods such as
   ``2018`` under ``December 31,``: joined per column), the short lines above them the title (the
   issuer line and the statement's name, also where the issuer later goes as page furniture), and a
   line naming ``millions`` / ``thousands`` / ``billions`` the unit;
6. a label line without figures that wraps (the next line starts in lower case or with a figure, the
   line ends in a comma, or it runs across the label column) is joined to the next line, and a lower
   case line without figures to the row above it: one row per statement line; a dash is an empty cell.

Runs that are a table of contents (one column of page numbers), a data listing (figures without labels),
only dashes, or labels that are a column of prose beside figures are not tables; nor is one that leaves
out words inside its own box. The header's first cell reads ``title (unit)``, so every reader of the
table's Markdown (the chunk, row units, compact page text) carries what the figures are.
``find_page_tables`` (``tables.ruled``) stays the reader of ruled tables; ``merge_tables`` (``tables.merged``)
decides, per page, which of its tables word tables replace and where they are added (the ``word_tables`` mode).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import median

from folio.ingest.pdf.tables.base import TableData
from folio.ingest.pdf.tables.wordrows import (
    DASH,
    LEADER,
    PROSE_WORDS,
    Row,
    Value,
    Word,
    clean_label,
    label_end,
    visual_rows,
)
from folio.ingest.pdf.text import Block, Box

_PAGE_NUMBER = re.compile(r"\d{1,4}|[ivxlc]{1,6}")
_UNIT = re.compile(r"(?i)\b(?:millions?|thousands?|billions?)\b")
_PAREN = re.compile(r"\(([^()]*)\)")
_CONTINUES = re.compile(r"[0-9($&–—-]")  # a wrapped label's second line may start with these

SEGMENT_GAP = 1.0  # line heights: a wider gap separates two cells of a header row
ROW_GAP = 3.0  # line heights between two rows of one table
HEADER_GAP = 2.5  # line heights between header rows, and between the header and the first row
HEADER_OUTSIDE = 0.25  # of a header cell's width that may stick out of the columns' span (a centred "Reported")
HEADER_STACK = 1.5  # ... between header rows, unless the upper one has a unit as its label
TITLE_GAP = 2.2  # line heights between title lines, and between the title and the header
MAX_HEADER_ROWS = 5
MAX_TITLE_LINES = 4
TITLE_MAX_WORDS = 14
MIN_VALUE_ROWS = 3  # rows with figures that make a table
MIN_FILL = 0.4  # of the cells of its rows with figures that a table fills (dashes count)
PROSE_LEFT = 4.0  # line heights left of a table's labels where a line of PROSE_WORDS words is not the table's
JUSTIFIED_GAP = 3.0
JUSTIFIED_SHARE = 0.6  # labels ending within a line height of the longest: prose beside a table, not labels
KEEP_SHARE = 0.9  # of the words in a word table's box that it must hold


@dataclass(slots=True)
class _Column:
    x0: float  # span of its figures
    x1: float
    lead: float  # left edge of its figures with their currency signs
    rows: int  # figures in it


@dataclass(slots=True)
class _Line:
    """A statement line being built: its label, its cells by column, where its label starts and ends."""

    label: str
    x0: float
    end: float
    cells: dict[int, str]
    words: list[Word]


@dataclass(slots=True)
class _Head:
    """What lies above a table's first row: header rows, label-only rows of the body, the title and unit."""

    rows: list[Row] = field(default_factory=list)
    lead: list[Row] = field(default_factory=list)
    title: str = ""
    unit: str = ""


def find_word_tables(blocks: Sequence[Block]) -> list[TableData]:
    """The figure tables of a page, read from its blocks' words (see the module docstring)."""
    rows = visual_rows([w for b in blocks for ln in b.lines for w in ln.words])
    out = []
    for first, last in _runs(rows):
        table = _table(rows, first, last)
        if table is not None and _keeps(table, [w for r in rows for w in r.words]):
            out.append(table)
    return out


def _tokens(texts: Sequence[str]) -> set[str]:
    """The words of ``texts``, dot leaders, currency and percent signs and dashes left out."""
    words = {LEADER.sub("", w).strip("$€£¥%.,;:") for t in texts for w in t.split()}
    return {w for w in words if w and not DASH.fullmatch(w)}


def _keeps(table: TableData, words: Sequence[Word]) -> bool:
    """Whether ``table`` holds ``KEEP_SHARE`` of the words in its box: one that left text out (a panel
    beside it, words it could not place) is not read as a table."""
    x0, y0, x1, y1 = table.bbox
    inside = _tokens([w[4] for w in words if x0 <= (w[0] + w[2]) / 2 <= x1 and y0 <= (w[1] + w[3]) / 2 <= y1])
    held = _tokens([c for r in (table.header, *table.rows) for c in r])
    return len(inside & held) >= KEEP_SHARE * len(inside)


def _runs(rows: Sequence[Row]) -> list[tuple[int, int]]:
    """``(first, last)`` row indices of each run of figure rows that can make a table: rows at most
    ``ROW_GAP`` line heights apart, the lines between figure rows only labels left of the figures."""
    runs: list[tuple[int, int]] = []
    first = last = -1
    count = 0
    zone = bottom = 0.0

    def close() -> None:
        if count >= MIN_VALUE_ROWS:
            runs.append((first, last))

    for i, r in enumerate(rows):
        near = first >= 0 and r.y0 - bottom <= ROW_GAP * r.h
        # Rows with a label set where the figures begin; a row without one may start with a label's
        # continuation ("$103" under "... allowances of $95 and").
        lead = min(v.lead for v in r.values) if r.label and r.values else zone
        if r.figures:
            if near and max(v.x1 for v in r.values) < zone - r.h:
                near = False  # figures left of the table's (a page number under a note): not its row
            if near:
                last, count, zone = i, count + 1, min(zone, lead)
            else:
                close()
                first, last, count, zone = i, i, 1, min(v.lead for v in r.values)
            bottom = r.y1
        elif first >= 0:
            if near and not (r.values or r.split or label_end(r.words) > zone - 0.5 * r.h):
                bottom = r.y1
                continue
            close()  # a gap, or a line reaching into the figures (prose, a new header), ends the table
            first, count = -1, 0
    if first >= 0:
        close()
    return runs


def _columns(rows: Sequence[Row]) -> list[_Column]:
    """Clusters of overlapping figure spans, left to right; a cluster of one figure is not a column."""
    spans = sorted((v.x0, v.x1, v.lead) for r in rows if r.figures for v in r.values)
    cols: list[_Column] = []
    for x0, x1, lead in spans:
        if cols and x0 <= cols[-1].x1 + 0.5:
            c = cols[-1]
            c.x1, c.lead, c.rows = max(c.x1, x1), min(c.lead, lead), c.rows + 1
        else:
            cols.append(_Column(x0, x1, lead, 1))
    return [c for c in cols if c.rows >= 2]


def _column_of(v: Value, cols: Sequence[_Column]) -> int | None:
    """The column whose figure span ``v`` overlaps (the nearest within a figure's width), or None."""
    best, dist = None, float("inf")
    for j, c in enumerate(cols):
        d = max(c.x0 - v.x1, v.x0 - c.x1, 0.0)
        if d < dist:
            best, dist = j, d
    return best if dist <= max(1.0, v.x1 - v.x0) else None


def _table(rows: Sequence[Row], first: int, last: int) -> TableData | None:
    cols = _columns(rows[first : last + 1])
    if not cols or max(c.rows for c in cols) < MIN_VALUE_ROWS:
        return None
    run = [r for r in rows[first : last + 1] if r.figures]
    if len(cols) == 1 and all(_PAGE_NUMBER.fullmatch(v.text) for r in run for v in r.values):
        return None  # labels and page numbers: a table of contents or an index
    if sum(1 for r in run if any(v.text for v in r.values)) < MIN_VALUE_ROWS:
        return None  # dashes only
    labelled = [r for r in run if any(ch.isalpha() for ch in r.label_text)]
    if 2 * len(labelled) <= len(run):
        return None  # figures without labels: a data listing (a plot's input in a manual), not a statement
    if sum(len(r.values) for r in run) < MIN_FILL * len(run) * len(cols):
        return None  # a few figures scattered over many columns: a chart's data labels
    if 2 * len(run) < last + 1 - first:
        return None  # more lines without figures than with: prose around a chart, not a statement
    if _justified(labelled, min(c.lead for c in cols)) or _prose_beside(rows[first : last + 1], labelled):
        return None  # the labels are the lines of a column of prose beside a table of figures
    zone = min(c.lead for c in cols)
    head = _head(rows, first, cols, zone)
    lines = _lines([*head.lead, *rows[first : last + 1]], cols, zone)
    body = [[ln.label, *(ln.cells.get(j, "") for j in range(len(cols)))] for ln in lines]
    body = [r for r in body if any(r)]
    if len(body) < MIN_VALUE_ROWS:
        return None
    header = _header_cells(head, cols, zone)
    words = [w for r in head.rows for w in r.words] + [w for ln in lines for w in ln.words]
    bbox: Box = (min(w[0] for w in words), min(w[1] for w in words), max(w[2] for w in words), max(w[3] for w in words))
    return TableData(bbox=bbox, header=header, rows=body, header_in_table=True, title=head.title, unit=head.unit)


def _justified(rows: Sequence[Row], zone: float) -> bool:
    """Whether most labels end at one x close before the figures (within ``JUSTIFIED_GAP`` line heights),
    as the lines of a column of justified prose beside a table do; a statement's labels are ragged."""
    ends = [label_end(r.label) for r in rows]
    if len(ends) < MIN_VALUE_ROWS:
        return False
    h = median(r.h for r in rows)
    if zone - max(ends) > JUSTIFIED_GAP * h:
        return False
    return sum(1 for e in ends if e >= max(ends) - h) >= JUSTIFIED_SHARE * len(ends)


def _prose_beside(rows: Sequence[Row], labelled: Sequence[Row]) -> bool:
    """Whether a line of words among the table's starts well left of its labels (``PROSE_LEFT`` line
    heights): the table sits in the right column of a page and that line is the left column's prose (a
    group label such as ``Single`` beside the rows it groups has a word or two)."""
    x0 = median(r.label[0][0] for r in labelled)
    h = median(r.h for r in labelled)
    return any(r.x0 < x0 - PROSE_LEFT * h and len(r.label) >= PROSE_WORDS for r in rows)


def _segments(row: Row) -> list[list[Word]]:
    """The row's words cut where a gap wider than ``SEGMENT_GAP`` line heights opens (a header's cells)."""
    segs: list[list[Word]] = []
    for w in row.words:
        if segs and w[0] - segs[-1][-1][2] <= SEGMENT_GAP * row.h:
            segs[-1].append(w)
        else:
            segs.append([w])
    return segs


def _text(ws: Sequence[Word]) -> str:
    return " ".join(w[4] for w in ws)


def _head(rows: Sequence[Row], first: int, cols: Sequence[_Column], zone: float) -> _Head:
    """Header rows (text over the columns) above row ``first``, the label-only rows between them and the
    first row (``Assets``, ``Current assets``: body rows), then the title lines above the header."""
    head = _Head()
    i, top = first - 1, rows[first].y0
    while i >= 0 and len(head.rows) < MAX_HEADER_ROWS:
        r = rows[i]
        if top - r.y1 > HEADER_GAP * r.h or (r.values and not r.years_only):
            break
        segs = _segments(r)
        over = [s for s in segs if s[-1][2] > zone - 0.5 * r.h]
        if not over:
            if head.rows or r.split:
                break  # a label line above the header: the title
            head.lead.insert(0, r)
        elif any(_outside(s, zone - 0.5 * r.h, cols[-1].x1 + 2 * r.h) > HEADER_OUTSIDE for s in over):
            break  # text straddling labels and figures, or wider than the table: a title or prose
        elif head.rows and top - r.y1 > HEADER_STACK * head.rows[0].h and not _header_label(segs, zone, r.h):
            break  # set apart from the header, without a unit as its label: a title line ("Statements of
            # Income    Corning Incorporated", a centred "Consolidated Statements of Cash Flows")
        else:
            head.rows.insert(0, r)
        i, top = i - 1, r.y0
    if not head.rows:  # no header: the label lines above are not known to be the table's
        i, top, head.lead = first - 1, rows[first].y0, []
    _title(rows, i, top, head)
    return head


def _outside(seg: Sequence[Word], x0: float, x1: float) -> float:
    """The share of a segment's width outside ``[x0, x1]`` (the columns' span)."""
    a, b = seg[0][0], seg[-1][2]
    return (max(0.0, x0 - a) + max(0.0, b - x1)) / max(1.0, b - a)


def _header_label(segs: Sequence[Sequence[Word]], zone: float, h: float) -> bool:
    """Whether a header row has text left of the columns and it names a unit ("(In millions)")."""
    left = [_text(s) for s in segs if s[-1][2] <= zone - 0.5 * h]
    return bool(left) and all(_unit_in(t) for t in left)


def _title(rows: Sequence[Row], i: int, top: float, head: _Head) -> None:
    """The title lines ending at row ``i`` (short lines, each within ``TITLE_GAP`` line heights of the
    next, up to the end of a paragraph), and the unit named in them or in the header rows."""
    lines: list[str] = []
    while i >= 0 and len(lines) < MAX_TITLE_LINES:
        r = rows[i]
        raw = _text(r.words)
        text = ", ".join(clean_label(_text(s)) for s in _segments(r))  # "Balance Sheets    Issuer Inc."
        if top - r.y1 > TITLE_GAP * r.h or (r.values and not r.years_only) or len(text.split()) > TITLE_MAX_WORDS:
            break
        if raw[:1].islower() or (raw.endswith(".") and len(raw.split()) > 4):
            break  # the end of a paragraph
        lines.insert(0, text)
        i, top = i - 1, r.y0
    for text in [_text(s) for r in head.rows for s in _segments(r)] + lines[::-1]:
        unit = _unit_in(text)
        if unit:
            head.unit = unit
            break
    parts = [_without(t, head.unit) for t in lines]
    head.title = ", ".join(p for p in parts if p)


def _unit_in(text: str) -> str:
    """The unit a line names: the parenthesis holding ``millions`` (``thousands``, ``billions``), else the
    line itself when it is short and names one ("In millions, except per share data")."""
    for m in _PAREN.finditer(text):
        if _UNIT.search(m.group(1)):
            return " ".join(m.group(1).split())
    if _UNIT.search(text) and len(text.split()) <= 10:
        return " ".join(text.strip("() ").split())
    return ""


def _without(text: str, unit: str) -> str:
    """``text`` without the unit it names (and the parentheses around it)."""
    text = " ".join(text.split())
    if unit and unit in text:
        text = text.replace(f"({unit})", "").replace(unit, "").replace("()", "")
    return text.strip(" ,;:")


def _header_cells(head: _Head, cols: Sequence[_Column], zone: float) -> list[str]:
    """The header: ``title (unit)`` and the header rows' label text, then each column's header texts
    top to bottom. A cell spanning several columns (``Three Months Ended``) heads each of them, and so
    does the one cell of a row centred over all of them (``Year ended December 31,``)."""
    bounds = []
    for j, c in enumerate(cols):
        left = (cols[j - 1].x1 + c.lead) / 2 if j else c.lead - 2 * (c.x1 - c.x0)
        right = (c.x1 + cols[j + 1].lead) / 2 if j + 1 < len(cols) else c.x1 + 2 * (c.x1 - c.x0)
        bounds.append((left, right))
    texts: list[list[str]] = [[] for _ in cols]
    labels: list[str] = []
    for r in head.rows:
        segs = _segments(r)
        over = [s for s in segs if s[-1][2] > zone - 0.5 * r.h]
        for s in segs:
            text = _without(_text(s), head.unit) if head.unit and _unit_in(_text(s)) else _text(s)
            if not text:
                continue
            if s[-1][2] <= zone - 0.5 * r.h:
                labels.append(text.rstrip(",;:"))
                continue
            x0, x1 = s[0][0], s[-1][2]
            centred = len(over) == 1 and abs((x0 + x1) / 2 - (zone + cols[-1].x1) / 2) < (cols[-1].x1 - zone) / 6
            for j, (a, b) in enumerate(bounds):
                if centred or min(x1, b) - max(x0, a) >= 0.25 * min(x1 - x0, b - a):
                    texts[j].append(text)
    first = f"{head.title} ({head.unit})" if head.title and head.unit else head.title or head.unit
    return [", ".join(p for p in (first, *labels) if p), *(" ".join(t) for t in texts)]


def _lines(rows: Sequence[Row], cols: Sequence[_Column], zone: float) -> list[_Line]:
    """One line per statement line: a label line without figures that wraps is joined to the next, and a
    line without figures that starts in lower case to the line with figures above it."""
    out: list[_Line] = []
    for r in rows:
        cells: dict[int, str] = {}
        label = r.label_text
        for v in r.values:
            j = _column_of(v, cols)
            if j is None:
                label = f"{label} {v.text}".strip()
            else:
                cells[j] = f"{cells[j]} {v.text}".strip() if j in cells else v.text
        words = [*r.label, *(w for w in r.words if w not in r.label)]
        line = _Line(label, r.label[0][0] if r.label else r.x0, label_end(r.label), cells, words)
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.cells
            and not line.cells
            and line.label[:1].islower()
            and line.x0 >= prev.x0 - 1.0
            and prev.label[-1:] not in (":", ".")
        ):
            prev.label = f"{prev.label} {line.label}"  # the figures stand on a wrapped label's first line
            prev.words += line.words
        elif prev is not None and not prev.cells and _wraps(prev, line, zone):
            prev.label = f"{prev.label} {line.label}".strip()
            prev.cells, prev.end = line.cells, line.end
            prev.words += line.words
        else:
            out.append(line)
    return out


def _wraps(prev: _Line, line: _Line, zone: float) -> bool:
    """Whether ``line`` continues the label of ``prev`` (a line without figures): ``prev`` does not end
    in a colon, ``line`` is not further left, and ``line`` has no label of its own, or ``prev`` ends in
    a comma, semicolon or dash, or ``line`` starts in lower case, or ``prev`` runs across most of the
    label column (it was wrapped: 85% of it, half when ``line`` starts with a figure or a bracket)."""
    if not prev.label or prev.label.endswith(":") or line.x0 < prev.x0 - 1.0:
        return False
    if not line.label:
        return bool(line.cells)
    if prev.label[-1] in ",;&–—-":
        return True
    reach = (prev.end - prev.x0) / max(1.0, zone - prev.x0)  # how far across the label column it runs
    if line.label[0].islower():
        return True
    return reach >= 0.85 or (reach >= 0.5 and bool(_CONTINUES.match(line.label)))
