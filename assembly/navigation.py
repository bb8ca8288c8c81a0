"""Navigation pages: a table of contents is not evidence unless the question asks about the document's layout.

A contents page matches most questions (it names every section), so retrieval finds it and a package spent
549 tokens of a 2,000-token budget on a 10-K's contents page for "What are the main risk factors related to
supply chain?" while the risk factor itself went as one sentence. The parser keeps contents lines set with dot
leaders out of the regions (``ingest.pdf.furniture``); a filing's contents page has none: ``Item 1A. Risk
Factors. 5``, the page number after a space, one entry a line.

``is_contents_page`` reads the text a page is sent with. A contents page has at least ``MIN_ENTRIES`` lines that
end in a page reference after a word (``Item 7. Management's Discussion ... 22``), making up ``ENTRY_SHARE`` of
its lines, with ``ASCENDING_SHARE`` of the references in one subsequence that never goes back (so ``ITEM 2``
between ``Unresolved Staff Comments 16`` and ``Properties 16`` does not count against it); or labels ending in
leaders with the page numbers as a column of their own (``Consolidated Balance Sheets …`` and ``59``, ``60``, ...
on lines of their own: an index to the financial statements); or leaders throughout when the page numbers are not
in the text at all. A statement's rows end in figures after figures (``994 983 1,031``); a contents page the
parser read as a table (``5. | Revenue | 89``) counts unless its numbers count its rows (``item-4 | 4``:
``COUNTING_SHARE`` of the steps are 1); a back-of-book index runs alphabetically, with page numbers that jump back
and forth. ``asks_for_layout`` is the exception: a question naming the contents, an outline, chapters, sections or
pages (in English, German, French, Spanish, Italian, Japanese or Chinese: "Auf welcher Seite beginnt laut
Inhaltsverzeichnis ...") gets the contents page like any other.
"""

from __future__ import annotations

import re
from bisect import bisect_right

MIN_ENTRIES = 8
ENTRY_SHARE = 0.5
ASCENDING_SHARE = 0.7
MAX_ENTRY_WORDS = 20
COUNTING_SHARE = 0.8  # of the steps between the numbers of a table's rows that are 1: it counts its rows
MIN_COLUMN = 6  # page numbers one a line, beside labels that end in leaders
MIN_DOTTED = 3  # leaders
LEADER_LINE_SHARE = 0.4  # lines with leaders, of a page whose page numbers are not in its text
MAX_PAGE_DIGITS = 4

# an entry: words (a letter at least), optional dot leaders, then a page reference at the line's end
_ENTRY = re.compile(r"^(?=.*[^\W\d_]).*?[^\d\s,.$%()](?:[\s.·…_]*)\s(\d{1,4}|[ivxlc]{1,6})\s*$", re.IGNORECASE)
_LEADER = re.compile(r"(?:…|\.{3,}|(?:\. ){3,}\.?)(?=\s|$)")
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
_NUMBERING = re.compile(
    r"(?:item|part|note|chapter|section|schedule|article|kapitel|abschnitt|teil|chapitre|partie|cap[ií]tulo|capitolo)"
    r"\s+[\w.]{1,5}", re.IGNORECASE,
)
_LAYOUT = re.compile(  # English, German, French, Spanish, Italian; Japanese and Chinese without word boundaries
    r"\b(?:contents|toc|outline|chapters?|sections?|parts?|headings?|index|pages?\s+numbers?|(?:which|what)\s+pages?"
    r"|inhalt\w*|seite\w*|kapitel\w*|abschnitt\w*|sommaire|mati[eè]res|chapitres?|pages?"
    r"|[ií]ndices?|cap[ií]tulos?|secci[oó]n\w*|p[aá]ginas?|capitol[oi]|sezion[ei])\b"
    r"|目次|目录|目錄|索引|ページ|页码|頁|章",
    re.IGNORECASE,
)


def _page_number(ref: str) -> int:
    """A page reference as a number; roman numerals (front matter) count before page 1.

    >>> _page_number("12"), _page_number("iv")
    (12, -996)
    """
    if ref.isdigit():
        return int(ref)
    total = 0
    values = [_ROMAN[c] for c in ref.lower()]
    for i, v in enumerate(values):
        total += -v if i + 1 < len(values) and v < values[i + 1] else v
    return total - 1000


