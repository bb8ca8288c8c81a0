"""A document version out of folio: its regions in reading order, as Markdown or as the JSON regions of
``GET /v1/documents/{doc_id}/export`` (``api.application.Folio.export``). Pure functions over regions.

What is exported: the sections' headings, paragraphs, tables and figures; not sentences (their paragraphs hold
them) nor pages (each page's text is the others'). Page furniture (running headers and footers, page numbers,
contents lines) is never a region: ingest keeps it out (``ingest.pdf.furniture``; the first copy of a running
header stays evidence on its page, and so here), so nothing has to be filtered out here.

Reading order (``reading_order``) is rebuilt from what the regions carry, not from the order a store scan
returns them in: sections in the order they opened (their ``seq``); in each section, page by page, its
paragraphs in reading order (``seq``) with each table and figure after the last paragraph that starts above it,
as ingest placed them (``ingest.pdf.regions._placements``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Literal

from folio.api.service.context import region_image_url
from folio.kernel.errors import InvalidRequest, LimitExceeded
from folio.kernel.model import FigurePayload, Region, RegionKind

ExportFormat = Literal["markdown", "json"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("markdown", "json")
EXPORTED_KINDS: tuple[RegionKind, ...] = ("section", "paragraph", "table", "figure")
MAX_EXPORT_CHARS = 20_000_000
"""The most region text one export carries: about 7,000 pages of dense text, far above any real report (a
1,000-page filing holds about 3 million characters). Over it, the export is refused (413), never cut short."""
MAX_EXPORT_REGIONS = 500_000
"""The most regions one export lists (a 1,000-page filing has about 40,000)."""


def export_format(fmt: str) -> ExportFormat:
    """``fmt`` if it is one of ``EXPORT_FORMATS``, else ``InvalidRequest`` (422) naming them.

    >>> export_format("json")
    'json'
    """
    for known in EXPORT_FORMATS:
        if fmt == known:
            return known
    raise InvalidRequest(f"unknown export format {fmt!r}: use one of {', '.join(EXPORT_FORMATS)}")


def reading_order(regions: Iterable[Region]) -> list[Region]:
    """The exported regions (``EXPORTED_KINDS``) in reading order: each section, then its own paragraphs,
    tables and figures (see the module's docstring). Body regions of a section not among ``regions`` follow at
    the end, in the same order."""
    sections: list[Region] = []
    body: dict[str | None, list[Region]] = defaultdict(list)
    for r in regions:
        if r.kind == "section":
            sections.append(r)
        elif r.kind in EXPORTED_KINDS:
            body[r.section_id].append(r)
    out: list[Region] = []
    for s in sorted(sections, key=lambda r: (r.seq, r.region_id)):
        out.append(s)
        out.extend(_section_body(body.pop(s.region_id, [])))
    out.extend(_section_body([r for rest in body.values() for r in rest]))
    return out


def _top(r: Region) -> tuple[float, float]:
    box = r.locators[0].bbox if r.locators else None
    return (box.y0, box.x0) if box is not None else (0.0, 0.0)


def _section_body(items: Sequence[Region]) -> list[Region]:
    """One section's paragraphs, tables and figures, page by page: paragraphs by ``seq``, each table or figure
    after the last paragraph of its page that starts above it (1 pt of slack, as ingest placed it)."""
    by_page: dict[int, list[Region]] = defaultdict(list)
    for r in items:
        by_page[r.first_page].append(r)
    out: list[Region] = []
    for page in sorted(by_page):
        paragraphs = sorted((r for r in by_page[page] if r.kind == "paragraph"), key=lambda r: (r.seq, r.region_id))
        placed: dict[int, list[Region]] = defaultdict(list)
        for obj in (r for r in by_page[page] if r.kind != "paragraph"):
            y0 = _top(obj)[0]
            after = max((i for i, p in enumerate(paragraphs) if _top(p)[0] <= y0 + 1), default=-1)
            placed[after].append(obj)
        for objs in placed.values():
            objs.sort(key=lambda r: (*_top(r), r.seq))
        out.extend(placed.get(-1, []))
        for i, p in enumerate(paragraphs):
            out.append(p)
            out.extend(placed.get(i, []))
    return out


def check_size(regions: Sequence[Region], *, max_chars: int | None = None, max_regions: int | None = None) -> None:
    """``LimitExceeded`` (413) when ``regions`` are more, or hold more text, than one export carries (default:
    ``MAX_EXPORT_REGIONS``, ``MAX_EXPORT_CHARS``)."""
    max_chars = MAX_EXPORT_CHARS if max_chars is None else max_chars
    max_regions = MAX_EXPORT_REGIONS if max_regions is None else max_regions
    if len(regions) > max_regions:
        raise LimitExceeded(f"the document is too large to export: {len(regions)} regions, over the limit of "
                            f"{max_regions}")
    chars = sum(len(r.text) for r in regions)
    if chars > max_chars:
        raise LimitExceeded(f"the document is too large to export: {chars} characters of text, over the limit "
                            f"of {max_chars}")


def page_marker(page: int) -> str:
    """The line that opens a page in the Markdown: an HTML comment, which Markdown renderers do not show.

    >>> page_marker(3)
    '<!-- page 3 -->'
    """
    return f"<!-- page {page} -->"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def heading_line(section: Region) -> str:
    """A section's heading, ``#`` per level (1 to 6): the last entry of its heading path.

    >>> from folio.kernel.model import Locator, BBox
    >>> loc = Locator(page=1, bbox=BBox(x0=0, y0=0, x1=1, y1=1), page_width=10, page_height=10)
    >>> heading_line(Region(region_id="d@v:p1:section2", doc_id="d", version_id="v", kind="section",
    ...     text="Scope\\n\\nBody.", locators=(loc,), heading_path=("Policy", "Scope"), level=2))
    '## Scope'
    """
    title = section.heading_path[-1] if section.heading_path else section.text.split("\n", 1)[0]
    return "#" * min(max(section.level, 1), 6) + " " + _one_line(title)


def figure_block(figure: Region) -> str:
    """A figure: its image (the region image the API serves) with its caption as the alt text, and the caption
    under it in italics."""
    payload = figure.payload
    caption = _one_line(payload.caption) if isinstance(payload, FigurePayload) else ""
    alt = caption.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]") or "figure"
    link = f"![{alt}]({region_image_url(figure.region_id)})"
    return f"{link}\n\n*{caption}*" if caption else link


def to_markdown(regions: Sequence[Region], pages: int) -> str:
    """``regions`` (in reading order, ``reading_order``) as Markdown: headings, paragraphs, tables (the stored
    Markdown table of each table region), figures (``figure_block``), and ``page_marker`` before the first
    block of each of the ``pages`` pages (pages without a block get theirs too, in order). A paragraph that
    repeats the heading just above it (a heading kept in the body text) is written once."""
    blocks: list[str] = []
    page = 0
    heading = ""
    for r in regions:
        while page < r.first_page:
            page += 1
            blocks.append(page_marker(page))
        if r.kind == "section":
            line = heading_line(r)
            heading = line.split(" ", 1)[1]
            blocks.append(line)
            continue
        if r.kind == "figure":
            blocks.append(figure_block(r))
        elif r.kind != "paragraph" or _one_line(r.text) != heading:
            blocks.append(r.text.strip())
        heading = ""
    while page < pages:
        page += 1
        blocks.append(page_marker(page))
    return "\n\n".join(b for b in blocks if b) + "\n"
