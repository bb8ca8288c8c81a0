"""Build plausible document versions as Regions, without a PDF.

``make_doc`` lays sections out top to bottom on US-letter pages (612 x 792 pt), one line box per
sentence, with deterministic region ids (``ingest.model.region_id_for``), per-kind ``seq`` and one
page region per page. Blocks inside a section are:

- ``["Sentence one.", "Sentence two."]``: a paragraph of sentences;
- ``("table", ["A", "B"], [["1", "2"], ...])``: a table (Markdown in ``meta``);
- ``("figure", "Figure 1: caption")``: a figure with its caption as text.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from folio.kernel.hit import Hit, Source
from folio.kernel.model import BBox, Locator, Region, RegionKind, region_id_for

PAGE_W, PAGE_H = 612.0, 792.0
LINE_H = 14.0
TOP, BOTTOM = 72.0, 720.0

Block = list[str] | tuple[Any, ...]
SectionSpec = tuple[str, list[Block]]


class _Layout:
    def __init__(self, doc_id: str, version_id: str) -> None:
        self.doc_id, self.version_id = doc_id, version_id
        self.page, self.y = 1, TOP
        self.per_page: dict[tuple[int, str], int] = defaultdict(int)
        self.seq: dict[str, int] = defaultdict(int)
        self.regions: list[Region] = []
        self.page_text: dict[int, list[str]] = defaultdict(list)

    def take(self, height: float) -> tuple[int, float]:
        if self.y + height > BOTTOM and self.y > TOP:
            self.page, self.y = self.page + 1, TOP
        y = self.y
        self.y += height
        return self.page, y

    def rid(self, page: int, kind: RegionKind) -> str:
        self.per_page[(page, kind)] += 1
        return region_id_for(self.doc_id, self.version_id, page, kind, self.per_page[(page, kind)])

    def add(self, kind: RegionKind, text: str, locs: list[Locator], **kw: Any) -> Region:
        page = locs[0].page
        if kind in ("sentence", "table", "figure"):  # offsets into the page text built below
            start = sum(len(t) + 1 for t in self.page_text[page])
            locs = [locs[0].model_copy(update={"char_start": start, "char_end": start + len(text)}), *locs[1:]]
        seq = self.seq[kind]
        self.seq[kind] += 1
        r = Region(region_id=kw.pop("region_id", None) or self.rid(page, kind), doc_id=self.doc_id,
                   version_id=self.version_id, kind=kind, text=text, locators=tuple(locs), seq=seq, **kw)
        self.regions.append(r)
        if kind in ("sentence", "table", "figure"):
            self.page_text[page].append(text)
        return r


def _loc(page: int, box: tuple[float, float, float, float], lines: tuple[BBox, ...] = ()) -> Locator:
    """A locator on ``page`` with the box ``(x0, y0, x1, y1)`` (and its ``lines``)."""
    x0, y0, x1, y1 = box
    return Locator(page=page, bbox=BBox(x0=x0, y0=y0, x1=x1, y1=y1), page_width=PAGE_W, page_height=PAGE_H,
                   line_boxes=lines)


def table_md(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def make_doc(doc_id: str, sections: list[SectionSpec], version_id: str = "0123456789abcdef") -> list[Region]:
    lay = _Layout(doc_id, version_id)
    for heading, blocks in sections:
        page, y = lay.take(LINE_H * 1.5)
        sec = lay.add("section", heading, [_loc(page, (72, y, 540, y + LINE_H))],
                      heading_path=(heading,), level=1)
        sec = sec.model_copy(update={"section_id": sec.region_id})
        lay.regions[-1] = sec
        for block in blocks:
            if isinstance(block, list):
                _paragraph(lay, sec, block)
            elif block[0] == "table":
                _table(lay, sec, block[1], block[2])
            elif block[0] == "figure":
                _figure(lay, sec, block[1])
            else:  # pragma: no cover - builder misuse
                raise ValueError(block)
    pages = sorted({r.first_page for r in lay.regions})
    for p in pages:
        lay.regions.append(Region(
            region_id=region_id_for(doc_id, version_id, p, "page", 1), doc_id=doc_id, version_id=version_id,
            kind="page", text="\n".join(lay.page_text[p]), locators=(_loc(p, (0, 0, PAGE_W, PAGE_H)),),
            seq=p - 1, meta=(("image", f"pages/{p}.png"),)))
    return lay.regions


def _paragraph(lay: _Layout, sec: Region, sentences: list[str]) -> None:
    page, y = lay.take(LINE_H * len(sentences) + 6)
    # keep a paragraph on one page: if it does not fit, take() moved us; recompute its box
    lines = tuple(BBox(x0=72, y0=y + k * LINE_H, x1=540, y1=y + (k + 1) * LINE_H) for k in range(len(sentences)))
    para = lay.add("paragraph", " ".join(sentences),
                   [_loc(page, (72, y, 540, y + LINE_H * len(sentences)), lines)],
                   parent_id=sec.region_id, section_id=sec.region_id, heading_path=sec.heading_path)
    for k, s in enumerate(sentences):
        lay.add("sentence", s, [_loc(page, (72, lines[k].y0, 540, lines[k].y1), (lines[k],))],
                parent_id=para.region_id, section_id=sec.region_id, heading_path=sec.heading_path)


def _table(lay: _Layout, sec: Region, header: list[str], rows: list[list[str]]) -> None:
    md = table_md(header, rows)
    page, y = lay.take(LINE_H * (len(rows) + 1) + 6)
    lay.add("table", md, [_loc(page, (72, y, 540, y + LINE_H * (len(rows) + 1)))], parent_id=sec.region_id,
            section_id=sec.region_id, heading_path=sec.heading_path,
            meta=(("markdown", md), ("header", " | ".join(header)), ("rows", f"1-{len(rows)}")))


def _figure(lay: _Layout, sec: Region, caption: str) -> None:
    page, y = lay.take(200)
    lay.add("figure", caption, [_loc(page, (100, y, 500, y + 190))], parent_id=sec.region_id,
            section_id=sec.region_id, heading_path=sec.heading_path,
            meta=(("caption", caption), ("source", "vector"), ("width_px", "800"), ("height_px", "380")))


def hit(r: Region, score: float, rank: int, retriever: str = "dense") -> Hit:
    modality = {"sentence": "text", "paragraph": "text", "section": "text"}.get(r.kind, r.kind)
    return Hit(region_id=r.region_id, doc_id=r.doc_id, version_id=r.version_id, kind=r.kind, modality=modality,
               pages=tuple(r.pages), score=score, rank=rank,
               sources=(Source(retriever=retriever, rank=rank, score=score),))


def by_kind(regions: list[Region], kind: str) -> list[Region]:
    return sorted((r for r in regions if r.kind == kind), key=lambda r: r.seq)


def find(regions: list[Region], text_part: str, kind: str = "sentence") -> Region:
    for r in regions:
        if r.kind == kind and text_part in r.text:
            return r
    raise KeyError(text_part)
