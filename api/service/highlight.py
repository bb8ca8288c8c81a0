"""Region images with lines highlighted: ``GET /v1/regions/{id}/image?highlight=...`` and MCP ``get_region``.

``highlight`` is either

- ``lines``: the region's own line boxes (a sentence's or paragraph's lines; a table, figure, section or page
  has none, so its box), or
- boxes in PDF points of the page shown (``ingest.model.COORD_CONVENTION``): ``x0,y0,x1,y1`` separated by
  ``;``, e.g. an item's ``lines`` on that page, or an answer's ``supporting_lines``. At most
  ``MAX_BOXES`` boxes in ``MAX_CHARS`` characters; each number finite, ``x0 <= x1``, ``y0 <= y1``, within
  ``MARGIN`` points of the page (then clipped to it).

With a highlight the image is always the render of one page of the region (``page``, default its first;
one of its pages), so the boxes and the pixels share one frame: a figure's crop is not used. Each box is
filled with translucent yellow and outlined, on a copy of the stored PNG (nothing is written). No field
names a server path: the image is the region's stored page render, found through the store.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from folio.api.errors import AssetNotFound
from folio.kernel.errors import InvalidRequest
from folio.kernel.model import BBox, Region

if TYPE_CHECKING:
    from folio.ingest.storage.interface import ServiceStore

MAX_CHARS = 4000
MAX_BOXES = 64
MARGIN = 2.0
FILL = (255, 214, 0)
FILL_ALPHA = 0.45
OUTLINE = (214, 96, 0)
_NUMBER = re.compile(r"^-?(?:\d+(?:\.\d*)?|\.\d+)$")


def parse(spec: str) -> str | list[tuple[float, float, float, float]]:
    """``"lines"``, or the boxes of ``spec`` (module docstring); ``InvalidRequest`` naming what is wrong."""
    if len(spec) > MAX_CHARS:
        raise InvalidRequest(f"highlight is over {MAX_CHARS} characters")
    spec = spec.strip()
    if spec == "lines":
        return "lines"
    parts = [p for p in spec.split(";") if p.strip()]
    if not parts:
        raise InvalidRequest("highlight must be 'lines' or boxes 'x0,y0,x1,y1;...' in PDF points")
    if len(parts) > MAX_BOXES:
        raise InvalidRequest(f"highlight has {len(parts)} boxes; at most {MAX_BOXES}")
    return [_box(p, k) for k, p in enumerate(parts)]


def _box(part: str, k: int) -> tuple[float, float, float, float]:
    nums = [x.strip() for x in part.split(",")]
    if len(nums) != 4 or not all(_NUMBER.match(x) for x in nums):
        raise InvalidRequest(f"highlight box {k + 1} must be four numbers 'x0,y0,x1,y1' (PDF points)")
    x0, y0, x1, y1 = (float(x) for x in nums)
    if not all(math.isfinite(v) for v in (x0, y0, x1, y1)) or x0 > x1 or y0 > y1:
        raise InvalidRequest(f"highlight box {k + 1} must have x0 <= x1 and y0 <= y1")
    return x0, y0, x1, y1


def boxes_for(region: Region, spec: str, page: int) -> list[BBox]:
    """The boxes to paint on ``page`` of ``region`` (page coordinates, clipped to the page)."""
    loc = next((loc for loc in region.locators if loc.page == page), None)
    if loc is None:
        raise InvalidRequest(f"page {page} is not a page of {region.region_id} (pages {region.pages})")
    w, h = loc.page_width, loc.page_height
    parsed = parse(spec)
    if isinstance(parsed, str):  # "lines"
        return [b for lc in region.locators if lc.page == page for b in (lc.line_boxes or (lc.bbox,))]
    out: list[BBox] = []
    for k, (x0, y0, x1, y1) in enumerate(parsed):
        if x0 < -MARGIN or y0 < -MARGIN or x1 > w + MARGIN or y1 > h + MARGIN:
            raise InvalidRequest(f"highlight box {k + 1} lies outside the page ({w:g} x {h:g} points)")
        out.append(BBox(x0=max(0.0, x0), y0=max(0.0, y0), x1=min(w, x1), y1=min(h, y1)))
    return out


def highlighted_png(store: ServiceStore, region: Region, spec: str, page: int | None) -> bytes:
    """The render of ``page`` (default: the region's first) with ``spec``'s boxes painted (module docstring)."""
    n = region.first_page if page is None else page
    boxes = boxes_for(region, spec, n)
    page_region = store.region_index(region.doc_id, region.version_id).page(region.doc_id, region.version_id, n)
    relative = page_region.meta_get("image") if page_region is not None else None
    if page_region is None or not relative:
        raise AssetNotFound(f"no page image for {region.region_id}")
    width = page_region.locators[0].page_width if page_region.locators else 0.0
    return paint(_asset(store, relative, region.region_id), boxes, width)


def _asset(store: ServiceStore, relative: str, what: str) -> bytes:
    try:  # the store's assets part reads a file or an object-store row, whichever this store has
        return store.read_asset(relative)
    except (LookupError, OSError) as e:
        raise AssetNotFound(f"no stored image for {what}") from e


def paint(png: bytes, boxes: list[BBox], page_width: float) -> bytes:
    """``png`` (a page render) with ``boxes`` (PDF points; the render's scale is its pixel width over
    ``page_width``) filled translucent yellow and outlined."""
    # function-level: PyMuPDF and numpy only for the few image requests that ask for a highlight
    import numpy as np
    import pymupdf

    fz: Any = pymupdf  # PyMuPDF's Pixmap is untyped
    src = fz.Pixmap(png)
    if src.alpha:
        src = fz.Pixmap(src, 0)  # drop the alpha channel
    if src.n != 3:
        src = fz.Pixmap(fz.csRGB, src)
    a = np.frombuffer(src.samples, dtype=np.uint8).reshape(src.h, src.w, src.n).astype(np.float32)
    scale = src.w / page_width if page_width > 0 else 1.0
    fill, line = np.array(FILL, np.float32), np.array(OUTLINE, np.float32)
    for b in boxes:
        x0, y0 = int(math.floor(b.x0 * scale)), int(math.floor(b.y0 * scale))
        x1, y1 = int(math.ceil(b.x1 * scale)), int(math.ceil(b.y1 * scale))
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(src.w, max(x1, x0 + 1)), min(src.h, max(y1, y0 + 1))
        if x0 >= x1 or y0 >= y1:
            continue
        area = a[y0:y1, x0:x1]
        area[:] = area * (1 - FILL_ALPHA) + fill * FILL_ALPHA
        for edge in (area[0, :], area[-1, :], area[:, 0], area[:, -1]):
            edge[:] = line
    out = fz.Pixmap(fz.csRGB, src.w, src.h, a.clip(0, 255).astype(np.uint8).tobytes(), False)
    data: Any = out.tobytes("png")
    return bytes(data)
