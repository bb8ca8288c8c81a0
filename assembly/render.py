"""What a unit looks like once it is sent: body text, the regions it carries, its locators.

Also the structural truncations (``truncations``): shorter versions of a unit cut only at sentence
boundaries (spans) or row boundaries (tables, header kept). Images are never truncated.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from folio.assembly.expansion.pagetext import page_title
from folio.assembly.expansion.sections import SectionView
from folio.assembly.expansion.tables import left_out_note, ranked_rows, split_table, table_markdown, table_text
from folio.assembly.expansion.units import Unit
from folio.assembly.package import LocatorOut
from folio.kernel.model import BBox, Region


@dataclass(frozen=True)
class Body:
    text: str
    regions: tuple[Region, ...]
    context: Region | None  # the structural region the block stands for, if any
    context_id: str

    @cached_property
    def pages(self) -> list[int]:
        return _pages(self.regions)


def _pages(regions: tuple[Region, ...]) -> list[int]:
    return sorted({loc.page for r in regions for loc in r.locators}) or [0]


def _span_text(v: SectionView, lo: int, hi: int) -> str:
    parts: list[str] = []
    cur: list[str] = []
    prev: str | None = "\0"
    for k in range(lo, hi + 1):
        pid = v.sent_para[k]
        if cur and pid != prev:
            parts.append(" ".join(cur))
            cur = []
        cur.append(v.sentences[k].text.strip())
        prev = pid
    if cur:
        parts.append(" ".join(cur))
    return "\n\n".join(p for p in parts if p)


def _full_text(v: SectionView) -> tuple[str, list[Region]]:
    parts: list[str] = []
    regions: list[Region] = []
    for b in v.blocks():
        if b.kind == "table":
            parts.append(table_markdown(b))
            regions.append(b)
        elif b.region_id in v.para_range:
            lo, hi = v.para_range[b.region_id]
            parts.append(_span_text(v, lo, hi))
            regions.extend(v.sentences[lo:hi + 1])
        elif b.text.strip():
            parts.append(b.text.strip())
            regions.append(b)
    for k in v.orphans():
        parts.append(v.sentences[k].text.strip())
        regions.append(v.sentences[k])
    return "\n\n".join(p for p in parts if p), regions


def _span_context(v: SectionView, lo: int, hi: int, full: bool) -> tuple[Region | None, str]:
    if not full:
        pids = {v.sent_para[k] for k in range(lo, hi + 1)}
        if len(pids) == 1:
            (pid,) = pids
            if pid is not None and pid in v.para_index:
                return v.paragraphs[v.para_index[pid]], pid
    if v.section is not None:
        return v.section, v.section.region_id
    s = v.sentences[lo]
    return None, s.region_id if lo == hi else f"{s.region_id}..{v.sentences[hi].region_id}"


def body_of(u: Unit) -> Body:
    if u.kind == "span" and u.view is not None:
        v = u.view
        if u.full:
            if v.full_render is None:
                text, regions = _full_text(v)
                ctx, cid = _span_context(v, u.lo, u.hi, True)
                v.full_render = Body(text, tuple(regions), ctx, cid)
            assert isinstance(v.full_render, Body)
            return v.full_render
        else:
            text, regions = _span_text(v, u.lo, u.hi), list(v.sentences[u.lo:u.hi + 1])
        ctx, cid = _span_context(v, u.lo, u.hi, u.full)
        return Body(text, tuple(regions), ctx, cid)
    if u.kind == "table":
        return Body(table_text(u.regions), tuple(u.regions), u.regions[0], u.regions[0].region_id)
    if u.kind == "figure":
        r = u.regions[0]
        return Body(r.text.strip(), (r,), r, r.region_id)
    if u.kind == "page":
        page = u.regions[0]
        extra = [table_text([x]) if x.kind == "table" else x.text.strip() for x in u.absorbed]
        if u.image:
            text = "\n\n".join(t for t in extra if t)
        elif u.excerpt is not None:
            slices = sorted([u.excerpt, *u.more_excerpts])
            text = "\n[…]\n".join(page.text[a:b].strip() for a, b in slices)
            return Body(text, (page,), page, page.region_id)
        elif u.paras:
            return paragraphs_body(page, u.paras, u.absorbed, extra)
        else:
            text = page.text.strip()
        return Body(text, (page, *u.absorbed), page, page.region_id)
    r = u.regions[0]
    return Body(r.text.strip(), (r,), r, r.region_id)


GAP = "\n\n[…]\n\n"


def paragraphs_body(page: Region, chosen: Sequence[Region], absorbed: Sequence[Region] = (),
                    extra: Sequence[str] = ()) -> Body:
    """A page sent as some of its paragraphs and tables (``chosen``, in reading order), led by the page's
    title (``pagetext.page_title``) when none of them holds it: a slide's selected blocks keep the slide's
    name, which is often what the question asks for (measured: mmlb half A +1 answer at 2k, wide +0.5
    coverage at every budget, half B unchanged, one gold page of nine lost on one question; results log,
    2026-12-02). ``extra``: the texts of ``absorbed`` regions, after them."""
    text = "\n\n".join(t for t in [*(p.text.strip() for p in chosen), *extra] if t)
    title = page_title(page.text)
    if text and title is not None and title not in text:
        text = f"{title}\n\n{text}"
    return Body(text, (*chosen, *absorbed), page, page.region_id)


def runs_body(v: SectionView, runs: list[tuple[int, int]]) -> Body:
    """Disjoint sentence runs of one section as one block, gaps marked ``[…]``."""
    text = GAP.join(_span_text(v, lo, hi) for lo, hi in runs)
    regions = tuple(s for lo, hi in runs for s in v.sentences[lo:hi + 1])
    if len(runs) == 1:
        ctx, cid = _span_context(v, runs[0][0], runs[0][1], False)
    elif v.section is not None:
        ctx, cid = v.section, v.section.region_id
    else:
        ctx, cid = None, f"{regions[0].region_id}..{regions[-1].region_id}"
    return Body(text, regions, ctx, cid)


def truncations(u: Unit, trigger_regions: set[str], query_words: frozenset[str] = frozenset()) -> Iterator[Body]:
    """Shorter structural versions of ``u``, longest first.

    Spans shrink to contiguous sentence runs around the highest-priority trigger sentence (so the
    matched sentence survives and the cut happens at sentence boundaries); tables keep their header
    and the rows sharing most words with the question (``ranked_rows``; the leading rows when none
    does), in table order, and say how many rows they left out. Images yield nothing.
    """
    if u.kind == "span" and u.view is not None:
        v = u.view
        anchor = next((v.pos[t] for t in trigger_regions if t in v.pos), u.lo)
        anchor = min(max(anchor, u.lo), u.hi)
        n = u.hi - u.lo + 1
        for size in range(n if u.full else n - 1, 0, -1):
            lo = max(u.lo, min(anchor - (size - 1) // 2, u.hi - size + 1))
            hi = lo + size - 1
            ctx, cid = _span_context(v, lo, hi, False)
            yield Body(_span_text(v, lo, hi), tuple(v.sentences[lo:hi + 1]), ctx, cid)
    elif u.kind == "table":
        header, rows = split_table(table_text(u.regions))
        order = ranked_rows(rows, query_words)
        for k in range(len(rows) - 1, 0, -1):
            keep = sorted(order[:k])
            note = left_out_note(len(rows) - k, len(rows))
            yield Body("\n".join([*header, *(rows[i] for i in keep), note]), tuple(u.regions), u.regions[0],
                       u.regions[0].region_id)


def locators_of(regions: tuple[Region, ...] | list[Region]) -> list[LocatorOut]:
    """One locator per page: the union bbox of the regions on it, plus every line box."""
    by_page: dict[int, tuple[BBox, list[BBox]]] = {}
    for r in regions:
        for loc in r.locators:
            cur = by_page.get(loc.page)
            if cur is None:
                by_page[loc.page] = (loc.bbox, list(loc.line_boxes))
            else:
                cur[1].extend(loc.line_boxes)
                by_page[loc.page] = (cur[0].union(loc.bbox), cur[1])
    return [
        LocatorOut(page=p, bbox=bb, line_boxes=lb or None)
        for p, (bb, lb) in sorted(by_page.items())
    ]
