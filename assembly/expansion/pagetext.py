"""Compact page text: the text of a page as it is sent, rebuilt from its stored regions.

A page's stored text is the parser's blocks in reading order, lines joined by ``"\\n"`` and blocks by
``"\\n\\n"``; a table in it is one cell per block (``Not using the\\n\\nstandard measuring\\n\\nposture``) and
a paragraph is hard-wrapped at the PDF's line ends. ``compact_page`` renders the same content in fewer
tokens:

* a paragraph region (its page char locator) becomes one line: its wrapped lines joined by a space, or
  without one after a hyphen at a line end (``three-\\nhop`` -> ``three-hop``);
* the blocks of a table region (blocks whose words are nearly all the table's) become the table's rows,
  one line per row with its non-empty cells separated by ``|`` (no Markdown rule, no empty cells but
  those between two cells with text in a named column: ``Deferred taxes||95,279``),
  placed where the table's first block was; a short paragraph wholly inside a table goes with it, and so do
  the lines just above it that its header repeats (a statement's title, unit and period). A table
  whose words lie mostly in the page's paragraphs (a layout table around prose) is left to them;
* a statement the text layer holds a figure a line gets its figures back on its labels' lines
  (``figure_rows``);
* every other block (headings, list items, captions, cells of tables the finder missed) becomes one line;
* private-use glyphs (icon fonts: ``\\uf0b7``) are dropped, and so are lines that hold only a bullet.

Lines are joined by ``"\\n"``. ``CompactPage.to_compact`` maps an offset in the stored page text (a hit's
char locator) to the compact text, so excerpts are cut around the same words, and ``to_stored`` maps back
(to find the stored lines, and their boxes, an excerpt covers). The item still cites the page region (and
its locator); the stored text and its offsets are unchanged.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from folio.kernel.mdtable import is_rule, split_cells
from folio.kernel.model import Region

_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd]")
_SPACES = re.compile(r"[ \t\u00a0]+")
_WORD = re.compile(r"\w+")
_LEADER = re.compile(r"(?:\. ?){4,}|_{4,}|…{2,}")  # dot leaders of a table of contents or a statement
_ENDS_CELL = re.compile(r"[\d$€£¥%]\)?$")
_BULLETS = frozenset("•◦▪▫●○■□‣∙·*➢➤►▶▸▹◆◇❖✓✔✗-–—")
CELL = "|"  # between a row's cells: a statement row costs what its text costs (" | " cost 13% more tokens)
TABLE_SHARE = 0.8  # a block belongs to a table when at least this share of its words are the table's
TABLE_PARA_WORDS = 8  # a paragraph of at most this many words, all the table's, is one of its cells
TABLE_OWNED = 0.5  # a table goes as rows only when the blocks it owns hold this share of its words: a layout
# table around paragraphs (sent as paragraphs anyway) would repeat them
TABLE_GROWTH = 1.25  # ... and when its rows are at most this many times as long as those blocks
TABLE_MIXED = 0.25  # a block whose lines a table owns hold this share of its words (and MIXED_WORDS) is read
MIXED_WORDS = 3  # a line at a time
REPEAT_WORDS = 24  # a line of at most this many words, all in a table's header row, is the header's repeat


@dataclass(frozen=True)
class CompactPage:
    """The compact text of a page and the map from stored-text offsets to it: ``stored_chars`` is the stored
    text's length, ``starts`` the stored offsets where each emitted piece begins (ascending), ``spans`` the
    pieces' ``[start, end)`` there and ``at`` where each begins in ``text``."""

    text: str
    stored_chars: int
    starts: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]
    at: tuple[int, ...]

    def to_compact(self, offset: int) -> int:
        """Where stored-text ``offset`` lies in ``text``: inside a piece, the same distance into it (at most
        its length); in text that was dropped or folded into a table, the start of the next piece."""
        k = bisect_right(self.starts, offset) - 1
        if k >= 0:
            a, b = self.spans[k]
            if offset < b:
                nxt = self.at[k + 1] - 1 if k + 1 < len(self.at) else len(self.text)
                return min(self.at[k] + (offset - a), max(self.at[k], nxt))
        return self.at[k + 1] if k + 1 < len(self.at) else len(self.text)

    def to_stored(self, offset: int) -> int:
        """Where compact-text ``offset`` came from in the stored text: the same distance into its piece (at
        most the piece's stored length; a table's rows map to the table's first block). Exact up to the
        first change inside a piece (a joined hyphen, a squeezed leader, a dropped glyph)."""
        k = bisect_right(self.at, offset) - 1
        if k < 0:
            return 0
        a, b = self.spans[k]
        return min(b, a + (offset - self.at[k]))


