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
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from folio.ingest.pdf.figures import FigureData, find_caption, merge_boxes, raster_boxes, vector_boxes
from folio.ingest.pdf.furniture import mark_furniture, page_text
from folio.ingest.pdf.ocr import (
    MAX_NATIVE_CHARS,
    OcrBudget,
    image_ocr_languages,
    is_scanned,
    ocr_available,
    page_ocr_input,
    render_for_ocr,
    tesseract_languages,
    wants_image_ocr,
)
from folio.ingest.pdf.page_deadline import PageOverrun, hard_page_limit, page_deadline
from folio.ingest.pdf.page_lanes import OcrCall, OcrResult, PageLanes, Pending
from folio.ingest.pdf.regions import PageData, VersionFacts, build_regions
from folio.ingest.pdf.tables.base import TableMode, TablePage, TableReader, table_reader
from folio.ingest.pdf.text import Block, center_in, extract_blocks
from folio.ingest.pdf.validate import CheckedPdf, open_pdf
from folio.kernel.model import PageInfo, PageIssue, Region, version_id_for

if TYPE_CHECKING:
    import pymupdf

logger = logging.getLogger(__name__)

PageMode = Literal["full", "text", "skip"]  # "text"/"skip": an earlier parse of this page was killed
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
    degraded_pages: list[int] = field(default_factory=list)  # 1-based: past the page time limit


@dataclass(frozen=True)
class Render:
    """Where the page renders and figure crops go: ``asset_dir`` (None: nothing is rendered), named
    ``rel_dir/…`` in the regions, at ``scale`` pixels per point."""

    asset_dir: pathlib.Path | None = None
    rel_dir: str = ""
    scale: float = 1.5


@dataclass(frozen=True)
class PagePlan:
    """How every page is read: a page's soft time limit (None: none), the pages (0-based) an earlier parse
    was killed on, the table reader (``ingest.pdf.tables``, by the ``word_tables`` mode) and the renders."""

    soft_s: float | None = None
    modes: Mapping[int, PageMode] = field(default_factory=dict)
    tables: TableReader = field(default_factory=lambda: table_reader("all"))
    render: Render = Render()


def text_flags() -> int:
    """TextPage flags. Ligatures are not preserved: MuPDF writes "ﬁ" as "fi", so a word with a ligature
    ("ﬁnancial") is found by the word a question uses, and an answer reads as it is spelled."""
    import pymupdf

    return int(pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP)


def _first_pass(
    page: pymupdf.Page, lanes: PageLanes, plan: PagePlan, ocr: bool
) -> tuple[PageData, list[Pending]]:
    """Everything of one page that needs MuPDF. What runs on the lanes (PNG writes, Tesseract) comes
    back as ``Pending`` work; ``_finish_page`` applies it and builds the page text.

    The text layer comes first and always stays. The slow steps (tables, figures, OCR) run within
    ``plan.soft_s`` seconds of the page's start (``ingest.pdf.page_deadline``); past that they are dropped
    and the page is degraded. The page's mode in ``plan.modes`` "text" keeps only the text layer, "skip"
    nothing. ``plan.tables`` reads the page's tables (``ingest.pdf.tables``)."""
    started = time.monotonic()
    soft_s, mode = plan.soft_s, plan.modes.get(page.number, "full")
    pd = PageData(index=page.number, width=page.rect.width, height=page.rect.height, label=page_label(page))
    pending: list[Pending] = []
    if mode != "full":
        pd.degraded = True
        pd.warnings.append(degraded_warning(pd.index + 1, soft_s, mode))
    if mode == "skip":
        return pd, pending
    pd.blocks = extract_blocks(page.get_textpage(flags=text_flags()), page)
    if mode == "text":
        return pd, pending
    roles = [b.role for b in pd.blocks]
    ocr_calls: list[tuple[OcrCall, Callable[[OcrResult], None]]] = []
    try:
        with page_deadline(None if soft_s is None else soft_s - (time.monotonic() - started)):
            ocr_calls = _slow_steps(page, pd, lanes, ocr, plan.tables)
    except PageOverrun:
        _drop_slow_work(pd, roles, soft_s)
        ocr_calls = []
    if ocr_calls:
        pending.append(_ocr_pending(pd, lanes, ocr_calls))
    if plan.render.asset_dir is not None:
        _render_or_warn(page, pd, plan.render, lanes, pending)
    return pd, pending


