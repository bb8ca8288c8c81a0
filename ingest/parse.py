"""PDF bytes → a parsed document version: pages, sections, paragraphs, sentences, tables, figures.

Two passes. The first streams pages: one ``TextPage`` per page (OCR'd for scanned pages when
enabled), tables, figures, the page render and figure crops written to disk at once and dropped,
so peak memory does not grow with the page count (only the text geometry is kept). The second
pass needs the whole document: body font size, the outline, the section tree, then regions and
their ids in reading order.

Tables continued on the next page (same column count, at the top of the page, after a table at
the bottom of the previous page) stay separate regions, one per page; the continuation carries
``continued_from`` (the previous part's id) and row numbers that continue the previous part's
(``rows`` = ``"21-30"``).
"""

from __future__ import annotations

import logging
import pathlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ingest.furniture import mark_furniture, page_text
from ingest.model import PageInfo, PageIssue, Region, version_id_for
from ingest.pdf_figures import FigureData, find_caption, merge_boxes, raster_boxes, vector_boxes
from ingest.pdf_ocr import (
    MAX_NATIVE_CHARS,
    ImageOcrError,
    OcrBudget,
    image_ocr_languages,
    is_scanned,
    ocr_available,
    ocr_image_blocks,
    ocr_page_blocks,
    wants_image_ocr,
)
from ingest.pdf_regions import PageData, build_regions
from ingest.pdf_tables import find_page_tables
from ingest.pdf_text import Block, center_in, extract_blocks
from ingest.validate import open_pdf

if TYPE_CHECKING:
    import pymupdf

logger = logging.getLogger(__name__)

REPAIRED_WARNING = "repaired: the file was damaged; PyMuPDF reconstructed its cross-reference table"


@dataclass
class ParsedDocument:
    doc_id: str
    version_id: str
    filename: str
    pages: list[PageInfo]
    regions: list[Region]
    warnings: list[str] = field(default_factory=list)
    issues: list[PageIssue] = field(default_factory=list)
    ocr_pages: int = 0


def _flags() -> int:
    import pymupdf

    return int(pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_PRESERVE_LIGATURES | pymupdf.TEXT_MEDIABOX_CLIP)


def _save_png(pix: Any, path: pathlib.Path) -> tuple[int, int]:
    """Write a pixmap as PNG (atomically: a reader never sees half a file); its pixel size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    pix.save(str(tmp), output="png")
    tmp.replace(path)
    return int(pix.width), int(pix.height)


def _first_pass(
    page: pymupdf.Page, *, ocr: OcrBudget | None, asset_dir: pathlib.Path | None, rel_dir: str, scale: float
) -> PageData:

    w, h = page.rect.width, page.rect.height
    pd = PageData(index=page.number, width=w, height=h, label=page_label(page))
    flags = _flags()
    tp = page.get_textpage(flags=flags)
    pd.blocks = extract_blocks(tp, page)
    chars = sum(len(ln.text.strip()) for b in pd.blocks for ln in b.lines)
    images = raster_boxes(page)
    pd.scanned = is_scanned(page, chars, images)
    if ocr is not None:
        ocr.start_page()
    if pd.scanned and ocr is not None:
        _ocr_scanned_page(page, pd, ocr)
    drawings = page.get_cdrawings() if not pd.scanned else []
    if drawings:
        words = [wd for b in pd.blocks for ln in b.lines for wd in ln.words]
        pd.tables = find_page_tables(page, drawings, words)
    for t in pd.tables:
        for b in pd.blocks:
            if b.role == "para" and center_in(b.bbox, t.bbox):
                b.role = "table"
    # Figures: raster images and vector clusters (not on scanned pages: there the page is the image).
    if not pd.scanned:
        cands = [(b, "raster") for b in images]
        cands += [(b, "vector") for b in vector_boxes(page, drawings, [t.bbox for t in pd.tables], pd.blocks)]
        taken: set[int] = set()
        for box, src in merge_boxes(cands):
            if _is_background(box, w, h, pd.blocks):
                continue
            fig = FigureData(bbox=box, source=src)
            ci = find_caption(box, pd.blocks, taken)
            if ci is not None:
                taken.add(ci)
                fig.caption = pd.blocks[ci]
                pd.blocks[ci].role = "caption"
            for b in pd.blocks:
                if b.role == "para" and center_in(b.bbox, box):
                    b.role = "figure"
                    fig.inner.append(b)
            pd.figures.append(fig)
        if ocr is not None:
            _ocr_images(page, pd, images, ocr)
    elif not pd.ocr:
        pd.figures.append(FigureData(bbox=(0.0, 0.0, w, h), source="page-scan"))
    # Page text: blocks in reading order, lines joined by "\n", blocks by "\n\n". A block's region
    # text joins its lines by " ", so it has the same length as its span in the page text.
    parts: list[str] = []
    off = 0
    for b in pd.blocks:
        b.char_start = off
        btext = "\n".join(ln.text for ln in b.lines)
        parts.append(btext)
        off += len(btext) + 2
    pd.text = "\n\n".join(parts)
    if asset_dir is not None:
        try:
            _render(page, pd, asset_dir, rel_dir, scale)
        except MemoryError:
            raise
        except Exception as exc:  # e.g. MuPDF's "Overly large image" for a giant page box: keep the text
            pd.image = None
            pd.warnings.append(f"page {pd.index + 1}: not rendered ({' '.join(str(exc).split())[:120]})")
    return pd


def _render(page: pymupdf.Page, pd: PageData, asset_dir: pathlib.Path, rel_dir: str, scale: float) -> None:
    import pymupdf

    mat = pymupdf.Matrix(scale, scale)
    pd.image_size = _save_png(page.get_pixmap(matrix=mat), asset_dir / f"page-{pd.index + 1}.png")
    pd.image = f"{rel_dir}/page-{pd.index + 1}.png"
    for k, fig in enumerate(pd.figures, start=1):
        if fig.source == "page-scan":
            continue
        name = f"fig-p{pd.index + 1}-{k}.png"
        fig.image_size = _save_png(page.get_pixmap(matrix=mat, clip=pymupdf.Rect(fig.bbox)), asset_dir / name)
        fig.image = f"{rel_dir}/{name}"


def page_label(page: pymupdf.Page) -> str:
    """The printed page label from the PDF's /PageLabels (``"iv"``, ``"12"``, ``"A-3"``), or ``""``."""
    try:
        label = page.get_label() or ""
    except Exception:  # a malformed /PageLabels tree must not lose the page
        return ""
    m = re.fullmatch(r"<FEFF((?:[0-9A-Fa-f]{4})*)>", label.strip())
    if m:  # some PyMuPDF builds hand back a UTF-16BE hex string as written in the PDF
        label = bytes.fromhex(m.group(1)).decode("utf-16-be", errors="replace")
    return label.replace("\ufeff", "").strip()[:32]


