"""Request and response schemas of the REST API (separate from the domain values in ``ingest``).

The contract is the README's "REST API and viewer" and the OpenAPI snapshot
(``tests/api/data/openapi.json``): fields may be added, never renamed. List responses
are ``{data, count}``; every error is ``ErrorResponse``.

The requests are one tree of options: ``RetrievalOptions`` (what to retrieve) is shared by ``SearchRequest``,
``ContextRequest`` and ``AnswerRequest``, and ``ContextRequest`` is built from the groups of
``assembly.options.AssemblyOptions`` (its budget group as ``BudgetRequest``), so that every assembly option is
accepted at the top level of the request and documented in OpenAPI without a second copy of its default;
a request only adds upper bounds (``_option``).
"""

from __future__ import annotations

import copy
import math
from typing import Annotated, Any, Literal, Self

from annotated_types import Ge, Le, MaxLen
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from folio.assembly.options import (
    MAX_TEMPLATE_CHARS,
    AssemblyOptions,
    BudgetOptions,
    CompressionOptions,
    ExpansionOptions,
    OrderingOptions,
    PackingOptions,
    RenderOptions,
    SelectionOptions,
)
from folio.assembly.package import ContextPackage
from folio.kernel.errors import InvalidRequest
from folio.kernel.hit import Modality, RetrievalStrategy
from folio.kernel.metadata import FilterNode, parse_filter
from folio.kernel.model import COORD_CONVENTION, BBox, RegionKind


