"""Label references in a question: "Table 1", "Figure 3-10", "Fig. 2.3", "Abbildung 1.13", "Exhibit 2.3.59-12".

A question that names a numbered object names its caption: the region whose text *starts* with the
same word and number ("Table 1. Overview of ...", "Abbildung 1.13: ..."). ``parse_label_refs`` takes
every word followed by a short number from the question, whatever the language, and ``LabelIndex``
finds the tables, figures and paragraphs of a version that begin with it. The retriever adds them as
one more ranked list to fusion (``labelref``), like page references: a signal, not a filter, so a
word that only looked like a label ("over 5 percent") costs one list that rarely matches anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

MAX_LABELS = 8  # label references taken from one question
MAX_MATCHES = 12  # regions one label may match in one version (an in-text mention starts paragraphs too)

# A word (any script, at least two letters), a space or an abbreviation dot, then a number of at most
# three digits per part ("1", "1.13", "3-10", "2.3.59-12"). Four-digit numbers are years, not labels; a
# number glued to the word is a name ("Why3", "MP3"), not a label.
_LABEL = r"([^\W\d_]{2,})(?:\.\s{0,2}|\s{1,2})(\d{1,3}(?:[.\-]\d{1,3})*)(?![\d]|[.\-]\d)"
_REF = re.compile(r"(?<![\w.])" + _LABEL)
# The same shape at the start of a region's text, after table pipes, bullets and markup.
_HEAD = re.compile(r"^[\s|*#>_\-–—•·]*" + _LABEL + "(,?)")
LABELLED_KINDS = frozenset({"table", "figure", "paragraph"})
CAPTIONED_KINDS = frozenset({"table", "figure"})
MIN_SERIES = 2  # different numbers a word must start paragraphs with to be a numbering


@dataclass(frozen=True)
class LabelRef:
    """One reference as written: the word ("table", case-folded) and the number ("1.13")."""

    word: str
    number: str


def parse_label_refs(query: str) -> list[LabelRef]:
    """The word-and-number references in ``query``, in order, each once.

    >>> parse_label_refs("According to Table 1, what is the growth for the UK?")
    [LabelRef(word='table', number='1')]
    >>> [r.number for r in parse_label_refs("Welcher Knoten ist in Abbildung 1.13 gefärbt? Siehe Fig. 2.3")]
    ['1.13', '2.3']
    >>> parse_label_refs("What was revenue in 2023?")
    []
    >>> parse_label_refs("How does Why3 split a proof task?")
    []
    """
    out: list[LabelRef] = []
    for m in _REF.finditer(query):
        ref = LabelRef(m.group(1).casefold(), m.group(2))
        if ref not in out:
            out.append(ref)
        if len(out) >= MAX_LABELS:
            break
    return out


class Captioned(Protocol):
    """What matching reads of a region (``ingest.model.Region`` has it)."""

    @property
    def region_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def first_page(self) -> int: ...


R = TypeVar("R", bound=Captioned)


def _caption_first(r: Captioned) -> tuple[int, bool, int]:
    # Tables and figures carry their own caption; a short paragraph that starts with the label is a
    # caption more often than a long one (which tends to be prose that opens with a mention).
    kind_rank = 0 if r.kind in CAPTIONED_KINDS else 1
    return kind_rank, len(r.text) > 400, r.first_page


class LabelIndex(Generic[R]):
    """The labels that regions of one version begin with, ``{word: {number: regions}}``.

    A paragraph counts only when its word starts paragraphs with at least two different numbers (a
    numbering: "Table 1", "Table 2"); a table or figure counts on its own, since its first line is its
    caption. A number followed by a comma is a date ("June 30, 2023"), not a label.

    >>> from types import SimpleNamespace as R
    >>> regions = [R(region_id="t", kind="table", first_page=7, text="| Table 1. Overview |"),
    ...            R(region_id="d", kind="paragraph", first_page=2, text="June 30, 2023 was a Friday."),
    ...            R(region_id="s", kind="paragraph", first_page=3, text="Step 4 is to close the valve."),
    ...            R(region_id="f", kind="figure", first_page=5, text="Fig. 2.3 Wiring")]
    >>> index = LabelIndex(regions)
    >>> [r.region_id for r in index.find(parse_label_refs("In Table 1 and Fig. 2.3, what ...? Step 4? June 30?"))]
    ['t', 'f']
    """

    def __init__(self, regions: Iterable[R]) -> None:
        by_word: dict[str, dict[str, list[R]]] = {}
        for r in regions:
            if r.kind not in LABELLED_KINDS or not r.text:
                continue
            m = _HEAD.match(r.text[:120])
            if m is None or m.group(3) == ",":
                continue
            by_word.setdefault(m.group(1).casefold(), {}).setdefault(m.group(2), []).append(r)
        self._by_word: dict[str, dict[str, list[R]]] = {}
        for word, numbers in by_word.items():
            series = len(numbers) >= MIN_SERIES
            kept = {n: sorted((r for r in rs if series or r.kind in CAPTIONED_KINDS), key=_caption_first)
                    for n, rs in numbers.items()}
            self._by_word[word] = {n: rs for n, rs in kept.items() if rs}

    def find(self, refs: Sequence[LabelRef]) -> list[R]:
        """The regions each reference names, in reference order, captions first, at most
        ``MAX_MATCHES`` per reference."""
        out: list[R] = []
        seen: set[str] = set()
        for ref in refs:
            for r in self._by_word.get(ref.word, {}).get(ref.number, [])[:MAX_MATCHES]:
                if r.region_id not in seen:
                    seen.add(r.region_id)
                    out.append(r)
        return out