def _ocr_pending(
    pd: PageData, lanes: PageLanes, ocr_calls: list[tuple[OcrCall, Callable[[OcrResult], None]]]
) -> Pending:
    """The page's OCR calls handed to the OCR lane, their results applied in order when they are back."""
    appliers = [ap for _, ap in ocr_calls]

    def apply_ocr(fut: Future[list[OcrResult]]) -> None:
        for ap, result in zip(appliers, fut.result(), strict=True):
            ap(result)

    return Pending(lanes.ocr(pd.index, [c for c, _ in ocr_calls]), apply_ocr)


def _render_or_warn(page: pymupdf.Page, pd: PageData, render: Render, lanes: PageLanes, pending: list[Pending]) -> None:
    """``_render``; a page that cannot be rendered keeps its text, with a warning."""
    try:
        _render(page, pd, render, lanes, pending)
    except MemoryError:
        raise
    except Exception as exc:  # e.g. MuPDF's "Overly large image" for a giant page box: keep the text
        pd.image = None
        pd.warnings.append(f"page {pd.index + 1}: not rendered ({_not_rendered(exc)})")


def _slow_steps(
    page: pymupdf.Page, pd: PageData, lanes: PageLanes, ocr: bool, tables: TableReader
) -> list[tuple[OcrCall, Callable[[OcrResult], None]]]:
    """Scan detection, tables and figures (with the roles they give text blocks), and the page's
    OCR calls: what a page past its soft limit goes without."""
    ocr_calls: list[tuple[OcrCall, Callable[[OcrResult], None]]] = []
    chars = sum(len(ln.text.strip()) for b in pd.blocks for ln in b.lines)
    images = raster_boxes(page)
    pd.scanned = is_scanned(page, chars, images)
    if pd.scanned and ocr:
        ocr_calls.append(_ocr_scanned_page(page, pd, lanes))
    drawings = page.get_cdrawings() if not pd.scanned else []
    pd.tables = tables.read(TablePage(page, pd.blocks, drawings, pd.scanned))
    for t in pd.tables:
        for b in pd.blocks:
            if b.role == "para" and center_in(b.bbox, t.bbox):
                b.role = "table"
    # Figures: raster images and vector clusters (not on scanned pages: there the page is the image).
    if not pd.scanned:
        _find_figures(page, pd, images, drawings)
        if ocr:
            ocr_calls += _ocr_images(page, pd, images, lanes)
    return ocr_calls


def _find_figures(
    page: pymupdf.Page,
    pd: PageData,
    images: list[tuple[float, float, float, float]],
    drawings: list[dict[str, Any]],
) -> None:
    cands = [(b, "raster") for b in images]
    cands += [(b, "vector") for b in vector_boxes(page, drawings, [t.bbox for t in pd.tables], pd.blocks)]
    taken: set[int] = set()
    for box, src in merge_boxes(cands):
        if _is_background(box, pd.width, pd.height, pd.blocks):
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


def degraded_warning(page: int, soft_s: float | None, mode: PageMode) -> str:
    """The warning of a degraded page (1-based ``page``; ``mode`` as in ``PagePlan``)."""
    if mode == "full":
        limit = f"{soft_s:g} s, " if soft_s is not None else ""
        return (
            f"page {page}: degraded: its table, figure and OCR steps ran past the page time limit "
            f"({limit}FOLIO_PAGE_TIMEOUT_S) and were stopped; its text layer and page image are kept"
        )
    hard = f"{hard_page_limit(soft_s):g} s" if soft_s is not None else "the page time limit"
    kept = "only its text layer is kept" if mode == "text" else "even its text layer is lost"
    return f"page {page}: degraded: the parser did not get past this page within {hard} (FOLIO_PAGE_TIMEOUT_S); {kept}"


