"""Line boxes (``assembly.lines``) on real PDFs parsed by PyMuPDF: every packed item carries the lines of
what made it relevant, inside its page and covering the trigger sentence's words; a page found as a whole
gets the lines sharing the question's words; an answer's sentence gets the lines of the cited item that
support it. The packed text and tokens are the same with or without the lines."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from folio.assembly import AssemblyOptions, assemble
from folio.assembly.lines import answer_lines
from folio.assembly.package import MAX_ITEM_LINES, ContextItem, LineOut
from folio.assembly.verify import verify_answer
from folio.ingest.pdf.parse import parse_pdf
from folio.kernel.index import RegionIndex
from folio.kernel.model import Region
from tests.assembly.builders import hit

ROOT = Path(__file__).resolve().parents[2]
WRAPPED = ("The relief valve must be inspected every ninety days by a certified technician, who records the "
           "spring pressure, the seat condition and the date in the maintenance log kept beside the pump.")
FILLER = [f"Paragraph {k} describes the routine cleaning of housing number {k} with a dry cloth." for k in range(6)]


def _generated_pdf() -> bytes:
    """One A4 page: filler paragraphs, then a sentence that wraps over several lines, then more filler."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    y = 72.0
    for text in [*FILLER[:3], WRAPPED, *FILLER[3:]]:
        rect = pymupdf.Rect(72, y, 330, y + 90)  # narrow: the long sentence wraps
        left = page.insert_textbox(rect, text, fontsize=11, fontname="helv")
        y += 90 - left + 14
    data: bytes = doc.tobytes()
    doc.close()
    return data


def _parse(data: bytes, name: str) -> list[Region]:
    return list(parse_pdf(data, doc_id=name, filename=f"{name}.pdf", assets_dir=None, ocr=False).regions)


def _words_of(data: bytes, page: int, bbox: tuple[float, float, float, float]) -> list[tuple[float, float, str]]:
    """Centres of the words PyMuPDF finds inside ``bbox`` of ``page`` (1-based)."""
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        words = doc[page - 1].get_text("words", clip=pymupdf.Rect(*bbox))
    return [((w[0] + w[2]) / 2, (w[1] + w[3]) / 2, w[4]) for w in words]


def _inside(x: float, y: float, lines: list[LineOut], page: int) -> bool:
    e = 0.5
    return any(ln.page == page and ln.bbox.x0 - e <= x <= ln.bbox.x1 + e and ln.bbox.y0 - e <= y <= ln.bbox.y1 + e
               for ln in lines)


def _within_page(item: ContextItem, regions: list[Region]) -> None:
    sizes = {loc.page: (loc.page_width, loc.page_height) for r in regions for loc in r.locators}
    assert item.lines and len(item.lines) <= MAX_ITEM_LINES
    for ln in item.lines:
        w, h = sizes[ln.page]
        assert 0 <= ln.bbox.x0 <= ln.bbox.x1 <= w and 0 <= ln.bbox.y0 <= ln.bbox.y1 <= h
        assert ln.page in item.pages


def test_page_item_carries_the_trigger_sentences_lines_covering_its_words() -> None:
    data = _generated_pdf()
    regs = _parse(data, "valve")
    trig = next(r for r in regs if r.kind == "sentence" and "relief valve" in r.text)
    assert len(trig.locators[0].line_boxes) >= 3  # it wraps
    pkg = assemble("How often must the relief valve be inspected?", [hit(trig, 0.9, 1)], RegionIndex(regs),
                   AssemblyOptions(budget=2000))
    item = pkg.items[0]
    assert item.expansion in ("page_text", "page_excerpt") and item.trigger_ids == [trig.region_id]
    # The locator is still the whole page; the lines are the sentence's, nothing else.
    assert item.locators[0].bbox.y1 - item.locators[0].bbox.y0 > 500
    _within_page(item, regs)
    assert {ln.region_id for ln in item.lines} == {trig.region_id}
    assert len(item.lines) == len(trig.locators[0].line_boxes)
    # Every word of the sentence (as PyMuPDF finds it on the page) lies inside one of the line boxes.
    words = _words_of(data, 1, (trig.locators[0].bbox.x0, trig.locators[0].bbox.y0,
                                trig.locators[0].bbox.x1, trig.locators[0].bbox.y1))
    sentence_words = {w.strip(".,") for w in WRAPPED.split()}
    found = [(x, y) for x, y, w in words if w.strip(".,") in sentence_words]
    assert len(found) >= len(sentence_words) - 2
    assert all(_inside(x, y, item.lines, 1) for x, y in found)
    # ... and none of the filler's words does.
    cloth = [(x, y) for x, y, w in _words_of(data, 1, (0, 0, 595, 842)) if w == "cloth."]
    assert len(cloth) == len(FILLER) and not any(_inside(x, y, item.lines, 1) for x, y in cloth)


