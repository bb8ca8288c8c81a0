"""Assembly's outputs: ``ContextPackage`` (what ``assemble`` returns) and ``VerifyReport`` (``verify_answer``).

The models serialise with ``model_dump()`` to the REST contract (``POST /v1/context``: README, "REST API and
viewer"; the OpenAPI snapshot in ``tests/api/data/openapi.json``); evaluations depend on that shape, so fields
are only ever added. The options that shape a package are in ``assembly.options``.

Terms used throughout the package:

- *hit*: one ranked retrieval result on a small unit (sentence, table, figure, page).
- *candidate*: one hit as assembly sees it; every candidate gets exactly one manifest entry.
- *item*: an expanded, deduplicated unit of evidence (a sentence span, a section, a table, a figure
  image, a page image) with a citation id. Items are packed (or not) under the budget.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from folio.assembly.options import Order, Strategy
from folio.kernel.hit import Modality
from folio.kernel.model import BBox

Packed = Literal["included", "truncated"]
"""The status of a packed item."""
CandidateStatus = Packed | Literal["excluded_budget", "excluded_slot", "excluded_max_items", "duplicate"]
"""Where packing left a candidate: packed, or why not (budget, modality slot, ``max_items``, its packed
text already inside another packed item)."""
Exclusion = Literal[
    "excluded_budget", "excluded_slot", "excluded_max_items", "duplicate", "below_threshold", "missing_region",
    "no_content", "weak_document", "navigation",
]
"""Why a hit is not in the prompt: packing's reasons, then those decided before packing."""
MergedInto = Annotated[str, Field(pattern=r"^merged_into:[A-Z]+[0-9]+$")]
"""``merged_into:<citation id>``: the hit is carried by another candidate's item."""
Fate = Packed | Exclusion | MergedInto
"""The fate of one hit in the manifest."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LocatorOut(_Frozen):
    """Where a packed item sits on one page: the union of its regions' boxes there, and their line
    boxes (to highlight lines rather than the rectangle). Boxes are ``ingest.model.BBox``."""

    page: int
    bbox: BBox
    line_boxes: list[BBox] | None = None

    @field_validator("bbox", mode="before")
    @classmethod
    def _list_bbox(cls, v: Any) -> Any:
        """A package saved before boxes had one shape (``[x0, y0, x1, y1]``) still reads."""
        return _box_from_list(v)

    @field_validator("line_boxes", mode="before")
    @classmethod
    def _list_line_boxes(cls, v: Any) -> Any:
        return [_box_from_list(b) for b in v] if isinstance(v, list) else v


MAX_ITEM_LINES = 24
"""The most line boxes one item carries in ``ContextItem.lines`` (``assembly.lines``)."""


class LineOut(_Frozen):
    """One line box on a page (PDF points, ``ingest.model.COORD_CONVENTION``) and the region whose text
    it belongs to: a trigger sentence's line, a table's or a figure's box (tables and figures have no
    line geometry), or, for a page found as a whole, a line of a sentence sharing the question's words."""

    page: int
    bbox: BBox
    region_id: str

    @field_validator("bbox", mode="before")
    @classmethod
    def _list_bbox(cls, v: Any) -> Any:
        return _box_from_list(v)


def _box_from_list(v: Any) -> Any:
    if isinstance(v, list | tuple) and len(v) == 4:
        return {"x0": v[0], "y0": v[1], "x1": v[2], "y1": v[3]}
    return v


class ContextItem(_Frozen):
    """One packed block. ``region_id`` is the region that was sent (the context id): the section,
    paragraph, table, figure or page; for a sentence window, the innermost region enclosing the
    whole span (its paragraph, else its section). ``region_ids`` lists every region whose text or
    pixels the block carries, so "no region twice" is checkable. ``trigger_ids`` are the hits that
    caused the item."""

    citation_id: str
    region_id: str
    region_ids: list[str]
    doc_id: str
    version_id: str
    filename: str
    modality: Modality
    expansion: str
    trigger_ids: list[str]
    pages: list[int]
    locators: list[LocatorOut]
    text: str
    tokens: int
    status: Packed
    image_url: str | None = None
    image_tokens: int = 0
    alt_text: str | None = Field(
        None, description="an image item's content as text, for pipelines that read text only: the page's text "
        "(its OCR for a scan) for a page image, the figure's text for a figure. Not in the prompt, not counted "
        "in budget.used (the image is); null for text items")
    score: float
    section: str | None = None
    fallback_from: str | None = Field(
        None, description="set when the unit did not fit and a smaller source region was sent instead: the "
        "expansion that did not fit (``expansion`` names what was sent)")
    lines: list[LineOut] = Field(
        default_factory=list, max_length=MAX_ITEM_LINES,
        description="the line boxes of what made the item relevant, inside what was sent, for its 3 strongest "
        "hits: a hit sentence's lines, a hit table's or figure's box, and for a page found as a whole the lines "
        "of its sentences sharing most question words (assembly.lines); at most 24, hit order. A viewer "
        "highlights these instead of the locators' boxes (a page item's locator is the whole page). Not in "
        "the prompt, not counted in budget.used")
    viewer_url: str | None = Field(None, max_length=2048, pattern=r"^/viewer\?region=", description="the viewer at "
                                   "this region, its lines highlighted: /viewer?region=ID&lines=PAGE:x0,y0,x1,y1;... "
                                   "(whole points, rounded outward; assembly.lines.viewer_url)")