def _drop_slow_work(pd: PageData, roles: list[str], soft_s: float | None) -> None:
    """Undo what the slow steps built before they were stopped: the text layer is as it was read."""
    pd.tables, pd.figures = [], []
    for b, role in zip(pd.blocks, roles, strict=True):
        b.role = role
    pd.degraded = True
    pd.warnings.append(degraded_warning(pd.index + 1, soft_s, "full"))


def _finish_page(pd: PageData, pending: list[Pending]) -> None:
    """The lanes' results, in the order the work was handed out, then the page text: blocks in
    reading order, lines joined by "\n", blocks by "\n\n". A block's region text joins its lines
    by " ", so it has the same length as its span in the page text."""
    for p in pending:
        p.apply(p.future)
    if pd.scanned and not pd.ocr:
        pd.figures.append(FigureData(bbox=(0.0, 0.0, pd.width, pd.height), source="page-scan"))
    parts: list[str] = []
    off = 0
    for b in pd.blocks:
        b.char_start = off
        btext = "\n".join(ln.text for ln in b.lines)
        parts.append(btext)
        off += len(btext) + 2
    pd.text = "\n\n".join(parts)


def _not_rendered(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:120]


def _render(page: pymupdf.Page, pd: PageData, render: Render, lanes: PageLanes, pending: list[Pending]) -> None:
    """Render the page and its figure crops here; their PNGs are written on the PNG lane. Each write
    joins ``pending`` as it is handed out, so a render that fails half-way leaves none untracked."""
    import pymupdf

    asset_dir, rel_dir, scale = render.asset_dir, render.rel_dir, render.scale
    assert asset_dir is not None  # _render_or_warn's caller checked
    mat = pymupdf.Matrix(scale, scale)
    pd.image_size, written = lanes.save_png(page.get_pixmap(matrix=mat), asset_dir / f"page-{pd.index + 1}.png")
    pd.image = f"{rel_dir}/page-{pd.index + 1}.png"

    def page_failed(fut: Future[None]) -> None:
        exc = fut.exception()
        if exc is not None:
            pd.image, pd.image_size = None, None
            pd.warnings.append(f"page {pd.index + 1}: not rendered ({_not_rendered(exc)})")

    pending.append(Pending(written, page_failed))
    for k, fig in enumerate(pd.figures, start=1):
        if fig.source == "page-scan":
            continue
        name = f"fig-p{pd.index + 1}-{k}.png"
        fig.image_size, written = lanes.save_png(
            page.get_pixmap(matrix=mat, clip=pymupdf.Rect(fig.bbox)), asset_dir / name
        )
        fig.image = f"{rel_dir}/{name}"

        def fig_failed(fut: Future[None], fig: FigureData = fig, k: int = k) -> None:
            exc = fut.exception()
            if exc is not None:
                fig.image, fig.image_size = None, None
                pd.warnings.append(f"page {pd.index + 1}: figure {k} not rendered ({_not_rendered(exc)})")

        pending.append(Pending(written, fig_failed))


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


def _ocr_scanned_page(
    page: pymupdf.Page, pd: PageData, lanes: PageLanes
) -> tuple[OcrCall, Callable[[OcrResult], None]]:
    """Whole-page OCR; a page left without text keeps its ``page-scan`` figure."""

    def apply(result: OcrResult) -> None:
        blocks, warning = result
        if warning:
            pd.warnings.append(warning)
        if blocks is not None:
            pd.blocks = blocks
            pd.ocr = bool(blocks)

    inp = None if lanes.ocr_spent() else page_ocr_input(page)
    langs = "+".join(tesseract_languages())
    return OcrCall(inp, langs, "not OCRed", "OCR failed", page_text=True), apply


