"""Page references in a question: "page 12", "pp. 51-53", "slide 7", "Seite 4", "第3页", "5ページ",
and pages named by position: "the first page", "the cover page", "the last slide", "首页", "letzte Seite".

``parse_page_refs`` finds the numbers a question names; ``resolve`` maps each to physical pages of one
document version: through the printed page labels first (a PDF whose page "2" is physical page 8),
then as a physical index. A page named by position is physical: the cover is page 1 whatever its
label, the last page is the version's last. The retriever adds the resolved pages as one more ranked list to fusion
(``pageref``), so a named page is a retrieval signal, not a filter: a wrong guess costs one list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

MAX_SPAN = 20  # a range wider than this is not a page reference ("pages 1-400")

_NUM = r"(\d{1,4})"
_RANGE_SEP = r"\s*(?:-|–|—|to|through|and|bis|und|~|至|到)\s*"
_PATTERNS = [
    re.compile(
        r"(?<![\w])(?:pages?|pp?\.|pgs?\.?|slides?|folios?|seiten?|s\.)\s*" + _NUM + rf"(?:{_RANGE_SEP}" + _NUM + ")?",
        re.IGNORECASE,
    ),
    re.compile(r"第\s*" + _NUM + r"\s*(?:[-–~至到]\s*(?:第\s*)?" + _NUM + r"\s*)?[页頁]"),
    re.compile(_NUM + r"\s*(?:[-–~]\s*" + _NUM + r"\s*)?ページ"),
]
_ORDINALS = {"first": 1, "opening": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5,
             "erste": 1, "zweite": 2, "dritte": 3, "première": 1, "primera": 1, "deuxième": 2, "segunda": 2}
_SHEET = r"(?:pages?|slides?|sheets?|seiten?|folien?|páginas?|diapositivas?)"
# Pages named by position; each pattern's group 1 (when present) is an ordinal word.
_FROM_START = [
    re.compile(rf"(?<![\w])({'|'.join(_ORDINALS)})[nrs]?\s+{_SHEET}(?![\w])", re.IGNORECASE),
    re.compile(r"(?<![\w])(?:cover|title|front|titel)\s*(?:page|slide|seite|folie)(?![\w])|(?<![\w])front cover"
               r"|(?<![\w])deckblatt|(?<![\w])page de (?:garde|titre)|(?<![\w])portada", re.IGNORECASE),
    re.compile(r"首页|首頁|封面|扉页|第一页|第一頁|表紙|最初のページ|1枚目"),
]
_FROM_END = [
    re.compile(r"(?<![\w])(?:last|final|letzte[nrs]?|dernière|última)\s+" + _SHEET + r"(?![\w])"
               r"|(?<![\w])back (?:cover|page)|(?<![\w])rückseite", re.IGNORECASE),
    re.compile(r"末页|末頁|尾页|最后一页|最後一頁|封底|最後のページ|最終ページ|裏表紙"),
]


@dataclass(frozen=True)
class PageRef:
    """One reference as written (``text``) and the numbers it names (``first``..``last``): printed
    page numbers, or for a page named by position the ordinal from the ``start`` or the ``end``
    ("the second page" is 2 from the start, "the last page" 1 from the end)."""

    text: str
    first: int
    last: int
    position: Literal["printed", "start", "end"] = "printed"

    @property
    def numbers(self) -> range:
        return range(self.first, self.last + 1)


def parse_page_refs(query: str) -> list[PageRef]:
    """The page references in ``query``, in order of appearance.

    >>> [(r.first, r.last) for r in parse_page_refs("What is on page 12 and on pp. 51-53?")]
    [(12, 12), (51, 53)]
    >>> [(r.first, r.last) for r in parse_page_refs("Wie viele Abbildungen sind auf Seite 4?")]
    [(4, 4)]
    >>> [(r.first, r.last) for r in parse_page_refs("第3页的表格")]
    [(3, 3)]
    >>> parse_page_refs("a 12-page report with 3 pages of notes")
    []
    >>> [(r.first, r.position) for r in parse_page_refs("What does the cover page show, and the last slide?")]
    [(1, 'start'), (1, 'end')]
    >>> [(r.first, r.position) for r in parse_page_refs("首页投资建议给出的PE是多少倍？")]
    [(1, 'start')]
    """
    found: list[tuple[int, PageRef]] = []
    for pat in _PATTERNS:
        for m in pat.finditer(query):
            a = int(m.group(1))
            b = int(m.group(2)) if m.group(2) else a
            if a < 1 or b < a or b - a > MAX_SPAN:
                continue
            found.append((m.start(), PageRef(m.group(0).strip(), a, b)))
    for pats, position in ((_FROM_START, "start"), (_FROM_END, "end")):
        for pat in pats:
            for m in pat.finditer(query):
                word = m.group(1).casefold() if pat.groups and m.group(1) else ""
                n = _ORDINALS.get(word, 1)
                found.append((m.start(), PageRef(m.group(0).strip(), n, n, position)))  # type: ignore[arg-type]
    return [r for _, r in sorted(found, key=lambda x: x[0])]


def resolve(refs: Sequence[PageRef], labels: Sequence[str], page_count: int) -> list[int]:
    """Physical 1-based pages for ``refs`` in one version: pages whose printed label is the number
    (or the page at that position), then the physical page of that index (when different), each
    once, label matches first.

    >>> resolve([PageRef("page 2", 2, 2)], ["i", "ii", "1", "2", "3"], 5)
    [4, 2]
    >>> resolve([PageRef("p. 9", 9, 9)], [], 5)
    []
    >>> resolve([PageRef("last page", 1, 1, "end"), PageRef("title page", 1, 1, "start")], ["i", "ii", "1"], 3)
    [3, 1]
    """
    out: list[int] = []
    for p in _candidates(refs, _pages_by_label(labels), page_count):
        if 1 <= p <= page_count and p not in out:
            out.append(p)
    return out


def _pages_by_label(labels: Sequence[str]) -> dict[str, list[int]]:
    """The 1-based pages of each printed label (casefolded, stripped); blank labels are left out."""
    by_label: dict[str, list[int]] = {}
    for i, lab in enumerate(labels):
        if lab:
            by_label.setdefault(lab.strip().casefold(), []).append(i + 1)
    return by_label


def _candidates(refs: Sequence[PageRef], by_label: dict[str, list[int]], page_count: int) -> Iterator[int]:
    """Every page ``refs`` may mean, in order, unchecked: what a reference can only mean first (a printed
    label, a position), then the physical index of each printed number."""
    for r in refs:
        for n in r.numbers:
            if r.position == "printed":
                yield from by_label.get(str(n), [])
            else:
                yield n if r.position == "start" else page_count + 1 - n
    for r in refs:
        if r.position == "printed":
            yield from r.numbers
