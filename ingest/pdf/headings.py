"""Headings: from the PDF outline when it is sane, else from font size, weight and numbering.

The outline is sane when every entry points to a valid page and at least half of the titles are
found on their page (matched against the first one to three lines of a text block, ignoring case,
punctuation and section numbers). A title found in the first lines of a longer block splits that
block, so the heading never ends up inside a paragraph. Entries whose title is not found still
open a section, anchored at the top of their page.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from folio.ingest.pdf.text import Block, _mk

NUMBERED = re.compile(r"^\s*((?:\d+|[A-Z](?=\.\d))(?:\.\d+)*)\.?\s+\S")
_NUM_PREFIX = re.compile(
    r"^\s*(?:(?:chapter|appendix|section|part)\s+)?(?:\d+|[A-Z](?=\.\d))(?:\.\d+)*\.?\s+", re.I
)
_NONWORD = re.compile(r"[\W_]+")
# A heading numbered after a keyword ("PART II", "Item 7A. Management's Discussion", "Note 8 – Debt"), as
# filings, contracts and statutes number theirs: bold at the body's size, so neither size nor a bare number
# finds it. The keyword gives the level: parts and chapters hold items, articles and sections; those hold notes.
# A title follows the number after a stop, a dash or a capital ("Note 1 to paragraph (g)" is a sentence).
KEYED = re.compile(r"^\s*((?i:part|chapter|item|article|section|note))\s+(?:\d{1,3}[A-Z]?|[IVX]{1,5})"
                   r"(?=[.:]|\s*[-\u2013\u2014]|\s+[A-Z]|\s*$)")
KEY_LEVEL = {"part": 1, "chapter": 1, "item": 2, "article": 2, "section": 2, "note": 3}


@dataclass(slots=True)
class Heading:
    page: int  # 0-based page index
    block: int  # index into that page's blocks; -1 = top of page (title not found)
    level: int
    title: str
    in_body: bool = False  # the heading's block stays a paragraph too (a keyed heading: see headings_from_fonts)


def norm(text: str) -> str:
    return _NONWORD.sub("", _NUM_PREFIX.sub("", text).lower())


def _split(blocks: list[Block], i: int, k: int) -> None:
    b = blocks[i]
    if 0 < k < len(b.lines):
        blocks[i : i + 1] = [_mk(b.lines[:k]), _mk(b.lines[k:])]


def _match(blocks: list[Block], start: int, title: str) -> tuple[int, int] | None:
    t = norm(title)
    if not t:
        return None
    for i in range(start, len(blocks)):
        if blocks[i].role != "para" or blocks[i].ocr:
            continue
        lines = blocks[i].lines
        acc = ""
        for k in range(1, min(3, len(lines)) + 1):
            acc = (acc + " " + lines[k - 1].text).strip()
            if norm(acc) == t:
                return i, k
        full = norm(blocks[i].text)
        if t in full and len(full) <= len(t) + 12:
            return i, len(lines)
    return None


def headings_from_toc(toc: list[list[object]], pages: list[list[Block]]) -> list[Heading] | None:
    """Headings from ``doc.get_toc()``, or None when the outline is not sane."""
    n = len(pages)
    entries = [(int(str(e[0])), str(e[1]).strip(), int(str(e[2]))) for e in toc]
    if not entries or any(not 1 <= p <= n for _, _, p in entries):
        return None
    out: list[Heading] = []
    found = 0
    cursor: dict[int, int] = {}
    for level, title, pno in entries:
        blocks = pages[pno - 1]
        m = _match(blocks, cursor.get(pno - 1, 0), title)
        if m is None:
            out.append(Heading(pno - 1, -1, level, title))
            continue
        i, k = m
        _split(blocks, i, k)
        blocks[i].role = "heading"
        cursor[pno - 1] = i + 1
        found += 1
        out.append(Heading(pno - 1, i, level, title))
    if found * 2 < len(entries):
        for blocks in pages:
            for b in blocks:
                if b.role == "heading":
                    b.role = "para"
        return None
    return out


def body_size(pages: list[list[Block]]) -> float:
    sizes: Counter[float] = Counter()
    for blocks in pages:
        for b in blocks:
            if b.ocr:
                continue
            for ln in b.lines:
                sizes[ln.size] += len(ln.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def _running_heads(pages: list[list[Block]]) -> set[str]:
    """Texts (digits removed) of first/last blocks repeated on many pages: headers and footers."""
    counts: Counter[str] = Counter()
    for blocks in pages:
        seen = {re.sub(r"\d+", "", norm(b.text)) for b in blocks[:2] + blocks[-2:]}
        counts.update(seen)
    limit = max(3, int(0.3 * len(pages)))
    return {t for t, c in counts.items() if c >= limit}


class _Candidate(NamedTuple):
    page: int
    block: int
    size: float
    title: str
    depth: int  # a keyed heading's level, else its numbering depth (0: none)
    keyed: bool
    by_key: bool  # found by its keyword alone (set like the body)


def headings_from_fonts(pages: list[list[Block]]) -> list[Heading]:
    """Headings from font size, weight and numbering. Keyword-numbered headings (``KEYED``) take their
    keyword's level, and every other heading nests under the last of them (a "737 MAX" heading in large
    type inside "Note 13" stays inside it), so a filing's path reads "PART II > Item 8 > Note 13 > ...";
    a document without them keeps the levels of size and numbering alone. A heading found by its keyword
    alone is set like the body and often runs into it ("Item 2. Properties. Our principal office..."): its
    block opens the section and stays a paragraph of it, so what is searchable does not change, only the
    sections and their paths."""
    body = body_size(pages)
    heads = _running_heads(pages)
    cands: list[_Candidate] = []
    for pno, blocks in enumerate(pages):
        for i, b in enumerate(blocks):
            if b.role != "para" or b.ocr:
                continue
            text = " ".join(b.text.split())
            words = text.split()
            if len(b.lines) > 3 or not 1 <= len(words) <= 16 or not any(c.isalpha() for c in text):
                continue
            key = KEYED.match(text)
            stop = text[-1] in ".,;"  # the end of a sentence, unless a keyed heading's period
            if (stop and not (key and text[-1] == ".")) or re.sub(r"\d+", "", norm(text)) in heads:
                continue
            num = NUMBERED.match(text)
            size = b.size
            by_type = not stop and (size >= body * 1.15 or (b.bold and (num is not None or size >= body * 1.05)))
            if by_type or (b.bold and key is not None):
                depth = KEY_LEVEL[key.group(1).lower()] if key else num.group(1).count(".") + 1 if num else 0
                cands.append(_Candidate(pno, i, size, text, depth, key is not None, not by_type))
    sizes = sorted({round(c.size * 2) / 2 for c in cands if not c.keyed}, reverse=True)
    out: list[Heading] = []
    under = 0  # the level of the last keyed heading
    for pno, i, size, text, depth, keyed, by_key in cands:
        if keyed:
            level = under = depth
        else:
            level = under + (depth or min(6, sizes.index(round(size * 2) / 2) + 1))
        if not by_key:
            pages[pno][i].role = "heading"
        out.append(Heading(pno, i, level, text, in_body=by_key))
    return out
