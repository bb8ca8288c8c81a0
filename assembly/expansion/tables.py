"""Tables as Markdown text: a table's parts joined, and a table cut to its header and best rows.

A table region's text for the model is its Markdown (``meta["markdown"]``, else its text); a table
continued over pages is its parts with repeated headers dropped (``table_text``). A table that does not
fit keeps its header and the rows sharing most words with the question, in table order (``fitted_rows``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from folio.assembly.words import content_words
from folio.kernel.model import Region


def table_markdown(t: Region) -> str:
    return t.meta_get("markdown") or t.text


def split_table(md: str) -> tuple[list[str], list[str]]:
    """(header lines, row lines) of a Markdown table; the header keeps its ``|---|`` rule."""
    lines = [ln for ln in md.splitlines() if ln.strip()]
    if len(lines) >= 2 and set(lines[1].replace("|", "").replace(":", "").strip()) <= {"-", " "} \
            and "-" in lines[1]:
        return lines[:2], lines[2:]
    return lines[:1], lines[1:]


ROW_PREFIX_MIN = 12  # tokens of room below which a cut row says nothing
ROW_PREFIX_SPAN = 3  # a best row up to this many times the room is cut to fit; a longer one is a layout cell


_TOTAL = re.compile(
    r"^\W*(?:total|totals|net|subtotal|gesamt|insgesamt|summe|totale?|totaux|合計|合计|总计|小計|小计)\b", re.IGNORECASE
)


def is_total(row: str) -> bool:
    """Whether a row's label opens with a total (``Total assets``, ``Net income``, ``Summe``, ``合計``).

    >>> is_total("| Total current assets | 87,830 |"), is_total("Net sales|9"), is_total("| Cash | 1 |")
    (True, True, False)
    """
    return bool(_TOTAL.match(row.strip().lstrip("|").strip()))


def ranked_rows(rows: Sequence[str], query_words: frozenset[str]) -> list[int]:
    """Row indices, the rows sharing most words with the question first, totals before other rows that share as
    many, then table order: a row is found through its labels and the header words it repeats, and a table cut
    to fit keeps it, and the totals that sum up what was left out.

    >>> ranked_rows(["| a | 1 |", "| total revenue | 9 |", "| b | 2 |"], frozenset({"total", "revenue"}))
    [1, 0, 2]
    >>> ranked_rows(["a|1", "b|2", "Total|3"], frozenset({"x"}))
    [2, 0, 1]
    """
    shared = [len(query_words & content_words(r)) for r in rows]
    return sorted(range(len(rows)), key=lambda i: (-shared[i], not is_total(rows[i]), i))


def fitted_rows(md: str, query_words: frozenset[str], limit: int, count: Callable[[str], int]) -> str | None:
    """Markdown table ``md`` cut to its header and the rows that fit ``limit`` tokens, taken in
    ``ranked_rows`` order and skipping any row too long for what is left (a layout table can hold a
    whole page in one cell), in table order, and a last line saying how many rows were left out; None when
    not even one row fits. When the row sharing most words with the question is too long but at most
    ``ROW_PREFIX_SPAN`` times the room, the table is its header and that row's prefix (a row's label and
    first cells name the answer)."""
    header, rows = split_table(md)
    used = count("\n".join(header))
    keep: list[int] = []
    order = ranked_rows(rows, query_words)
    if order and query_words & content_words(rows[order[0]]):
        n, room = count(rows[order[0]]) + 1, limit - used
        if n > room and ROW_PREFIX_MIN <= room and n <= ROW_PREFIX_SPAN * room:
            cut = row_prefix(rows[order[0]], room - 1, count)
            return None if cut is None else "\n".join([*header, cut])
    note = count(left_out_note(len(rows), len(rows))) + 1
    for i in order:
        n = count(rows[i]) + 1
        if used + n + note <= limit or (used + n <= limit and len(keep) + 1 == len(rows)):
            keep.append(i)
            used += n
    if not keep:
        return None
    out = header + [rows[i] for i in sorted(keep)]
    if len(keep) < len(rows):
        out.append(left_out_note(len(rows) - len(keep), len(rows)))
    return "\n".join(out)


def left_out_note(left: int, rows: int) -> str:
    """The line a cut table ends with: how many of its rows were left out (the model knows the table goes on).

    >>> left_out_note(23, 40)
    '(23 of 40 rows left out)'
    """
    return f"({left} of {rows} rows left out)"


def row_prefix(row: str, limit: int, count: Callable[[str], int]) -> str | None:
    """The longest prefix of ``row`` that, with " …", fits ``limit`` tokens (None if nothing does).

    >>> row_prefix("| mz | full marks or zero |", 6, lambda t: len(t.split()))
    '| mz | full marks …'
    """
    lo, hi = 0, len(row)
    while lo < hi:  # the longest cut whose text still fits
        mid = (lo + hi + 1) // 2
        if count(row[:mid].rstrip() + " …") <= limit:
            lo = mid
        else:
            hi = mid - 1
    cut = row[:lo].rstrip()
    return cut + " …" if cut.strip(" |") else None


def table_text(parts: Sequence[Region]) -> str:
    """Markdown of a (possibly continued) table: continuation parts drop a repeated header."""
    if not parts:
        return ""
    first_header, rows = split_table(table_markdown(parts[0]))
    for p in parts[1:]:
        h, r = split_table(table_markdown(p))
        rows.extend(r if h == first_header else h + r)
    return "\n".join(first_header + rows)
