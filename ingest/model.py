"""The domain model that ingestion produces and every later stage reads.

Three identities, never confused (see DESIGN.md, "Identity"):

- ``doc_id``: the user's stable name for a document across its versions.
- ``version_id``: first 16 hex digits of the sha256 of the file bytes. Same bytes, same version.
- ``region_id``: ``{doc_id}@{version_id}:p{page}:{kind}{n}`` where ``n`` counts regions of that kind
  on that page in reading order (sections use the page they start on). It is a function of the bytes
  and the parser version only, so two ingests of the same file give identical ids.

Coordinates (``COORD_CONVENTION``): PDF points (1/72 inch), origin at the top-left corner of the
page as displayed (PyMuPDF's ``page.rect``: the CropBox with the page rotation applied), x to the
right, y downward. ``page_width``/``page_height`` are that rectangle's size, so a viewer that renders
the page at ``scale`` pixels per point draws ``bbox * scale``.

Everything here is a frozen pydantic model: hashable, so assembly can dedupe with sets, and with
``extra="forbid"`` so a typo in a field name is an error rather than silent data loss.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PARSER_VERSION = "3"  # 2: furniture and TOC lines kept out of regions, page labels; 3: page "scanned" meta
COORD_CONVENTION = "pdf-points, origin top-left of the displayed page (CropBox, rotation applied), y down"

RegionKind = Literal["section", "paragraph", "sentence", "table", "figure", "page"]
REGION_KINDS: tuple[RegionKind, ...] = ("section", "paragraph", "sentence", "table", "figure", "page")
# Kinds whose text is embedded and searched as the small unit ("children").
CHILD_KINDS: tuple[RegionKind, ...] = ("sentence", "table", "figure")


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BBox(Frozen):
    """A rectangle in points, in the coordinate convention of the module docstring."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def area(self) -> float:
        return max(0.0, self.width) * max(0.0, self.height)

    def union(self, other: BBox) -> BBox:
        return BBox(
            x0=min(self.x0, other.x0),
            y0=min(self.y0, other.y0),
            x1=max(self.x1, other.x1),
            y1=max(self.y1, other.y1),
        )

    def intersection_area(self, other: BBox) -> float:
        w = min(self.x1, other.x1) - max(self.x0, other.x0)
        h = min(self.y1, other.y1) - max(self.y0, other.y0)
        return max(0.0, w) * max(0.0, h)

    def as_list(self) -> list[float]:
        return [self.x0, self.y0, self.x1, self.y1]

    @classmethod
    def from_seq(cls, seq: tuple[float, float, float, float] | list[float]) -> BBox:
        x0, y0, x1, y1 = (float(v) for v in seq)
        return cls(x0=x0, y0=y0, x1=x1, y1=y1)


class Locator(Frozen):
    """Where a region sits on one page.

    A region that spans pages (a section, a table continued over a page break) has one locator
    per page, in page order. ``char_start``/``char_end`` index into that page's extracted text
    (``Page.text``); ``line_boxes`` are given for sentences and paragraphs so a viewer can
    highlight the lines rather than the enclosing rectangle.
    """

    page: int = Field(ge=1, description="1-based physical page index")
    bbox: BBox
    page_width: float
    page_height: float
    line_boxes: tuple[BBox, ...] = ()
    char_start: int | None = None
    char_end: int | None = None


class Region(Frozen):
    """One addressable piece of a document version.

    ``parent_id`` is the structural parent: a sentence's paragraph, a paragraph's / table's /
    figure's section, a section's enclosing section (None at top level and for pages).
    ``section_id`` is the innermost enclosing section (a section's own id for sections), which
    bounds sentence windows. ``seq`` is the region's position in reading order among all regions
    of the same kind in this version; it orders windows and neighbours and is never part of an id.
    ``meta`` carries kind-specific extras as plain strings: for tables ``markdown``, ``header``,
    ``rows`` (``"1-20"``) and ``continued_from``; for figures ``caption``, ``inner_text``, ``source``
    (``raster``/``vector``/``page-scan``) and ``image`` (asset path relative to the data dir); for
    pages ``image`` and ``ocr`` (``"1"`` when the text came from OCR).
    """

    region_id: str
    doc_id: str
    version_id: str
    kind: RegionKind
    text: str
    locators: tuple[Locator, ...]
    parent_id: str | None = None
    section_id: str | None = None
    heading_path: tuple[str, ...] = ()
    level: int = 0
    seq: int = 0
    tokens: int = 0
    meta: tuple[tuple[str, str], ...] = ()

    @property
    def pages(self) -> list[int]:
        return sorted({loc.page for loc in self.locators})

    @property
    def first_page(self) -> int:
        return self.locators[0].page if self.locators else 0

    def meta_get(self, key: str, default: str | None = None) -> str | None:
        for k, v in self.meta:
            if k == key:
                return v
        return default


def version_id_for(data: bytes) -> str:
    """Content hash of the file bytes: the version identity."""
    return hashlib.sha256(data).hexdigest()[:16]


def region_id_for(doc_id: str, version_id: str, page: int, kind: RegionKind, n: int) -> str:
    """Deterministic region id; ``n`` is the per-page, per-kind ordinal in reading order.

    >>> region_id_for("manual", "3f2a9c1e0b7d4a55", 60, "table", 2)
    'manual@3f2a9c1e0b7d4a55:p60:table2'
    """
    return f"{doc_id}@{version_id}:p{page}:{kind}{n}"


def parse_region_id(region_id: str) -> tuple[str, str, int, str]:
    """Split a region id into (doc_id, version_id, page, kind+ordinal).

    >>> parse_region_id("manual@3f2a9c1e0b7d4a55:p60:table2")
    ('manual', '3f2a9c1e0b7d4a55', 60, 'table2')
    """
    head, _, rest = region_id.rpartition("@")
    if not head or ":" not in rest:
        raise ValueError(f"not a region id: {region_id!r}")
    version_id, page_part, local = rest.split(":", 2)
    if not page_part.startswith("p") or not page_part[1:].isdigit():
        raise ValueError(f"not a region id: {region_id!r}")
    return head, version_id, int(page_part[1:]), local


class PageInfo(Frozen):
    """One page of a version: size, whether it was scanned/OCRed, and its rendered image."""

    page: int
    width: float
    height: float
    text_chars: int
    ocr: bool = False
    scanned: bool = False
    image: str | None = None  # asset path relative to the data dir


class PageIssue(Frozen):
    """A problem confined to one page; the rest of the document was still ingested."""

    page: int
    message: str


class IngestReport(Frozen):
    doc_id: str
    version_id: str
    filename: str
    pages: int
    regions_by_kind: dict[str, int]
    tables: int
    figures: int
    ocr_pages: int
    warnings: tuple[str, ...] = ()
    issues: tuple[PageIssue, ...] = ()
    seconds: float = 0.0
    status: Literal["created", "unchanged", "partial"] = "created"


class DocumentVersion(Frozen):
    """A stored, fully written version of a document."""

    doc_id: str
    version_id: str
    filename: str
    pages: int
    size_bytes: int
    parser_version: str
    created_at: float  # unix seconds
    regions: int = 0
    latest: bool = False
