"""Compact page text (``assembly.expansion.pagetext``): a real PDF with a ruled table, parsed by folio's parser, is sent
with its table as rows (cells separated by "|", no blank lines inside cells) and its wrapped paragraph on one
line, in fewer tokens than the stored page text, and hits still find their place in it."""

from __future__ import annotations

import pymupdf

from folio.assembly import assemble
from folio.assembly.budget import get_counter
from folio.assembly.expansion.pagetext import compact_page, figure_rows, table_rows
from folio.assembly.options import AssemblyOptions
from folio.ingest.pdf.parse import parse_pdf
from folio.kernel.index import RegionIndex
from folio.kernel.model import Region
from tests.assembly.builders import hit
from tests.assembly.recount import recount

PROSE = (
    "The pump starts when the float switch closes and the controller has primed the line. Operators should "
    "check the housing for leaks every week and record the pressure readings in the log. A reading above the "
    "limit in the table below stops the pump until the cause is found and the valve has been replaced."
)
ROWS = [
    ["Model", "Flow rate", "Pressure"],
    ["P-100", "42 l/min", "8 bar"],
    ["P-200", "Not using the standard measuring posture", "6 bar"],
    ["P-300", "55 l/min", "9 bar"],
]


def _table_pdf() -> bytes:
    """One page: a paragraph wrapped over five lines, then a ruled table whose long cell wraps."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(72, 72, 400, 190), PROSE, fontsize=11)
    x, top, h = [72, 150, 260, 340], 220, 44
    for i, row in enumerate(ROWS):
        for j, cell in enumerate(row):
            r = pymupdf.Rect(x[j], top + i * h, x[j + 1], top + (i + 1) * h)
            page.draw_rect(r, color=(0, 0, 0), width=0.8)
            page.insert_textbox(r + (4, 4, -4, -4), cell, fontsize=10)
    return bytes(doc.tobytes())


def _parsed() -> list[Region]:
    return parse_pdf(_table_pdf(), doc_id="pumps", filename="pumps.pdf", assets_dir=None).regions


def test_a_table_is_rows_and_a_paragraph_one_line() -> None:
    regs = _parsed()
    page = next(r for r in regs if r.kind == "page")
    tables = [r for r in regs if r.kind == "table"]
    assert tables and "\n\n" in page.text  # the stored text: one cell per block
    cp = compact_page(page, [r for r in regs if r.kind == "paragraph"], tables)
    lines = cp.text.split("\n")
    assert "" not in lines  # no blank lines
    assert "P-200|Not using the standard measuring posture|6 bar" in lines
    assert "Model|Flow rate|Pressure" in lines and "P-100|42 l/min|8 bar" in lines
    assert PROSE in lines  # the hard-wrapped paragraph on one line
    count = get_counter("cl100k_base").count
    assert count(cp.text) < count(page.text.strip())


def test_hits_map_into_the_compact_text() -> None:
    regs = _parsed()
    page = next(r for r in regs if r.kind == "page")
    cp = compact_page(page, [r for r in regs if r.kind == "paragraph"], [r for r in regs if r.kind == "table"])
    sentences = [r for r in regs if r.kind == "sentence"]
    assert len(sentences) >= 2
    for s in sentences:
        loc = s.locators[0]
        assert loc.char_start is not None and loc.char_end is not None
        a = cp.to_compact(loc.char_start)
        assert cp.text[a : a + len(s.text)] == s.text
        assert cp.to_stored(a) == loc.char_start  # and back


def test_the_page_item_is_sent_compact_and_cites_the_page() -> None:
    regs = _parsed()
    idx = RegionIndex(regs)
    table = next(r for r in regs if r.kind == "table")
    page = next(r for r in regs if r.kind == "page")
    opts = AssemblyOptions(budget=2000)
    pkg = assemble("pressure of the P-200 pump", [hit(table, 0.9, 1)], idx, opts)
    stored = assemble(
        "pressure of the P-200 pump", [hit(table, 0.9, 1)], idx, opts.model_copy(update={"page_render": "stored"})
    )
    (item,), (old,) = pkg.items, stored.items
    assert item.expansion == old.expansion == "page_text" and item.region_id == old.region_id == page.region_id
    assert item.locators == old.locators
    assert "P-200|Not using the standard measuring posture|6 bar" in item.text
    assert "\n\n" not in item.text and "\n\n" in old.text
    assert item.tokens < old.tokens
    assert pkg.budget.used == recount(pkg) and pkg.budget.used <= 2000


def test_a_figure_after_a_dash_stays_under_its_period() -> None:
    """A dash is an empty cell: dropping it would put the next figure under the wrong period's header."""
    md = "| Sheet (In millions) | 2015 | 2014 | 2013 |\n| --- | --- | --- | --- |\n| Deferred taxes |  | 95,279 |  |"
    assert table_rows(md) == ["Sheet (In millions)|2015|2014|2013", "Deferred taxes||95,279"]
    unnamed = "| Severity |  | Owner |\n| --- | --- | --- |\n| P1 |  | pager |"  # a column without a name
    assert table_rows(unnamed) == ["Severity|Owner", "P1|pager"]


