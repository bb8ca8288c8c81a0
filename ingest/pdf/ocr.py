"""Scanned-page detection, whole-page OCR, and OCR of large raster images that carry text.

A page counts as scanned when its text layer is (nearly) empty and images cover most of it.
Whole-page OCR (``page_ocr_input``, then ``run_tesseract``) renders the page at the scan's own
resolution (never above ``OCR_DPI``, never more than ``MAX_OCR_PIXELS``) and runs the Tesseract
CLI on it, like the image OCR below; its blocks are not flagged ``ocr``, so the rest of the
parser treats that text exactly like a native text layer. It used to be MuPDF's built-in
``get_textpage_ocr``, which cannot be interrupted and was 3-5x slower here (a 1654x2338 noise
scan: 55 s against 10 s): a subprocess with a timeout is what lets ``OcrBudget`` bound the OCR
cost of a page and of a document.

Pages that do have a text layer can still hold their real content in a picture: the Federal
Register's AFM procedures are page-sized scans under a native header, manuals show GUI
screenshots. ``wants_image_ocr`` picks raster images that are large (``MIN_IMAGE_FRACTION`` of
the page and ``MIN_IMAGE_SIDE`` points on the shorter side) and nearly free of native text;
``render_for_ocr`` renders just that rectangle at ``IMAGE_OCR_DPI`` and ``run_tesseract`` runs
the Tesseract CLI on it with TSV output. Rendering needs the document, so it happens on the
parsing thread; Tesseract runs beside it (``ingest.pdf.page_lanes``). TSV gives word boxes and
per-word confidences: lines whose mean confidence is below ``MIN_LINE_CONF`` are dropped, which
removes most of the noise Tesseract reads into photos and diagrams. The result is ``Block``s in
page coordinates, flagged ``ocr``, so they become paragraphs and sentences like native text.
Cost is bounded by the rendered area (at most one page at 300 dpi per page) and by the
``OcrBudget``: one Tesseract call never runs longer than the budget's per-call timeout, and once
the document's OCR seconds are spent the remaining pages are indexed without OCR, each with a
warning.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from folio.ingest.pdf.text import Block, Box, Line, _mk, center_in
from folio.settings import child_environ

if TYPE_CHECKING:
    import pymupdf

logger = logging.getLogger(__name__)

OCR_DPI = 300
IMAGE_OCR_DPI = 300
MIN_IMAGE_FRACTION = 0.05  # of the page area
MIN_IMAGE_SIDE = 72.0  # points, shorter side
MAX_NATIVE_CHARS = 200  # native characters inside the image box above which it is not OCRed
MIN_LINE_CONF = 55.0
MIN_OCR_DPI = 150  # below this Tesseract's accuracy drops; a coarser scan is upsampled to it
MAX_OCR_PIXELS = 12_000_000  # per Tesseract call: A4 at 300 dpi is 8.7 MP
_TIMEOUT_S = 180
_WANTED = ("eng", "deu", "jpn")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


class ImageOcrError(RuntimeError):
    """Tesseract failed on one image; the parser records it as a warning and goes on."""


@dataclass
class OcrBudget:
    """How much Tesseract time one document may use.

    ``page_s`` bounds the Tesseract time of one page (``None``: 180 s per call), ``total_s`` the
    document's. A call starts only while the document has time left and may then use what is left
    of its page's, so the document total overshoots by at most one call. Calls of different pages
    may run at once (``ingest.pdf.page_lanes``): ``running_s`` holds the limits of the calls running now,
    and another call joins them only while the document's time left would still cover all of them
    in full, plus a second; otherwise it waits for them (``decide`` says ``"wait"``). So a tight budget
    is spent exactly as one call after another would spend it.

    >>> b = OcrBudget(total_s=100.0, page_s=45.0)
    >>> b.decide(page_spent=0.0)
    ('start', 45.0)
    >>> b.running_s = 45.0; b.decide(page_spent=0.0)    # 55 s would be left: it may join
    ('start', 45.0)
    >>> b.running_s = 99.5; b.decide(page_spent=0.0)    # 0.5 s would be left: wait for the others
    ('wait', 0.0)
    >>> b.running_s = 0.0; b.decide(page_spent=44.5)    # the page's own time is spent
    ('skip', 0.0)
    """

    total_s: float | None = None
    page_s: float | None = _TIMEOUT_S
    spent_s: float = 0.0
    running_s: float = 0.0

    def document_spent(self) -> bool:
        """No call may start any more, on any page (the document's seconds are spent)."""
        return self.total_s is not None and self.total_s - self.spent_s < 1.0

    def decide(self, page_spent: float) -> tuple[str, float]:
        """``("start", limit)`` for the next call of a page that has used ``page_spent`` seconds,
        ``("skip", 0)`` when none may start, ``("wait", 0)`` until a running call ends."""
        if self.document_spent():
            return "skip", 0.0
        limit = float(_TIMEOUT_S) if self.page_s is None else self.page_s - page_spent
        if limit < 1.0:
            return "skip", 0.0
        if self.running_s and self.total_s is not None and self.total_s - self.spent_s - self.running_s < 1.0:
            return "wait", 0.0
        return "start", limit


@lru_cache(maxsize=1)
def tesseract_languages() -> tuple[str, ...]:
    """Installed languages among eng/deu/jpn, ``()`` when Tesseract is not available."""
    exe = shutil.which("tesseract")
    if not exe:
        return ()
    try:
        out = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return ()
    have = {ln.strip() for ln in (out.stdout + out.stderr).splitlines()}
    return tuple(lang for lang in _WANTED if lang in have)


def ocr_available() -> bool:
    return "eng" in tesseract_languages()


def is_scanned(page: pymupdf.Page, text_chars: int, image_boxes: list[tuple[float, float, float, float]]) -> bool:
    area = page.rect.width * page.rect.height or 1.0
    covered = max((max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1]) for b in image_boxes), default=0.0)
    return text_chars < 100 and covered > 0.5 * area


