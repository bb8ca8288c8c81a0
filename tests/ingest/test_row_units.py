"""Table row units: one extra chunk per body row of a long table, searched as the table region."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pymupdf
import pytest

from folio.ingest.row_units import MIN_ROWS, row_texts
from folio.kernel.model import Region, TablePayload
from folio.kernel.scope import Scope
from folio.retrieval.text import Candidate, unique_regions

# A balance sheet: long enough that its Markdown runs past MiniLM's 256 word pieces before the last rows.
LABELS = [
    "Cash and cash equivalents",
    "Marketable securities current",
    "Accounts receivable net of allowances",
    "Finished goods",
    "Work in process",
    "Raw materials and supplies",
    "Prepaid expenses",
    "Other current assets",
    "Total current assets",
    "Property plant and equipment",
    "Accumulated depreciation",
    "Goodwill",
    "Intangible assets net",
    "Other assets",
    "Total assets",
    "Short-term borrowings",
    "Accounts payable",
    "Accrued payroll",
    "Accrued income taxes",
    "Other current liabilities",
    "Total current liabilities",
    "Long-term debt",
    "Pension and postretirement benefits",
    "Other liabilities",
    "Total liabilities",
    "Common stock par value",
    "Retained earnings",
    "Treasury stock at cost",
    "Total equity",
    "Inventories held by the company",
]


def _balance_sheet_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Consolidated balance sheet", fontsize=14, fontname="hebo")
    page.insert_text((72, 80), "Amounts in millions of dollars, as of December 31.", fontsize=10)
    rows = [("Item", "2015", "2014")] + [
        (lab, f"{1000 + 37 * i:,}", f"{900 + 41 * i:,}") for i, lab in enumerate(LABELS)
    ]
    x, top, rh = [72.0, 342.0, 422.0, 502.0], 100.0, 18.0
    shape = page.new_shape()
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            page.insert_text((x[j] + 4, top + i * rh + 13), cell, fontsize=9, fontname="hebo" if i == 0 else "helv")
        shape.draw_line((x[0], top + i * rh), (x[-1], top + i * rh))
    shape.draw_line((x[0], top + len(rows) * rh), (x[-1], top + len(rows) * rh))
    for xv in x:
        shape.draw_line((xv, top), (xv, top + len(rows) * rh))
    shape.finish(color=(0, 0, 0), width=0.8)
    shape.commit()
    page = doc.new_page()
    for k, line in enumerate(
        [
            "The company sells adhesives, films and filters to industrial customers in many countries.",
            "Research spending grew as new product lines were introduced during the year.",
            "The board of directors met eleven times and approved a new dividend policy.",
        ]
    ):
        page.insert_text((72, 80 + 20 * k), line, fontsize=10)
    doc.save(path)
    return path


@pytest.fixture(scope="module")
def sheet_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    root = tmp_path_factory.mktemp("table-rows")
    store = Store(root / "data")
    pdf = _balance_sheet_pdf(root / "sheet.pdf")
    report = ingest_path(store, pdf, doc_id="sheet", row_units=True)
    plain = Store(root / "plain")
    ingest_path(plain, pdf, doc_id="sheet")
    return {"store": store, "version": report.version_id, "plain": plain}


def _table(store: Any, version: str) -> Region:
    tables = [r for r in store.region_index("sheet", version).regions() if r.kind == "table"]
    assert len(tables) == 1
    return tables[0]


def test_each_row_of_a_long_table_is_a_chunk_of_the_table_region(sheet_store: dict[str, Any]) -> None:
    store, version = sheet_store["store"], sheet_store["version"]
    table = _table(store, version)
    chunks = store.chunks.search().where(f"region_id = '{table.region_id}'").select(["text"]).limit(100).to_arrow()
    texts = chunks.column("text").to_pylist()
    assert texts[0] == table.text or table.text in texts  # the table's own chunk stays
    rows = [t for t in texts if t != table.text]
    assert len(rows) == len(LABELS)
    inventories = [t for t in rows if "Inventories" in t]
    # a ruled table without a title: the section heading, the label under its column name, each figure
    # under its period
    assert inventories == ["Consolidated balance sheet: Item Inventories held by the company: 2015 2,073; 2014 2,089"]


def test_rows_are_off_by_default(sheet_store: dict[str, Any]) -> None:
    ids = sheet_store["plain"].chunks.search().select(["region_id"]).limit(10_000).to_arrow().column("region_id")
    assert len(ids) == len(set(ids.to_pylist()))  # one chunk per searchable region, as before


def test_a_question_on_one_row_reaches_the_table_once(sheet_store: dict[str, Any]) -> None:
    from folio.ingest.embed import default_text_encoder
    from folio.retrieval.text import TextRetriever

    store, version = sheet_store["store"], sheet_store["version"]
    table = _table(store, version)
    text = TextRetriever(store, default_text_encoder())
    scope = Scope(versions=(("sheet", version),), regions=store.chunks.count_rows())
    for hits in (text.dense("inventories held by the company", scope, 5), text.bm25("inventories held", scope, 5)):
        ids = [h.region_id for h in hits]
        assert ids[0] == table.region_id, hits  # through the row unit: the table's own text is cut before it
        assert len(ids) == len(set(ids))


def test_short_tables_and_other_kinds_get_no_rows() -> None:
    def region(kind: str, text: str) -> Region:
        return Region(region_id="d@v:p1:x1", doc_id="d", version_id="v", kind=kind, text=text, locators=())

    short = "| A | B |\n| --- | --- |\n" + "".join(f"| r{i} | {i} |\n" for i in range(MIN_ROWS - 1))
    long = "| A | B |\n| --- | --- |\n" + "".join(f"| r{i} | {i} |\n" for i in range(MIN_ROWS)) + "| a \\| b | c |"
    assert row_texts(region("table", short)) == []
    assert row_texts(region("paragraph", long)) == []
    assert row_texts(region("table", long)) == [*(f"A r{i}: B {i}" for i in range(MIN_ROWS)), "A a | b: B c"]


def test_a_titled_table_reads_its_rows_in_context() -> None:
    """A statement read from word positions: its title and unit lead each row, empty cells and label-only
    rows are left out, each figure goes with its period."""
    text = "\n".join(
        [
            "| Balance Sheets (In millions) | 2018 | 2017 |",
            "| --- | --- | --- |",
            "| Current assets |  |  |",
            "| Cash | $2,853 | $3,053 |",
            "| Total inventories | 4,366 | 4,034 |",
            "| Work in process | 1,292 |  |",
            "| Goodwill | 10,051 | 10,513 |",
        ]
    )
    payload = TablePayload(
        header=("Balance Sheets (In millions)", "2018", "2017"), last_row=5, title="Balance Sheets", unit="In millions"
    )
    table = Region(
        region_id="d@v:p1:table1",
        doc_id="d",
        version_id="v",
        kind="table",
        text=text,
        locators=(),
        heading_path=("Notes to the statements",),
        payload=payload,
    )
    assert row_texts(table) == [
        "Balance Sheets (In millions): Cash: 2018 $2,853; 2017 $3,053",
        "Balance Sheets (In millions): Total inventories: 2018 4,366; 2017 4,034",
        "Balance Sheets (In millions): Work in process: 2018 1,292",
        "Balance Sheets (In millions): Goodwill: 2018 10,051; 2017 10,513",
    ]


def test_unique_regions_keeps_the_best_rank_and_widens() -> None:
    def cand(rid: str) -> Candidate:
        return Candidate(rid, "d", "v", "table", 1, 0.0)

    ranked = [cand(r) for r in ("t", "t", "t", "a", "t", "b", "c")]
    calls: list[int] = []

    def search(fetch: int) -> tuple[list[Candidate], bool]:
        calls.append(fetch)
        return ranked[:fetch], fetch >= len(ranked)

    assert [c.region_id for c in unique_regions(search, 3, 3)] == ["t", "a", "b"]
    assert calls == [3, 12]
    calls.clear()
    plain = [cand(r) for r in "xyz"]
    assert unique_regions(lambda n: (plain[:n], n >= 3), 2, 2) == plain[:2]  # no repeats: searched once
