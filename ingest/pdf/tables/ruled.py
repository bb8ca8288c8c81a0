"""The reader of ruled tables (mode ``off``, and the first reading of ``repair`` and ``all``): ``page.find_tables()``,
gated and cleaned.

``find_tables`` costs ~250 ms on a text-heavy page, so it only runs on pages whose vector
drawings contain ruling lines in both directions, and only within the bounding box of those
rules. Results are rejected when they look like a table of contents (dot leaders, a column of
page numbers) or framed prose (one cell of over 20 words holding most of the text: beamer's slide
thumbnails). When the ``lines`` strategy returns few rows whose cells hold several lines each
(gnuplot p135, the Federal Register cost table), a text-row strategy is tried within the same
box (columns from the rules, rows from text lines) and kept if it yields more rows; failing
that, merged rows are cut at the text lines of their last cell.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from folio.ingest.pdf.tables.base import Box5, TableData, TablePage, register
from folio.ingest.pdf.tables.chars import install as install_fast_chars
from folio.ingest.pdf.text import Box, clamp_box
from folio.kernel.geometry import BBox

if TYPE_CHECKING:
    import pymupdf

logger = logging.getLogger(__name__)

_DOTS = re.compile(r"(\.\s?){4,}|…{2,}")
_PROSE_WORDS = 20
_PAGENUM = re.compile(r"^\s*[\divxlc]{1,4}\s*$", re.I)


def _cell(v: Any) -> str:
    return " ".join(str(v).split()) if v is not None else ""


def ruling_segments(drawings: list[dict[str, Any]]) -> tuple[list[Box], list[Box]]:
    """Horizontal and vertical rules (lines, thin rectangles, and rectangle edges)."""
    hs: list[Box] = []
    vs: list[Box] = []
    for d in drawings:
        for it in d.get("items", ()):
            kind = it[0]
            if kind == "l":
                (px, py), (qx, qy) = it[1][:2], it[2][:2]
                if abs(py - qy) < 1.0 and abs(px - qx) > 5:
                    hs.append((min(px, qx), py, max(px, qx), py))
                elif abs(px - qx) < 1.0 and abs(py - qy) > 5:
                    vs.append((px, min(py, qy), px, max(py, qy)))
            elif kind == "re":
                r = BBox.from_seq(it[1])
                if r.height < 3 and r.width > 5:
                    hs.append((r.x0, r.y0, r.x1, r.y1))
                elif r.width < 3 and r.height > 5:
                    vs.append((r.x0, r.y0, r.x1, r.y1))
                elif r.width > 5 and r.height > 5:
                    hs += [(r.x0, r.y0, r.x1, r.y0), (r.x0, r.y1, r.x1, r.y1)]
                    vs += [(r.x0, r.y0, r.x0, r.y1), (r.x1, r.y0, r.x1, r.y1)]
    return hs, vs


def _column_positions(drawings: list[dict[str, Any]], extra: list[float], tol: float = 3.0) -> int:
    """How many distinct x positions (chained within ``tol``, as ``find_tables`` snaps edges) any
    vertical edge of ``find_tables`` could sit at: every point of its line, rectangle and quad
    items, every path's bounding box (it joins neighbouring paths into boxes) and ``extra``.

    A superset of its vertical edges' positions, so fewer than 3 means no table of two columns can
    come out, and every such table is rejected below: the call can be skipped without changing
    the result. (why3's framed code listings: 88 of 124 calls, 31 of 43 s.)
    """
    xs = list(extra)
    for d in drawings:
        r = d.get("rect")
        if r is not None:
            xs += (r[0], r[2])
        for it in d.get("items", ()):
            kind = it[0]
            if kind == "l":
                xs += (it[1][0], it[2][0])
            elif kind == "re":
                xs += (it[1][0], it[1][2])
            elif kind == "qu":
                xs += [pt[0] for pt in it[1]]
    xs.sort()
    n = 0
    prev: float | None = None
    for x in xs:
        if prev is None or x - prev > tol:
            n += 1
        prev = x
    return n


def _looks_like_toc(rows: list[list[str]]) -> bool:
    if not rows:
        return False
    dotted = sum(1 for r in rows if any(_DOTS.search(c) for c in r))
    if dotted * 2 >= len(rows) and len(rows) >= 3 and max(len(r) for r in rows) <= 3:
        return True
    last = [r[-1] for r in rows if r and r[-1]]
    return (
        len(last) >= 4 and sum(1 for c in last if _PAGENUM.match(c)) >= 0.8 * len(last) and len(rows[0]) <= 3
    )


def _merged_rows(rows: list[list[Any]]) -> bool:
    """Few rows, but cells holding several lines each: the lines strategy missed row rules."""
    if len(rows) > 4:
        return False
    multi = sum(1 for r in rows for c in r if c and str(c).count("\n") >= 2)
    return multi >= 2


def _in(wd: Box5, x0: float, y0: float, x1: float, y1: float) -> bool:
    return x0 <= (wd[0] + wd[2]) / 2 <= x1 and y0 <= (wd[1] + wd[3]) / 2 <= y1


def _bands(ws: list[Box5]) -> list[float]:
    """Top y of each text line among ``ws``."""
    tops: list[float] = []
    for wd in sorted(ws, key=lambda w: w[1]):
        if not tops or wd[1] - tops[-1] > 0.6 * (wd[3] - wd[1]):
            tops.append(wd[1])
    return tops


def _cells_from_words(tb: Any, words: list[Box5], split: bool) -> list[list[str]]:
    """Cell texts rebuilt from word boxes (``extract()`` drops the spaces between words).

    With ``split``, a row whose last cell holds several text lines is cut into one row per line
    of that cell (rows separated by dot leaders rather than rules, as in the Federal Register).
    """
    out: list[list[str]] = []
    words = [wd for wd in words if _in(wd, *tb.bbox)]  # every cell lies in the table's box
    for i, row in enumerate(tb.rows):
        cells = list(row.cells)
        ys = [row.bbox[1]]
        last = next((c for c in reversed(cells) if c is not None), None)
        if split and i > 0 and last is not None:
            tops = _bands([wd for wd in words if _in(wd, *last)])
            if len(tops) >= 2:
                ys = [row.bbox[1]] + [t - 1 for t in tops[1:]]
        ys.append(row.bbox[3])
        for a, b in zip(ys, ys[1:], strict=False):
            band = [wd for wd in words if a <= (wd[1] + wd[3]) / 2 <= b]  # same test as _in, y only
            sub: list[str] = []
            for c in cells:
                if c is None:
                    sub.append("")
                    continue
                x0, _, x1, _ = c
                sub.append(" ".join(wd[4] for wd in band if _in(wd, x0, a, x1, b)))
            out.append(sub)
    return out


def find_page_tables(
    page: pymupdf.Page, drawings: list[dict[str, Any]], words: list[Box5], *, baseline: bool = False
) -> list[TableData]:
    """Tables on a page; ``words`` are ``(x0, y0, x1, y1, text)`` in reading order. ``baseline``: the
    path before issue 9, for ``benchmarks/bench_ingest.py`` (its ``--tables-baseline``)."""
    hs, vs = ruling_segments(drawings)
    if len(hs) < 2 or len(vs) < 2:
        return []
    w, h = page.rect.width, page.rect.height
    x0 = min(b[0] for b in hs + vs)
    y0 = min(b[1] for b in hs + vs)
    x1 = max(b[2] for b in hs + vs)
    y1 = max(b[3] for b in hs + vs)
    clip = clamp_box((x0 - 2, y0 - 2, x1 + 2, y1 + 2), w, h)
    # Open-sided tables (horizontal rules only at the outer edges) get their outer borders from
    # the rules' extent, which PyMuPDF's layout model would otherwise infer at ~2 s per page.
    vy0, vy1 = min(b[1] for b in vs), max(b[3] for b in vs)
    hx0, hx1 = min(b[0] for b in hs), max(b[2] for b in hs)
    edges = [((hx0, vy0), (hx0, vy1)), ((hx1, vy0), (hx1, vy1))]
    if not baseline:
        if _column_positions(drawings, [hx0, hx1]) < 3:
            return []  # at most one column: every table found would be rejected (len(row) < 2)
        install_fast_chars()
    found = page.find_tables(
        clip=clip, use_layout=False, add_lines=edges
    )  # the ONNX layout gate costs ~2 s/page
    out: list[TableData] = []
    for found_tb in found.tables:
        tb, merged = _rows_from_text(page, found_tb, edges, baseline)
        table = _cleaned(page, tb, _cells_from_words(tb, words, split=merged))
        if table is not None:
            out.append(table)
    return out


def _rows_from_text(page: pymupdf.Page, tb: Any, edges: list[Any], baseline: bool) -> tuple[Any, bool]:
    """``tb``, or the table read again with rows from the text lines when ``tb`` has few rows whose cells
    hold several lines each and that reading has more rows; and whether its rows are still merged."""
    # extract() walks every character per cell; its text only matters to _merged_rows,
    # which is False for more than 4 rows whatever the cells hold.
    merged = (baseline or tb.row_count <= 4) and _merged_rows(tb.extract())
    if not merged:
        return tb, False
    # Columns from the rules, rows from the text lines. (The pure text strategy splits
    # columns inside words on these pages, so it is not tried.)
    alt = page.find_tables(
        clip=clamp_box(tb.bbox, page.rect.width, page.rect.height),
        vertical_strategy="lines",
        horizontal_strategy="text",
        use_layout=False,
        add_lines=edges,
    )
    best = max(alt.tables, key=lambda t: t.row_count, default=None)
    if best is not None and best.row_count > tb.row_count and best.col_count == tb.col_count:
        return best, best.row_count <= 4 and _merged_rows(best.extract())
    return tb, True


def _cleaned(page: pymupdf.Page, tb: Any, cells: list[list[str]]) -> TableData | None:
    """The table of ``tb``'s rows ``cells``, None when it is not one (too small, a table of contents, one
    column of text, framed prose)."""
    rows = [r for r in cells if any(r)]
    if len(rows) < 2 or max(len(r) for r in rows) < 2:
        return None
    if _looks_like_toc(rows):
        logger.debug("page %d: rejected table-of-contents-like table", page.number + 1)
        return None
    if len(rows) >= 3 and sum(1 for c in rows[0] if c) == 1 and all(rows[1]):
        rows = rows[1:]  # a title row spanning the table ("canvas.acroform.checkbox parameters")
    names = [_cell(n) for n in (tb.header.names or [])]
    external = bool(getattr(tb.header, "external", False))
    if external and any(names) and len(names) == len(rows[0]):
        header, body, inside = names, rows, False
    else:
        header, body, inside = rows[0], rows[1:], True
    ncols = max(len(r) for r in rows)
    if sum(1 for j in range(ncols) if any(j < len(r) and r[j] for r in rows)) < 2:
        return None  # one column of text in a frame (a slide's sidebar), not a table
    counts = [len(c.split()) for c in header + [c for r in body for c in r]]
    if max(counts, default=0) > _PROSE_WORDS and max(counts) * 2 > sum(counts):
        # One cell holds most of the text, a paragraph of it: framed prose (slide thumbnails).
        logger.debug("page %d: rejected table that is one %d-word cell", page.number + 1, max(counts))
        return None
    w, h = page.rect.width, page.rect.height
    return TableData(bbox=clamp_box(tb.bbox, w, h), header=header, rows=body, header_in_table=inside)


class RuledTables:
    """Mode ``off``: ``find_tables``'s tables alone, on a page with vector drawings (parser v6)."""

    def read(self, page: TablePage) -> list[TableData]:
        if not page.drawings:
            return []
        return find_page_tables(page.page, page.drawings, page.words)


register("off", RuledTables)
