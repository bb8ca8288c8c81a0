"""What a query sends (``...Request``), and the ``...Options`` that type the client's keyword options.

Generated from folio's OpenAPI schema by ``folio/_codegen.py``: do not edit (see ``folio.models``).
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, Literal, TypedDict

from folio.models.common import (
    _Request,
    _Response,
)
from folio.models.responses import (
    ContextPackage,
)


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
    filter: dict[str, Any] | None = None
    collection: str | None = None
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
    breadth_min_room: int | None = None
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
    filter: dict[str, Any] | None = None
    collection: str | None = None
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
    breadth_min_room: int | None = None
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
    filter: dict[str, Any] | None = None
    collection: str | None = None
    strategy: Literal["hybrid", "bm25", "dense", "summary"] | None = None


class VerifyRequest(_Request):
    answer: str
    package: ContextPackage | None = None
    context_request: ContextRequest | None = None


class AnswerOptions(TypedDict, total=False):
    doc_ids: list[str] | None
    versions: dict[str, str] | None
    pages: list[int] | None
    kinds: list[Literal["section", "paragraph", "sentence", "table", "figure", "page"]] | None
    k: int | None
    retrieval_strategy: Literal["hybrid", "bm25", "dense", "summary"] | None
    quotas: dict[str, int] | None
    rerank: bool | None
    filter: dict[str, Any] | None
    collection: str | None
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
    breadth_min_room: int | None
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
    filter: dict[str, Any] | None
    collection: str | None
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
    breadth_min_room: int | None
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
    filter: dict[str, Any] | None
    collection: str | None
    strategy: Literal["hybrid", "bm25", "dense", "summary"] | None


for _model in (AnswerRequest, ContextRequest, ImageTokens, SearchRequest, VerifyRequest):
    _model.model_rebuild()
