"""Second parsing pass: the section tree and every region, with ids in reading order.

Reading order is page order, then PyMuPDF's block order within a page; a table or figure is
placed after the last text block that starts above it. Each region's id ordinal ``n`` counts
regions of its kind on its (first) page in that order; ``seq`` counts them across the version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from folio.ingest.pdf.figures import FigureData
from folio.ingest.pdf.headings import Heading, headings_from_fonts, headings_from_toc
from folio.ingest.pdf.sentences import split_sentences
from folio.ingest.pdf.tables.base import TableData, to_markdown
from folio.ingest.pdf.text import Block, Box, line_boxes_for_span, union
from folio.kernel.model import (
    BBox,
    FigurePayload,
    ImageRef,
    Locator,
    OcrInfo,
    PagePayload,
    Region,
    RegionKind,
    RegionPayload,
    TablePayload,
    TextPayload,
    region_id_for,
)
from folio.kernel.tokens import get_tokenizer


@dataclass(slots=True)
class PageData:
    index: int  # 0-based
    width: float
    height: float
    blocks: list[Block] = field(default_factory=list)
    tables: list[TableData] = field(default_factory=list)
    figures: list[FigureData] = field(default_factory=list)
    image: str | None = None
    image_size: tuple[int, int] | None = None  # pixel size of the rendered PNG
    ocr: bool = False
    scanned: bool = False
    text: str = ""
    warnings: list[str] = field(default_factory=list)
    label: str = ""  # printed page label (PDF /PageLabels), "" when the PDF has none
    degraded: bool = False  # past its time limit: slow steps dropped (ingest.pdf.page_deadline)


def _bb(b: Box) -> BBox:
    return BBox(x0=b[0], y0=b[1], x1=b[2], y1=b[3])


def _image_ref(path: str | None, size: tuple[int, int] | None, scale: float) -> ImageRef | None:
    """The rendered PNG at ``path`` (None when nothing was rendered)."""
    if not path:
        return None
    w, h = size if size is not None else (None, None)
    return ImageRef(path=path, width_px=w, height_px=h, scale=scale)


def _ocr_info(blocks: list[Block]) -> OcrInfo:
    """Tesseract, with the mean confidence of ``blocks``' OCR lines (None when they carry none)."""
    confs = [ln.conf for b in blocks for ln in b.lines if ln.conf is not None]
    return OcrInfo(confidence=round(sum(confs) / len(confs), 1) if confs else None)


@dataclass
class _Sec:
    heading: Heading | None
    title: str
    level: int
    page: int
    bbox: Box
    parent: _Sec | None = None
    region_id: str = ""
    path: tuple[str, ...] = ()
    body: list[str] = field(default_factory=list)
    boxes: dict[int, Box] = field(default_factory=dict)

    def add_box(self, page: int, box: Box) -> None:
        self.boxes[page] = union(self.boxes[page], box) if page in self.boxes else box


class _Ids:
    def __init__(self, doc_id: str, version_id: str) -> None:
        self.doc_id, self.version_id = doc_id, version_id
        self.per_page: dict[tuple[int, str], int] = {}
        self.seq: dict[str, int] = {}

    def next(self, page: int, kind: RegionKind) -> tuple[str, int]:
        n = self.per_page.get((page, kind), 0) + 1
        self.per_page[(page, kind)] = n
        s = self.seq.get(kind, 0)
        self.seq[kind] = s + 1
        return region_id_for(self.doc_id, self.version_id, page, kind, n), s


