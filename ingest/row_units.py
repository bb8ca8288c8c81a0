"""Row units of a table: one extra searchable chunk per body row, read under the table's header.

A table region's text is its Markdown; an embedder sees at most its first 256 word pieces and BM25
scores the whole table as one document, so the rows of a long financial statement are invisible to
dense search and diluted for BM25. Each body row of a table with at least ``MIN_ROWS`` rows becomes
a chunk of its own that reads as a sentence about one line item, with what the table is about and the
header cell of each figure: ``Consolidated Balance Sheet (in millions): Total inventories: 2018 4,366;
2017 4,034``. The context is the table's title and unit when the parser found them (a statement read
from word positions, ``ingest.pdf.tables.words``: they are its header's first cell), else the section
heading and the header's first cell goes before the row's label (``Severity P1: Response 30 minutes``).
Empty cells are left out with their header, and so are rows with a label alone (``Current assets``).
The unit carries the table's region id, kind and page, so a hit on a row is a hit on the table region
and everything after retrieval (assembly, citations) is unchanged. The table's own chunk stays as
before (``folio.ingest.pipeline.ChunkIndexer``).
"""

from __future__ import annotations

from folio.kernel.mdtable import is_rule, split_cells
from folio.kernel.model import Region, TablePayload

# Tables with fewer body rows are short enough to embed whole.
MIN_ROWS = 4
# Rows longer than this (in characters) are cut: a row unit is a label and its values.
MAX_ROW_CHARS = 600


def _cells(line: str) -> list[str]:
    """The cells of one Markdown table line, in place (escaped pipes restored, spaces squeezed)."""
    return [" ".join(c.replace("\\|", "|").split()) for c in split_cells(line)]


def _table_lines(markdown: str) -> list[str]:
    """The lines of a table's Markdown, a line that does not open with a pipe joined to the one before."""
    lines: list[str] = []
    for raw in markdown.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("|") or not lines:
            lines.append(line)
        else:
            lines[-1] = f"{lines[-1]} {line}"
    return lines


def row_texts(region: Region) -> list[str]:
    """The texts of a table region's row units (none for other kinds and for tables under ``MIN_ROWS`` rows)."""
    if region.kind != "table":
        return []
    lines = _table_lines(region.text)
    if len(lines) < 2 or not lines[0].startswith("|"):
        return []
    header = _cells(lines[0])
    body = [c for c in (_cells(ln) for ln in lines[1:]) if not is_rule(c) and any(c)]
    if len(body) < MIN_ROWS:
        return []
    payload = region.payload
    titled = isinstance(payload, TablePayload) and bool(payload.title or payload.unit)
    context = header[0] if titled else region.heading_path[-1] if region.heading_path else ""
    out = []
    for cells in body:
        label = cells[0] if titled else " ".join(c for c in (header[0], cells[0]) if c)
        values = [
            " ".join(p for p in (header[j] if j < len(header) else "", c) if p) for j, c in enumerate(cells) if j and c
        ]
        if values:
            text = ": ".join(p for p in (context, label, "; ".join(values)) if p)
            out.append(text[:MAX_ROW_CHARS])
    return out


def row_units(region: Region) -> list[Region]:
    """The table's row units: copies of ``region`` (same id, kind, page) whose text is one row (``row_texts``)."""
    return [region.model_copy(update={"text": text}) for text in row_texts(region)]
