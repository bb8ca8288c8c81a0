"""Page furniture and navigation: running headers, footers, page numbers and table-of-contents lines.

They are page metadata, not evidence. ``mark_furniture`` runs between the two parse passes, when every
page's blocks are known, and re-labels such blocks so that no paragraph, sentence or section carries
them:

* ``role="furniture"``: a block in the top or bottom band of the page that is a bare page number
  ("12", "Page 3 of 9", "- iv -"), or whose text, digits masked, recurs in the same band on at least
  ``MIN_REPEATS`` pages (a running header such as "Issue 26 (2024-02-28) Copyright ... 28"). Blocks set
  larger than the body text are never furniture (slide titles and headings repeat too). The first copy
  of a running header or footer stays evidence on its page: what it says (a catalog number, a date, a
  confidentiality line) is asked about too, and once per document costs almost nothing. A statement's
  header repeats the same way ("(in millions)", "December 28, 2019  December 29, 2018" atop each
  statement page) and is never furniture: without it a figure cannot be placed in a year
  (``statement_header``).
* ``role="furniture"`` too: a page number printed above the bottom band (filings set it 110-170 pt above the
  page's foot, and on a short page it sits mid-page). The last block of a page, one bare number at body size
  with nothing below it, is furniture when the number follows the page sequence: its value less the page's
  index is the same on at least ``MIN_REPEATS`` pages (``_sequence_numbers``). A figure that ends a page does
  not keep that step from page to page.
* ``role="toc"``: a block whose lines mostly end in dot leaders and a page number
  ("Installation ........ 12"): navigation, kept out of paragraphs and sentences.

Both stay out of the page text as well (``page_text`` rebuilds it), so a page sent whole is evidence
only. The printed page label (``PageData.label``, from the PDF's page labels) is kept on the page
region, so "page 12" can still be resolved (``retrieval.pageref``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from folio.ingest.pdf.regions import PageData
from folio.ingest.pdf.statement_header import statement_header
from folio.ingest.pdf.text import Block

BAND = 0.12  # top/bottom share of the page height where running headers and footers live
MIN_REPEATS = 3  # pages a masked header/footer text must recur on
EDGE_BLOCKS = 3  # only the first/last blocks of a page (by position) can be furniture

_PAGE_NUMBER = re.compile(
    r"^[\s\-–—|·•]*(?:(?:page|seite|p\.|s\.|pg\.?)\s*)?(?:\d{1,4}|[ivxlcdm]{1,7})"
    r"(?:\s*(?:of|/|von|de|sur)\s*\d{1,4})?[\s\-–—|·•]*$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
_LEADER = re.compile(r"(?:(?:\.\s?){4,}|…{2,})\s*(?:\d{1,4}|[ivxlcdm]{1,6})\b", re.IGNORECASE)


def _mask(text: str) -> str:
    return _SPACE.sub(" ", _DIGITS.sub("#", text.casefold())).strip()


def _band(b: Block, height: float) -> str | None:
    if b.bbox[3] <= BAND * height:
        return "top"
    if b.bbox[1] >= (1.0 - BAND) * height:
        return "bottom"
    return None


def body_size(pages: Sequence[PageData]) -> float:
    """The most common font size, weighted by characters (0 when there is no text)."""
    sizes: Counter[float] = Counter()
    for p in pages:
        for b in p.blocks:
            for ln in b.lines:
                sizes[round(ln.size, 1)] += len(ln.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _edge_candidates(p: PageData) -> list[tuple[Block, str]]:
    order = sorted((b for b in p.blocks if b.role == "para" and not b.ocr), key=lambda b: (b.bbox[1], b.bbox[0]))
    edge = order[:EDGE_BLOCKS] + order[max(EDGE_BLOCKS, len(order) - EDGE_BLOCKS):]
    out = []
    for b in edge:
        band = _band(b, p.height)
        if band is not None:
            out.append((b, band))
    return out


def is_toc_block(b: Block) -> bool:
    """Most lines end in dot leaders and a short page reference."""
    lines = [ln.text for ln in b.lines if ln.text.strip()]
    return bool(lines) and sum(1 for t in lines if _LEADER.search(t)) >= max(1, (len(lines) + 1) // 2)


def mark_furniture(pages: Sequence[PageData]) -> int:
    """Re-label furniture and table-of-contents blocks in place; returns how many blocks changed.

    Scanned pages read by OCR take part too (their headers repeat as well); text larger than the body
    size never counts as furniture, nor does a statement's header (``statement_header``).
    """
    cands, seen = _running_candidates(pages)
    changed = 0
    kept: set[tuple[str, str]] = set()
    for p, b, band, key in cands:  # pages in order, so the first copy of a running text is kept
        number = bool(_PAGE_NUMBER.match(b.text))
        if not number and len(seen[(band, key)]) < MIN_REPEATS:
            continue
        if statement_header(b, p.blocks, p.tables):
            kept.add((band, key))  # a statement's unit or periods ("(in millions)", "2019 2018"): evidence
            continue
        if not number and (band, key) not in kept:
            kept.add((band, key))
            continue
        b.role = "furniture"
        changed += 1
    for b in _sequence_numbers(pages):
        b.role = "furniture"
        changed += 1
    for p in pages:
        for b in p.blocks:
            if b.role == "para" and is_toc_block(b):
                b.role = "toc"
                changed += 1
    return changed


_BARE_NUMBER = re.compile(r"^[\s\-–—|·•]*(?:(?:page|seite|p\.|pg\.?)\s*)?(\d{1,4})[\s\-–—|·•]*$", re.IGNORECASE)


def _last_number(p: PageData, size: float) -> tuple[Block, int] | None:
    """The page's last block when it is one bare arabic number at body size with nothing below it, and its value."""
    live = [b for b in p.blocks if b.role != "furniture"]
    if not live:
        return None
    last = max(live, key=lambda b: (b.bbox[1], b.bbox[0]))
    if last.role != "para" or last.ocr or len(last.lines) != 1 or (size and last.size > size + 0.6):
        return None
    m = _BARE_NUMBER.match(last.text)
    if m is None:
        return None
    top = last.bbox[1]
    if any(b is not last and b.bbox[3] > top + 1.0 for b in live):
        return None  # a block beside it reaches lower: a figure in a row or a column, not the page's foot
    if any(t.bbox[3] > top + 1.0 for t in p.tables) or any(f.bbox[3] > top + 1.0 for f in p.figures):
        return None
    return last, int(m.group(1))


