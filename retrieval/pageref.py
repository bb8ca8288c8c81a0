"""Page references in a question: "page 12", "pp. 51-53", "slide 7", "Seite 4", "第3页", "5ページ".

``parse_page_refs`` finds the numbers a question names; ``resolve`` maps each to physical pages of one
document version: through the printed page labels first (a PDF whose page "2" is physical page 8),
then as a physical index. The retriever adds the resolved pages as one more ranked list to fusion
(``pageref``), so a named page is a retrieval signal, not a filter: a wrong guess costs one list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class PageRef:
    """One reference as written (``text``) and the printed numbers it names (``first``..``last``)."""

    text: str
    first: int
    last: int

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
    """
    found: list[tuple[int, PageRef]] = []
    for pat in _PATTERNS:
        for m in pat.finditer(query):
            a = int(m.group(1))
            b = int(m.group(2)) if m.group(2) else a
            if a < 1 or b < a or b - a > MAX_SPAN:
                continue
            found.append((m.start(), PageRef(m.group(0).strip(), a, b)))
    return [r for _, r in sorted(found, key=lambda x: x[0])]


def resolve(refs: Sequence[PageRef], labels: Sequence[str], page_count: int) -> list[int]:
    """Physical 1-based pages for ``refs`` in one version: pages whose printed label is the number,
    then the physical page of that index (when different), each once, label matches first.

    >>> resolve([PageRef("page 2", 2, 2)], ["i", "ii", "1", "2", "3"], 5)
    [4, 2]
    >>> resolve([PageRef("p. 9", 9, 9)], [], 5)
    []
    """
    by_label: dict[str, list[int]] = {}
    for i, lab in enumerate(labels):
        if lab:
            by_label.setdefault(lab.strip().casefold(), []).append(i + 1)
    out: list[int] = []

    def add(pages: Iterable[int]) -> None:
        for p in pages:
            if 1 <= p <= page_count and p not in out:
                out.append(p)

    for r in refs:
        for n in r.numbers:
            add(by_label.get(str(n), []))
    for r in refs:
        add(r.numbers)
    return out