def clean_line(s: str) -> str:
    """``s`` without private-use glyphs, runs of spaces squeezed; '' for a line that is only a bullet.

    >>> clean_line("\\uf0b7  Cash   flow ")
    'Cash flow'
    >>> clean_line("Working capital.......... $ 2,608.3")
    'Working capital … $ 2,608.3'
    >>> clean_line(" • ")
    ''
    """
    s = _SPACES.sub(" ", _LEADER.sub(" … ", _PRIVATE_USE.sub("", s))).strip()
    return "" if s and all(ch in _BULLETS or ch == " " for ch in s) else s


def join_wrapped(lines: Sequence[str]) -> str:
    """Hard-wrapped lines as one line: joined by a space, or directly after a hyphen that ends a line
    between letters (the hyphen stays: ``question-`` + ``guided`` is ``question-guided``). A line that
    ends in a number or a currency sign keeps its line end: it is a cell or a row of a table written as
    text, and the next line is the next cell or row.

    >>> join_wrapped(["Our QACHECK sys-", "tem achieves", "•", "a score of", "55.67", "Net sales ....... $", "9.1"])
    'Our QACHECK sys-tem achieves a score of 55.67\\nNet sales … $\\n9.1'
    """
    out: list[str] = []
    for raw in lines:
        ln = clean_line(raw)
        if not ln:
            continue
        prev = out[-1] if out else ""
        if not prev or _ENDS_CELL.search(prev):
            out.append(ln)
        elif prev.endswith("-") and len(prev) > 1 and prev[-2].isalpha() and ln[0].isalpha():
            out[-1] = prev + ln
        else:
            out[-1] = f"{prev} {ln}"
    return "\n".join(out)


TITLE_MAX_CHARS = 80  # a page's first line reads as its title up to this length
TITLE_MAX_WORDS = 10


def page_title(text: str) -> str | None:
    """The first line of a page's stored text when it reads as the page's title: short, with a letter, not
    starting in lower case (the rest of a sentence from the page before) and not ending like a clause or a
    hyphenated word. A slide's title, a statement's name, a section heading at the top of a page.

    >>> page_title("Electronic Medical Records \\n\\nSOAPware - Active Physician")
    'Electronic Medical Records'
    >>> page_title("the results of the survey show that\\nmost") is None
    True
    >>> page_title("2019") is None
    True
    """
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if not first or len(first) > TITLE_MAX_CHARS or len(first.split()) > TITLE_MAX_WORDS:
        return None
    if not any(ch.isalpha() for ch in first) or first[0].islower() or first[-1] in ".,;:-":
        return None
    return first


def table_rows(markdown: str) -> list[str]:
    """The rows of a Markdown table, one line each, non-empty cells joined by ``|`` (the ``|---|`` rule
    and empty rows dropped). Empty cells are dropped too, except between two cells with text in a column
    the header names: there the gap keeps each figure under its period (a dash printed as an empty cell).

    >>> table_rows("| Model | F1 |  |\\n| --- | --- | --- |\\n| QACheck | 55.67 |  |\\n|  |  |  |")
    ['Model|F1', 'QACheck|55.67']
    >>> table_rows("| Balance sheet | 2015 | 2014 |\\n| --- | --- | --- |\\n| Deferred taxes |  | 95,279 |")
    ['Balance sheet|2015|2014', 'Deferred taxes||95,279']
    """
    rows = []
    header: list[str] | None = None
    for line in markdown.splitlines():
        if not line.strip():
            continue
        cells = [clean_line(c) for c in split_cells(line)]
        if is_rule(cells):
            continue
        if header is None:
            header = cells
        kept = _kept(cells, header)
        if kept:
            rows.append(CELL.join(kept))
    return rows


def compact_table(table: Region) -> str:
    """A table region's text as a page sends it: its rows (``table_rows``), one line each; its stored text
    when it has none."""
    return "\n".join(table_rows(table.meta_get("markdown") or table.text)) or table.text


def _kept(cells: list[str], header: list[str]) -> list[str]:
    """The cells of a row that are sent: those with text, and the empty ones between two with text in a column
    the header names."""
    full = [j for j, c in enumerate(cells) if c]
    if not full:
        return []
    return [c for j, c in enumerate(cells) if c or (full[0] < j < full[-1] and j < len(header) and header[j])]


def _words(s: str) -> list[str]:
    return _WORD.findall(s.lower())


class _Builder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.size = 0
        self.starts: list[int] = []
        self.spans: list[tuple[int, int]] = []
        self.at: list[int] = []

    def emit(self, line: str, a: int, b: int) -> None:
        if not line:
            return
        if self.lines:
            self.size += 1  # the "\n" before it
        self.starts.append(a)
        self.spans.append((a, b))
        self.at.append(self.size)
        self.lines.append(line)
        self.size += len(line)

    def page(self, stored_chars: int) -> CompactPage:
        return CompactPage("\n".join(self.lines), stored_chars, tuple(self.starts), tuple(self.spans), tuple(self.at))


