"""Second parsing pass: the section tree and every region, with ids in reading order.

Reading order is page order, then PyMuPDF's block order within a page; a table or figure is
placed after the last text block that starts above it. Each region's id ordinal ``n`` counts
regions of its kind on its (first) page in that order; ``seq`` counts them across the version.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ingest.model import (
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
from ingest.pdf_figures import FigureData
from ingest.pdf_headings import Heading, headings_from_fonts, headings_from_toc
from ingest.pdf_sentences import split_sentences
from ingest.pdf_tables import TableData, to_markdown
from ingest.pdf_text import Block, Box, line_boxes_for_span, union
from ingest.tokens import get_tokenizer


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


def build_regions(
    pages: list[PageData], toc: list[list[object]], doc_id: str, version_id: str, title: str, scale: float
) -> list[Region]:
    tokenizer = get_tokenizer()
    counted: dict[str, int] = {}

    def ntok(text: str) -> int:
        # A one-sentence paragraph, its sentence and often its section share one text: count once.
        n = counted.get(text)
        if n is None:
            n = counted[text] = tokenizer.count(text)
        return n

    blocks = [p.blocks for p in pages]
    heads = headings_from_toc(toc, blocks) if toc else None
    if heads is None:
        heads = headings_from_fonts(blocks)
    by_pos: dict[tuple[int, int], list[Heading]] = {}
    for hd in heads:
        by_pos.setdefault((hd.page, hd.block), []).append(hd)
    ids = _Ids(doc_id, version_id)
    out: list[Region] = []
    sections: list[_Sec] = []
    stack: list[_Sec] = []
    current: _Sec | None = None

    def open_section(hd: Heading | None, page: int, box: Box) -> _Sec:
        nonlocal current
        if hd is None:
            sec = _Sec(None, title, 1, page, box)
        else:
            while stack and stack[-1].level >= hd.level:
                stack.pop()
            sec = _Sec(hd, hd.title, hd.level, page, box, parent=stack[-1] if stack else None)
        sec.region_id, _ = ids.next(page + 1, "section")
        sec.path = (sec.parent.path if sec.parent else ()) + (sec.title,)
        sec.add_box(page, box)
        sec.body.append(sec.title)
        if hd is not None:
            stack.append(sec)
        sections.append(sec)
        current = sec
        return sec

    def section() -> _Sec:
        return (
            current
            if current is not None
            else open_section(None, pno, (0.0, 0.0, pg.width, min(20.0, pg.height)))
        )

    def add(
        kind: RegionKind,
        page: int,
        text: str,
        locs: list[Locator],
        parent: str | None,
        sec: _Sec,
        payload: RegionPayload | None = None,
    ) -> str:
        rid, seq = ids.next(page + 1, kind)
        out.append(
            Region(
                region_id=rid,
                doc_id=doc_id,
                version_id=version_id,
                kind=kind,
                text=text,
                locators=tuple(locs),
                parent_id=parent,
                section_id=sec.region_id,
                heading_path=sec.path,
                level=sec.level,
                seq=seq,
                tokens=ntok(text),
                payload=payload,
            )
        )
        return rid

    prev_table: tuple[str, TableData, int, int] | None = None  # id, data, page, last row number
    for pno, pg in enumerate(pages):
        w, h = pg.width, pg.height

        def loc(box: Box, _p: int = pno, _w: float = w, _h: float = h, **kw: object) -> Locator:
            return Locator(page=_p + 1, bbox=_bb(box), page_width=_w, page_height=_h, **kw)

        # Page region first: its id never depends on the others.
        add_page = Region(
            region_id=region_id_for(doc_id, version_id, pno + 1, "page", 1),
            doc_id=doc_id,
            version_id=version_id,
            kind="page",
            text=pg.text,
            locators=(loc((0.0, 0.0, w, h), char_start=0, char_end=len(pg.text)),),
            heading_path=(),
            seq=pno,
            tokens=ntok(pg.text),
            payload=PagePayload(
                image=_image_ref(pg.image, pg.image_size, scale),
                ocr=_ocr_info(pg.blocks) if pg.ocr else None,
                scanned=pg.scanned,
                label=pg.label,
            ),
        )
        # Order tables and figures after the last block starting above them.
        inserts: dict[int, list[TableData | FigureData]] = {}
        placed: list[TableData | FigureData] = [*pg.tables, *pg.figures]
        for obj in placed:
            y0 = obj.bbox[1]
            pos = max((i for i, b in enumerate(pg.blocks) if b.bbox[1] <= y0 + 1 and not b.ocr), default=-1)
            inserts.setdefault(pos, []).append(obj)
        for v in inserts.values():
            v.sort(key=lambda o: (o.bbox[1], o.bbox[0]))
        for hd in by_pos.get((pno, -1), []):
            open_section(hd, pno, (0.0, 0.0, w, min(20.0, h)))
        for i in range(-1, len(pg.blocks)):
            if i >= 0:
                b = pg.blocks[i]
                for hd in by_pos.get((pno, i), []):
                    open_section(hd, pno, b.bbox)
                if b.role == "para":
                    sec = section()
                    text = b.text
                    start = b.char_start
                    text_payload = TextPayload(ocr=_ocr_info([b]) if b.ocr or pg.ocr and pg.scanned else None)
                    pid = add(
                        "paragraph",
                        pno,
                        text,
                        [
                            loc(
                                b.bbox,
                                line_boxes=tuple(_bb(ln.bbox) for ln in b.lines),
                                char_start=start,
                                char_end=start + len(text),
                            )
                        ],
                        sec.region_id,
                        sec,
                        text_payload,
                    )
                    sec.body.append(text)
                    sec.add_box(pno, b.bbox)
                    for s_text, a, e in split_sentences(text):
                        lbs = line_boxes_for_span(b, a, e)
                        box = lbs[0]
                        for lb in lbs[1:]:
                            box = union(box, lb)
                        add(
                            "sentence",
                            pno,
                            s_text,
                            [
                                loc(
                                    box,
                                    line_boxes=tuple(_bb(x) for x in lbs),
                                    char_start=start + a,
                                    char_end=start + e,
                                )
                            ],
                            pid,
                            sec,
                            text_payload,
                        )
            for obj in inserts.get(i, []):
                sec = section()
                sec.add_box(pno, obj.bbox)
                if isinstance(obj, TableData):
                    first = 1
                    cont = ""
                    if (
                        prev_table is not None
                        and prev_table[2] == pno - 1
                        and obj.bbox[1] < 0.35 * h
                        and prev_table[1].bbox[3] > 0.6 * pages[pno - 1].height
                        and len(prev_table[1].header) == len(obj.header)
                        and obj is pg.tables[0]
                    ):
                        cont = prev_table[0]
                        first = prev_table[3] + 1
                    rows = obj.rows
                    if cont and obj.header != prev_table[1].header:  # type: ignore[index]
                        rows = [obj.header, *rows]  # no repeated header: the first row is data
                        header = prev_table[1].header  # type: ignore[index]
                    else:
                        header = obj.header
                    md = to_markdown(header, rows)
                    last = first + len(rows) - 1
                    tpayload = TablePayload(
                        header=tuple(header), first_row=first, last_row=last, continued_from=cont or None
                    )
                    rid = add("table", pno, md, [loc(obj.bbox)], sec.region_id, sec, tpayload)
                    sec.body.append(md)
                    prev_table = (rid, TableData(obj.bbox, header, rows, obj.header_in_table), pno, last)
                else:
                    cap = " ".join(obj.caption.text.split()) if obj.caption else ""
                    inner = "\n".join(" ".join(b.text.split()) for b in obj.inner)
                    box = obj.bbox if obj.caption is None else union(obj.bbox, obj.caption.bbox)
                    text = "\n".join(t for t in (cap, inner) if t)
                    fpayload = FigurePayload(
                        caption=cap,
                        inner_text=inner,
                        source=obj.source,
                        image=_image_ref(obj.image, obj.image_size, scale),
                        ocr=_ocr_info(obj.inner) if obj.ocr else None,
                    )
                    add("figure", pno, text, [loc(box)], sec.region_id, sec, fpayload)
                    if cap:
                        sec.body.append(cap)
        if pg.tables and prev_table is not None and prev_table[2] == pno and pg.tables[-1].bbox[3] < 0.6 * h:
            prev_table = None
        out.append(add_page)
    # Sections: text = heading + own body; one locator per page with own content.
    for k, sec in enumerate(sections):
        parent = sec.parent.region_id if sec.parent else None
        locs = tuple(
            Locator(page=p + 1, bbox=_bb(b), page_width=pages[p].width, page_height=pages[p].height)
            for p, b in sorted(sec.boxes.items())
        )
        text = "\n\n".join(sec.body)
        rid = sec.region_id
        out.append(
            Region(
                region_id=rid,
                doc_id=doc_id,
                version_id=version_id,
                kind="section",
                text=text,
                locators=locs,
                parent_id=parent,
                section_id=rid,
                heading_path=sec.path,
                level=sec.level,
                seq=k,
                tokens=ntok(text),
            )
        )
    return out