# A table at the top of a page continues the last table of the previous page when it starts in the
# top CONTINUATION_TOP of its page (room for a running header and a repeated heading, no body text
# before it), the previous part reached into the bottom part of its page, below CUT_OFF_BOTTOM of
# the page height (the page break cut it off), and both have the same number of columns. A part
# ending higher up is a whole table with text after it; a table starting lower down has body text
# above it, so it is a new table. Heuristic values from the first parser, pinned by the Federal
# Register's cost table split over pages 5-6 (tests/ingest/test_parse.py); not tuned on a wider set.
CONTINUATION_TOP = 0.35
CUT_OFF_BOTTOM = 0.6


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a new region goes: its locator (on its page), its section, and its parent region (the section's,
    or a sentence's paragraph)."""

    loc: Locator
    sec: _Sec
    parent: str


@dataclass(slots=True)
class _TablePart:
    """The last table written: its region id, data (header as read), page (0-based) and last row number."""

    region_id: str
    data: TableData
    page: int
    last_row: int


@dataclass(frozen=True)
class VersionFacts:
    """What the regions of one version share: its document and version ids, the title of the untitled section
    before the first heading, and the render ``scale`` (pixels per point) of its page images."""

    doc_id: str
    version_id: str
    title: str
    scale: float


def build_regions(pages: list[PageData], toc: list[list[object]], facts: VersionFacts) -> list[Region]:
    """Every region of a version, in reading order; sections last (their text is known only at the end)."""
    return _RegionBuilder(pages, facts.doc_id, facts.version_id, facts.title, facts.scale).build(toc)


class _RegionBuilder:
    """The state one pass over the pages shares: id counters, the open section stack, the regions
    written so far, the table that the next page may continue, and a token count cache."""

    def __init__(self, pages: list[PageData], doc_id: str, version_id: str, title: str, scale: float) -> None:
        self.pages, self.doc_id, self.version_id, self.title, self.scale = pages, doc_id, version_id, title, scale
        self.tokenizer = get_tokenizer()
        self.counted: dict[str, int] = {}
        self.ids = _Ids(doc_id, version_id)
        self.out: list[Region] = []
        self.sections: list[_Sec] = []
        self.stack: list[_Sec] = []
        self.current: _Sec | None = None
        self.prev_table: _TablePart | None = None

    def build(self, toc: list[list[object]]) -> list[Region]:
        blocks = [p.blocks for p in self.pages]
        heads = headings_from_toc(toc, blocks) if toc else None
        if heads is None:
            heads = headings_from_fonts(blocks)
        by_pos: dict[tuple[int, int], list[Heading]] = {}
        for hd in heads:
            by_pos.setdefault((hd.page, hd.block), []).append(hd)
        for pno, pg in enumerate(self.pages):
            page_region = self.page_region(pno, pg)  # first: its id never depends on the others
            self.page_body(pno, pg, by_pos)
            self.out.append(page_region)
        self.out.extend(self.section_regions())
        return self.out

    # ------------------------------------------------------------------ helpers
    def ntok(self, text: str) -> int:
        # A one-sentence paragraph, its sentence and often its section share one text: count once.
        n = self.counted.get(text)
        if n is None:
            n = self.counted[text] = self.tokenizer.count(text)
        return n

    @staticmethod
    def loc(pno: int, pg: PageData, box: Box, **kw: Any) -> Locator:
        return Locator(page=pno + 1, bbox=_bb(box), page_width=pg.width, page_height=pg.height, **kw)

    def open_section(self, hd: Heading | None, page: int, box: Box) -> _Sec:
        if hd is None:
            sec = _Sec(None, self.title, 1, page, box)
        else:
            while self.stack and self.stack[-1].level >= hd.level:
                self.stack.pop()
            sec = _Sec(hd, hd.title, hd.level, page, box, parent=self.stack[-1] if self.stack else None)
        sec.region_id, _ = self.ids.next(page + 1, "section")
        sec.path = (sec.parent.path if sec.parent else ()) + (sec.title,)
        sec.add_box(page, box)
        if hd is None or not hd.in_body:  # else the heading's paragraph adds it
            sec.body.append(sec.title)
        if hd is not None:
            self.stack.append(sec)
        self.sections.append(sec)
        self.current = sec
        return sec

    def section(self, pno: int, pg: PageData) -> _Sec:
        """The open section; content before the first heading opens an untitled one (the title)."""
        if self.current is not None:
            return self.current
        return self.open_section(None, pno, (0.0, 0.0, pg.width, min(20.0, pg.height)))

    def add(self, kind: RegionKind, text: str, payload: RegionPayload, at: _Place) -> str:
        """Write a region of ``kind`` where ``at`` says; its id."""
        rid, seq = self.ids.next(at.loc.page, kind)
        sec = at.sec
        self.out.append(
            Region(
                region_id=rid,
                doc_id=self.doc_id,
                version_id=self.version_id,
                kind=kind,
                text=text,
                locators=(at.loc,),
                parent_id=at.parent,
                section_id=sec.region_id,
                heading_path=sec.path,
                level=sec.level,
                seq=seq,
                tokens=self.ntok(text),
                payload=payload,
            )
        )
        return rid

    # -------------------------------------------------------------------- pages
    def page_region(self, pno: int, pg: PageData) -> Region:
        return Region(
            region_id=region_id_for(self.doc_id, self.version_id, pno + 1, "page", 1),
            doc_id=self.doc_id,
            version_id=self.version_id,
            kind="page",
            text=pg.text,
            locators=(self.loc(pno, pg, (0.0, 0.0, pg.width, pg.height), char_start=0, char_end=len(pg.text)),),
            heading_path=(),
            seq=pno,
            tokens=self.ntok(pg.text),
            payload=PagePayload(
                image=_image_ref(pg.image, pg.image_size, self.scale),
                ocr=_ocr_info(pg.blocks) if pg.ocr else None,
                scanned=pg.scanned,
                label=pg.label,
            ),
        )

    def page_body(self, pno: int, pg: PageData, by_pos: dict[tuple[int, int], list[Heading]]) -> None:
        """Headings, paragraphs (with their sentences), tables and figures of one page, in reading order."""
        inserts = _placements(pg)
        for hd in by_pos.get((pno, -1), []):
            self.open_section(hd, pno, (0.0, 0.0, pg.width, min(20.0, pg.height)))
        for i in range(-1, len(pg.blocks)):
            if i >= 0:
                b = pg.blocks[i]
                for hd in by_pos.get((pno, i), []):
                    self.open_section(hd, pno, b.bbox)
                if b.role == "para":
                    self.paragraph(pno, pg, b)
            for obj in inserts.get(i, []):
                sec = self.section(pno, pg)
                sec.add_box(pno, obj.bbox)
                if isinstance(obj, TableData):
                    self.table(pno, pg, obj, sec)
                else:
                    self.figure(pno, pg, obj, sec)
        if (
            pg.tables
            and self.prev_table is not None
            and self.prev_table.page == pno
            and pg.tables[-1].bbox[3] < CUT_OFF_BOTTOM * pg.height
        ):
            self.prev_table = None

    def paragraph(self, pno: int, pg: PageData, b: Block) -> None:
        sec = self.section(pno, pg)
        text = b.text
        start = b.char_start
        payload = TextPayload(ocr=_ocr_info([b]) if b.ocr or pg.ocr and pg.scanned else None)
        line_boxes = tuple(_bb(ln.bbox) for ln in b.lines)
        loc = self.loc(pno, pg, b.bbox, line_boxes=line_boxes, char_start=start, char_end=start + len(text))
        pid = self.add("paragraph", text, payload, _Place(loc, sec, sec.region_id))
        sec.body.append(text)
        sec.add_box(pno, b.bbox)
        for s_text, a, e in split_sentences(text):
            lbs = line_boxes_for_span(b, a, e)
            box = lbs[0]
            for lb in lbs[1:]:
                box = union(box, lb)
            loc = self.loc(
                pno, pg, box, line_boxes=tuple(_bb(x) for x in lbs), char_start=start + a, char_end=start + e
            )
            self.add("sentence", s_text, payload, _Place(loc, sec, pid))

    def continues(self, pno: int, pg: PageData, obj: TableData) -> _TablePart | None:
        """The previous page's last table, when ``obj`` continues it (``CONTINUATION_TOP``). A table read
        with its own title or unit above it (a statement's next page, "(continued)") stands alone unless its
        header is the previous part's."""
        prev = self.prev_table
        if (
            prev is not None
            and prev.page == pno - 1
            and obj.bbox[1] < CONTINUATION_TOP * pg.height
            and prev.data.bbox[3] > CUT_OFF_BOTTOM * self.pages[pno - 1].height
            and len(prev.data.header) == len(obj.header)
            and obj is pg.tables[0]
            and (obj.header == prev.data.header or not (obj.title or obj.unit))
        ):
            return prev
        return None

    def table(self, pno: int, pg: PageData, obj: TableData, sec: _Sec) -> None:
        prev = self.continues(pno, pg, obj)
        first = prev.last_row + 1 if prev else 1
        rows, header = obj.rows, obj.header
        if prev is not None and obj.header != prev.data.header:
            rows = [obj.header, *rows]  # no repeated header: the first row is data
            header = prev.data.header
        md = to_markdown(header, rows)
        last = first + len(rows) - 1
        payload = TablePayload(
            header=tuple(header),
            first_row=first,
            last_row=last,
            continued_from=prev.region_id if prev else None,
            title=obj.title,
            unit=obj.unit,
        )
        rid = self.add("table", md, payload, _Place(self.loc(pno, pg, obj.bbox), sec, sec.region_id))
        sec.body.append(md)
        part = TableData(obj.bbox, header, rows, obj.header_in_table, obj.title, obj.unit)
        self.prev_table = _TablePart(rid, part, pno, last)

    def figure(self, pno: int, pg: PageData, obj: FigureData, sec: _Sec) -> None:
        cap = " ".join(obj.caption.text.split()) if obj.caption else ""
        inner = "\n".join(" ".join(b.text.split()) for b in obj.inner)
        box = obj.bbox if obj.caption is None else union(obj.bbox, obj.caption.bbox)
        text = "\n".join(t for t in (cap, inner) if t)
        payload = FigurePayload(
            caption=cap,
            inner_text=inner,
            source=obj.source,
            image=_image_ref(obj.image, obj.image_size, self.scale),
            ocr=_ocr_info(obj.inner) if obj.ocr else None,
        )
        self.add("figure", text, payload, _Place(self.loc(pno, pg, box), sec, sec.region_id))
        if cap:
            sec.body.append(cap)

    def section_regions(self) -> list[Region]:
        """Sections: text = heading + own body; one locator per page with own content."""
        out = []
        for k, sec in enumerate(self.sections):
            locs = tuple(self.loc(p, self.pages[p], b) for p, b in sorted(sec.boxes.items()))
            text = "\n\n".join(sec.body)
            out.append(
                Region(
                    region_id=sec.region_id,
                    doc_id=self.doc_id,
                    version_id=self.version_id,
                    kind="section",
                    text=text,
                    locators=locs,
                    parent_id=sec.parent.region_id if sec.parent else None,
                    section_id=sec.region_id,
                    heading_path=sec.path,
                    level=sec.level,
                    seq=k,
                    tokens=self.ntok(text),
                )
            )
        return out


def _placements(pg: PageData) -> dict[int, list[TableData | FigureData]]:
    """Tables and figures by the index of the last text block that starts above them (-1: none),
    top to bottom, left to right: where they go in reading order. OCR blocks do not count (their
    place is the image's own)."""
    inserts: dict[int, list[TableData | FigureData]] = {}
    placed: list[TableData | FigureData] = [*pg.tables, *pg.figures]
    for obj in placed:
        y0 = obj.bbox[1]
        pos = max((i for i, b in enumerate(pg.blocks) if b.bbox[1] <= y0 + 1 and not b.ocr), default=-1)
        inserts.setdefault(pos, []).append(obj)
    for v in inserts.values():
        v.sort(key=lambda o: (o.bbox[1], o.bbox[0]))
    return inserts