def scan_dpi(page: pymupdf.Page) -> int:
    """The resolution to OCR a scanned page at: its largest image's own, within
    ``[MIN_OCR_DPI, OCR_DPI]`` and ``MAX_OCR_PIXELS`` (rendering above the scan's resolution only
    makes Tesseract slower)."""
    dpi = float(OCR_DPI)
    infos = [i for i in page.get_image_info() if i.get("width") and i.get("height")]
    if infos:
        big = max(infos, key=lambda i: (i["bbox"][2] - i["bbox"][0]) * (i["bbox"][3] - i["bbox"][1]))
        bw = max(big["bbox"][2] - big["bbox"][0], 1.0)
        dpi = min(dpi, max(float(MIN_OCR_DPI), big["width"] * 72.0 / bw))
    area_in2 = max(page.rect.width * page.rect.height / (72.0 * 72.0), 1e-6)
    dpi = min(dpi, (MAX_OCR_PIXELS / area_in2) ** 0.5)
    return max(int(dpi), 1)


def page_ocr_input(page: pymupdf.Page) -> OcrInput:
    """A whole scanned page rendered for Tesseract, at the scan's own resolution (``scan_dpi``)."""
    return render_for_ocr(page, tuple(page.rect), scan_dpi(page))


def page_blocks(blocks: list[Block]) -> list[Block]:
    """Whole-page OCR blocks are the page's only text layer, not OCR next to a native one."""
    for b in blocks:
        b.ocr = False
    return blocks


def wants_image_ocr(box: Box, page_w: float, page_h: float, native: list[Block]) -> bool:
    """Large enough to hold readable text, and not already covered by the native text layer."""
    bw, bh = box[2] - box[0], box[3] - box[1]
    if min(bw, bh) < MIN_IMAGE_SIDE or bw * bh < MIN_IMAGE_FRACTION * page_w * page_h:
        return False
    chars = sum(len(ln.text.strip()) for b in native if center_in(b.bbox, box) for ln in b.lines)
    return chars <= MAX_NATIVE_CHARS


def image_ocr_languages(native_text: str) -> str:
    """Latin languages always; Japanese only when the page's native text has CJK (it is slow)."""
    langs = [lang for lang in tesseract_languages() if lang != "jpn"]
    if "jpn" in tesseract_languages() and _CJK.search(native_text):
        langs.append("jpn")
    return "+".join(langs)


