"""A toy table reader, registered from this one module and named by no other file of folio (issue 46): mode
``"toy"`` reads, on each page, a table of the lines that start with a section number and a capital (``1 Scope``),
one row each, boxed by the first of them. Importing the module registers it; ``test_table_readers.py`` selects it
through the ingest options."""

from __future__ import annotations

import re

from folio.ingest.pdf.tables.base import TableData, TablePage, register

NUMBERED = re.compile(r"(\d+)\s+([A-Z].*)")
HEADER = ["No.", "Section"]


class ToyTables:
    """The page's numbered lines as a two-column table (none on a page without them)."""

    def read(self, page: TablePage) -> list[TableData]:
        lines = [ln for b in page.blocks for ln in b.lines if NUMBERED.fullmatch(ln.text.strip())]
        if not lines:
            return []
        rows = [list(NUMBERED.fullmatch(ln.text.strip()).groups()) for ln in lines]  # type: ignore[union-attr]
        return [TableData(bbox=lines[0].bbox, header=list(HEADER), rows=rows, header_in_table=True)]


register("toy", ToyTables)