def _sequence_numbers(pages: Sequence[PageData]) -> list[Block]:
    """The pages' last blocks that are page numbers in sequence (module docstring), not yet furniture."""
    size = body_size(pages)
    found = [(p.index, *hit) for p in pages if (hit := _last_number(p, size)) is not None]
    steps = Counter(value - index for index, _, value in found)
    return [b for index, b, value in found if steps[value - index] >= MIN_REPEATS]


def _running_candidates(
    pages: Sequence[PageData],
) -> tuple[list[tuple[PageData, Block, str, str]], dict[tuple[str, str], set[int]]]:
    """The blocks at the pages' edges that may be furniture, pages in order, each with its page, its band and its
    masked text; and for each band and masked text, the pages (0-based) it is on."""
    size = body_size(pages)
    cands: list[tuple[PageData, Block, str, str]] = []
    seen: dict[tuple[str, str], set[int]] = defaultdict(set)
    for p in pages:
        for b, band in _edge_candidates(p):
            if size and b.size > size + 0.6:
                continue
            key = _mask(b.text)
            if not key:
                continue
            cands.append((p, b, band, key))
            seen[(band, key)].add(p.index)
    return cands, seen


def page_text(p: PageData) -> None:
    """Rebuild ``p.text`` without furniture blocks, and every other block's ``char_start`` in it.

    Same layout as the first pass: lines joined by "\\n", blocks by "\\n\\n".
    """
    parts: list[str] = []
    off = 0
    for b in p.blocks:
        if b.role == "furniture":
            b.char_start = -1
            continue
        b.char_start = off
        btext = "\n".join(ln.text for ln in b.lines)
        parts.append(btext)
        off += len(btext) + 2
    p.text = "\n\n".join(parts)
