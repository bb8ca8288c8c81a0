"""A faster ``pymupdf.table.make_chars``, the step that dominates ``page.find_tables``.

PyMuPDF's table finder first turns every character in the clip into a dict (pdfplumber's shape).
Its ``make_chars`` transforms each character's box and origin with ``pymupdf.Rect``/``Point``
objects, one MuPDF call each: on reportlab's and why3's ruled pages that was half the parse time.
This version does the same float32 arithmetic as MuPDF's ``fz_transform_point`` /
``fz_transform_rect`` (rectilinear branch) in numpy for all characters of a page at once, and
builds dicts that compare equal to the original's (checked character by character on 180 corpus
pages, and by whole-document region hashes; ``tests/ingest/test_pdf_tablechars.py``).

It is installed only for the PyMuPDF version it was checked against, and a page whose
transformation matrix is not rectilinear (never seen: ``find_tables`` un-rotates pages first)
goes to the original.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

CHECKED_VERSIONS = ("2.0",)  # pymupdf.VersionBind values this was compared against
_ORIGINAL: Any = None


def fast_make_chars(page: Any, clip: Any = None) -> Any:
    import pymupdf
    from pymupdf import table

    a, b, c, d, e, f = (float(v) for v in page.transformation_matrix)
    eps = float(np.finfo(np.float32).eps)
    if abs(b) >= eps or abs(c) >= eps:
        return _ORIGINAL(page, clip=clip)
    chars = table.CHARS._list()
    page_number = page.number + 1
    page_height = page.rect.height
    textpage = page.get_textpage(clip=clip, flags=table.FLAGS)
    blocks = page.get_text("rawdict", textpage=textpage)["blocks"]
    doctop_base = page_height * page.number
    rows: list[tuple[Any, ...]] = []
    for block in blocks:
        for line in block["lines"]:
            ldir = (round(line["dir"][0], 4), round(line["dir"][1], 4))
            upright = ldir[1] == 0
            for span in sorted(line["spans"], key=lambda s: s["bbox"][0]):
                bold = bool(span["flags"] & pymupdf.TEXT_FONT_BOLD or span["char_flags"] & 8)
                color = pymupdf.sRGB_to_pdf(span["color"])
                for ch in sorted(span["chars"], key=lambda ch: ch["bbox"][0]):
                    rows.append((ch, span, bold, color, ldir, upright))
    if not rows:
        return textpage
    bb = np.asarray([r[0]["bbox"] for r in rows], dtype=np.float32)
    og = np.asarray([r[0]["origin"] for r in rows], dtype=np.float32)
    fa, fb, fc, fd, fe, ff = (np.float32(v) for v in (a, b, c, d, e, f))
    # fz_transform_point, in float: x' = x*a + y*c + e, y' = x*b + y*d + f
    ox = (og[:, 0] * fa + og[:, 1] * fc + fe).tolist()
    oy = (og[:, 0] * fb + og[:, 1] * fd + ff).tolist()
    # fz_transform_rect, rectilinear branch: swap the corners on a negative scale, map both
    x0, y0, x1, y1 = bb[:, 0], bb[:, 1], bb[:, 2], bb[:, 3]
    if fd < 0:
        y0, y1 = y1, y0
    if fa < 0:
        x0, x1 = x1, x0
    ry0 = (x0 * fb + y0 * fd + ff).tolist()
    ry1 = (x1 * fb + y1 * fd + ff).tolist()
    for i, (ch, span, bold, color, ldir, upright) in enumerate(rows):
        bx0, by0, bx1, by1 = (float(v) for v in ch["bbox"])
        chars.append(
            {
                "adv": bx1 - bx0 if upright else by1 - by0,
                "bottom": by1,
                "doctop": by0 + doctop_base,
                "fontname": span["font"],
                "height": by1 - by0,
                "matrix": (ldir[0], -ldir[1], ldir[1], ldir[0], ox[i], oy[i]),
                "ncs": "DeviceRGB",
                "non_stroking_color": color,
                "non_stroking_pattern": None,
                "object_type": "char",
                "page_number": page_number,
                "size": span["size"] if upright else by1 - by0,
                "stroking_color": color,
                "stroking_pattern": None,
                "bold": bold,
                "text": ch["c"],
                "top": by0,
                "upright": upright,
                "width": bx1 - bx0,
                "x0": bx0,
                "x1": bx1,
                "y0": ry0[i],
                "y1": ry1[i],
            }
        )
    return textpage


def install() -> bool:
    """Replace ``pymupdf.table.make_chars`` (idempotent); False when this PyMuPDF is unchecked."""
    global _ORIGINAL
    import pymupdf
    from pymupdf import table

    if table.make_chars is fast_make_chars:
        return True
    if pymupdf.VersionBind not in CHECKED_VERSIONS:
        logger.info("PyMuPDF %s: keeping its own make_chars (fast path checked on %s)", pymupdf.VersionBind,
                    ", ".join(CHECKED_VERSIONS))
        return False
    _ORIGINAL = table.make_chars
    table.make_chars = fast_make_chars
    return True