def test_lines_are_an_addition_text_and_tokens_unchanged() -> None:
    data = _generated_pdf()
    regs = _parse(data, "valve")
    trig = next(r for r in regs if r.kind == "sentence" and "relief valve" in r.text)
    for budget in (300, 600, 2000):
        pkg = assemble("relief valve inspection", [hit(trig, 0.9, 1)], RegionIndex(regs),
                       AssemblyOptions(budget=budget))
        dumped = pkg.model_dump()
        for it in dumped["items"]:
            assert it.pop("lines")  # every packed item has lines here
        again = type(pkg).model_validate(dumped)  # lines default to []: the package without them
        assert [i.text for i in again.items] == [i.text for i in pkg.items]
        assert again.budget == pkg.budget and again.prompt == pkg.prompt


def test_real_pdf_table_and_visual_page_hits() -> None:
    data = (ROOT / "sample_pdfs" / "support-policy-v1.pdf").read_bytes()
    regs = _parse(data, "sp")
    idx = RegionIndex(regs)
    q = "How fast must a priority-one incident be acknowledged?"
    sent = next(r for r in regs if r.kind == "sentence" and "acknowledge a priority-one" in r.text)
    table = next(r for r in regs if r.kind == "table")
    page = next(r for r in regs if r.kind == "page")
    pkg = assemble(q, [hit(sent, 0.9, 1), hit(table, 0.8, 2)], idx, AssemblyOptions(budget=1500))
    item = pkg.items[0]
    _within_page(item, regs)
    assert [ln.region_id for ln in item.lines] == [sent.region_id, table.region_id]  # trigger order
    assert item.lines[1].bbox == table.locators[0].bbox  # a table has no line geometry: its box
    # A page found as a whole (a visual retriever): the lines of its sentences sharing the question's words.
    vis = assemble(q, [hit(page, 0.9, 1, "colpali")], idx, AssemblyOptions(budget=1500))
    it = vis.items[0]
    _within_page(it, regs)
    ids = [ln.region_id for ln in it.lines]
    assert sent.region_id in ids and len(set(ids)) <= 3
    assert all(idx.get(rid) is not None and idx.get(rid).kind == "sentence" for rid in ids)  # type: ignore[union-attr]


@pytest.mark.parametrize("budget", [400, 2000])
def test_supporting_lines_of_an_answer_sentence(budget: int) -> None:
    data = _generated_pdf()
    regs = _parse(data, "valve")
    idx = RegionIndex(regs)
    trig = next(r for r in regs if r.kind == "sentence" and "relief valve" in r.text)
    filler = next(r for r in regs if r.kind == "sentence" and "housing number 4" in r.text)
    pkg = assemble("relief valve inspection", [hit(trig, 0.9, 1), hit(filler, 0.5, 2)], idx,
                   AssemblyOptions(budget=budget))
    cid = pkg.items[0].citation_id
    answer = (f"The relief valve is inspected every ninety days [{cid}]. "
              f"Housing number 4 is cleaned with a dry cloth [{cid}]. The moon is far away [{cid}].")
    check = verify_answer(answer, pkg)
    got = answer_lines(check, pkg.citation_map(), idx)
    assert [(s.sentence_index, s.citation_id) for s in got] == [(0, cid), (1, cid), (2, cid)]
    first, second, third = got
    assert {ln.region_id for ln in first.lines} >= {trig.region_id}
    assert first.lines[0].region_id == trig.region_id and first.support >= 0.8
    if "housing number 4" in pkg.items[0].text:
        assert second.lines[0].region_id == filler.region_id
    assert third.lines == [] and third.support == 0.0  # "moon", "far", "away": no unit shares two words
    for s in got:
        assert all(ln.page in pkg.items[0].pages for ln in s.lines)


def test_a_page_with_many_hits_highlights_its_three_strongest() -> None:
    data = _generated_pdf()
    regs = _parse(data, "valve")
    sents = [r for r in regs if r.kind == "sentence"]
    assert len(sents) >= 7
    # Every sentence of the page is a hit (a small store at k=50): the page is one item with all of them.
    hits = [hit(r, 0.9 - 0.01 * k, k + 1) for k, r in enumerate(reversed(sents))]
    pkg = assemble("relief valve inspection", hits, RegionIndex(regs), AssemblyOptions(budget=3000))
    item = pkg.items[0]
    assert len(item.trigger_ids) == len(sents)
    strongest = [h.region_id for h in hits[:3]]
    assert list(dict.fromkeys(ln.region_id for ln in item.lines)) == strongest
