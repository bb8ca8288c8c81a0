"""Figure candidates: raster images and clusters of vector drawings, with their captions.

Vector clusters are only computed when the page has drawings. A cluster is dropped when it is
tiny, a page border, mostly inside a detected table (table rules), a single rule, or a text
background box (only rectangles, with text covering much of it: code listings, shaded notes).
Overlapping raster and vector candidates are merged into one figure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from folio.ingest.pdf.text import Block, Box, clamp_box, union

if TYPE_CHECKING:
    import pymupdf

CAPTION = re.compile(r"^\s*(Figure|Fig\.|Abbildung|Abb\.|図)\s*[0-9A-Z]", re.I)
_MIN_SIDE = 24.0
_MIN_AREA = 2500.0


@dataclass(slots=True)
class FigureData:
    bbox: Box
    source: str  # raster | vector | page-scan
    caption: Block | None = None
    inner: list[Block] = field(default_factory=list)
    image: str | None = None  # crop asset path, when rendered
    image_size: tuple[int, int] | None = None  # pixel size of the rendered crop
    ocr: bool = False  # ``inner`` includes text OCRed from the image


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _overlap(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, w) * max(0.0, h)


def raster_boxes(page: pymupdf.Page) -> list[Box]:
    w, h = page.rect.width, page.rect.height
    mat = page.rotation_matrix if page.rotation else None
    out: list[Box] = []
    if not page.get_images():  # cheap xref listing; get_image_info builds a second TextPage
        return out
    for info in page.get_image_info():
        import pymupdf

        r = pymupdf.Rect(info["bbox"])
        if mat is not None:
            r = r * mat
        b = clamp_box(r, w, h)
        if b[2] - b[0] >= _MIN_SIDE and b[3] - b[1] >= _MIN_SIDE:
            out.append(b)
    return out


def vector_boxes(
    page: pymupdf.Page, drawings: list[dict[str, Any]], tables: list[Box], blocks: list[Block]
) -> list[Box]:
    if not drawings:
        return []
    w, h = page.rect.width, page.rect.height
    page_area = w * h
    out: list[Box] = []
    import pymupdf

    if len(drawings) > 3000:  # clustering is quadratic; such pages are patterns, not figures
        return []
    rects = [{"rect": pymupdf.Rect(d["rect"])} for d in drawings]
    for r in page.cluster_drawings(drawings=rects):
        b = clamp_box(r, w, h)
        bw, bh = b[2] - b[0], b[3] - b[1]
        if bw < _MIN_SIDE or bh < _MIN_SIDE or _area(b) < _MIN_AREA or _area(b) > 0.85 * page_area:
            continue
        if any(_overlap(b, t) > 0.5 * _area(b) for t in tables):
            continue
        members = [d for d in drawings if _overlap(clamp_box(d["rect"], w, h), b) > 0]
        only_rects = all(it[0] in ("re", "qu") for d in members for it in d.get("items", ()))
        text_area = sum(_overlap(bl.bbox, b) for bl in blocks)
        if only_rects and len(members) <= 4 and text_area > 0.25 * _area(b):
            continue  # a text background or frame (code listing, note box)
        out.append(b)
    return out


def merge_boxes(boxes: list[tuple[Box, str]]) -> list[tuple[Box, str]]:
    """Union overlapping boxes; the merged source is ``raster`` if any member was raster."""
    items = list(boxes)
    changed = True
    while changed:
        changed = False
        for i in range(len(items)):
            for j in range(i + 1, len(items)):
                if _overlap(items[i][0], items[j][0]) > 0:
                    src = "raster" if "raster" in (items[i][1], items[j][1]) else items[i][1]
                    items[i] = (union(items[i][0], items[j][0]), src)
                    del items[j]
                    changed = True
                    break
            if changed:
                break
    return sorted(items, key=lambda it: (it[0][1], it[0][0]))


def find_caption(fig: Box, blocks: list[Block], taken: set[int]) -> int | None:
    """Index of the nearest "Figure N" block below (preferred) or above, overlapping horizontally."""
    best: tuple[float, int] | None = None
    for i, bl in enumerate(blocks):
        if i in taken or not CAPTION.match(bl.lines[0].text):
            continue
        if min(bl.bbox[2], fig[2]) - max(bl.bbox[0], fig[0]) <= 0:
            continue
        below = bl.bbox[1] - fig[3]
        above = fig[1] - bl.bbox[3]
        if -5 <= below <= 60:
            dist = below
        elif -5 <= above <= 40:
            dist = above + 20  # captions below are more common; prefer them at equal distance
        else:
            continue
        if best is None or dist < best[0]:
            best = (dist, i)
    return best[1] if best else None
