"""Typed models of folio's REST API, generated from its OpenAPI schema by ``folio/_codegen.py``.

Do not edit: run ``.venv/bin/python -m folio._codegen`` after changing the API's schemas
(``tests/folio/test_client_models.py`` fails until the two agree). Response models accept fields
they do not know (servers add fields, never rename them); request models reject them. The
``...Options`` ``TypedDict``s type the client's keyword options (a request's fields but ``query``).
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, protected_namespaces=(), validate_default=True)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, protected_namespaces=(), validate_default=True)


class AnswerRequest(_Request):
    query: str
    doc_ids: list[str] | None = None
    versions: dict[str, str] | None = None
    pages: list[int] | None = None
    kinds: list[Literal["section", "paragraph", "sentence", "table", "figure", "page"]] | None = None
    k: int | None = None
    retrieval_strategy: Literal["hybrid", "bm25", "dense", "summary"] | None = None
    quotas: dict[str, int] | None = None
    rerank: bool | None = None
    budget: int | None = None
    tokenizer: str | None = None
    context_window: int | None = None
    reserve_output: int | None = None
    strategy: Literal["auto", "raw", "window", "parent", "neighbors", "page"] | None = None
    window_before: int | None = None
    window_after: int | None = None
    parent_max_tokens: int | None = None
    neighbors: int | None = None
    page_units: Literal["off", "large_sections", "all"] | None = None
    scanned_pages: Literal["text", "image"] | None = None
    page_render: Literal["compact", "stored"] | None = None
    page_max_share: float | None = None
    window_share: float | None = None
    window_source: Literal["section", "page"] | None = None
    excerpt_growth: int | None = None
    max_items: int | None = None
    score_threshold: float | None = None
    min_relevance: float | None = None
    document_focus: Literal["auto", "off"] | None = None
    threshold_mode: Literal["relative", "absolute"] | None = None
    modality_slots: dict[str, int] | None = None
    order: Literal["relevance", "document", "edges"] | None = None
    mmr_lambda: float | None = None
    sub_questions: list[str] | None = None
    packing: Literal["monotone", "greedy", "breadth"] | None = None
    nested: bool | None = None
    whole_documents: bool | None = None
    breadth_reserve: int | None = None
    breadth_share: float | None = None
    excerpt_tokens: int | None = None
    page_max_tokens: int | None = None
    fallbacks: bool | None = None
    max_image_share: float | None = None
    structural_truncation: bool | None = None
    include_images: bool | None = None
    image_tokens: ImageTokens | None = None
    render_scale: float | None = None
    block_format: Literal["compact", "tagged"] | None = None
    citation_style: Literal["typed", "uniform"] | None = None
    system_prompt: str | None = None
    prompt_format: Literal["openai", "anthropic"] | None = None
    image_url_template: str | None = None
    compress: Literal["off", "extractive", "llm"] | None = None
    compress_share: float | None = None
    stream: bool | None = None
    response_format: Literal["text", "json"] | None = None
    json_schema: dict[str, Any] | None = None
    enforce_schema: bool | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    timeout_s: float | None = None
    include_package: bool | None = None


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


class BBox(_Response):
    x0: float
    y0: float
    x1: float
    y1: float


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


class ContextRequest(_Request):
    query: str
    doc_ids: list[str] | None = None
    versions: dict[str, str] | None = None
    pages: list[int] | None = None
    kinds: list[Literal["section", "paragraph", "sentence", "table", "figure", "page"]] | None = None
    k: int | None = None
    retrieval_strategy: Literal["hybrid", "bm25", "dense", "summary"] | None = None
    quotas: dict[str, int] | None = None
    rerank: bool | None = None
    budget: int | None = None
    tokenizer: str | None = None
    context_window: int | None = None
    reserve_output: int | None = None
    strategy: Literal["auto", "raw", "window", "parent", "neighbors", "page"] | None = None
    window_before: int | None = None
    window_after: int | None = None
    parent_max_tokens: int | None = None
    neighbors: int | None = None
    page_units: Literal["off", "large_sections", "all"] | None = None
    scanned_pages: Literal["text", "image"] | None = None
    page_render: Literal["compact", "stored"] | None = None
    page_max_share: float | None = None
    window_share: float | None = None
    window_source: Literal["section", "page"] | None = None
    excerpt_growth: int | None = None
    max_items: int | None = None
    score_threshold: float | None = None
    min_relevance: float | None = None
    document_focus: Literal["auto", "off"] | None = None
    threshold_mode: Literal["relative", "absolute"] | None = None
    modality_slots: dict[str, int] | None = None
    order: Literal["relevance", "document", "edges"] | None = None
    mmr_lambda: float | None = None
    sub_questions: list[str] | None = None
    packing: Literal["monotone", "greedy", "breadth"] | None = None
    nested: bool | None = None
    whole_documents: bool | None = None
    breadth_reserve: int | None = None
    breadth_share: float | None = None
    excerpt_tokens: int | None = None
    page_max_tokens: int | None = None
    fallbacks: bool | None = None
    max_image_share: float | None = None
    structural_truncation: bool | None = None
    include_images: bool | None = None
    image_tokens: ImageTokens | None = None
    render_scale: float | None = None
    block_format: Literal["compact", "tagged"] | None = None
    citation_style: Literal["typed", "uniform"] | None = None
    system_prompt: str | None = None
    prompt_format: Literal["openai", "anthropic"] | None = None
    image_url_template: str | None = None
    compress: Literal["off", "extractive", "llm"] | None = None
    compress_share: float | None = None


class Coverage(_Response):
    pages: int
    docs: int
    hits: int


class DeleteResponse(_Response):
    doc_id: str
    deleted_versions: list[str]


class DocumentDetail(_Response):
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    size_bytes: int
    parser_version: str
    created_at: float
    regions: int
    latest: bool
    versions: list[VersionOut]
    report: dict[str, Any] | None = None


class DocumentList(_Response):
    data: list[DocumentOut]
    count: int


class DocumentOut(_Response):
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    size_bytes: int
    parser_version: str
    created_at: float
    regions: int
    latest: bool
    versions: int = 1


class ErrorBody(_Response):
    code: str
    message: str
    detail: Any | None = None
    request_id: str | None = None


class ErrorResponse(_Response):
    error: ErrorBody


class ExcludedEntry(_Response):
    region_id: str
    pages: list[int]
    reason: Literal["excluded_budget", "excluded_slot", "excluded_max_items", "duplicate", "below_threshold", "missing_region", "no_content", "weak_document"] | str
    tokens: int
    detail: str = ""


class HealthOut(_Response):
    status: Literal["ok"]
    state: Literal["starting", "ready", "stopping", "failed"] = "ready"
    instance: str = ""
    version: str
    parser_version: str
    counts: dict[str, int]
    jobs: dict[str, int]
    retrieval: dict[str, Any]
    tokenizer: str
    auth: bool


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


class ImageTokens(_Response):
    kind: Literal["tile", "area", "fixed"] = "tile"
    base: int = 85
    per_tile: int = 170
    tile_px: int = 512
    max_side: int = 2048
    short_side: int = 768
    divisor: float = 750.0
    max_long_edge: int = 1568
    fixed: int = 85


class IngestResponse(_Response):
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    status: Literal["created", "unchanged", "partial"]
    report: dict[str, Any]
    job_id: str


class IngestResult(_Response):
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    status: Literal["created", "unchanged", "partial"]
    report: dict[str, Any]


class JobList(_Response):
    data: list[JobOut]
    count: int


class JobOut(_Response):
    job_id: str
    kind: str
    status: Literal["queued", "running", "done", "failed"]
    progress: JobProgress
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    result: IngestResult | None = None
    error: ErrorBody | None = None
    filename: str | None = None
    doc_id: str | None = None
    collection: str | None = None


class JobProgress(_Response):
    stage: str
    done: int
    total: int


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
    fate: Literal["included", "truncated"] | Literal["excluded_budget", "excluded_slot", "excluded_max_items", "duplicate", "below_threshold", "missing_region", "no_content", "weak_document"] | str
    tokens: int
    reason: str
    citation_id: str | None = None
    context_id: str | None = None
    expansion: str | None = None
    covers: list[int] = []
    fallback_from: str | None = None


class PageList(_Response):
    data: list[PageOut]
    count: int
    coords: str = "pdf-points, origin top-left of the displayed page (CropBox, rotation applied), y down"


class PageOut(_Response):
    page: int
    width: float
    height: float
    image_url: str | None
    region_id: str | None = None
    ocr: bool = False


class PageRefOut(_Response):
    text: str
    numbers: list[int]
    pages: list[int]


class PromptOut(_Response):
    format: Literal["openai", "anthropic"]
    messages: list[dict[str, Any]]
    system: str | None = None


class RegionLocatorOut(_Response):
    page: int
    bbox: BBox
    page_width: float
    page_height: float
    line_boxes: list[BBox] = []
    char_start: int | None = None
    char_end: int | None = None


class RegionOut(_Response):
    region_id: str
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str | None = None
    kind: str
    text: str
    pages: list[int]
    locators: list[RegionLocatorOut]
    heading_path: list[str]
    parent_id: str | None = None
    section_id: str | None = None
    level: int = 0
    tokens: int = 0
    meta: dict[str, str]
    image_url: str
    coords: str = "pdf-points, origin top-left of the displayed page (CropBox, rotation applied), y down"


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


class SearchRequest(_Request):
    query: str
    doc_ids: list[str] | None = None
    versions: dict[str, str] | None = None
    pages: list[int] | None = None
    kinds: list[Literal["section", "paragraph", "sentence", "table", "figure", "page"]] | None = None
    k: int | None = None
    retrieval_strategy: Literal["hybrid", "bm25", "dense", "summary"] | None = None
    quotas: dict[str, int] | None = None
    rerank: bool | None = None
    strategy: Literal["hybrid", "bm25", "dense", "summary"] | None = None


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


class VerifyRequest(_Request):
    answer: str
    package: ContextPackage | None = None
    context_request: ContextRequest | None = None


class VersionOut(_Response):
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    size_bytes: int
    parser_version: str
    created_at: float
    regions: int
    latest: bool


class AnswerOptions(TypedDict, total=False):
    doc_ids: list[str] | None
    versions: dict[str, str] | None
    pages: list[int] | None
    kinds: list[Literal["section", "paragraph", "sentence", "table", "figure", "page"]] | None
    k: int | None
    retrieval_strategy: Literal["hybrid", "bm25", "dense", "summary"] | None
    quotas: dict[str, int] | None
    rerank: bool | None
    budget: int | None
    tokenizer: str | None
    context_window: int | None
    reserve_output: int | None
    strategy: Literal["auto", "raw", "window", "parent", "neighbors", "page"] | None
    window_before: int | None
    window_after: int | None
    parent_max_tokens: int | None
    neighbors: int | None
    page_units: Literal["off", "large_sections", "all"] | None
    scanned_pages: Literal["text", "image"] | None
    page_render: Literal["compact", "stored"] | None
    page_max_share: float | None
    window_share: float | None
    window_source: Literal["section", "page"] | None
    excerpt_growth: int | None
    max_items: int | None
    score_threshold: float | None
    min_relevance: float | None
    document_focus: Literal["auto", "off"] | None
    threshold_mode: Literal["relative", "absolute"] | None
    modality_slots: dict[str, int] | None
    order: Literal["relevance", "document", "edges"] | None
    mmr_lambda: float | None
    sub_questions: list[str] | None
    packing: Literal["monotone", "greedy", "breadth"] | None
    nested: bool | None
    whole_documents: bool | None
    breadth_reserve: int | None
    breadth_share: float | None
    excerpt_tokens: int | None
    page_max_tokens: int | None
    fallbacks: bool | None
    max_image_share: float | None
    structural_truncation: bool | None
    include_images: bool | None
    image_tokens: ImageTokens | None
    render_scale: float | None
    block_format: Literal["compact", "tagged"] | None
    citation_style: Literal["typed", "uniform"] | None
    system_prompt: str | None
    prompt_format: Literal["openai", "anthropic"] | None
    image_url_template: str | None
    compress: Literal["off", "extractive", "llm"] | None
    compress_share: float | None
    stream: bool | None
    response_format: Literal["text", "json"] | None
    json_schema: dict[str, Any] | None
    enforce_schema: bool | None
    max_tokens: int | None
    temperature: float | None
    timeout_s: float | None
    include_package: bool | None


class ContextOptions(TypedDict, total=False):
    doc_ids: list[str] | None
    versions: dict[str, str] | None
    pages: list[int] | None
    kinds: list[Literal["section", "paragraph", "sentence", "table", "figure", "page"]] | None
    k: int | None
    retrieval_strategy: Literal["hybrid", "bm25", "dense", "summary"] | None
    quotas: dict[str, int] | None
    rerank: bool | None
    budget: int | None
    tokenizer: str | None
    context_window: int | None
    reserve_output: int | None
    strategy: Literal["auto", "raw", "window", "parent", "neighbors", "page"] | None
    window_before: int | None
    window_after: int | None
    parent_max_tokens: int | None
    neighbors: int | None
    page_units: Literal["off", "large_sections", "all"] | None
    scanned_pages: Literal["text", "image"] | None
    page_render: Literal["compact", "stored"] | None
    page_max_share: float | None
    window_share: float | None
    window_source: Literal["section", "page"] | None
    excerpt_growth: int | None
    max_items: int | None
    score_threshold: float | None
    min_relevance: float | None
    document_focus: Literal["auto", "off"] | None
    threshold_mode: Literal["relative", "absolute"] | None
    modality_slots: dict[str, int] | None
    order: Literal["relevance", "document", "edges"] | None
    mmr_lambda: float | None
    sub_questions: list[str] | None
    packing: Literal["monotone", "greedy", "breadth"] | None
    nested: bool | None
    whole_documents: bool | None
    breadth_reserve: int | None
    breadth_share: float | None
    excerpt_tokens: int | None
    page_max_tokens: int | None
    fallbacks: bool | None
    max_image_share: float | None
    structural_truncation: bool | None
    include_images: bool | None
    image_tokens: ImageTokens | None
    render_scale: float | None
    block_format: Literal["compact", "tagged"] | None
    citation_style: Literal["typed", "uniform"] | None
    system_prompt: str | None
    prompt_format: Literal["openai", "anthropic"] | None
    image_url_template: str | None
    compress: Literal["off", "extractive", "llm"] | None
    compress_share: float | None


class SearchOptions(TypedDict, total=False):
    doc_ids: list[str] | None
    versions: dict[str, str] | None
    pages: list[int] | None
    kinds: list[Literal["section", "paragraph", "sentence", "table", "figure", "page"]] | None
    k: int | None
    retrieval_strategy: Literal["hybrid", "bm25", "dense", "summary"] | None
    quotas: dict[str, int] | None
    rerank: bool | None
    strategy: Literal["hybrid", "bm25", "dense", "summary"] | None


__all__ = [
    "AnswerOptions",
    "AnswerRequest",
    "AnswerResponse",
    "AnswerUsage",
    "BBox",
    "Breakdown",
    "BudgetInfo",
    "CitationOut",
    "CitationSupport",
    "ContextItem",
    "ContextOptions",
    "ContextPackage",
    "ContextRequest",
    "Coverage",
    "DeleteResponse",
    "DocumentDetail",
    "DocumentList",
    "DocumentOut",
    "ErrorBody",
    "ErrorResponse",
    "ExcludedEntry",
    "HealthOut",
    "HitOut",
    "ImageTokens",
    "IngestResponse",
    "IngestResult",
    "JobList",
    "JobOut",
    "JobProgress",
    "LineOut",
    "LocatorOut",
    "ManifestEntry",
    "PageList",
    "PageOut",
    "PageRefOut",
    "PromptOut",
    "RegionLocatorOut",
    "RegionOut",
    "RetrievalHitOut",
    "RetrievalInfo",
    "SearchOptions",
    "SearchRequest",
    "SearchResponse",
    "SentenceCheck",
    "SentenceLines",
    "SourceOut",
    "StructuredCheck",
    "VerifyReport",
    "VerifyRequest",
    "VersionOut",
]

for _model in (AnswerRequest, AnswerResponse, AnswerUsage, BBox, Breakdown, BudgetInfo, CitationOut, CitationSupport, ContextItem, ContextPackage, ContextRequest, Coverage, DeleteResponse, DocumentDetail, DocumentList, DocumentOut, ErrorBody, ErrorResponse, ExcludedEntry, HealthOut, HitOut, ImageTokens, IngestResponse, IngestResult, JobList, JobOut, JobProgress, LineOut, LocatorOut, ManifestEntry, PageList, PageOut, PageRefOut, PromptOut, RegionLocatorOut, RegionOut, RetrievalHitOut, RetrievalInfo, SearchRequest, SearchResponse, SentenceCheck, SentenceLines, SourceOut, StructuredCheck, VerifyReport, VerifyRequest, VersionOut):
    _model.model_rebuild()
