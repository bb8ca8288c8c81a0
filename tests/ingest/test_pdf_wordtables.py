"""Tables read from word positions (``ingest.pdf.tables.words``, put in by ``tables.merged``): statements without
ruling, built here with PyMuPDF the way filings set them (labels on the left, figures right-aligned under period
columns, ``$`` signs apart from their figures, a unit line, wrapped labels), and a real sample PDF."""

from __future__ import annotations

from typing import get_args

import pymupdf
import pytest

from folio.assembly.expansion.pagetext import compact_page
from folio.ingest.pdf.parse import parse_pdf
from folio.ingest.pdf.tables.base import WORD_TABLE_MODES, TableData, WordTables, table_reader
from folio.ingest.pdf.tables.merged import merge_tables, rows_read
from folio.ingest.row_units import row_texts
from folio.kernel.model import Region, TablePayload
from folio.settings import IngestSettings

FONT, SIZE = "helv", 9.0
LABEL_X, COLS = 72.0, (430.0, 510.0)  # the labels' left edge; the right edges of the two period columns
TITLE = ["Example Industries Inc. and Subsidiaries", "Consolidated Balance Sheets"]
UNIT = "(In millions, except per share amounts)"
# (indent, label, figures): a label line has no figures, "-" is a dash (an empty cell), "$ " puts a sign at the
# column's left.
LINES: list[tuple[float, str, tuple[str, ...]]] = [
    (0, "Current assets:", ()),
    (8, "Cash and cash equivalents", ("$ 2,853", "$ 3,053")),
    (8, "Accounts receivable, net of allowances of $95 and", ()),
    (16, "$103", ("5,020", "4,911")),
    (8, "Inventories", ()),
    (16, "Finished goods", ("2,120", "1,915")),
    (16, "Work in process", ("1,292", "-")),
    (8, "Total inventories", ("4,366", "4,034")),
    (8, "Less: Accumulated depreciation", ("(16,135)", "(16,048)")),
    (8, "Proceeds from sale of businesses and property, plant and", ()),
    (16, "equipment", ("846", "1,065")),
    (0, "Total assets", ("$ 36,500", "$ 37,987")),
]
ROWS = [
    ["Current assets:", "", ""],
    ["Cash and cash equivalents", "$2,853", "$3,053"],
    ["Accounts receivable, net of allowances of $95 and $103", "5,020", "4,911"],
    ["Inventories", "", ""],
    ["Finished goods", "2,120", "1,915"],
    ["Work in process", "1,292", ""],
    ["Total inventories", "4,366", "4,034"],
    ["Less: Accumulated depreciation", "(16,135)", "(16,048)"],
    ["Proceeds from sale of businesses and property, plant and equipment", "846", "1,065"],
    ["Total assets", "$36,500", "$37,987"],
]


def _right(page: pymupdf.Page, x1: float, y: float, text: str, size: float = SIZE) -> None:
    page.insert_text(
        (x1 - pymupdf.get_text_length(text, fontname=FONT, fontsize=size), y), text, fontsize=size, fontname=FONT
    )


def _figure(page: pymupdf.Page, x1: float, y: float, text: str) -> None:
    """A figure right-aligned at ``x1``, a closing parenthesis hanging past it; a ``$`` at the column's left."""
    if text.startswith("$ "):
        page.insert_text((x1 - 60, y), "$", fontsize=SIZE, fontname=FONT)
        text = text[2:]
    _right(page, x1 + (3 if text.endswith(")") else 0), y, text)


