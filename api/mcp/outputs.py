"""What each MCP tool returns as structured content, as pydantic models: the SDK publishes their JSON
schema as the tool's ``outputSchema`` (a tool annotated ``Annotated[CallToolResult, Model]``) and
checks every result against it before it is sent.

``list_documents``, ``search`` and ``get_region`` return the REST API's response models for the same
request (``DocumentList``, ``SearchResponse``, ``RegionOut``; ``api.application.Folio``), ``answer`` its
``AnswerResponse`` without the package; ``get_context`` a digest of the ``ContextPackage``. Lists are
``{data, count}``; boxes are PDF points, origin top-left of the page (``BBox``). Fields a client may rely on
are named here; a result may carry more (the models ignore extras rather than fail a call).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from folio.api.service.answer_schemas import AnswerUsage, CitationOut, StructuredCheck
from folio.assembly.package import SentenceLines, VerifyReport
from folio.kernel.model import BBox


class DocumentEntry(BaseModel):
    doc_id: str
    collection: str
    version_id: str = Field(description="the latest version, the default for queries")
    filename: str
    pages: int
    versions: int = Field(description="how many versions the document has")
    # added with the REST shape (DocumentOut):
    size_bytes: int | None = None
    parser_version: str | None = None
    created_at: float | None = Field(None, description="unix seconds when the version became visible")
    regions: int | None = None
    latest: bool | None = None
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="the version's user metadata (what a search's filter matches)"
    )


class DocumentsOut(BaseModel):
    data: list[DocumentEntry]
    count: int


class SearchHitOut(BaseModel):
    region_id: str
    doc_id: str
    version_id: str
    filename: str | None
    kind: str
    pages: list[int]
    score: float
    rank: int
    retriever: str
    text: str | None = Field(description="the region's first 500 characters (as POST /v1/search)")
    # added with the REST shape (HitOut):
    modality: str | None = None
    sources: list[dict[str, Any]] = Field(default_factory=list, description="each retriever that found it, rank, score")


class SearchOut(BaseModel):
    data: list[SearchHitOut]
    count: int
    notes: list[str]


class BudgetOut(BaseModel):
    limit: int
    used: int
    tokenizer: str


class BlockOut(BaseModel):
    citation_id: str
    modality: str
    text: str


class CitationTarget(BaseModel):
    region_id: str
    doc_id: str
    version_id: str
    filename: str | None
    pages: list[int]
    locators: list[dict[str, Any]] = Field(description="one per page: page, bbox (and line_boxes where known)")
    lines: list[dict[str, Any]] = Field(
        default_factory=list, description="the line boxes of what made the block relevant: page, bbox, region_id "
        "(pass them to get_region's highlight to see them on the page)")
    modality: str
    expansion: str
    status: str
    image_url: str | None = Field(None, description="set when the block went to the model as an image")
    alt_text: str | None = Field(None, description="an image block's text (a scanned page's OCR)")


class ContextOut(BaseModel):
    query: str
    budget: BudgetOut
    refused: bool
    refusal_reason: str | None
    system: str | None = Field(description="the citation instructions the blocks must be answered under")
    blocks: list[BlockOut]
    citations: dict[str, CitationTarget] = Field(description="citation id → where it points")
    excluded: int = Field(description="how many candidates were not packed")


class RegionLocator(BaseModel):
    page: int
    bbox: BBox
    page_width: float
    page_height: float
    # added with the REST shape (RegionLocatorOut):
    line_boxes: list[BBox] = Field(default_factory=list)
    char_start: int | None = None
    char_end: int | None = None


class RegionToolOut(BaseModel):
    region_id: str
    doc_id: str
    collection: str
    version_id: str
    filename: str | None
    kind: str
    pages: list[int]
    heading_path: list[str]
    locators: list[RegionLocator]
    coords: str
    text: str
    # added with the REST shape (RegionOut):
    parent_id: str | None = None
    section_id: str | None = None
    level: int | None = None
    tokens: int | None = None
    meta: dict[str, str] = Field(default_factory=dict)
    image_url: str | None = None


class AnswerToolOut(BaseModel):
    """``POST /v1/answer``'s ``AnswerResponse`` without the package."""

    query: str
    answer: str
    raw: str | None = None
    refused: bool
    model: str | None = None
    finish_reason: str | None = None
    citations: list[CitationOut]
    check: VerifyReport
    supporting_lines: list[SentenceLines] = Field(
        default_factory=list, description="for each cited sentence and id: the item's lines that share its words")
    faithful: bool
    structured: StructuredCheck | None = None
    usage: AnswerUsage
    warnings: list[str] = Field(default_factory=list)
