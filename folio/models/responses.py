"""What a query returns: the context package, search hits, an answer and its citation check.

Generated from folio's OpenAPI schema by ``folio/_codegen.py``: do not edit (see ``folio.models``).
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, Literal

from folio.models.common import (
    BBox,
    _Response,
)


class AnswerResponse(_Response):
    query: str
    answer: str
    raw: str | None = None
    refused: bool
    model: str | None = None
    finish_reason: str | None = None
    citations: list[CitationOut]
    check: VerifyReport
    supporting_lines: list[SentenceLines] | None = None
    faithful: bool
    structured: StructuredCheck | None = None
    usage: AnswerUsage
    warnings: list[str] | None = None
    package: ContextPackage | None = None


class AnswerUsage(_Response):
    prompt_tokens: int
    completion_tokens: int | None
    endpoint_prompt_tokens: int | None
    schema_tokens: int
    budget_limit: int
    tokenizer: str


class Breakdown(_Response):
    system: int = 0
    question: int = 0
    wrappers: int = 0
    text: int = 0
    images: int = 0
    overhead: int = 0


class BudgetInfo(_Response):
    limit: int
    used: int
    tokenizer: str
    breakdown: Breakdown
    image_formula: str


class CitationOut(_Response):
    citation_id: str
    region_id: str
    region_ids: list[str]
    doc_id: str
    version_id: str
    filename: str
    modality: Literal["text", "table", "figure", "page"]
    expansion: str
    pages: list[int]
    locators: list[LocatorOut]
    lines: list[LineOut] | None = None
    image_url: str | None = None
    viewer_url: str


class CitationSupport(_Response):
    sentence_index: int
    citation_id: str
    support: float


class ContextItem(_Response):
    citation_id: str
    region_id: str
    region_ids: list[str]
    doc_id: str
    version_id: str
    filename: str
    modality: Literal["text", "table", "figure", "page"]
    expansion: str
    trigger_ids: list[str]
    pages: list[int]
    locators: list[LocatorOut]
    text: str
    tokens: int
    status: Literal["included", "truncated"]
    image_url: str | None = None
    image_tokens: int = 0
    alt_text: str | None = None
    score: float
    section: str | None = None
    fallback_from: str | None = None
    lines: list[LineOut] | None = None
    viewer_url: str | None = None


class ContextPackage(_Response):
    query: str
    budget: BudgetInfo
    items: list[ContextItem]
    excluded: list[ExcludedEntry]
    manifest: list[ManifestEntry]
    retrieval: RetrievalInfo
    prompt: PromptOut
    refused: bool
    refusal_reason: str | None = None
    strategy: Literal["auto", "raw", "window", "parent", "neighbors", "page"]
    order: Literal["relevance", "document", "edges"]


class Coverage(_Response):
    pages: int
    docs: int
    hits: int


class ExcludedEntry(_Response):
    region_id: str
    pages: list[int]
    reason: Literal["excluded_budget", "excluded_slot", "excluded_max_items", "duplicate", "below_threshold", "missing_region", "no_content", "weak_document", "navigation"] | str
    tokens: int
    detail: str = ""


class HitOut(_Response):
    region_id: str
    doc_id: str
    version_id: str
    kind: Literal["section", "paragraph", "sentence", "table", "figure", "page"]
    modality: Literal["text", "table", "figure", "page"]
    pages: list[int]
    score: float
    rank: int
    retriever: str
    sources: list[SourceOut]
    filename: str | None = None
    text: str | None = None


class LineOut(_Response):
    page: int
    bbox: BBox
    region_id: str


class LocatorOut(_Response):
    page: int
    bbox: BBox
    line_boxes: list[BBox] | None = None


class ManifestEntry(_Response):
    region_id: str
    rank: int
    score: float
    pages: list[int]
    fate: Literal["included", "truncated"] | Literal["excluded_budget", "excluded_slot", "excluded_max_items", "duplicate", "below_threshold", "missing_region", "no_content", "weak_document", "navigation"] | str
    tokens: int
    reason: str
    citation_id: str | None = None
    context_id: str | None = None
    expansion: str | None = None
    covers: list[int] = []
    fallback_from: str | None = None


class PageRefOut(_Response):
    text: str
    numbers: list[int]
    pages: list[int]


class PromptOut(_Response):
    format: Literal["openai", "anthropic"]
    messages: list[dict[str, Any]]
    system: str | None = None


class RetrievalHitOut(_Response):
    region_id: str
    pages: list[int]
    score: float
    retriever: str
    rank: int


class RetrievalInfo(_Response):
    hits: list[RetrievalHitOut]
    coverage_before: Coverage
    coverage_after: Coverage
    page_refs: list[PageRefOut] = []
    notes: list[str] | None = None


class SearchResponse(_Response):
    data: list[HitOut]
    count: int
    notes: list[str] | None = None


class SentenceCheck(_Response):
    index: int
    text: str
    citations: list[str]
    invented: list[str]
    factual: bool
    support: float | None


class SentenceLines(_Response):
    sentence_index: int
    citation_id: str
    support: float
    lines: list[LineOut]


class SourceOut(_Response):
    retriever: str
    rank: int
    score: float


class StructuredCheck(_Response):
    schema_name: Literal["folio", "custom"]
    json_valid: bool | None
    schema_valid: bool | None
    errors: list[str] | None = None
    fenced: bool = False
    value: Any | None = None
    cited_ids: list[str] | None = None
    invented_ids: list[str] | None = None
    faithful: bool


class VerifyReport(_Response):
    kept_ids: list[str]
    invented_ids: list[str]
    uncited_sentences: list[str]
    sentences: list[SentenceCheck]
    support: list[CitationSupport]
    insufficient_evidence: bool
    ok: bool


for _model in (AnswerResponse, AnswerUsage, Breakdown, BudgetInfo, CitationOut, CitationSupport, ContextItem, ContextPackage, Coverage, ExcludedEntry, HitOut, LineOut, LocatorOut, ManifestEntry, PageRefOut, PromptOut, RetrievalHitOut, RetrievalInfo, SearchResponse, SentenceCheck, SentenceLines, SourceOut, StructuredCheck, VerifyReport):
    _model.model_rebuild()