BACKGROUND_FRACTION = 0.5  # of the page area


def _is_background(box: tuple[float, float, float, float], w: float, h: float, blocks: list[Block]) -> bool:
    """A page-sized picture under a real text layer is a background, not a figure.

    Slide backgrounds, paper textures and the scan under a searchable PDF's OCR text cover most of
    the page; as figures they took every text block inside them as figure text, so such pages
    had no paragraphs or sentences at all (only a figure and the page text).
    """
    if (box[2] - box[0]) * (box[3] - box[1]) < BACKGROUND_FRACTION * w * h:
        return False
    chars = sum(len(ln.text.strip()) for b in blocks if b.role == "para" and center_in(b.bbox, box) for ln in b.lines)
    return chars > MAX_NATIVE_CHARS


def _ocr_within(budget: OcrBudget, pd: PageData, spent: str, failed: str,
                run: Callable[[float], list[Block]]) -> list[Block] | None:
    """One OCR call within the document's OCR budget (its time is charged); None, with a warning on the
    page, when the budget is spent (``spent``) or OCR failed (``failed``, the error appended)."""
    timeout = budget.timeout()
    if timeout is None:
        pd.warnings.append(f"page {pd.index + 1}: {spent}, the OCR time budget is spent")
        return None
    started = time.perf_counter()
    try:
        return run(timeout)
    except ImageOcrError as exc:
        pd.warnings.append(f"page {pd.index + 1}: {failed} ({exc})")
        return None
    finally:
        budget.charge(time.perf_counter() - started)


def _ocr_scanned_page(page: pymupdf.Page, pd: PageData, budget: OcrBudget) -> None:
    """Whole-page OCR within the budget; a page left without text keeps its ``page-scan`` figure."""
    blocks = _ocr_within(budget, pd, "not OCRed", "OCR failed", lambda t: ocr_page_blocks(page, t))
    if blocks is None:
        return
    pd.blocks = blocks
    pd.ocr = bool(blocks)


def _ocr_images(
    page: pymupdf.Page, pd: PageData, images: list[tuple[float, float, float, float]], budget: OcrBudget
) -> None:
    """OCR large, text-free raster images; their text joins the figure and the page's paragraphs.

    OCR blocks go into ``pd.blocks`` right after the last native block that starts above the
    image, so the page text and reading order follow the page; they keep role ``para``.
    """
    native = list(pd.blocks)
    todo = [b for b in images if wants_image_ocr(b, pd.width, pd.height, native)]
    if not todo:
        return
    langs = image_ocr_languages(" ".join(b.text for b in native))
    for box in todo:
        got = _ocr_within(budget, pd, "an image was not OCRed", "OCR of an image failed; indexed as an image only",
                          lambda t: ocr_image_blocks(page, box, langs, timeout_s=t))  # noqa: B023 (called at once)
        if not got:
            continue
        pd.ocr = True
        fig = next((f for f in pd.figures if center_in(box, f.bbox)), None)
        if fig is not None:
            fig.inner.extend(got)
            fig.ocr = True
        pos = max((i for i, b in enumerate(pd.blocks) if not b.ocr and b.bbox[1] <= box[1] + 1), default=-1)
        pd.blocks[pos + 1 : pos + 1] = got


