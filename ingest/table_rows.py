"""Row units of a table: one extra searchable chunk per body row, read under the table's header.

A table region's text is its Markdown; an embedder sees at most its first 256 word pieces and BM25
scores the whole table as one document, so the rows of a long financial statement are invisible to
dense search and diluted for BM25. Each body row of a table with at least ``MIN_ROWS`` rows becomes
a chunk of its own: the section heading, the header cells and the row's cells (row label first),
empty cells left out. The unit carries the table's region id, kind and page, so a hit on a row is a
hit on the table region and everything after retrieval (assembly, citations) is unchanged. The
table's own chunk stays as before (``folio.ingest.pipeline.ChunkIndexer``).
"""

from __future__ import annotations

from folio.kernel.mdtable import is_rule, split_cells
from folio.kernel.model import Region

# Tables with fewer body rows are short enough to embed whole.
MIN_ROWS = 4
# Rows longer than this (in characters) are cut: a row unit is a label and its values.
MAX_ROW_CHARS = 600


def _cells(line: str) -> list[str]:
    """The non-empty cells of one Markdown table line (escaped pipes restored)."""
    cells = (" ".join(c.replace("\\|", "|").split()) for c in split_cells(line))
    return [c for c in cells if c]


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
    body = [ln for ln in lines[1:] if not is_rule(split_cells(ln))]
    rows = [c for c in (_cells(ln) for ln in body) if c]
    if len(rows) < MIN_ROWS:
        return []
    prefix = [p for p in (region.heading_path[-1] if region.heading_path else "", " | ".join(_cells(lines[0]))) if p]
    return ["\n".join([*prefix, " | ".join(cells)[:MAX_ROW_CHARS]]) for cells in rows]


def row_units(region: Region) -> list[Region]:
    """The table's row units: copies of ``region`` (same id, kind, page) whose text is one row (``row_texts``)."""
    return [region.model_copy(update={"text": text}) for text in row_texts(region)]
