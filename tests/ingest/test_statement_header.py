"""A statement's header (unit and periods) repeats at the same place on consecutive statement pages, like a running
head, and is not furniture (``ingest.pdf.statement_header``): built here with PyMuPDF as filings set it (issuer and
statement name, "(in millions)", the period dates, unruled rows under them), between prose pages under a dated
running head, with a running foot and page numbers that stay furniture. And the real filing of the report, where
the shared evaluation files are."""

from __future__ import annotations

import os
from pathlib import Path

import pymupdf
import pytest

from folio.ingest.pdf.parse import parse_pdf
from folio.ingest.pdf.tables.base import TableData
from folio.ingest.pdf.tables.merged import merge_tables, rows_read
from folio.kernel.model import Region

FONT, SIZE = "helv", 9.0
LABEL_X, COLS = 60.0, (420.0, 490.0, 560.0)  # the labels' left edge; the right edges of the period columns
UNIT = "(in millions)"
PERIODS = ("December 28, 2019", "December 29, 2018", "December 30, 2017")
STATEMENTS = [
    "Consolidated Statements of Income",
    "Consolidated Balance Sheets",
    "Consolidated Statements of Cash Flows",
    "Consolidated Statements of Cash Flows (continued)",
]
FOOT = "Example Industries Inc. | 2019 Form 10-K"
DATED_HEAD = "December 31, 2019"  # a running head on the prose pages that reads like a period: still furniture
PROSE = (
    "Our results for the year reflect lower volumes in the United States and higher input costs, partly "
    "offset by pricing actions and productivity savings across the network of factories."
)


def _right(page: pymupdf.Page, x1: float, y: float, text: str) -> None:
    page.insert_text((x1 - pymupdf.get_text_length(text, fontname=FONT, fontsize=SIZE), y), text, fontsize=SIZE)


def _foot(page: pymupdf.Page, n: int) -> None:
    page.insert_text((LABEL_X, 760), FOOT, fontsize=8)
    page.insert_text((290, 776), str(n), fontsize=8)


def _statement_page(doc: pymupdf.Document, title: str, n: int) -> None:
    page = doc.new_page(width=612, height=792)
    page.insert_text((200, 34), f"Example Industries Inc.\n{title}", fontsize=SIZE, fontname="hebo")
    page.insert_text((270, 62), UNIT, fontsize=SIZE)
    for x1, period in zip(COLS, PERIODS, strict=True):
        _right(page, x1, 80, period)
    for k in range(14):
        y = 104 + 14 * k
        page.insert_text((LABEL_X, y), f"Line item {k + 1} of {title.split()[-1].lower()}", fontsize=SIZE)
        for j, x1 in enumerate(COLS):
            _right(page, x1, y, f"{(k + 1) * 113 + j * 7:,}")
    page.insert_text((LABEL_X, 330), "See accompanying notes to the consolidated financial statements.", fontsize=SIZE)
    _foot(page, n)


def _prose_page(doc: pymupdf.Document, n: int) -> None:
    page = doc.new_page(width=612, height=792)
    page.insert_text((LABEL_X, 40), DATED_HEAD, fontsize=8)
    page.insert_textbox(pymupdf.Rect(LABEL_X, 120, 552, 400), " ".join([PROSE] * 4), fontsize=SIZE)
    _foot(page, n)


def filing_pdf() -> bytes:
    """Three prose pages, four statement pages (the cash flow statement over two), three prose pages."""
    doc = pymupdf.open()
    n = 0
    for kind in ["prose"] * 3 + STATEMENTS + ["prose"] * 3:
        n += 1
        if kind == "prose":
            _prose_page(doc, n)
        else:
            _statement_page(doc, kind, n)
    return bytes(doc.tobytes())


def _pages(regions: list[Region]) -> list[Region]:
    return sorted((r for r in regions if r.kind == "page"), key=lambda r: r.first_page)


def test_a_repeated_statement_header_is_kept_and_running_heads_are_not() -> None:
    parsed = parse_pdf(filing_pdf(), doc_id="ex", filename="ex.pdf", assets_dir=None, ocr=False)
    pages = _pages(parsed.regions)
    statement_pages = pages[3:7]
    for page in statement_pages:  # the unit and the periods on every statement page, the first one and the rest
        assert UNIT in page.text, page.first_page
        assert all(p in page.text for p in PERIODS), page.first_page
    tables = [r for r in parsed.regions if r.kind == "table"]
    assert sorted({t.first_page for t in tables}) == [4, 5, 6, 7]
    for t in tables:  # the table's header row: title (unit), then the periods
        head = t.text.splitlines()[0]
        assert "(in millions)" in head and all(p in head for p in PERIODS), head
    # the running foot and the dated running head are evidence once, then furniture; page numbers always
    assert sum(FOOT in p.text for p in pages) == 1
    assert sum(DATED_HEAD in p.text for p in pages) == 1
    assert not any(p.text.rstrip().endswith(f"\n{p.first_page}") for p in pages)
    paragraphs = "\n".join(r.text for r in parsed.regions if r.kind == "paragraph")
    assert paragraphs.count(FOOT) == 1


def test_a_word_table_with_the_periods_replaces_a_ruled_reading_as_good_without_them() -> None:
    """Rules that start below the header: the ruled reading takes its first body line for the header and reads as
    many rows right as the word table, which carries title, unit and periods. Where the ruled header holds the
    periods, the ruled reading stays."""
    body = [["Net income", "$1,058", "$815"], ["Depreciation", "586", "625"], ["Inventories", "248", "(626)"]]
    box = (20.0, 90.0, 590.0, 300.0)
    words = TableData(box, ["Amcor plc, Cash Flows ($ in millions), Years ended June 30", "2023", "2022"], body, True)
    headless = TableData(box, body[0], body[1:], True)
    headed = TableData(box, ["", "2023", "2022"], body, True)
    assert rows_read(headless) == rows_read(words) == rows_read(headed)
    assert merge_tables([headless], [words], "all") == [words]
    assert merge_tables([headed], [words], "all") == [headed]
    assert merge_tables([headless], [words], "off") == [headless]


SHARED = Path(os.environ.get("FOLIO_SHARED") or Path(__file__).resolve().parents[3] / "shared")
KRAFT = SHARED / "eval" / "finance" / "pdfs" / "KRAFTHEINZ_2019_10K.pdf"


@pytest.mark.skipif(not KRAFT.exists(), reason="the shared evaluation filings (../shared or FOLIO_SHARED) are absent")
def test_the_kraft_heinz_cash_flow_statement_keeps_its_unit_and_periods() -> None:
    """The report's page 54 (the cash flow statement), parsed with the pages before it (44 to 55): "(in millions)"
    repeats atop page 44's table and the statements of pages 51, 53 and 54."""
    src = pymupdf.open(KRAFT)
    sub = pymupdf.open()
    sub.insert_pdf(src, from_page=43, to_page=54)
    parsed = parse_pdf(bytes(sub.tobytes()), doc_id="khc", filename="khc.pdf", assets_dir=None, ocr=False)
    page = _pages(parsed.regions)[10]  # the filing's page 54
    assert "Net cash provided by/(used for) operating activities" in page.text
    assert "(in millions)" in page.text
    table = next(r for r in parsed.regions if r.kind == "table" and r.first_page == 11)
    head = table.text.splitlines()[0]
    assert "millions" in head and "December 28, 2019" in head, head