def parse_pdf(
    data: bytes,
    *,
    doc_id: str,
    filename: str,
    assets_dir: pathlib.Path | None,
    password: str | None = None,
    ocr: bool | None = None,
    render_scale: float = 1.5,
    progress: Callable[[int, int], None] | None = None,
    max_pages: int | None = None,
    max_bytes: int | None = None,
    ocr_budget: OcrBudget | None = None,
) -> ParsedDocument:
    """Parse PDF bytes into regions (see the module docstring and ``ingest.model``).

    ``ocr=None`` OCRs scanned pages when Tesseract is installed, within ``ocr_budget`` (default:
    unbounded in total, 180 s per Tesseract call); ``assets_dir=None`` renders nothing. Bad input
    raises the ``InvalidDocument`` subclasses of ``ingest.validate.open_pdf``; a failure confined
    to one page becomes a ``PageIssue`` and the rest is still parsed. A file PyMuPDF had to repair
    on open parses with ``REPAIRED_WARNING``.
    """
    doc = open_pdf(data, password=password, max_bytes=max_bytes, max_pages=max_pages)
    version_id = version_id_for(data)
    use_ocr = ocr_available() if ocr is None else (ocr and ocr_available())
    budget = (ocr_budget or OcrBudget()) if use_ocr else None
    warnings: list[str] = [REPAIRED_WARNING] if doc.is_repaired else []
    if ocr and not use_ocr:
        warnings.append("OCR requested but Tesseract (eng) is not installed; scanned pages are indexed as images only")
    rel_dir = f"{assets_dir.name}/{doc_id}@{version_id}" if assets_dir is not None else ""
    asset_dir = assets_dir / f"{doc_id}@{version_id}" if assets_dir is not None else None
    try:
        pages, issues = _first_passes(doc, budget, asset_dir, rel_dir, render_scale, progress)
        mark_furniture(pages)
        for p in pages:
            page_text(p)
        toc = doc.get_toc(simple=True)
        title = (doc.metadata or {}).get("title") or ""
        regions = build_regions(pages, toc, doc_id, version_id, title.strip() or filename, render_scale)
    finally:
        doc.close()
    for p in pages:
        warnings.extend(p.warnings)
        if p.scanned and not p.ocr:
            warnings.append(f"page {p.index + 1} is a scanned image without a text layer; indexed as an image only")
    return ParsedDocument(
        doc_id=doc_id,
        version_id=version_id,
        filename=filename,
        pages=[_page_info(p) for p in pages],
        regions=regions,
        warnings=warnings,
        issues=issues,
        ocr_pages=sum(1 for p in pages if p.ocr),
    )


def _first_passes(
    doc: pymupdf.Document,
    budget: OcrBudget | None,
    asset_dir: pathlib.Path | None,
    rel_dir: str,
    scale: float,
    progress: Callable[[int, int], None] | None,
) -> tuple[list[PageData], list[PageIssue]]:
    """The first pass over every page. A page that fails is recorded as a ``PageIssue`` and kept as
    an empty page of its size (US Letter when even its size cannot be read), so ids and page
    numbers of the rest do not move."""
    issues: list[PageIssue] = []
    pages: list[PageData] = []
    n = doc.page_count
    if progress:
        progress(0, n)  # opened: a watchdog times pages from here
    for i in range(n):
        try:
            page = doc.load_page(i)
            pages.append(_first_pass(page, ocr=budget, asset_dir=asset_dir, rel_dir=rel_dir, scale=scale))
        except MemoryError:
            raise  # the document is over its memory budget: not a page problem
        except Exception as exc:  # one bad page must not lose the document; recorded, not hidden
            logger.warning("page %d failed: %s", i + 1, exc)
            issues.append(PageIssue(page=i + 1, message=f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"))
            r = doc.load_page(i).rect if i < n else None
            pages.append(PageData(index=i, width=r.width if r else 612.0, height=r.height if r else 792.0))
        if progress:
            progress(i + 1, n)
    return pages, issues


def _page_info(p: PageData) -> PageInfo:
    return PageInfo(
        page=p.index + 1,
        width=p.width,
        height=p.height,
        text_chars=len(p.text),
        ocr=p.ocr,
        scanned=p.scanned,
        image=p.image,
    )
