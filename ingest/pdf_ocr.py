"""Scanned-page detection and OCR through PyMuPDF's Tesseract bridge.

A page counts as scanned when its text layer is (nearly) empty and images cover most of it.
OCR uses ``page.get_textpage_ocr(full=True)``, which returns an ordinary ``TextPage``: the rest of
the parser treats OCR text exactly like a native text layer.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pymupdf

logger = logging.getLogger(__name__)

OCR_DPI = 300
_WANTED = ("eng", "deu", "jpn")


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


def ocr_textpage(page: pymupdf.Page, flags: int) -> Any:
    import pymupdf

    langs = "+".join(tesseract_languages())
    return page.get_textpage_ocr(flags=flags, language=langs, dpi=OCR_DPI, full=True, tessdata=pymupdf.get_tessdata())