class Schema(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ------------------------------------------------------------------------------------- errors
class ErrorBody(Schema):
    code: str = Field(description="stable machine-readable code, e.g. document_not_found, not_a_pdf")
    message: str = Field(description="one human-readable line")
    detail: Any = Field(None, description="extra structure when there is any (validation errors, job id)")
    request_id: str | None = Field(
        None, description="the request's X-Request-ID (as sent, when sane, else generated): quote it in reports"
    )


class ErrorResponse(Schema):
    error: ErrorBody


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` entries documenting the common error shape."""
    text = {
        400: "the body is not JSON or nests too deep, or the Host header is not accepted",
        401: "missing or wrong API key",
        403: "cross-site request refused, or the key may not do this (read-only, other collection)",
        404: "not found (also anything outside the key's collections)",
        405: "method not allowed",
        409: "doc_id taken (by any collection: the answer says not which), or the version is being written",
        413: "over a size limit: an upload's bytes or pages, a JSON body's bytes or members",
        422: "invalid request or document",
        503: "a model is not available, or the server is busy (Retry-After)",
    }
    return {s: {"model": ErrorResponse, "description": text.get(s, "error")} for s in statuses}


# ---------------------------------------------------------------------------------- documents
class VersionOut(Schema):
    doc_id: str
    collection: str = Field("default", description="the document's collection (API keys are scoped to collections)")
    version_id: str = Field(description="first 16 hex digits of the sha256 of the file bytes")
    filename: str
    pages: int
    size_bytes: int
    parser_version: str
    created_at: float = Field(description="unix seconds when the version became visible")
    regions: int
    latest: bool = Field(description="the newest version of its document: the default for queries")
    metadata: dict[str, str | int | float | bool] = Field(
        default_factory=dict,
        description="the version's user metadata (dates as YYYY-MM-DD strings); {} when it has none",
    )


class DocumentOut(VersionOut):
    """A document as its latest version, plus how many versions it has."""

    versions: int = 1


class DocumentList(Schema):
    data: list[DocumentOut]
    count: int


class DocumentDetail(VersionOut):
    """A document: its latest version's fields, every version, and the latest ingest report."""

    versions: list[VersionOut] = Field(description="every ready version, newest first")
    report: dict[str, Any] = Field(default_factory=dict, description="the latest version's ingest report")


class IngestResult(Schema):
    """What a finished ingest job wrote: ``JobOut.result``, and ``IngestResponse`` without its job id."""

    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    status: Literal["created", "unchanged", "partial"]
    report: dict[str, Any]


class IngestResponse(IngestResult):
    job_id: str


class DeleteResponse(Schema):
    doc_id: str
    deleted_versions: list[str]


class PageOut(Schema):
    page: int = Field(description="1-based page number")
    width: float = Field(description="page width in PDF points (the bbox coordinate space)")
    height: float
    image_url: str | None = Field(description="rendered PNG of the page, or null when none was stored")
    region_id: str | None = None
    ocr: bool = False


class PageList(Schema):
    data: list[PageOut]
    count: int
    coords: str = COORD_CONVENTION


# --------------------------------------------------------------------------------------- jobs
class JobProgress(Schema):
    stage: str = Field(description="queued, starting, parse, embed, index:<name>, commit or done")
    done: int
    total: int


class JobOut(Schema):
    model_config = ConfigDict(extra="allow")

    job_id: str
    kind: str
    status: Literal["queued", "running", "done", "failed"]
    progress: JobProgress
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    result: IngestResult | None = Field(None, description="a finished ingest job's version (IngestResponse fields)")
    error: ErrorBody | None = None
    filename: str | None = None
    doc_id: str | None = None
    collection: str | None = Field(None, description="the collection an ingest job writes to")


class JobList(Schema):
    data: list[JobOut]
    count: int


class BatchItem(Schema):
    """One file of a batch upload: its job (``accepted``), or why it was refused (``error``; nothing was written)."""

    filename: str
    doc_id: str | None = Field(None, description="the document id the job writes (null when the file was refused)")
    status: Literal["accepted", "refused"]
    job_id: str | None = Field(None, description="the ingest job (GET /v1/jobs/{job_id}, or its /events)")
    error: ErrorBody | None = Field(None, description="a refused file: the error its single upload would get")
    http_status: int = Field(202, description="the status its single upload would get: 202, else the error's")


class BatchUploadResponse(Schema):
    """``POST /v1/documents/batch``: one item per file part, in the order sent."""

    data: list[BatchItem]
    count: int
    accepted: int = Field(description="files queued as ingest jobs")
    refused: int = Field(description="files refused at the door (each item's error says why)")


# ------------------------------------------------------------------------------------- search
# Bounds on every request field: a bad value is a 422 before it reaches LanceDB or the packer
# (a page of 2**31 once overflowed LanceDB's filter conversion into a 500).
MAX_PAGE = 100_000
MAX_FILTER_ITEMS = 1000
MAX_BUDGET = 2_000_000
MAX_CONTEXT_WINDOW = 10_000_000
MAX_SUB_QUESTIONS = 16
MAX_QUESTION_CHARS = 4000
MAX_SYSTEM_PROMPT_CHARS = 20_000
# Rust regex (pydantic's): ``$`` is the end of the string, a trailing newline does not match.
DOC_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
VERSION_ID_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"
TOKENIZER_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"

DocId = Annotated[str, Field(pattern=DOC_ID_PATTERN)]
VersionId = Annotated[str, Field(pattern=VERSION_ID_PATTERN)]
Page = Annotated[int, Field(ge=1, le=MAX_PAGE)]
Quota = Annotated[int, Field(ge=0, le=500)]

MetadataFilter = Annotated[
    dict[str, Any] | None,
    Field(
        description="a metadata filter (docs/api.md, Filters): {field, op, value} leaves (op: eq ne in gt gte lt "
        "lte between), {and: [...]}, {or: [...]}, {not: {...}}, or the shorthand {field: value, field: {op: "
        "value}}; at most 8 levels, 64 nodes, 256 values in an in",
        examples=[{"company": "Acme", "year": {"gte": 2020}}],
    ),
]
DocIds = Annotated[
    list[DocId] | None,
    Field(description="restrict to these documents (latest versions)", max_length=MAX_FILTER_ITEMS),
]
Versions = Annotated[
    dict[DocId, VersionId] | None,
    Field(description="pin documents to versions, {doc_id: version_id}", max_length=MAX_FILTER_ITEMS),
]
Pages = Annotated[
    list[Page] | None, Field(description="restrict to these 1-based pages", max_length=MAX_FILTER_ITEMS)
]
Kinds = Annotated[
    list[RegionKind] | None,
    Field(description="restrict to these region kinds (sentence, table, figure, page)", max_length=16),
]
Quotas = Annotated[
    dict[Modality, Quota] | None, Field(description='per-modality hit quotas, e.g. {"figure": 3}')
]


MAX_K = 500
DEFAULT_K = 50


def _k(description: str) -> Any:
    return Field(DEFAULT_K, ge=1, le=MAX_K, description=description)


class RetrievalOptions(Schema):
    """What to retrieve: the fields ``/v1/search``, ``/v1/context`` and ``/v1/answer`` share, turned into one
    ``Retriever.search_detailed`` call in one place (``api.service.context.search_hits``)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    query: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    doc_ids: DocIds = None
    versions: Versions = None
    pages: Pages = None
    kinds: Kinds = None
    k: int = _k("how many hits to retrieve before assembly")
    retrieval_strategy: RetrievalStrategy = Field("hybrid", description="retrieval strategy (Retriever.search)")
    quotas: Quotas = None
    rerank: bool = False
    filter: MetadataFilter = None
    collection: str | None = Field(
        None, max_length=128,
        description="search only this collection (one the key sees; another is a 404, as an unknown document is)",
    )

    @field_validator("filter")
    @classmethod
    def _typed_filter(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        """A filter is checked against its typed models (``folio.kernel.metadata.parse_filter``) on the way in."""
        try:
            parse_filter(value)
        except InvalidRequest as exc:
            raise ValueError(str(exc)) from exc
        return value

    def metadata_filter(self) -> FilterNode | None:
        """The request's filter as its typed tree (checked when the request was)."""
        return parse_filter(self.filter)


class SearchRequest(RetrievalOptions):
    k: int = _k("how many hits to return")
    retrieval_strategy: RetrievalStrategy = Field(
        "hybrid",
        description="the same as strategy, by the name /v1/context and /v1/answer use (where strategy is the "
        "assembly strategy); giving both with different values is a 422",
    )
    strategy: RetrievalStrategy = Field(
        "hybrid", description="retrieval strategy (see /v1/health for those on)"
    )

    @model_validator(mode="before")
    @classmethod
    def _one_strategy(cls, data: Any) -> Any:
        """``strategy`` and ``retrieval_strategy`` are one field by two names: whichever is given sets both."""
        if not isinstance(data, dict) or ("strategy" in data) == ("retrieval_strategy" in data):
            if isinstance(data, dict) and data.get("strategy") != data.get("retrieval_strategy"):
                raise ValueError("strategy and retrieval_strategy are the same field: give one, or both equal")
            return data
        given = data["strategy"] if "strategy" in data else data["retrieval_strategy"]
        return {**data, "strategy": given, "retrieval_strategy": given}


class SourceOut(Schema):
    retriever: str
    rank: int
    score: float


class HitOut(Schema):
    region_id: str
    doc_id: str
    version_id: str
    kind: RegionKind
    modality: Modality
    pages: list[int]
    score: float
    rank: int
    retriever: str = Field(description="the retrievers that found it, joined with '+'")
    sources: list[SourceOut]
    filename: str | None = None
    text: str | None = Field(None, description="the region's text (first 500 characters)")


class SearchResponse(Schema):
    data: list[HitOut]
    count: int
    notes: list[str] = Field(
        default_factory=list,
        description="what did not go as asked, e.g. a rerank that failed and kept the fused order",
    )


RETRIEVAL_FIELDS = frozenset(RetrievalOptions.model_fields)
ASSEMBLY_FIELDS = frozenset(AssemblyOptions.model_fields)


def _option(group: type[BaseModel], name: str) -> Any:
    """Field ``name`` of an ``AssemblyOptions`` group, to redeclare in a request with tighter bounds in its
    annotation: the default, the group's own bounds and the description stay the group's (one copy)."""
    return copy.copy(group.model_fields[name])


class BudgetRequest(Schema):
    """``BudgetOptions`` as a request gives them: a budget and a tokenizer left unset take the server's
    (``Settings.context``), and a tokenizer is named, never a path."""

    budget: int | None = Field(None, ge=1, le=MAX_BUDGET, description="token limit for the whole rendered prompt")
    tokenizer: str | None = Field(
        None,
        pattern=TOKENIZER_NAME_PATTERN,
        description="a tokenizer the server has, by name: cl100k_base, o200k_base or one of FOLIO_TOKENIZERS "
        "(never a path); default: the server's FOLIO_TOKENIZER",
    )
    context_window: Annotated[int | None, Le(MAX_CONTEXT_WINDOW)] = _option(BudgetOptions, "context_window")
    reserve_output: Annotated[int, Le(MAX_CONTEXT_WINDOW)] = _option(BudgetOptions, "reserve_output")


class ContextRequest(
    CompressionOptions,
    RenderOptions,
    PackingOptions,
    OrderingOptions,
    SelectionOptions,
    ExpansionOptions,
    BudgetRequest,
    RetrievalOptions,
):
    """A question plus every retrieval and assembly option (AssemblyOptions fields, top level)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=False)

    # Upper bounds for the AssemblyOptions fields a request may set, on top of the group's own bounds.
    window_before: Annotated[int, Le(50)] = _option(ExpansionOptions, "window_before")
    window_after: Annotated[int, Le(50)] = _option(ExpansionOptions, "window_after")
    parent_max_tokens: Annotated[int, Le(MAX_BUDGET)] = _option(ExpansionOptions, "parent_max_tokens")
    neighbors: Annotated[int, Le(20)] = _option(ExpansionOptions, "neighbors")
    max_items: Annotated[int | None, Le(MAX_FILTER_ITEMS)] = _option(SelectionOptions, "max_items")
    score_threshold: Annotated[float | None, Ge(-1e6), Le(1e6)] = _option(SelectionOptions, "score_threshold")
    modality_slots: Annotated[dict[Modality, Annotated[int, Le(MAX_FILTER_ITEMS)]] | None, MaxLen(4)] = _option(
        SelectionOptions, "modality_slots"
    )
    sub_questions: Annotated[
        tuple[Annotated[str, MaxLen(MAX_QUESTION_CHARS)], ...], MaxLen(MAX_SUB_QUESTIONS)
    ] = _option(OrderingOptions, "sub_questions")
    render_scale: Annotated[float, Le(16.0)] = _option(RenderOptions, "render_scale")
    system_prompt: Annotated[str | None, MaxLen(MAX_SYSTEM_PROMPT_CHARS)] = _option(RenderOptions, "system_prompt")
    image_url_template: Annotated[str, MaxLen(MAX_TEMPLATE_CHARS)] = _option(RenderOptions, "image_url_template")

    @model_validator(mode="after")
    def _assembly_options_valid(self) -> Self:
        """What the groups' validators cannot see from here (a known tokenizer, context_window against
        reserve_output, checks across groups) is checked by building the ``AssemblyOptions``: a bad option is
        a 422 validation_error like any other bad field."""
        values = self.model_dump(include=set(ASSEMBLY_FIELDS), exclude_unset=True)
        if values.get("tokenizer") is None:
            values.pop("tokenizer", None)
        image_tokens = values.get("image_tokens") or {}
        for key, n in image_tokens.items():
            if isinstance(n, int | float) and not (math.isfinite(n) and 0 <= n <= 1_000_000):
                raise ValueError(f"image_tokens.{key} must lie in [0, 1000000]")
        AssemblyOptions(**values)
        return self


def assembly_options(
    req: ContextRequest,
    *,
    default_tokenizer: str,
    default_budget: int,
    tokenizers: frozenset[str] | None = None,
) -> AssemblyOptions:
    """The ``AssemblyOptions`` a context request asks for; unset tokenizer/budget take the server's.

    ``tokenizers`` are the names a request may ask for (the server's configuration); a name
    outside it is an ``InvalidRequest`` (422), whatever this process happens to have loaded.
    """
    values = req.model_dump(include=set(ASSEMBLY_FIELDS), exclude_unset=True)
    asked = values.get("tokenizer")
    if asked is None:
        values["tokenizer"] = default_tokenizer
    elif tokenizers is not None and asked not in tokenizers:
        raise InvalidRequest(f"unknown tokenizer {asked!r}: this server has {', '.join(sorted(tokenizers))}")
    if values.get("budget") is None and values.get("context_window") is None:
        values["budget"] = default_budget
    return AssemblyOptions(**values)


# A package sent to /v1/verify: a real one has at most a few hundred items (k <= 500, max_items <= 1000)
# and as many manifest and exclusion entries as hits. Larger lists are refused before any is validated.
MAX_PACKAGE_ITEMS = 2000
MAX_PACKAGE_ENTRIES = 20_000
_PACKAGE_LISTS = {"items": MAX_PACKAGE_ITEMS, "excluded": MAX_PACKAGE_ENTRIES, "manifest": MAX_PACKAGE_ENTRIES}


def _check_package_sizes(package: Any) -> None:
    if not isinstance(package, dict):
        return
    lists = [(f"package.{name}", package.get(name), most) for name, most in _PACKAGE_LISTS.items()]
    retrieval = package.get("retrieval")
    if isinstance(retrieval, dict):
        lists.append(("package.retrieval.hits", retrieval.get("hits"), MAX_PACKAGE_ENTRIES))
    for where, value, most in lists:
        if isinstance(value, list) and len(value) > most:
            raise ValueError(f"{where} has {len(value)} entries, over the limit of {most}")


class VerifyRequest(Schema):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    answer: str = Field(max_length=200_000)
    package: ContextPackage | None = Field(None, description="the ContextPackage the answer was written from")
    context_request: ContextRequest | None = Field(
        None,
        description="instead of a package: rebuild it from this request (deterministic for the same data)",
    )

    @model_validator(mode="before")
    @classmethod
    def _bounded_package(cls, data: Any) -> Any:
        """Counted on the raw JSON, before a single item is validated (50,000 took seconds)."""
        if isinstance(data, dict):
            _check_package_sizes(data.get("package"))
        return data


# -------------------------------------------------------------------------------------- regions
class RegionLocatorOut(Schema):
    page: int
    bbox: BBox
    page_width: float
    page_height: float
    line_boxes: list[BBox] = []
    char_start: int | None = None
    char_end: int | None = None


class RegionOut(Schema):
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
    coords: str = COORD_CONVENTION


class DocumentExport(VersionOut):
    """``GET /v1/documents/{doc_id}/export?format=json``: the version's facts and its regions in reading order
    (sections, paragraphs, tables, figures; no sentences or pages), each with its locators (page, bbox in
    ``coords``), kind, text, heading path and ids."""

    data: list[RegionOut] = Field(description="the version's regions in reading order")
    count: int
    coords: str = COORD_CONVENTION


# ------------------------------------------------------------------------------------- health
class HealthOut(Schema):
    model_config = ConfigDict(extra="allow")

    status: Literal["ok"] = Field(description="the process answers (liveness); readiness is `state`")
    state: Literal["starting", "ready", "stopping", "failed"] = Field(
        "ready",
        description="`starting` while the store and models load (counts, jobs and retrieval are empty then), "
        "`ready` once a query is fast (GET /v1/ready answers 200), `stopping` on the way out, `failed` when "
        "loading failed and the server is leaving",
    )
    instance: str = Field("", description="a random id of this start of the server (folio's CLI finds it by it)")
    version: str
    parser_version: str
    counts: dict[str, int]
    jobs: dict[str, int]
    retrieval: dict[str, Any] = Field(
        description="Retriever.status(): which retrievers/models are on, and why not"
    )
    tokenizer: str
    auth: bool = Field(description="whether /v1 endpoints need an API key")


class HealthProofOut(Schema):
    state: Literal["starting", "ready", "stopping", "failed"]
    auth: bool = Field(description="whether /v1 endpoints need an API key")
    instance_proof: str = Field(description="HMAC-SHA256 of the nonce under the server file's secret")
    key_proof: str | None = Field(description="HMAC-SHA256 of the nonce under the key `key_tag` names; null when "
                                  "no key of this server matches the tag, or no tag was sent")


class ReadyOut(Schema):
    state: Literal["ready"]
    ready_after_s: float = Field(description="seconds from the server's start to ready")
