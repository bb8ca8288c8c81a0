"""A unit: the evidence one or more hits become, before it is packed (``assembly.packing``).

A text unit is an interval of its section's sentences (``kind="span"``, ``view`` with ``lo``/``hi``;
``full``: the whole section, its tables and sentence-less paragraphs rendered too); a table, figure or
page unit carries its regions. Units are mutable while dedupe merges them (``merged_into``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from folio.assembly.expansion.sections import SectionView
from folio.kernel.hit import Modality
from folio.kernel.model import Region

UnitKind = Literal["span", "table", "figure", "page", "region"]


@dataclass(eq=False, slots=True)
class Unit:
    """A candidate item. Mutable while merging (``assembly.dedupe``); ``assembly.packing.candidates`` turns
    survivors into candidates."""

    kind: UnitKind
    key: tuple[str, ...]
    doc_id: str
    version_id: str
    triggers: list[int]  # indices into the sorted hit list
    score: float
    rank: int
    expansions: set[str]
    view: SectionView | None = None
    lo: int = 0
    hi: int = 0
    full: bool = False
    regions: list[Region] = field(default_factory=list)  # table parts, figure, page, raw region
    absorbed: list[Region] = field(default_factory=list)  # tables/figures shown by a page image
    image: bool = False
    merged_into: Unit | None = None
    covers: list[int] = field(default_factory=list)
    paras: list[Region] = field(default_factory=list)  # page sent as text: its chosen paragraphs
    promoted: bool = False  # a page sent as text in place of a smaller unit (``page_units``)
    excerpt: tuple[int, int] | None = None  # page sent as this [start, end) slice of its text
    more_excerpts: list[tuple[int, int]] = field(default_factory=list)  # further slices of that page, in order

    @property
    def modality(self) -> Modality:
        if self.kind == "span" or self.kind == "region":
            return "text"
        return self.kind

    def root(self) -> Unit:
        u = self
        while u.merged_into is not None:
            u = u.merged_into
        return u

    @property
    def section_key(self) -> str | None:
        if self.view is not None:
            return self.view.key
        if self.kind in ("table", "region") and self.regions:
            r = self.regions[0]
            return r.section_id or f"{r.doc_id}@{r.version_id}:nosection"
        return None