def _ocr_images(
    page: pymupdf.Page, pd: PageData, images: list[tuple[float, float, float, float]], lanes: PageLanes
) -> list[tuple[OcrCall, Callable[[OcrResult], None]]]:
    """OCR large, text-free raster images; their text joins the figure and the page's paragraphs.

    OCR blocks go into ``pd.blocks`` right after the last native block that starts above the
    image, so the page text and reading order follow the page; they keep role ``para``.
    """
    native = list(pd.blocks)
    todo = [b for b in images if wants_image_ocr(b, pd.width, pd.height, native)]
    if not todo:
        return []
    langs = image_ocr_languages(" ".join(b.text for b in native))
    out: list[tuple[OcrCall, Callable[[OcrResult], None]]] = []
    for box in todo:

        def apply(result: OcrResult, box: tuple[float, float, float, float] = box) -> None:
            got, warning = result
            if warning:
                pd.warnings.append(warning)
            if not got:
                return
            pd.ocr = True
            fig = next((f for f in pd.figures if center_in(box, f.bbox)), None)
            if fig is not None:
                fig.inner.extend(got)
                fig.ocr = True
            pos = max((i for i, b in enumerate(pd.blocks) if not b.ocr and b.bbox[1] <= box[1] + 1), default=-1)
            pd.blocks[pos + 1 : pos + 1] = got

        inp = None if lanes.ocr_spent() else render_for_ocr(page, box)
        out.append((OcrCall(inp, langs, "an image was not OCRed", "OCR of an image failed; indexed as an image only"),
                    apply))
    return out


def parse_pdf(  # noqa: PLR0913
    pdf: CheckedPdf | bytes,
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
    page_timeout_s: float | None = None,
    page_modes: Mapping[int, PageMode] | None = None,
    word_tables: TableMode = "all",
) -> ParsedDocument:
    """Parse a PDF into regions (see the module docstring and ``ingest.model``): bytes, checked here
    (``password``, ``max_pages``, ``max_bytes``), or a ``CheckedPdf`` the ingest checked already.

    ``ocr=None`` OCRs scanned pages when Tesseract is installed, within ``ocr_budget`` (default:
    unbounded in total, 180 s per Tesseract call); ``assets_dir=None`` renders nothing. Bad input
    raises the ``InvalidDocument`` subclasses of ``ingest.pdf.validate.open_pdf``; a failure confined
    to one page becomes a ``PageIssue`` and the rest is still parsed. A file PyMuPDF had to repair
    on open parses with ``REPAIRED_WARNING``.

    ``page_timeout_s``: a page's slow steps stop after that long (in the main thread only; see
    ``_first_pass``) and the page is listed in ``degraded_pages``. ``page_modes`` (0-based page →
    "text" or "skip") cuts pages an earlier, killed parse got stuck on (``ingest.parse_supervisor``).
    ``word_tables``: the table reader's mode (``ingest.pdf.tables``: where tables read from word positions
    replace or join the ruled tables; the ``FOLIO_WORD_TABLES`` setting's default); a mode no reader is
    registered for raises ``ValueError``.
    """
    if isinstance(pdf, CheckedPdf):  # checked by the ingest: opened again, not checked again
        doc, version_id = pdf.open(), pdf.version_id
    else:
        doc = open_pdf(pdf, password=password, max_bytes=max_bytes, max_pages=max_pages)
        version_id = version_id_for(pdf)
    use_ocr = ocr_available() if ocr is None else (ocr and ocr_available())
    budget = (ocr_budget or OcrBudget()) if use_ocr else None
    warnings: list[str] = [REPAIRED_WARNING] if doc.is_repaired else []
    if ocr and not use_ocr:
        warnings.append("OCR requested but Tesseract (eng) is not installed; scanned pages are indexed as images only")
    rel_dir = f"{assets_dir.name}/{doc_id}@{version_id}" if assets_dir is not None else ""
    asset_dir = assets_dir / f"{doc_id}@{version_id}" if assets_dir is not None else None
    try:
        render = Render(asset_dir, rel_dir, render_scale)
        plan = PagePlan(page_timeout_s, dict(page_modes or {}), table_reader(word_tables), render)
        pages, issues = _first_passes(doc, budget, progress, plan)
        mark_furniture(pages)
        for p in pages:
            page_text(p)
        toc = doc.get_toc(simple=True)
        title = (doc.metadata or {}).get("title") or ""
        regions = build_regions(pages, toc, VersionFacts(doc_id, version_id, title.strip() or filename, render_scale))
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
        degraded_pages=[p.index + 1 for p in pages if p.degraded],
    )