def is_contents_page(text: str) -> bool:
    """Whether a page's text is a table of contents (see the module docstring).

    >>> toc = "Table of Contents\\n" + "\\n".join(f"Note {i}. Segment results {3 * i}" for i in range(1, 11))
    >>> is_contents_page(toc), is_contents_page("Net sales 994 983 1,031\\n" * 10)
    (True, False)
    >>> is_contents_page("\\n".join(f"Note {i}|Segment results|{3 * i}" for i in range(1, 11)))  # a table's rows
    True
    >>> is_contents_page("\\n".join(f"Item {i}\\nTitle of part {chr(64 + i)} {5 * i + 3}" for i in range(1, 11)))
    True
    """
    lines = [" ".join(ln.replace("|", " | ").split()) for ln in text.splitlines() if ln.strip()]  # cells: "a|72"
    if _numbers_beside_leaders(lines) or _leaders_throughout(lines):
        return True
    lines = [ln for ln in lines if not _NUMBERING.fullmatch(ln)]  # "Item 7" on a line of its own: a label's number
    refs, rows = [], 0
    for ln in lines:
        m = _ENTRY.match(ln)
        if m is not None and len(ln.split()) <= MAX_ENTRY_WORDS:
            refs.append(_page_number(m.group(1)))
            rows += "|" in ln
    if len(refs) < MIN_ENTRIES or len(refs) < ENTRY_SHARE * len(lines):
        return False
    steps = [b - a for a, b in zip(refs, refs[1:], strict=False)]
    if rows and steps.count(1) >= COUNTING_SHARE * len(steps):
        return False  # a table numbering its rows (1, 2, 3, ...), not one listing the pages its sections start on
    forward = _longest_forward_run(refs)
    return forward >= MIN_ENTRIES and forward >= ASCENDING_SHARE * len(refs)


def _longest_forward_run(refs: list[int]) -> int:
    """The length of the longest subsequence of ``refs`` that never goes back: the entries in page order, with
    the numbers of lines such as ``ITEM 2`` between them left out.

    >>> _longest_forward_run([1, 4, 10, 16, 2, 16, 3, 17, 4, 17]), _longest_forward_run([40, 12, 3, 31, 7, 22])
    (7, 3)
    """
    tails: list[int] = []
    for r in refs:
        k = bisect_right(tails, r)
        if k == len(tails):
            tails.append(r)
        else:
            tails[k] = r
    return len(tails)


def _numbers_beside_leaders(lines: list[str]) -> bool:
    """The other layout of a contents page: its labels end in leaders (``Consolidated Balance Sheets …``) and its
    page numbers come as a column of their own, one a line, running forward.

    >>> _numbers_beside_leaders(["Index", "Balance Sheets …", "Income …", "Cash Flows …", *"59 60 61 62 63 64".split()])
    True
    """
    column = [int(ln) for ln in lines if ln.isdigit() and len(ln) <= MAX_PAGE_DIGITS]
    dotted = sum(len(_LEADER.findall(ln)) for ln in lines)  # a wrapped paragraph may join several labels
    if len(column) < MIN_COLUMN or dotted < MIN_DOTTED:
        return False
    return all(b >= a for a, b in zip(column, column[1:], strict=False))


def _leaders_throughout(lines: list[str]) -> bool:
    """A contents page whose page numbers are not in its text: ``2 * MIN_ENTRIES`` leaders or more, on 40% of
    its lines (``Item 1. Business …``; one line may join several entries, and part headings have none)."""
    counts = [len(_LEADER.findall(ln)) for ln in lines]
    return sum(counts) >= 2 * MIN_ENTRIES and sum(1 for c in counts if c) >= LEADER_LINE_SHARE * len(lines)


def asks_for_layout(query: str) -> bool:
    """Whether a question asks about the document's layout (its contents, chapters, sections, pages).

    >>> asks_for_layout("Which section covers risk factors?"), asks_for_layout("What drove the gross margin?")
    (True, False)
    """
    return _LAYOUT.search(query) is not None


# --------------------------------------------------------------------------------------------------
# Filing boilerplate: signature blocks, exhibit indexes, the forward-looking-statements caution
# --------------------------------------------------------------------------------------------------