def _statement_page(mode: str) -> tuple[Region, list[Region], list[Region]]:
    from tests.ingest.test_pdf_wordtables import statement_pdf

    regs = parse_pdf(statement_pdf(), doc_id="s", filename="s.pdf", assets_dir=None, ocr=False, word_tables=mode)
    page = next(r for r in regs.regions if r.kind == "page")
    return page, [r for r in regs.regions if r.kind == "paragraph"], [r for r in regs.regions if r.kind == "table"]


def test_a_statement_read_without_its_table_gets_its_figures_back_on_their_labels() -> None:
    """The text layer of an unruled statement holds a figure a line (``Total inventories`` ⏎ ``4,366`` ⏎ ``4,034``):
    without a table reading (``word_tables="off"``) the page is still sent a row a line, at the same offsets."""
    page, paras, tables = _statement_page("off")
    assert not tables and "\nTotal inventories\n4,366\n4,034\n" in page.text
    cp = compact_page(page, paras, tables)
    lines = cp.text.split("\n")
    assert "Total inventories 4,366 4,034" in lines and "Cash and cash equivalents $ 2,853 $ 3,053" in lines
    assert not any(ln in ("4,366", "$", "2,853") for ln in lines)
    k = page.text.index("Finished goods")
    assert cp.text[cp.to_compact(k):].startswith("Finished goods 2,120 1,915")  # hits still find their place


def test_figure_rows_leave_labels_and_figures_in_columns_of_their_own() -> None:
    columns = "Net sales\nCost of sales\nGross profit\nOperating income\n3,909\n3,115\n794\n252"
    assert figure_rows(columns) == columns  # which figure is whose cannot be read from the lines
    prose = "Revenue rose.\nIt was 12\n14\nas planned.\nMore text here.\nAnd more.\nThe end."
    assert figure_rows(prose) == prose  # one label followed by figures is not a statement


def test_a_statement_table_replaces_the_title_and_unit_lines_its_header_repeats() -> None:
    page, paras, tables = _statement_page("all")
    text = compact_page(page, paras, tables).text
    assert text.count("Consolidated Balance Sheets") == 1 and text.count("In millions") == 1
    head = text.split("\n")[0]
    assert "Consolidated Balance Sheets" in head and "2018" in head and "2017" in head


def test_a_block_holding_a_tables_last_rows_and_the_note_under_it_sends_the_rows_once() -> None:
    """The text layer put a statement's last rows and its note in one block, which no table owns whole: read a line
    at a time, the rows go with the table (once) and the note on its own; the "$" signs between cells go too."""
    from folio.kernel.model import region_id_for
    from tests.assembly.builders import _loc

    stored = ("Cash flows from operating activities:\n\nNet income\n$\n1,058  $\n815 \nTrade payables\n(429) \n711 \n\n"
              "Interest\n$\n149  $\n138 \nSee accompanying notes to the financial statements.")
    md = ("| Cash flows from operating activities: | 2023 | 2022 |\n| --- | --- | --- |\n| Net income | $1,058 | $815 |"
          "\n| Trade payables | (429) | 711 |\n| Interest | $149 | $138 |")
    page = Region(region_id=region_id_for("cf", "0123456789abcdef", 1, "page", 1), doc_id="cf",
                  version_id="0123456789abcdef", kind="page", text=stored, locators=(_loc(1, (0, 0, 612, 792)),))
    table = page.model_copy(update={"region_id": region_id_for("cf", "0123456789abcdef", 1, "table", 1),
                                    "kind": "table", "text": md})
    lines = compact_page(page, [], [table]).text.split("\n")
    assert lines.count("Interest|$149|$138") == 1 and not any(ln.startswith(("Interest ", "149")) for ln in lines)
    assert "$" not in lines and lines[-1] == "See accompanying notes to the financial statements."
