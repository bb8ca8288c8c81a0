"""Headings numbered after a keyword ("PART II", "Item 8.", "Note 3 -"), as filings print theirs: bold at the
body's size, which neither size nor a bare number finds."""

from __future__ import annotations

import pymupdf

from folio.ingest.pdf.parse import ParsedDocument, parse_pdf

BODY = (
    "The company recorded {n} million of revenue in the year. Costs rose with volume and with the prices of "
    "the materials it buys from its suppliers in each region where it operates."
)


def _filing() -> bytes:
    """Four pages laid out as a 10-K: a contents page (keyed lines, not bold), then bold keyed headings at the
    body's size, and one heading in large type inside a note."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), "ACME CORPORATION", fontsize=18, fontname="hebo")
    for k, line in enumerate(("Item 1.", "Item 7.", "Item 8.")):
        page.insert_text((60, 140 + 15 * k), line, fontsize=10)  # the contents: plain, so not headings
    page.insert_textbox(pymupdf.Rect(60, 200, 535, 300), BODY.format(n=1), fontsize=10)
    heads = [
        [("PART I", 10), ("Item 1. Business.", 10)],  # a heading's trailing period kept
        [("PART II", 10), ("Item 7. Management's Discussion and Analysis", 10)],
        [("Item 8. Financial Statements and Supplementary Data", 10), ("Note 3 - Debt", 10),
         ("Supply chain financing", 14)],
    ]
    for n, lines in enumerate(heads, start=2):
        page = doc.new_page(width=595, height=842)
        y = 80.0
        for text, size in lines:
            page.insert_text((60, y), text, fontsize=size, fontname="hebo")
            page.insert_textbox(pymupdf.Rect(60, y + 12, 535, y + 92), BODY.format(n=n * 10 + int(y)), fontsize=10)
            y += 110
    return bytes(doc.tobytes())


def _paths(parsed: ParsedDocument) -> dict[str, tuple[str, ...]]:
    return {r.text.split(" million")[0].rsplit(" ", 1)[-1]: r.heading_path
            for r in parsed.regions if r.kind == "paragraph" and "million of revenue" in r.text}


def test_keyed_headings_nest_as_a_filing_does() -> None:
    parsed = parse_pdf(_filing(), doc_id="acme", filename="acme.pdf", assets_dir=None, ocr=False)
    sections = [r.heading_path for r in parsed.regions if r.kind == "section"]
    cover = [r.heading_path for r in parsed.regions if r.kind == "section" and r.first_page == 1]
    assert ("PART I", "Item 1. Business.") in sections
    assert ("PART II", "Item 7. Management's Discussion and Analysis") in sections
    item8 = ("PART II", "Item 8. Financial Statements and Supplementary Data")
    assert item8 + ("Note 3 - Debt",) in sections
    # a heading in large type inside a note stays inside it instead of closing PART II
    assert item8 + ("Note 3 - Debt", "Supply chain financing") in sections
    # the contents page's plain "Item 1." lines are not headings
    assert cover == [("ACME CORPORATION",)]
    # a keyed heading stays a line of its section's body, so what is searchable does not change
    heads = {r.text: r.heading_path for r in parsed.regions if r.kind == "paragraph" and r.text.startswith("Item")}
    assert heads["Item 1. Business."] == ("PART I", "Item 1. Business.")
    paths = _paths(parsed)
    # each body paragraph reads "<page * 10 + its heading's y> million": page 2's second, page 4's third
    assert paths["210"] == ("PART I", "Item 1. Business.")
    assert paths["340"] == item8 + ("Note 3 - Debt", "Supply chain financing")


def test_a_document_without_keyed_headings_keeps_size_levels() -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), "Operating the pump", fontsize=20)
    page.insert_textbox(pymupdf.Rect(60, 95, 535, 180), BODY.format(n=5), fontsize=10)
    page.insert_text((60, 200), "Cleaning", fontsize=14)
    page.insert_textbox(pymupdf.Rect(60, 215, 535, 300), BODY.format(n=6), fontsize=10)
    parsed = parse_pdf(bytes(doc.tobytes()), doc_id="pump", filename="pump.pdf", assets_dir=None, ocr=False)
    assert _paths(parsed) == {"5": ("Operating the pump",), "6": ("Operating the pump", "Cleaning")}