@dataclass
class _Table:
    rows: list[str]
    words: frozenset[str]
    size: int  # words in its rows
    owned: int = 0  # words of the page's blocks it owns
    owned_chars: int = 0  # their length in the stored text
    sent: bool = False

    repeats: list[int] = field(default_factory=list)  # pieces (by index) its header repeats: a title, a unit line
    repeated_chars: int = 0

    def fits(self) -> bool:
        """Whether the table goes as its rows: the blocks it owns hold ``TABLE_OWNED`` of its words and its
        rows are at most ``TABLE_GROWTH`` times as long as those blocks and the lines its header repeats (a
        table read over the page's prose is not)."""
        chars = sum(len(r) + 1 for r in self.rows)
        if self.owned < TABLE_OWNED * self.size:
            return False
        return chars <= TABLE_GROWTH * (self.owned_chars + self.repeated_chars)


def _owner(words: list[str], tables: Sequence[_Table]) -> _Table | None:
    if not words:
        return None
    best, share = None, 0.0
    for t in tables:
        s = sum(w in t.words for w in words) / len(words)
        if s > share:
            best, share = t, s
    return best if share >= TABLE_SHARE else None


def _blocks(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """``[start, end)`` of each block (text between blank lines) of ``text[a:b]``, empty ones left out."""
    out = []
    pos = a
    while pos < b:
        nxt = text.find("\n\n", pos, b)
        end = b if nxt < 0 else nxt
        if text[pos:end].strip():
            out.append((pos, end))
        pos = end + 2 if nxt >= 0 else b
    return out


def _spans(page: Region, paragraphs: Sequence[Region]) -> list[tuple[int, int]]:
    """The char spans of the paragraphs on ``page`` that lie in its text, in order, without overlaps."""
    n = len(page.text)
    spans = []
    for p in paragraphs:
        loc = p.locators[0] if p.locators else None
        if loc is None or loc.page != page.first_page or loc.char_start is None or loc.char_end is None:
            continue
        if 0 <= loc.char_start < loc.char_end <= n:
            spans.append((loc.char_start, loc.char_end))
    spans.sort()
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if not out or a >= out[-1][1]:
            out.append((a, b))
    return out


def compact_page(page: Region, paragraphs: Sequence[Region], tables: Sequence[Region]) -> CompactPage:
    """The compact text of ``page`` from its ``paragraphs`` (regions with page char locators) and the
    ``tables`` that lie on it (their Markdown in ``meta['markdown']``); see the module docstring."""
    text = page.text
    tabs = [
        _Table(rows, frozenset(w for r in rows for w in _words(r)), sum(len(_words(r)) for r in rows))
        for t in tables
        if (rows := table_rows(t.meta_get("markdown") or t.text))
    ]
    pieces = _split_mixed(text, _pieces(page, paragraphs), tabs)
    owners = _owners(text, pieces, tabs)
    out = _Builder()
    for k, ((a, b, _), owner) in enumerate(zip(pieces, owners, strict=True)):
        if owner is not None and owner.fits():
            if k in owner.repeats:
                continue
            if not owner.sent:
                owner.sent = True
                out.emit("\n".join(owner.rows), a, b)
            continue
        out.emit(join_wrapped(text[a:b].split("\n")), a, b)
    cp = out.page(len(text))
    return replace(cp, text=figure_rows(cp.text))


def _split_mixed(text: str, pieces: list[tuple[int, int, bool]], tabs: Sequence[_Table]) -> list[tuple[int, int, bool]]:
    """``pieces`` with each block that is partly a table's (``TABLE_MIXED``) split into its lines: the text layer
    can put a statement's last rows and the note under it in one block ("Interest $ 149 ... See accompanying notes"),
    which no table owns whole, so the rows went twice (once in the table, once as text)."""
    out: list[tuple[int, int, bool]] = []
    for a, b, para in pieces:
        words = _words(text[a:b])
        if para or not tabs or "\n" not in text[a:b] or _owner(words, tabs) is not None:
            out.append((a, b, para))
            continue
        lines, pos = [], a
        for line in text[a:b].split("\n"):
            if line.strip():
                lines.append((pos, pos + len(line), False))
            pos += len(line) + 1
        owned = sum(len(w) for x, y, _ in lines if (w := _words(text[x:y])) and _owner(w, tabs) is not None)
        out.extend(lines if owned >= max(MIXED_WORDS, TABLE_MIXED * len(words)) else [(a, b, para)])
    return out


def _owners(text: str, pieces: Sequence[tuple[int, int, bool]], tabs: Sequence[_Table]) -> list[_Table | None]:
    """The table each piece belongs to (None: its own line): the blocks a table owns (``_owner``), and the short
    lines just above it that its header row repeats word for word (a statement's title, unit and period lines),
    which go with it and are left out when it goes as rows."""
    heads = [frozenset(_words(t.rows[0])) for t in tabs]
    owners: list[_Table | None] = []
    repeats: dict[int, list[_Table]] = {}
    for k, (a, b, para) in enumerate(pieces):
        words = _words(text[a:b])
        owner = _owner(words, tabs) if tabs and (not para or len(words) <= TABLE_PARA_WORDS) else None
        if owner is not None:
            owner.owned += len(words)
            owner.owned_chars += b - a
        elif not words and owners and not para:  # a sign between a table's cells ("$"), left by a split block
            owner = owners[-1]
        elif words and len(words) <= REPEAT_WORDS:
            repeats[k] = [t for t, h in zip(tabs, heads, strict=True) if h.issuperset(words)]
        owners.append(owner)
    for t in tabs:
        first = next((k for k, o in enumerate(owners) if o is t), None)
        k = -1 if first is None else first - 1
        while k >= 0 and t in repeats.get(k, ()) and owners[k] is None:
            owners[k] = t
            t.repeats.append(k)
            t.repeated_chars += pieces[k][1] - pieces[k][0]
            k -= 1
    return owners


_FIGURE = re.compile(r"[$€£¥]?\(?-?[$€£¥]?\d[\d,]*(?:\.\d+)?\)?%?|[$€£¥%]|[-–—]")
FIGURE_RUN = 8  # a label's figures on lines of their own: at most this many (the period columns)
FIGURE_LABELS = 3  # rows rebuilt on a page only when at least this many labels are followed by figures ...
FIGURE_SHARE = 0.5  # ... and they are this share of the lines with a label


def _figures_only(line: str) -> bool:
    words = line.split()
    return bool(words) and all(_FIGURE.fullmatch(w) for w in words)


def figure_rows(text: str) -> str:
    """``text`` with a statement's figures put back on their label's line, where the text layer has a figure a
    line (``Cash and cash equivalents`` ⏎ ``$`` ⏎ ``6,006`` ⏎ ``$`` ⏎ ``8,555``): a run of up to ``FIGURE_RUN``
    lines of figures (currency signs and dashes too) joins the line with a label before it, when the page reads
    that way throughout: ``FIGURE_LABELS`` labels or more are followed by such a run, and they are
    ``FIGURE_SHARE`` of the lines with a label (labels in one column and figures in another are not: most labels
    are followed by a label). Line ends become spaces, so every offset into the text stays where it was.
    A table already sent as rows (cells separated by ``|``) takes nothing.

    >>> figure_rows("Cash\\n$\\n6,006\\n$\\n8,555\\nDebt 12\\n14\\nTotal\\n(3)\\n4")
    'Cash $ 6,006 $ 8,555\\nDebt 12 14\\nTotal (3) 4'
    >>> figure_rows("Cash\\nDebt\\nTotal\\n6,006\\n12\\n(3)")
    'Cash\\nDebt\\nTotal\\n6,006\\n12\\n(3)'
    """
    lines = text.split("\n")
    figs = [_figures_only(ln) for ln in lines]
    runs: list[tuple[int, int]] = []  # (label line, last line of its figures)
    labels = 0
    k = 0
    while k < len(lines):
        if figs[k] or not any(ch.isalpha() for ch in lines[k]):
            k += 1
            continue
        labels += 1
        end = k
        while end + 1 < len(lines) and figs[end + 1]:
            end += 1
        digits = any(ch.isdigit() for ln in lines[k + 1 : end + 1] for ch in ln)
        if k < end <= k + FIGURE_RUN and digits and CELL not in lines[k]:
            runs.append((k, end))
        k = end + 1
    if len(runs) < FIGURE_LABELS or len(runs) < FIGURE_SHARE * labels:
        return text
    joined: list[str | None] = list(lines)
    for k, end in runs:
        joined[k] = " ".join(lines[k : end + 1])
        joined[k + 1 : end + 1] = [None] * (end - k)
    return "\n".join(ln for ln in joined if ln is not None)


def _pieces(page: Region, paragraphs: Sequence[Region]) -> list[tuple[int, int, bool]]:
    """``(start, end, is a paragraph)`` of the paragraphs and the other blocks of ``page``, in reading order."""
    text = page.text
    pieces: list[tuple[int, int, bool]] = []
    pos = 0
    for a, b in _spans(page, paragraphs):
        pieces.extend((x, y, False) for x, y in _blocks(text, pos, a))
        pieces.append((a, b, True))
        pos = b
    pieces.extend((x, y, False) for x, y in _blocks(text, pos, len(text)))
    return pieces