MIN_SIGNED = 3  # "/s/ Name" lines of a signature page
MIN_EXHIBITS = 8  # numbered exhibit lines of an exhibit index ...
EXHIBIT_SHARE = 0.4  # ... taking this share of its lines
_SIGNED = re.compile(r"(?:^|\s)/s/\s*\S", re.IGNORECASE)
_EXHIBIT_LINE = re.compile(r"^\(?\d{1,3}(?:\.[0-9A-Z]{1,4}){0,3}[*†‡#+]*\)?(?:[\s|:.]|$)")
_EXHIBIT_HEAD = re.compile(r"\bexhibits?\b", re.IGNORECASE)
_CAUTION = re.compile(r"forward[-\s]looking\s+statements?", re.IGNORECASE)
_CAUTION_TELL = re.compile(
    r"safe\s+harbor|private\s+securities\s+litigation\s+reform\s+act|actual\s+results\s+(?:could|may|might|will)"
    r"\s+differ\s+materially|undue\s+reliance|undertakes?\s+no\s+(?:obligation|duty)",
    re.IGNORECASE,
)
_ASKS = {
    "signatures": re.compile(r"\b(?:who|sign\w*|officers?|directors?|chief|ceo|cfo|president|secretary|treasurer"
                             r"|controller|chair\w*)\b", re.IGNORECASE),
    "exhibits": re.compile(r"\b(?:exhibits?|agreements?|indentures?|certifications?|filed|incorporated)\b",
                           re.IGNORECASE),
    "caution": re.compile(r"forward[-\s]looking|cautionary|safe\s+harbor", re.IGNORECASE),
}
_WHAT = {
    "contents": "on a table of contents page (a question about the contents gets it)",
    "signatures": "on a signature page (a question about who signed gets it)",
    "exhibits": "on an exhibit index (a question about the exhibits gets it)",
    "caution": "the forward-looking-statements caution (a question about it gets it)",
}


def page_kind(text: str) -> str | None:
    """What a page is when it is no evidence for most questions: ``"contents"`` (``is_contents_page``),
    ``"signatures"`` (``MIN_SIGNED`` lines signed ``/s/``), ``"exhibits"`` (an exhibit index: the word exhibit,
    and ``MIN_EXHIBITS`` lines opening with an exhibit number such as ``10.1*`` or ``31.2``, ``EXHIBIT_SHARE`` of
    its lines), or None.

    >>> page_kind("SIGNATURES\\n/s/ Ann Lee\\nChief Executive Officer\\n/s/ Bo Ng\\nDirector\\n/s/ Cy Fox\\nDirector")
    'signatures'
    >>> page_kind("Exhibit Index\\n" + "\\n".join(f"10.{i}* Credit Agreement, incorporated" for i in range(9)))
    'exhibits'
    >>> page_kind("Net sales 994 983 1,031\\n" * 10) is None
    True
    """
    return "contents" if is_contents_page(text) else boilerplate_kind(text)


def boilerplate_kind(text: str) -> str | None:
    """``"signatures"`` or ``"exhibits"`` (``page_kind``), or None; read from the stored text too, whose lines are
    the PDF's (the sent text has a paragraph a line)."""
    if len(_SIGNED.findall(text)) >= MIN_SIGNED:
        return "signatures"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    numbered = sum(1 for ln in lines if _EXHIBIT_LINE.match(ln) and any(ch.isalpha() for ch in ln))
    if numbered >= MIN_EXHIBITS and numbered >= EXHIBIT_SHARE * len(lines) and _EXHIBIT_HEAD.search(text):
        return "exhibits"
    return None


def is_caution(text: str) -> bool:
    """Whether a passage is the forward-looking-statements caution of a filing or a release: it names
    forward-looking statements and says what such a caution says (a safe harbor, results that may differ
    materially, no undue reliance, no duty to update).

    >>> is_caution("This report contains forward-looking statements. Actual results may differ materially.")
    True
    >>> is_caution("Our forward-looking statements about revenue")
    False
    """
    return bool(_CAUTION.search(text)) and bool(_CAUTION_TELL.search(text))


def asks_for(kind: str, query: str) -> bool:
    """Whether the question asks about what a page or passage of ``kind`` holds (contents: ``asks_for_layout``)."""
    if kind == "contents":
        return asks_for_layout(query)
    pattern = _ASKS.get(kind)
    return pattern is not None and pattern.search(query) is not None


def why_left_out(kind: str) -> str:
    """The manifest's reason for a hit left out as ``kind``."""
    return _WHAT.get(kind, kind)