MAX_PENDING_PAGES = 16  # pages whose lane work may be outstanding: bounds the pixels held in memory


def _first_passes(
    doc: pymupdf.Document, budget: OcrBudget | None, progress: Callable[[int, int], None] | None, plan: PagePlan
) -> tuple[list[PageData], list[PageIssue]]:
    """The first pass over every page, with PNG writes and Tesseract on the lanes (``ingest.pdf.page_lanes``).
    A page that fails is recorded as a ``PageIssue`` and kept as an empty page of its size (US Letter
    when even its size cannot be read), so ids and page numbers of the rest do not move."""
    n = doc.page_count
    lanes = PageLanes(budget)
    run = _Passes(doc)
    if progress:
        progress(0, n)  # opened: a watchdog times pages from here
    try:
        for i in range(n):
            run.first_pass(i, lanes, plan, budget is not None)
            run.finish_ready()
            if progress:
                progress(i + 1, n)
        while run.waiting:
            run.finish_oldest()
            if progress:
                progress(n, n)  # still alive: the last pages' OCR may take a while
    finally:
        lanes.close()
    return run.pages, run.issues


@dataclass
class _Passes:
    """The pages of one document as their first passes go: each page, the issues of those that failed, and the
    pages first-passed but not finished (their lane work outstanding), oldest first."""

    doc: pymupdf.Document
    pages: list[PageData] = field(default_factory=list)
    issues: list[PageIssue] = field(default_factory=list)
    waiting: deque[tuple[int, list[Pending]]] = field(default_factory=deque)

    def first_pass(self, i: int, lanes: PageLanes, plan: PagePlan, ocr: bool) -> None:
        """Page ``i``'s first pass (``_first_pass``); its lane work joins ``waiting``."""
        self.pages.append(PageData(index=i, width=612.0, height=792.0))
        try:
            pd, pending = _first_pass(self.doc.load_page(i), lanes, plan, ocr)
            self.pages[i] = pd
            self.waiting.append((i, pending))
        except MemoryError:
            raise  # the document is over its memory budget: not a page problem
        except Exception as exc:  # one bad page must not lose the document; recorded, not hidden
            self.failed(i, exc)

    def finish_ready(self) -> None:
        """Finish the oldest pages while their lane work is done, or while more than ``MAX_PENDING_PAGES`` wait."""
        waiting = self.waiting
        while waiting and (len(waiting) > MAX_PENDING_PAGES or all(p.future.done() for p in waiting[0][1])):
            self.finish_oldest()

    def finish_oldest(self) -> None:
        i, pending = self.waiting.popleft()
        try:
            _finish_page(self.pages[i], pending)
        except MemoryError:
            raise
        except Exception as exc:  # recorded like a first-pass failure
            self.failed(i, exc)

    def failed(self, i: int, exc: Exception) -> None:
        logger.warning("page %d failed: %s", i + 1, exc)
        message = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        self.issues.append(PageIssue(page=i + 1, message=message))
        r = _page_rect(self.doc, i)
        self.pages[i] = PageData(index=i, width=r.width if r else 612.0, height=r.height if r else 792.0)


def _page_rect(doc: pymupdf.Document, i: int) -> pymupdf.Rect | None:
    """Page ``i``'s size, or None when the page cannot even be loaded (the error that failed it, again)."""
    try:
        rect: pymupdf.Rect = doc.load_page(i).rect
    except Exception:  # recorded already, as the page's issue
        return None
    return rect


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
