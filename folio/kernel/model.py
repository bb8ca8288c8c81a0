"""The domain model that ingestion produces and every later stage reads.

Three identities, never confused (README, "Identity"):

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
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from folio.kernel.geometry import BBox as BBox  # the rectangle type is geometry's; model re-exports it

# 2: furniture and TOC lines kept out of regions, page labels; 3: page "scanned" meta;
# 4: typed region payloads (image pixel size, OCR engine and confidence)
# 5: the first copy of a running header/footer kept as evidence (ingest/pdf/furniture.py)
# 6: ligatures written out ("ﬁ" -> "fi")
# 7: tables read from word positions replace ruled-table readings with fewer rows right (word_tables="repair"),
#    tables carry a title and unit
# 8: keyword-numbered headings ("PART II", "Item 8.", "Note 3 -") found at the body's size
#    (ingest/pdf/headings.py), and other headings nested under them
# 9: unruled statements read as tables by default (word_tables="all"): a store written before reads them again
# 10: a statement's repeated unit and period header ("(in millions)", "December 28, 2019") is not furniture
#     (ingest/pdf/statement_header.py); a word table replaces a ruled reading as good but without the periods
# 11: a page number printed above the bottom band, in the page sequence, is furniture (ingest/pdf/furniture.py)
PARSER_VERSION = "11"
COORD_CONVENTION = "pdf-points, origin top-left of the displayed page (CropBox, rotation applied), y down"

RegionKind = Literal["section", "paragraph", "sentence", "table", "figure", "page"]
REGION_KINDS: tuple[RegionKind, ...] = ("section", "paragraph", "sentence", "table", "figure", "page")
# Kinds whose text is embedded and searched as the small unit ("children").
CHILD_KINDS: tuple[RegionKind, ...] = ("sentence", "table", "figure")


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


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


class ImageRef(Frozen):
    """A rendered image of a page or a figure crop, in the spirit of docling-core's ``ImageRef``.

    ``path`` is the PNG asset relative to the data dir. ``width_px``/``height_px`` are the pixel size
    of that PNG (what a vision model receives and is priced on); ``scale`` is pixels per PDF point
    (``dpi = scale * 72``). Rows written before parser v4 know only the scale (pages) or nothing
    (figures): those fields are None, and readers fall back to ``bbox * scale``.
    """

    path: str = ""
    media_type: Literal["image/png"] = "image/png"
    width_px: int | None = Field(default=None, ge=1)
    height_px: int | None = Field(default=None, ge=1)
    scale: float | None = Field(default=None, gt=0)

    @property
    def dpi(self) -> float | None:
        return None if self.scale is None else self.scale * 72.0


class OcrInfo(Frozen):
    """Text that came from OCR: which engine, and how sure it was.

    ``confidence`` is the engine's mean word confidence (0-100) over the lines kept (lines below
    ``ingest.pdf.ocr.MIN_LINE_CONF`` are dropped before); None for rows written before parser v4.
    """

    engine: Literal["tesseract"] = "tesseract"
    confidence: float | None = Field(default=None, ge=0, le=100)


class TextPayload(Frozen):
    """Paragraphs and sentences: only whether their text was OCRed (None: native text)."""

    kind: Literal["text"] = "text"
    ocr: OcrInfo | None = None


class TablePayload(Frozen):
    """A table part: its header row, which body rows it holds, and the part it continues.

    A table continued over a page break is one region per page; rows count on across the parts
    (``first_row``/``last_row`` are 1-based body-row numbers of the whole table, header excluded;
    an empty part has ``last_row == first_row - 1``), and ``continued_from`` is the previous
    part's region id. ``header`` is the header row the part is read under: a continuation that
    does not repeat the header has the first part's. The table's Markdown is the region's text.
    ``title`` and ``unit`` are what a table read from word positions found above it (the issuer and
    statement name, "Dollars in millions"; empty otherwise); its header's first cell reads ``title (unit)``.
    """

    kind: Literal["table"] = "table"
    header: tuple[str, ...] = ()
    first_row: int = Field(default=1, ge=1)
    last_row: int = Field(default=0, ge=0)
    continued_from: str | None = None
    title: str = ""
    unit: str = ""


FigureSource = Literal["raster", "vector", "page-scan"]


class FigurePayload(Frozen):
    """A figure: caption, the text inside it, where it came from and its crop."""

    kind: Literal["figure"] = "figure"
    caption: str = ""
    inner_text: str = ""
    source: FigureSource = "vector"
    image: ImageRef | None = None
    ocr: OcrInfo | None = None  # some of ``inner_text`` was OCRed from the image


class PagePayload(Frozen):
    """A page: its render, whether its text came from OCR, whether it is a scan, its printed label.

    ``scanned`` is None for rows written before parser v3 (readers then infer it, see
    ``assembly.expansion``); ``label`` is the PDF's /PageLabels label, "" when it has none.
    """

    kind: Literal["page"] = "page"
    image: ImageRef | None = None
    ocr: OcrInfo | None = None
    scanned: bool | None = None
    label: str = ""


RegionPayload = Annotated[
    TextPayload | TablePayload | FigurePayload | PagePayload, Field(discriminator="kind")
]
# Which payload kind each region kind carries (sections carry none).
PAYLOAD_KIND: dict[RegionKind, str | None] = {
    "section": None,
    "paragraph": "text",
    "sentence": "text",
    "table": "table",
    "figure": "figure",
    "page": "page",
}


class Region(Frozen):
    """One addressable piece of a document version.

    ``parent_id`` is the structural parent: a sentence's paragraph, a paragraph's / table's /
    figure's section, a section's enclosing section (None at top level and for pages).
    ``section_id`` is the innermost enclosing section (a section's own id for sections), which
    bounds sentence windows. ``seq`` is the region's position in reading order among all regions
    of the same kind in this version; it orders windows and neighbours and is never part of an id.
    ``payload`` carries the kind-specific extras, typed per kind (``PAYLOAD_KIND``): a table's
    header and rows, a figure's caption and crop, a page's render and OCR, a paragraph's OCR.

    ``meta`` is the older, flat view of the payload as string pairs (``meta_get("image")``,
    ``"render_scale"``, ``"width_px"``, ...), derived from the payload for readers that have not
    moved to it yet. Regions built with ``meta=`` (rows written before parser v4, old tests) are
    migrated into a payload on construction (``payload_from_meta``).
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
    payload: RegionPayload | None = None

    @model_validator(mode="before")
    @classmethod
    def _migrate_meta(cls, data: Any) -> Any:
        if isinstance(data, dict) and "meta" in data:
            data = dict(data)
            meta = data.pop("meta")
            if data.get("payload") is None:
                data["payload"] = payload_from_meta(data.get("kind", ""), meta)
        return data

    @model_validator(mode="after")
    def _payload_fits_kind(self) -> Region:
        want = PAYLOAD_KIND[self.kind]
        have = None if self.payload is None else self.payload.kind
        if have is not None and have != want:
            raise ValueError(f"a {self.kind} region cannot carry a {have} payload")
        return self

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """As pydantic's, but an ``update`` of ``meta`` (the legacy view) becomes a payload update,
        so ``r.model_copy(update={"meta": (*r.meta, ("width_px", "800"))})`` keeps working."""
        if update and "meta" in update:
            update = dict(update)
            update["payload"] = payload_from_meta(str(update.get("kind", self.kind)), update.pop("meta"))
        return super().model_copy(update=update, deep=deep)

    @property
    def pages(self) -> list[int]:
        return sorted({loc.page for loc in self.locators})

    @property
    def first_page(self) -> int:
        return self.locators[0].page if self.locators else 0

    @property
    def meta(self) -> tuple[tuple[str, str], ...]:
        """The payload as the flat string pairs regions carried before parser v4 (``meta_to_pairs``)."""
        return payload_to_meta(self.payload, self.text)

    def meta_get(self, key: str, default: str | None = None) -> str | None:
        for k, v in self.meta:
            if k == key:
                return v
        return default

    @property
    def image(self) -> ImageRef | None:
        """The page render or figure crop, if any."""
        p = self.payload
        return p.image if isinstance(p, FigurePayload | PagePayload) else None

    @property
    def ocr(self) -> OcrInfo | None:
        """How the text was OCRed, None when it is native (or the kind has no text of its own)."""
        p = self.payload
        return p.ocr if isinstance(p, TextPayload | FigurePayload | PagePayload) else None


# The flat ``meta`` keys of rows written before parser v4, and the payload each maps to.
LEGACY_META_KEYS = frozenset(
    {"markdown", "header", "rows", "continued_from", "caption", "inner_text", "source", "image", "ocr",
     "scanned", "render_scale", "label", "width_px", "height_px"}
)


def _flag(value: str | None) -> bool | None:
    return None if value is None else value == "1"


def _num(value: str | None) -> float | None:
    try:
        x = float(value) if value else None
    except ValueError:
        return None
    return x if x is not None and x > 0 and x != float("inf") else None


def _image_from_meta(m: Mapping[str, str]) -> ImageRef | None:
    keys = ("image", "render_scale", "width_px", "height_px")
    if not any(m.get(k) for k in keys):
        return None
    w, h = _num(m.get("width_px")), _num(m.get("height_px"))
    return ImageRef(
        path=m.get("image") or "",
        width_px=None if w is None else max(1, int(w)),
        height_px=None if h is None else max(1, int(h)),
        scale=_num(m.get("render_scale")),
    )


def payload_from_meta(kind: str, meta: Mapping[str, str] | Iterable[tuple[str, str]] | None) -> RegionPayload | None:
    """Migrate the flat string ``meta`` of a region written before parser v4 into its typed payload.

    >>> p = payload_from_meta("table", {"header": "A | B", "rows": "4-5", "continued_from": "d@v:p1:table1"})
    >>> p.kind, p.header, p.first_row, p.last_row, p.continued_from
    ('table', ('A', 'B'), 4, 5, 'd@v:p1:table1')
    >>> payload_from_meta("page", (("image", "assets/d@v/page-1.png"), ("ocr", "0"), ("render_scale", "1.5"))).image
    ImageRef(path='assets/d@v/page-1.png', media_type='image/png', width_px=None, height_px=None, scale=1.5)
    """
    m: dict[str, str] = dict(meta.items() if isinstance(meta, Mapping) else meta or ())
    unknown = set(m) - LEGACY_META_KEYS
    if unknown:
        raise ValueError(f"unknown region meta keys {sorted(unknown)} for a {kind} region")
    ocr = OcrInfo() if m.get("ocr") == "1" else None
    if kind in ("paragraph", "sentence"):
        return TextPayload(ocr=ocr)
    if kind == "table":
        first, _, last = (m.get("rows") or "").partition("-")
        header = m.get("header") or ""
        return TablePayload(
            header=tuple(header.split(" | ")) if header else (),
            first_row=int(first) if first.isdigit() else 1,
            last_row=int(last) if last.isdigit() else 0,
            continued_from=m.get("continued_from") or None,
        )
    if kind == "figure":
        source = m.get("source") or "vector"
        return FigurePayload(
            caption=m.get("caption") or "",
            inner_text=m.get("inner_text") or "",
            source=source if source in ("raster", "vector", "page-scan") else "vector",
            image=_image_from_meta(m),
            ocr=ocr,
        )
    if kind == "page":
        scanned = _flag(m.get("scanned"))
        return PagePayload(image=_image_from_meta(m), ocr=ocr, scanned=scanned, label=m.get("label") or "")
    if m:
        raise ValueError(f"a {kind} region carries no meta, got {sorted(m)}")
    return None


def _image_pairs(image: ImageRef | None, *, with_path: bool) -> list[tuple[str, str]]:
    out = [("image", image.path if image else "")] if with_path else []
    if image is None:
        return out
    if image.scale is not None:
        out.append(("render_scale", f"{image.scale:g}"))
    if image.width_px is not None and image.height_px is not None:
        out += [("width_px", str(image.width_px)), ("height_px", str(image.height_px))]
    return out


def payload_to_meta(payload: RegionPayload | None, text: str = "") -> tuple[tuple[str, str], ...]:
    """The flat string view of a payload, key for key what parser v3 wrote (plus ``width_px`` and
    ``height_px`` when the pixel size is known); ``text`` is a table's Markdown."""
    if payload is None:
        return ()
    if isinstance(payload, TextPayload):
        return (("ocr", "1"),) if payload.ocr else ()
    if isinstance(payload, TablePayload):
        out = [("markdown", text), ("header", " | ".join(payload.header)),
               ("rows", f"{payload.first_row}-{payload.last_row}")]
        if payload.continued_from:
            out.append(("continued_from", payload.continued_from))
        return tuple(out)
    if isinstance(payload, FigurePayload):
        image = _image_pairs(payload.image, with_path=True)
        return (("caption", payload.caption), ("inner_text", payload.inner_text), ("source", payload.source),
                image[0], *((("ocr", "1"),) if payload.ocr else ()), *image[1:])
    image = _image_pairs(payload.image, with_path=True)
    scanned = () if payload.scanned is None else (("scanned", "1" if payload.scanned else "0"),)
    return (image[0], ("ocr", "1" if payload.ocr else "0"), *scanned, *image[1:],
            *((("label", payload.label),) if payload.label else ()))


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
    # 1-based pages that ran past FOLIO_PAGE_TIMEOUT_S: their text is indexed, their tables,
    # figures and OCR are not (a warning each); ``folio ingest --redo-degraded`` parses them again.
    degraded_pages: tuple[int, ...] = ()

    def job_result(self, collection: str) -> dict[str, Any]:
        """What an ingest job reports when it is done (``/v1/jobs``), in-process or on Ray."""
        return {
            "doc_id": self.doc_id,
            "collection": collection,
            "version_id": self.version_id,
            "filename": self.filename,
            "pages": self.pages,
            "status": self.status,
            "report": self.model_dump(mode="json"),
        }


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
