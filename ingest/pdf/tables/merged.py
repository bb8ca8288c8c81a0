"""The readers of modes ``repair`` and ``all``: the ruled tables (``tables.ruled``), then the tables read from word
positions (``tables.words``) put in per mode (``merge_tables``).

``repair``: word tables replace the ruled tables they overlap when those read fewer rows right (label and
figures in cells of their own); ``all``: and they are added where no ruled table was found. A scanned page has
no words to read yet, and in mode ``repair`` a page without ruled tables has nothing to repair: neither reads
its words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from folio.ingest.pdf.tables.base import TableData, TablePage, WordTables, register
from folio.ingest.pdf.tables.ruled import RuledTables
from folio.ingest.pdf.tables.wordrows import CURRENCY, NUMBER, is_value
from folio.ingest.pdf.tables.words import find_word_tables
from folio.ingest.pdf.text import Box

WITHIN_MARGIN = 0.25  # of the found tables' width that word tables replacing them may reach beyond it


@dataclass(frozen=True)
class MergedTables:
    """The ruled tables with the word tables put in per ``mode`` (``repair`` or ``all``)."""

    mode: WordTables

    def read(self, page: TablePage) -> list[TableData]:
        found = RuledTables().read(page)
        if page.scanned or (self.mode == "repair" and not found):
            return found
        return merge_tables(found, find_word_tables(page.blocks), self.mode)


def rows_read(table: TableData) -> int:
    """Rows that read right: a label cell (with a letter, not ending in a figure) and a cell of figures
    (with currency signs). What ``merge_tables`` compares."""
    n = 0
    for r in [table.header, *table.rows]:
        cells = [c.strip() for c in r if c.strip()]
        if len(cells) < 2 or not any(ch.isalpha() for ch in cells[0]) or is_value(cells[0].split()[-1]):
            continue
        if any(
            all(NUMBER.fullmatch(t) or t in CURRENCY for t in c.split()) and any(ch.isdigit() for ch in c)
            for c in cells[1:]
        ):
            n += 1
    return n


def _overlap(a: Box, b: Box) -> float:
    """The share of the smaller box that the two boxes have in common."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    small = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return w * h / small if small > 0 else 0.0


def merge_tables(found: Sequence[TableData], words: Sequence[TableData], mode: WordTables) -> list[TableData]:
    """The page's tables: ``find_tables``'s (``found``) with the word tables (``words``) put in per ``mode``.

    Word tables are grouped with the found tables they overlap (``_groups``); in a group the word tables
    replace the found ones when those read fewer rows right (``rows_read``: figures inside label cells,
    labels run together) or as many without the periods in their header (``_reads_better``), one has a
    header over its figures (the periods) and they lie across the found
    tables' width (``_within``, unless those read no row at all: a box around one column of figures);
    else the word tables are dropped. A word table that overlaps none is
    added in mode ``all`` only.
    """
    if mode == "off":
        return list(found)
    out: list[TableData] = []
    replaced: set[int] = set()
    for group, hits in _groups(words, found):
        if not hits:
            out += group if mode == "all" else []
        elif (
            _reads_better(group, [found[i] for i in hits])
            and any(any(w.header[1:]) for w in group)
            and (_within(group, [found[i] for i in hits]) or not any(rows_read(found[i]) for i in hits))
        ):
            out += group
            replaced |= hits
    out += [t for i, t in enumerate(found) if i not in replaced]
    return sorted(out, key=lambda t: (t.bbox[1], t.bbox[0]))


def _reads_better(words: Sequence[TableData], found: Sequence[TableData]) -> bool:
    """Whether the word tables read more rows right than the found tables, or as many (some) and carry the
    periods over their figures where the found tables' headers do not: a ruled statement whose rules start
    below its header ("For the years ended June 30, | 2023 | 2022") reads its first body line as the header,
    and its figures could not be placed in a year."""
    by_words, by_found = sum(rows_read(w) for w in words), sum(rows_read(t) for t in found)
    if by_words != by_found:
        return by_found < by_words
    periods = {c for w in words for c in w.header[1:] if c.strip()}
    return by_words > 0 and bool(periods) and not periods & {c for t in found for c in t.header}


def _within(words: Sequence[TableData], found: Sequence[TableData]) -> bool:
    """Whether the word tables lie across the found tables' width (``WITHIN_MARGIN`` of it to either side):
    one that reaches further took in text beside them (a column of prose, a chart's legend), and the ruling
    the finder followed is the better guide to where the table ends."""
    x0, x1 = min(t.bbox[0] for t in found), max(t.bbox[2] for t in found)
    margin = WITHIN_MARGIN * (x1 - x0)
    return all(x0 - margin <= w.bbox[0] and w.bbox[2] <= x1 + margin for w in words)


def _groups(words: Sequence[TableData], found: Sequence[TableData]) -> list[tuple[list[TableData], set[int]]]:
    """The word tables, each with the found tables (their indices) it overlaps by half the smaller box;
    word tables that overlap one found table are one group (a statement the finder read as one table
    and the word reading as two, above and below a gap)."""
    groups: list[tuple[list[TableData], set[int]]] = []
    for w in words:
        hits = {i for i, t in enumerate(found) if _overlap(t.bbox, w.bbox) >= 0.5}
        joined = [g for g in groups if g[1] & hits]
        rest = [g for g in groups if not g[1] & hits]
        groups = [*rest, ([*(x for g in joined for x in g[0]), w], hits.union(*(g[1] for g in joined)))]
    return groups


register("repair", partial(MergedTables, "repair"))
register("all", partial(MergedTables, "all"))