class ExcludedEntry(_Frozen):
    region_id: str
    pages: list[int]
    reason: Exclusion | MergedInto
    tokens: int
    detail: str = ""


class ManifestEntry(_Frozen):
    """The fate of one candidate (one input hit)."""

    region_id: str
    rank: int
    score: float
    pages: list[int]
    fate: Fate
    tokens: int
    reason: str
    citation_id: str | None = None
    context_id: str | None = None
    expansion: str | None = None
    covers: list[int] = []
    fallback_from: str | None = None


class RetrievalHitOut(_Frozen):
    region_id: str
    pages: list[int]
    score: float
    retriever: str
    rank: int


class Coverage(_Frozen):
    """Distinct ``(version, page)`` pairs, distinct documents and hits represented."""

    pages: int
    docs: int
    hits: int


class PageRefOut(_Frozen):
    """A page reference understood in the question ("page 12", "pp. 51-53", "the last slide"): the
    printed numbers it names (none for a page named by position) and the physical pages the retriever
    resolved it to (through printed page labels, then page indices)."""

    text: str
    numbers: list[int]
    pages: list[int]


class RetrievalInfo(_Frozen):
    hits: list[RetrievalHitOut]
    coverage_before: Coverage
    coverage_after: Coverage
    page_refs: list[PageRefOut] = []
    notes: list[str] = Field(
        default_factory=list,
        description="what retrieval or assembly did not do as asked, e.g. a rerank that failed and kept the "
        "fused order, or an LLM compression that failed and went in extractive",
    )


class Breakdown(_Frozen):
    """Token accounting; the fields sum to ``BudgetInfo.used``.

    ``system``: system text; ``question``: the question part; ``wrappers``: context header, block
    open/close tags (citation ids, source attributes); ``text``: block bodies; ``images``: image
    parts by formula; ``overhead``: per-message template tokens (see ``assembly.prompt``)."""

    system: int = 0
    question: int = 0
    wrappers: int = 0
    text: int = 0
    images: int = 0
    overhead: int = 0


class BudgetInfo(_Frozen):
    limit: int
    used: int
    tokenizer: str
    breakdown: Breakdown
    image_formula: str


class PromptOut(_Frozen):
    format: Literal["openai", "anthropic"]
    messages: list[dict[str, Any]]
    system: str | None = None  # anthropic: top-level system string


class ContextPackage(_Frozen):
    query: str
    budget: BudgetInfo
    items: list[ContextItem]
    excluded: list[ExcludedEntry]
    manifest: list[ManifestEntry]
    retrieval: RetrievalInfo
    prompt: PromptOut
    refused: bool
    refusal_reason: str | None = None
    strategy: Strategy
    order: Order

    def citation_map(self) -> dict[str, ContextItem]:
        return {it.citation_id: it for it in self.items}


class CitationSupport(_Frozen):
    sentence_index: int
    citation_id: str
    support: float


class SentenceLines(_Frozen):
    """The lines of a cited item that support one cited sentence of an answer (``assembly.lines``:
    units of the item sharing at least min(2, |C|) of the sentence's content words C and at least half
    as many as the best unit, the 3 sharing most). ``support``: the best unit's share of C (0..1);
    ``lines`` empty when no unit shares enough."""

    sentence_index: int
    citation_id: str
    support: float
    lines: list[LineOut]


class SentenceCheck(_Frozen):
    index: int
    text: str
    citations: list[str]
    invented: list[str]
    factual: bool
    support: float | None


class VerifyReport(_Frozen):
    """Result of ``verify_answer``. ``kept_ids``: cited ids that were packed, in first-cited order;
    ``invented_ids``: cited ids that were not; ``uncited_sentences``: factual sentences without a
    valid citation. ``support`` is token overlap of a sentence with a cited item's text (0..1)."""

    kept_ids: list[str]
    invented_ids: list[str]
    uncited_sentences: list[str]
    sentences: list[SentenceCheck]
    support: list[CitationSupport]
    insufficient_evidence: bool
    ok: bool
