"""Label references in a question: "Table 1", "Figure 3-10", "Fig. 2.3", "Abbildung 1.13", "Exhibit 2.3.59-12".

A question that names a numbered object names its caption: the region whose text *starts* with the
same word and number ("Table 1. Overview of ...", "Abbildung 1.13: ..."). ``parse_label_refs`` takes
every word followed by a short number from the question, whatever the language, and ``LabelIndex``
finds the tables, figures and paragraphs of a version that begin with it. ``LabelRefs`` makes them one
more ranked list for fusion (the ``labelref`` channel, ``retrieval.channels``), like page references: a
signal, not a filter, so a word that only looked like a label ("over 5 percent") costs one list that rarely
matches anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from folio.ingest.storage.interface import StoreReader
from folio.kernel.index import RegionIndex
from folio.kernel.model import Region
from folio.kernel.scope import Scope
from folio.retrieval.cache.version_cache import VersionCache
from folio.retrieval.channels.base import ChannelQuery, ChannelSpec, Ranking, register, versions_to_search
from folio.retrieval.channels.pageref import REF_WEIGHT
from folio.retrieval.text import Candidate

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
MAX_VERSIONS = 50  # label references are resolved in at most this many versions of the scope
CACHE_VERSIONS = 64  # versions whose label index is kept
CAPTION_GAP = 36.0  # points between a caption line and the table or figure it names (half an inch)


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


class LabelRefs:
    """The regions a question's label references name in a scope, as one ranked list; each version's
    ``LabelIndex`` is built once per version stamp."""

    def __init__(self, store: StoreReader) -> None:
        self.store = store
        self.indexes: VersionCache[LabelIndex[Region]] = VersionCache(store, CACHE_VERSIONS)

    def clear(self) -> None:
        self.indexes.clear()

    def search(self, refs: Sequence[LabelRef], scope: Scope, versions: Sequence[tuple[str, str]]) -> list[Candidate]:
        """Tables and figures whose caption starts with the label, then paragraphs that do (as their first
        sentence, the unit retrievers rank), each preceded by the table or figure right above or below it:
        a caption parsed as a line of text names the object next to it. In ``versions`` of the scope
        (``channels.base.versions_to_search``)."""
        out: list[Candidate] = []
        for doc_id, version_id in versions:
            index = self.store.region_index(doc_id, version_id)
            for found in self._labels(doc_id, version_id, index).find(refs):
                named = [found]
                if found.kind == "paragraph":  # a caption line: the object it captions, then its sentence
                    first = next((c for c in index.children(found.region_id) if c.kind == "sentence"), None)
                    named = [r for r in (captioned_object(index, found), first) if r is not None]
                for r in named:
                    page = r.first_page
                    if scope.pages is not None and page not in scope.pages:
                        continue
                    if scope.kinds is not None and r.kind not in scope.kinds:
                        continue
                    out.append(Candidate(r.region_id, doc_id, version_id, r.kind, page, 1.0))
        return out

    def _labels(self, doc_id: str, version_id: str, index: RegionIndex) -> LabelIndex[Region]:
        """The version's label index, built once per version stamp."""
        return self.indexes.get(doc_id, version_id, lambda: LabelIndex(index.regions()))


def captioned_object(index: RegionIndex, caption: Region) -> Region | None:
    """The table or figure on ``caption``'s page nearest to it above or below, within ``CAPTION_GAP``
    points and overlapping it horizontally (None if there is none)."""
    if len({loc.page for loc in caption.locators}) != 1:
        return None
    cap = caption.locators[0].bbox
    best: tuple[float, Region] | None = None
    for kind in ("table", "figure"):
        for r in index.of_kind(caption.doc_id, caption.version_id, kind):
            if r.first_page != caption.first_page or not r.locators:
                continue
            box = r.locators[0].bbox
            if box.x1 <= cap.x0 or box.x0 >= cap.x1:
                continue
            gap = max(box.y0 - cap.y1, cap.y0 - box.y1)
            if gap <= CAPTION_GAP and (best is None or gap < best[0]):  # negative: they overlap
                best = (gap, r)
    return best[1] if best else None


# ----------------------------------------------------------------------------- the channel
@dataclass
class LabelRefChannel:
    """The tables, figures and captions the question names ("Table 1", ``LabelRefs``); no list when it names
    none or none is found."""

    labels: LabelRefs
    weight: float = REF_WEIGHT
    name: str = "labelref"
    table: str = "regions"

    def search(self, query: ChannelQuery) -> Ranking | None:
        refs = parse_label_refs(query.text)
        found = self.labels.search(refs, query.scope, versions_to_search(query, MAX_VERSIONS)) if refs else []
        return Ranking(found) if found else None

    def clear(self) -> None:
        self.labels.clear()

    def status(self) -> dict[str, Any] | None:
        return None


register(ChannelSpec("labelref", lambda c: LabelRefChannel(LabelRefs(c.store), c.options["ref_weight"]),
                     {"ref_weight": REF_WEIGHT}, text=True))
