"""The table readers' seam (``ingest.pdf.tables``): a reader registered from one module of its own is chosen by
its mode in the ingest options, and its tables are what the parse makes table regions of; folio's own modes each
have their reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.ingest.options import IngestOptions
from folio.ingest.parse_supervisor import IngestLimits, parse_with_limits
from folio.ingest.pdf.tables.base import WORD_TABLE_MODES, TableReader, table_reader
from folio.kernel.model import Region, TablePayload
from tests.ingest import toy_table_reader


def _parse(path: Path, options: IngestOptions) -> list[Region]:
    """The pipeline's parse stage (``ingest.pipeline._parse``) on ``path``, in this process."""
    parsed = parse_with_limits(
        path.read_bytes(),
        limits=options.limits,
        doc_id=path.stem,
        filename=path.name,
        assets_dir=None,
        ocr=options.ocr,
        render_scale=options.render_scale,
        word_tables=options.word_tables,
    )
    return parsed.regions


def test_a_reader_from_its_own_module_is_chosen_by_its_mode(samples: Path) -> None:
    options = IngestOptions(ocr=False, limits=IngestLimits(isolate=False), word_tables="toy")
    regions = _parse(samples / "support-policy-v1.pdf", options)
    (table,) = [r for r in regions if r.kind == "table"]
    assert isinstance(table.payload, TablePayload)
    assert table.payload.header == tuple(toy_table_reader.HEADER)
    assert table.text.splitlines()[2:] == [
        "| 1 | Scope |",
        "| 2 | Priority-one incidents |",
        "| 3 | Escalation |",
    ]
    assert isinstance(table_reader("toy"), toy_table_reader.ToyTables)


def test_the_ruled_reader_reads_the_same_page_otherwise(samples: Path) -> None:
    options = IngestOptions(ocr=False, limits=IngestLimits(isolate=False), word_tables="off")
    (table,) = [r for r in _parse(samples / "support-policy-v1.pdf", options) if r.kind == "table"]
    assert isinstance(table.payload, TablePayload) and table.payload.header != tuple(toy_table_reader.HEADER)


@pytest.mark.parametrize("mode", WORD_TABLE_MODES)
def test_every_mode_the_settings_offer_has_a_reader(mode: str) -> None:
    reader: TableReader = table_reader(mode)
    assert callable(reader.read)