@dataclass(frozen=True, slots=True)
class OcrInput:
    """A page area rendered for Tesseract (the MuPDF half of an OCR call, done on the parsing
    thread: a document is not safe to render from two threads) and how its pixels map back."""

    png: bytes
    box: Box
    dpi: int
    sx: float
    sy: float


def render_for_ocr(page: pymupdf.Page, box: Box, dpi: int = IMAGE_OCR_DPI) -> OcrInput:
    """Grey rendering of ``box`` (displayed-page points) at ``dpi``, capped at ``MAX_OCR_PIXELS``."""
    import pymupdf

    area_in2 = max((box[2] - box[0]) * (box[3] - box[1]) / (72.0 * 72.0), 1e-6)
    dpi = max(1, min(dpi, int((MAX_OCR_PIXELS / area_in2) ** 0.5)))
    pix = page.get_pixmap(clip=pymupdf.Rect(box), dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    sx = (box[2] - box[0]) / max(pix.width, 1)
    sy = (box[3] - box[1]) / max(pix.height, 1)
    return OcrInput(png=pix.tobytes("png"), box=box, dpi=dpi, sx=sx, sy=sy)


def run_tesseract(inp: OcrInput, languages: str, *, timeout_s: float = _TIMEOUT_S) -> list[Block]:
    """The Tesseract half: TSV → blocks flagged ``ocr``, in page coordinates. Touches no PyMuPDF
    object and waits on a subprocess, so it runs beside the parser on another thread.

    Raises ``ImageOcrError`` when Tesseract fails or runs past ``timeout_s``.
    """
    exe = shutil.which("tesseract")
    if not exe:
        raise ImageOcrError("tesseract is not installed")
    env = child_environ(OMP_THREAD_LIMIT="1")  # Tesseract's OpenMP threads only oversubscribe small machines
    try:
        res = subprocess.run(
            [exe, "stdin", "stdout", "-l", languages, "--dpi", str(inp.dpi), "tsv"],
            input=inp.png,
            capture_output=True,
            timeout=timeout_s,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise ImageOcrError(f"tesseract took longer than {timeout_s:.0f} s") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise ImageOcrError(f"tesseract failed: {type(exc).__name__}") from exc
    if res.returncode != 0:
        raise ImageOcrError(f"tesseract exit {res.returncode}: {res.stderr.decode(errors='replace')[:200]}")
    return blocks_from_tsv(res.stdout.decode("utf-8", errors="replace"), inp.box[0], inp.box[1], inp.sx, inp.sy)


def blocks_from_tsv(tsv: str, x0: float, y0: float, sx: float, sy: float) -> list[Block]:
    """Tesseract TSV → blocks; pixel ``(px, py)`` maps to page ``(x0 + px*sx, y0 + py*sy)``."""
    lines: dict[tuple[int, int, int, int], list[tuple[Box, str, float]]] = {}
    for row in tsv.splitlines()[1:]:
        f = row.split("\t")
        if len(f) < 12 or f[0] != "5" or not f[11].strip():
            continue
        left, top, width, height = (float(v) for v in f[6:10])
        wbox = (x0 + left * sx, y0 + top * sy, x0 + (left + width) * sx, y0 + (top + height) * sy)
        key = (int(f[1]), int(f[2]), int(f[3]), int(f[4]))  # page, block, paragraph, line
        lines.setdefault(key, []).append((wbox, f[11].strip(), float(f[10])))
    paras: dict[tuple[int, int, int], list[Line]] = {}
    for key, words in lines.items():
        conf = sum(c for _, _, c in words) / len(words)
        text = " ".join(t for _, t, _ in words)
        if conf < MIN_LINE_CONF or not any(ch.isalnum() for ch in text):
            continue
        line = Line(text=text, bbox=words[0][0], size=0.0, bold=False, conf=conf)
        bx = words[0][0]
        for wbox, t, _ in words:
            line.words.append((wbox[0], wbox[1], wbox[2], wbox[3], t))
            bx = (min(bx[0], wbox[0]), min(bx[1], wbox[1]), max(bx[2], wbox[2]), max(bx[3], wbox[3]))
        line.bbox = bx
        line.size = round(bx[3] - bx[1], 1)
        paras.setdefault(key[:3], []).append(line)
    out: list[Block] = []
    for para in paras.values():
        b = _mk(para)
        b.ocr = True
        out.append(b)
    return out
