"""The parser on real PDFs: fixtures, an R manual, the Federal Register, a scanned brochure."""

from __future__ import annotations

import pathlib
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from folio.ingest.pdf.ocr import ocr_available
from folio.ingest.pdf.parse import ParsedDocument, parse_pdf
from folio.kernel.model import FigurePayload, Region, TablePayload, version_id_for
from folio.kernel.tokens import get_tokenizer

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "sample_pdfs"


def _parse(name: str, tmp: pathlib.Path | None = None, **kw: object) -> ParsedDocument:
    data = (SAMPLES / name).read_bytes()
    return parse_pdf(data, doc_id=name.rsplit(".", 1)[0], filename=name, assets_dir=tmp, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def assets(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return tmp_path_factory.mktemp("data") / "assets"


@pytest.fixture(scope="session")
def policy(assets: pathlib.Path) -> ParsedDocument:
    return _parse("support-policy-v1.pdf", assets, ocr=False)


@pytest.fixture(scope="session")
def rmanual() -> ParsedDocument:
    return _parse("R-data-import-export.pdf", ocr=False)


@pytest.fixture(scope="session")
def fedreg() -> ParsedDocument:
    return _parse("federal-register-2020-17221.pdf", ocr=False)


def kind(doc: ParsedDocument, k: str) -> list[Region]:
    return [r for r in doc.regions if r.kind == k]


def test_fixture_headings_tree_and_ids(policy: ParsedDocument) -> None:
    data = (SAMPLES / "support-policy-v1.pdf").read_bytes()
    assert policy.version_id == version_id_for(data)
    secs = {r.heading_path[-1]: r for r in kind(policy, "section")}
    assert {"1 Scope", "2 Priority-one incidents", "2.1 Response targets", "3 Escalation"} <= set(secs)
    sub = secs["2.1 Response targets"]
    assert sub.parent_id == secs["2 Priority-one incidents"].region_id
    assert sub.heading_path == ("2 Priority-one incidents", "2.1 Response targets")
    # Section text is its own body only, not its subsections'.
    assert (
        "within 30 minutes" in sub.text and "within 30 minutes" not in secs["2 Priority-one incidents"].text
    )
    sents = [s.text for s in kind(policy, "sentence") if s.section_id == sub.region_id]
    deadline = next(i for i, s in enumerate(sents) if "within 30 minutes" in s)
    assert sents[deadline + 3].startswith("Exception:")
    for r in policy.regions:
        assert r.region_id.startswith(f"support-policy-v1@{policy.version_id}:p")
        assert r.tokens == get_tokenizer().count(r.text)
        assert r.heading_path or r.kind == "page"


def test_fixture_table(policy: ParsedDocument) -> None:
    (table,) = kind(policy, "table")
    assert table.payload == TablePayload(header=("Severity", "Response", "Owner"), first_row=1, last_row=3)
    assert table.meta_get("header") == "Severity | Response | Owner"  # the legacy view still reads
    assert table.meta_get("rows") == "1-3"
    assert "| P1 | 30 minutes | On-call engineer |" in table.text
    # Table cells are not repeated as paragraph text.
    assert not any("On-call engineer" in p.text for p in kind(policy, "paragraph"))


def test_fixture_figure(policy: ParsedDocument, assets: pathlib.Path) -> None:
    (fig,) = kind(policy, "figure")
    assert fig.meta_get("caption") == "Figure 1: Escalation path"
    assert fig.meta_get("source") == "vector"
    assert "Team lead" in (fig.meta_get("inner_text") or "")
    b = fig.locators[0].bbox
    # The box covers the three boxes (x 90-510) and the caption below them (x from 72).
    assert 70 <= b.x0 <= 90 and 505 <= b.x1 <= 515 and 40 <= b.height < 120
    image = fig.meta_get("image") or ""
    assert image.startswith(f"assets/support-policy-v1@{policy.version_id}/fig-p1-")
    assert (assets.parent / image).read_bytes()[:4] == b"\x89PNG"
    (page,) = kind(policy, "page")
    assert page.meta_get("render_scale") == "1.5"
    assert (assets.parent / (policy.pages[0].image or "")).is_file()
    # The payloads record the pixel size of the PNGs actually written (what a vision model is sent).
    from PIL import Image

    for r in (fig, page):
        assert r.image is not None and r.image.scale == 1.5 and r.image.media_type == "image/png"
        with Image.open(assets.parent / r.image.path) as im:
            assert (r.image.width_px, r.image.height_px) == im.size
    # 595 pt x 1.5 = 892.5: MuPDF's pixmap is 893 px wide, which bbox * scale cannot tell.
    assert page.image is not None and (page.image.width_px, page.image.height_px) == (893, 1263)


def test_sentence_line_boxes_inside_paragraph(policy: ParsedDocument, rmanual: ParsedDocument) -> None:
    for doc in (policy, rmanual):
        paras = {p.region_id: p for p in kind(doc, "paragraph")}
        for s in kind(doc, "sentence"):
            p = paras[s.parent_id or ""]
            pb = p.locators[0].bbox
            assert s.locators[0].line_boxes
            for lb in s.locators[0].line_boxes:
                assert pb.x0 - 0.5 <= lb.x0 <= lb.x1 <= pb.x1 + 0.5
                assert pb.y0 - 0.5 <= lb.y0 <= lb.y1 <= pb.y1 + 0.5
            ls, le = s.locators[0].char_start, s.locators[0].char_end
            ps, pe = p.locators[0].char_start, p.locators[0].char_end
            assert ls is not None and le is not None and ps is not None and pe is not None
            assert ps <= ls < le <= pe


def test_versions_differ_and_ids_are_deterministic(policy: ParsedDocument) -> None:
    again = _parse("support-policy-v1.pdf", ocr=False)
    assert [r.region_id for r in again.regions] == [r.region_id for r in policy.regions]
    assert [r.text for r in again.regions] == [r.text for r in policy.regions]
    v2 = _parse("support-policy-v2.pdf", ocr=False)
    assert v2.version_id != policy.version_id
    assert any("public holidays" in s.text for s in kind(v2, "sentence"))


def test_r_manual_headings_and_boundaries(rmanual: ParsedDocument) -> None:
    secs = kind(rmanual, "section")
    by_title = {r.heading_path[-1]: r for r in secs}
    intro = by_title["1 Introduction"]
    assert intro.first_page == 7 and intro.level == 1
    imports = by_title["Imports"]
    assert imports.heading_path == ("1 Introduction", "Imports") and imports.parent_id == intro.region_id
    enc = by_title["Encodings"]
    assert enc.parent_id == imports.region_id and enc.level == 3
    rdb = by_title["4 Relational databases"]
    assert rdb.first_page == 21
    # Sentences of "Why use a database?" belong to it and not to its parent.
    why = by_title["Why use a database?"]
    assert any(s.section_id == why.region_id for s in kind(rmanual, "sentence"))
    assert [s.seq for s in secs] == sorted(s.seq for s in secs)


def test_federal_register_table_split_across_pages(fedreg: ParsedDocument) -> None:
    tables = {t.first_page: t for t in kind(fedreg, "table")}
    t5, t6 = tables[5], tables[6]
    assert (
        t5.meta_get("header")
        == "Action | Labor cost | Parts cost | Cost per product | Cost on U.S. operators"
    )
    assert t5.meta_get("rows") == "1-3" and "AFM revisions" in t5.text
    assert t6.meta_get("continued_from") == t5.region_id
    assert t6.meta_get("rows") == "4-5" and "Stabilizer wiring change" in t6.text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_every_region_is_inside_its_pages(
    policy: ParsedDocument, rmanual: ParsedDocument, fedreg: ParsedDocument, data: st.DataObject
) -> None:
    doc = data.draw(st.sampled_from([policy, rmanual, fedreg]))
    page = data.draw(st.integers(min_value=1, max_value=len(doc.pages)))
    regions = [r for r in doc.regions if page in r.pages]
    assert any(r.kind == "page" for r in regions)
    for r in regions:
        assert r.pages
        for loc in r.locators:
            b = loc.bbox
            assert 0 <= b.x0 <= b.x1 <= loc.page_width and 0 <= b.y0 <= b.y1 <= loc.page_height
            for lb in loc.line_boxes:
                assert 0 <= lb.x0 <= lb.x1 <= loc.page_width and 0 <= lb.y0 <= lb.y1 <= loc.page_height


@pytest.mark.skipif(not ocr_available(), reason="needs tesseract (eng); CI installs it")
def test_scanned_page_is_ocred() -> None:
    doc = _parse("linnsequencer-brochure-scan.pdf", ocr=True)
    assert doc.ocr_pages == 1 and doc.pages[0].scanned and doc.pages[0].ocr
    gt_path = SAMPLES / "linnsequencer-brochure-scan.groundtruth.txt"  # shipped beside the scan (same licence)
    words = set(re.findall(r"[a-z]{5,}", gt_path.read_text().lower()))
    page = kind(doc, "page")[0]
    got = set(re.findall(r"[a-z]{5,}", page.text.lower()))
    assert len(words & got) >= 0.6 * len(words)
    assert len(kind(doc, "sentence")) > 10
    assert all(s.meta_get("ocr") == "1" for s in kind(doc, "sentence"))
    # OCR payloads: engine and Tesseract's mean confidence (lines under MIN_LINE_CONF were dropped).
    from folio.ingest.pdf.ocr import MIN_LINE_CONF

    assert page.ocr is not None and page.ocr.engine == "tesseract"
    assert page.ocr.confidence is not None and MIN_LINE_CONF <= page.ocr.confidence <= 100
    assert all(s.ocr is not None and s.ocr.confidence is not None for s in kind(doc, "sentence"))


def test_scanned_page_without_ocr_warns() -> None:
    doc = _parse("linnsequencer-brochure-scan.pdf", ocr=False)
    assert doc.ocr_pages == 0 and doc.pages[0].scanned
    assert any("scanned" in w for w in doc.warnings)
    (fig,) = kind(doc, "figure")
    assert fig.meta_get("source") == "page-scan"


@pytest.fixture(scope="session")
def fedreg_p8_ocr() -> ParsedDocument:
    """Federal Register p8 alone: a native header over a page-sized scan of the AFM procedure."""
    import pymupdf

    src = pymupdf.open(SAMPLES / "federal-register-2020-17221.pdf")
    one = pymupdf.open()
    one.insert_pdf(src, from_page=7, to_page=7)
    return parse_pdf(one.tobytes(), doc_id="fr-p8", filename="fr-p8.pdf", assets_dir=None, ocr=True)


@pytest.mark.skipif(not ocr_available(), reason="needs tesseract (eng); CI installs it")
def test_text_in_a_large_image_is_ocred(fedreg_p8_ocr: ParsedDocument) -> None:
    doc = fedreg_p8_ocr
    assert doc.ocr_pages == 1 and not doc.pages[0].scanned and doc.pages[0].ocr
    (fig,) = kind(doc, "figure")
    assert fig.meta_get("ocr") == "1" and "75% N1" in (fig.meta_get("inner_text") or "")
    assert isinstance(fig.payload, FigurePayload) and fig.payload.source == "raster"
    assert fig.ocr is not None and fig.ocr.confidence is not None and fig.ocr.confidence > 0
    img = fig.locators[0].bbox
    hits = [s for s in kind(doc, "sentence") if "75% N1" in s.text]
    assert hits, "the flaps-up thrust setting must be a searchable sentence"
    s = hits[0]
    assert s.meta_get("ocr") == "1" and "Flaps up" in s.text
    paras = {p.region_id: p for p in kind(doc, "paragraph")}
    assert paras[s.parent_id or ""].meta_get("ocr") == "1"
    loc = s.locators[0]
    assert loc.line_boxes and img.x0 - 1 <= loc.bbox.x0 <= loc.bbox.x1 <= img.x1 + 1
    assert img.y0 - 1 <= loc.bbox.y0 <= loc.bbox.y1 <= img.y1 + 1
    page = kind(doc, "page")[0]
    assert loc.char_start is not None and loc.char_end is not None
    assert page.text[loc.char_start : loc.char_end].replace("\n", " ") == s.text
    # The native header stays native text, in front of the image's text.
    native = [p for p in kind(doc, "paragraph") if p.meta_get("ocr") is None]
    assert all(p.ocr is None for p in native)
    assert native and native[0].seq < paras[s.parent_id or ""].seq


def test_ocr_tsv_mapping_and_confidence_filter() -> None:
    from folio.ingest.pdf.ocr import blocks_from_tsv

    head = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    rows = [
        "5\t1\t1\t1\t1\t1\t100\t200\t50\t20\t96\tFlaps",
        "5\t1\t1\t1\t1\t2\t160\t200\t40\t20\t91\tup:",
        "5\t1\t1\t1\t2\t1\t100\t240\t80\t20\t12\t~~%#",  # low confidence: dropped
        "4\t1\t1\t1\t1\t0\t100\t200\t100\t20\t-1\t",
    ]
    (block,) = blocks_from_tsv("\n".join([head, *rows]), 10.0, 20.0, 0.5, 0.25)
    assert block.ocr and block.text == "Flaps up:"
    (line,) = block.lines
    assert line.bbox == (60.0, 70.0, 110.0, 75.0)
    assert [line.text[w[4] : w[5]] for w in line.word_spans()] == ["Flaps", "up:"]
