"""Running headers, footers, page numbers and table-of-contents lines stay out of the evidence."""

from __future__ import annotations

import pymupdf

from folio.ingest.pdf.parse import parse_pdf

BODY = (
    "The pump delivers {n} litres per minute at full load. Service intervals depend on the duty cycle "
    "and on the water quality at the installation site."
)


def _pdf() -> bytes:
    doc = pymupdf.open()
    for n in range(1, 6):
        page = doc.new_page(width=595, height=842)
        page.insert_text((60, 40), f"ACME Pump Manual - Issue {n} (2024-02-28)", fontsize=8)
        page.insert_text((60, 110), "Operating the pump", fontsize=20)  # large, repeated: a title, kept
        if n == 1:
            page.insert_text((60, 160), "Installation . . . . . . . . . . . . 3", fontsize=10)
            page.insert_text((60, 175), "Maintenance . . . . . . . . . . . . 4", fontsize=10)
        else:
            page.insert_textbox(pymupdf.Rect(60, 150, 535, 300), BODY.format(n=10 * n), fontsize=10)
        page.insert_text((280, 815), f"Page {n} of 5", fontsize=8)
    doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
                         {"startpage": 1, "prefix": "", "style": "D", "firstpagenum": 1}])
    return bytes(doc.tobytes())


def test_furniture_and_toc_are_not_evidence() -> None:
    parsed = parse_pdf(_pdf(), doc_id="acme", filename="acme.pdf", assets_dir=None, ocr=False)
    text_regions = [r for r in parsed.regions if r.kind in ("sentence", "paragraph", "section")]
    joined = "\n".join(r.text for r in text_regions)
    # a running header is evidence once, on the first page it appears on, and furniture after that
    paras = [r for r in parsed.regions if r.kind == "paragraph" and "ACME Pump Manual" in r.text]
    assert [(r.first_page, r.text) for r in paras] == [(1, "ACME Pump Manual - Issue 1 (2024-02-28)")]
    assert "Page 3 of 5" not in joined
    assert ". . . . ." not in joined  # table-of-contents lines are navigation
    assert "30 litres per minute" in joined  # the body survives
    assert joined.count("Operating the pump") >= 2  # a large repeated title is not furniture
    pages = sorted((r for r in parsed.regions if r.kind == "page"), key=lambda r: r.first_page)
    assert "ACME Pump Manual" in pages[0].text
    assert "ACME Pump Manual" not in pages[2].text and "Page 3 of 5" not in pages[2].text
    assert "30 litres per minute" in pages[2].text
    # offsets of the kept blocks point into the rebuilt page text
    for r in parsed.regions:
        if r.kind == "paragraph":
            loc = r.locators[0]
            page = pages[loc.page - 1]
            assert page.text[loc.char_start : loc.char_end].replace("\n", " ") == r.text
    assert [p.meta_get("label") for p in pages] == ["i", "1", "2", "3", "4"]


def test_a_single_page_keeps_its_text() -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 40), "Quarterly results release", fontsize=8)
    page.insert_textbox(pymupdf.Rect(60, 150, 535, 300), BODY.format(n=7), fontsize=10)
    parsed = parse_pdf(bytes(doc.tobytes()), doc_id="one", filename="one.pdf", assets_dir=None, ocr=False)
    joined = "\n".join(r.text for r in parsed.regions if r.kind == "paragraph")
    assert "Quarterly results release" in joined  # no repetition, no page number: not furniture
    assert all(r.meta_get("label") is None for r in parsed.regions if r.kind == "page")


def _filing_with_high_page_numbers() -> bytes:
    """A filing's pages whose numbers sit 120 pt above the foot (outside the bottom band), one short page whose
    number is mid-page, and two pages that end with a bare figure out of the page sequence."""
    doc = pymupdf.open()
    for n in range(1, 7):
        page = doc.new_page(width=612, height=792)
        lines = 3 if n == 4 else 20  # page 4 is short: its number sits mid-page
        for i in range(lines):
            line = f"Revenue of segment {i} grew on volume in year {2010 + n}."
            page.insert_text((72, 90 + 24 * i), line, fontsize=10)
        if n in (2, 5):  # a table's last figure ends the page, below the text, out of sequence
            page.insert_text((300, 90 + 24 * lines + 20), "106", fontsize=10)
        else:
            page.insert_text((300, 90 + 24 * lines + 60 if n == 4 else 672), str(40 + n), fontsize=10)
    return bytes(doc.tobytes())


def test_page_numbers_above_the_band_in_sequence_are_furniture() -> None:
    parsed = parse_pdf(_filing_with_high_page_numbers(), doc_id="f", filename="f.pdf", assets_dir=None, ocr=False)
    pages = sorted((r for r in parsed.regions if r.kind == "page"), key=lambda r: r.first_page)
    last = [p.text.rsplit("\n", 1)[-1] for p in pages]
    # pages 1, 3, 4 and 6 print 41, 43, 44 and 46 (value less page index is 40 on each): the page number, not evidence
    assert [last[i] for i in (0, 2, 3, 5)] == ["Revenue of segment 19 grew on volume in year 2011.",
                                               "Revenue of segment 19 grew on volume in year 2013.",
                                               "Revenue of segment 2 grew on volume in year 2014.",
                                               "Revenue of segment 19 grew on volume in year 2016."]
    # a bare figure out of the sequence stays evidence, even where it ends two pages
    assert last[1] == "106" and last[4] == "106"