def statement_pdf(*, bands: bool = False) -> bytes:
    """One page: an issuer line and a statement title, a header of periods under a spanning cell, a unit
    line, and an unruled balance sheet (``bands``: shaded cells behind every other row, as some filings set
    them, which ``find_tables`` reads as a table whose unshaded rows keep their figures in the label cell)."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for k, line in enumerate(TITLE):
        page.insert_text((LABEL_X, 60 + 12 * k), line, fontsize=10, fontname="hebo")
    _right(page, (COLS[0] + COLS[1]) / 2 + 30, 100, "Year ended December 31,")
    page.insert_text((LABEL_X, 112), UNIT, fontsize=SIZE, fontname=FONT)
    for x1, year in zip(COLS, ("2018", "2017"), strict=True):
        _right(page, x1, 112, year)
    y = 130.0
    for i, (indent, label, figures) in enumerate(LINES):
        if bands and i % 2 == 0:  # a band of cells: label, sign and figure of each period
            edges = [LABEL_X - 4, COLS[0] - 62, COLS[0] - 54, COLS[0] + 4, COLS[1] - 62, COLS[1] - 54, COLS[1] + 4]
            for x0, x1 in zip(edges, edges[1:], strict=False):
                page.draw_rect(pymupdf.Rect(x0, y - 9, x1, y + 3), color=None, fill=(0.8, 0.93, 1.0))
        page.insert_text((LABEL_X + indent, y), label, fontsize=SIZE, fontname=FONT)
        for x1, fig in zip(COLS, figures, strict=False):
            _figure(page, x1, y, fig)
        y += 12
    page.insert_text((LABEL_X, y + 24), "The accompanying notes are an integral part of these statements.", fontsize=8)
    return bytes(doc.tobytes())


def _tables(data: bytes, mode: WordTables) -> list[Region]:
    regions = parse_pdf(
        data, doc_id="sheet", filename="sheet.pdf", assets_dir=None, ocr=False, word_tables=mode
    ).regions
    return [r for r in regions if r.kind == "table"]


def _body(table: Region) -> list[list[str]]:
    lines = table.text.splitlines()[2:]
    return [[c.strip() for c in ln.strip()[1:-1].split(" | ")] for ln in lines]


def test_an_unruled_statement_comes_out_one_row_per_line() -> None:
    assert _tables(statement_pdf(), "off") == []  # find_tables needs ruling: no table at all before
    (table,) = _tables(statement_pdf(), "all")
    assert _body(table) == ROWS
    payload = table.payload
    assert isinstance(payload, TablePayload)
    assert payload.title == ", ".join(TITLE)
    assert payload.unit == "In millions, except per share amounts"
    assert payload.header == (
        f"{', '.join(TITLE)} ({payload.unit})",
        "Year ended December 31, 2018",
        "Year ended December 31, 2017",
    )


def test_repair_replaces_a_ruled_reading_with_figures_inside_labels() -> None:
    data = statement_pdf(bands=True)
    (before,) = _tables(data, "off")
    assert ["Total inventories 4,366 4,034"] == [c for c in _body(before)[6] if c]  # figures in the label cell
    (after,) = _tables(data, "repair")
    assert _body(after) == ROWS


def test_row_units_and_compact_text_carry_the_context() -> None:
    (table,) = _tables(statement_pdf(), "all")
    units = row_texts(table)
    context = f"{', '.join(TITLE)} (In millions, except per share amounts)"
    assert (
        f"{context}: Total inventories: Year ended December 31, 2018 4,366; Year ended December 31, 2017 4,034" in units
    )
    assert f"{context}: Work in process: Year ended December 31, 2018 1,292" in units  # the dash left out
    assert not any("Current assets" in u for u in units)  # a label alone is no unit
    regions = parse_pdf(
        statement_pdf(), doc_id="sheet", filename="sheet.pdf", assets_dir=None, ocr=False, word_tables="all"
    ).regions
    page = next(r for r in regions if r.kind == "page")
    text = compact_page(page, [r for r in regions if r.kind == "paragraph"], [table]).text
    assert "Total inventories|4,366|4,034" in text.splitlines()
    assert "Work in process|1,292" in text.splitlines()


def _found(rows: list[list[str]]) -> TableData:
    return TableData(bbox=(70, 100, 520, 300), header=["", "2018", "2017"], rows=rows, header_in_table=True)


def test_merge_keeps_a_ruled_table_that_reads_right() -> None:
    words = _found([["Cash", "2,853", "3,053"], ["Goodwill", "10,051", "10,513"]])
    clean = _found([["Cash", "2,853", "3,053"], ["Goodwill", "10,051", "10,513"]])
    garbled = _found([["Cash 2,853 3,053", "", ""], ["Goodwill", "10,051", "10,513"]])
    assert rows_read(words) == 2 and rows_read(garbled) == 1
    assert merge_tables([clean], [words], "repair") == [clean]
    assert merge_tables([garbled], [words], "repair") == [words]
    assert merge_tables([garbled], [words], "off") == [garbled]
    assert merge_tables([], [words], "repair") == [] and merge_tables([], [words], "all") == [words]


def test_the_setting_names_the_modes() -> None:
    assert get_args(IngestSettings.model_fields["word_tables"].annotation) == WORD_TABLE_MODES == get_args(WordTables)
    assert IngestSettings.from_env({"FOLIO_WORD_TABLES": "repair"}).word_tables == "repair"
    assert IngestSettings.from_env({}).word_tables == "all"  # unruled statements are read as rows by default
    assert all(table_reader(mode) for mode in WORD_TABLE_MODES)  # each mode the settings offer has its reader


def test_a_mode_without_a_reader_is_refused() -> None:
    with pytest.raises(ValueError, match="no table reader for mode 'rulers': one of ") as err:
        table_reader("rulers")
    assert set(WORD_TABLE_MODES) <= set(str(err.value).split(": one of ")[1].split(", "))


@pytest.fixture(scope="module")
def r_data(samples: object) -> dict[str, list[Region]]:
    from pathlib import Path

    data = (Path(str(samples)) / "R-data-import-export.pdf").read_bytes()
    return {
        mode: parse_pdf(data, doc_id="r", filename="r.pdf", assets_dir=None, ocr=False, word_tables=mode).regions
        for mode in ("off", "all")
    }


def test_a_real_printout_reads_as_rows_and_ruled_tables_stay(r_data: dict[str, list[Region]]) -> None:
    before = [r for r in r_data["off"] if r.kind == "table"]
    after = [r for r in r_data["all"] if r.kind == "table"]
    assert not [t for t in before if t.first_page == 25]
    (arrests,) = [t for t in after if t.first_page == 25 and "Alabama" in t.text]
    assert "| Alabama | 13.2 | 236 | 58 | 21.2 |" in arrests.text.splitlines()
    assert "| Arkansas | 8.8 | 190 | 50 | 19.5 |" in arrests.text.splitlines()
    assert [t.text for t in after if t.first_page != 25 and t.first_page != 18 and t.first_page != 27] == [
        t.text for t in before
    ]  # elsewhere the same tables
