"""Request and response schemas of ``POST /v1/answer`` (``api.service.answer``).

``AnswerRequest`` is a ``ContextRequest`` (every retrieval and assembly option at the top level)
plus the fields in ``ANSWER_FIELDS``, each bounded. ``AnswerResponse`` carries the answer, its
citations resolved to region, page and box, the citation check, the structured-answer check when one
was asked for, the token accounting, and the package the answer was written from.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from folio.api.schemas import ContextRequest, Schema
from folio.api.service.schema_check import schema_problem
from folio.assembly.package import ContextPackage, LineOut, LocatorOut, SentenceLines, VerifyReport
from folio.kernel.hit import Modality

MAX_SCHEMA_CHARS = 20_000
MAX_SCHEMA_DEPTH = 32
MAX_COMPLETION_TOKENS = 32_768
ANSWER_FIELDS = frozenset(
    {"stream", "response_format", "json_schema", "enforce_schema", "max_tokens", "temperature", "timeout_s",
     "include_package"}
)


def _depth(v: Any, d: int = 0) -> int:
    if d > MAX_SCHEMA_DEPTH:
        return d
    if isinstance(v, dict):
        return max((_depth(x, d + 1) for x in v.values()), default=d)
    if isinstance(v, list):
        return max((_depth(x, d + 1) for x in v), default=d)
    return d


class AnswerRequest(ContextRequest):
    """A question, every ``/v1/context`` option, and how to ask the model."""

    stream: bool = Field(
        False, description="answer as server-sent events: package, delta..., done (the last carries the check)"
    )
    response_format: Literal["text", "json"] = Field(
        "text",
        description="json: a structured answer; without json_schema, folio's {answer, citations: [id], "
        "insufficient: bool}",
    )
    json_schema: dict[str, Any] | None = Field(
        None,
        # the published OpenAPI text names api.schema_check (now api.service.schema_check): kept as published
        description="a JSON schema the answer must validate against (implies response_format=json). It is sent "
        "in the prompt and counted in the budget (usage.schema_tokens). At most 20000 characters and 32 levels; "
        "$ref only inside the schema ('#/...'); the check of a reply stops after 1 s (api.schema_check).",
    )
    enforce_schema: bool = Field(
        True,
        description="also send the schema as the endpoint's response_format (json_schema), for servers with "
        "constrained decoding; turn off for servers that reject response_format",
    )
    max_tokens: int = Field(1024, ge=1, le=MAX_COMPLETION_TOKENS, description="completion token limit")
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    timeout_s: float = Field(
        60.0, gt=0.0, le=600.0,
        description="seconds for the whole model call, from connecting to the last byte, streaming or not "
        "(a total deadline, not per read); past it: 504 llm_timeout, or an error event when streaming",
    )
    include_package: bool = Field(True, description="return the ContextPackage the answer was written from")

    @field_validator("json_schema")
    @classmethod
    def _schema_bounded(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is None:
            return v
        if len(json.dumps(v)) > MAX_SCHEMA_CHARS:
            raise ValueError(f"json_schema is longer than {MAX_SCHEMA_CHARS} characters")
        if _depth(v) > MAX_SCHEMA_DEPTH:
            raise ValueError(f"json_schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
        problem = schema_problem(v)
        if problem is not None:
            raise ValueError(f"json_schema: {problem}")
        try:
            from jsonschema.validators import validator_for
        except ImportError:  # pragma: no cover - jsonschema ships with the mcp extra and dev tools
            return v
        from jsonschema.exceptions import SchemaError

        try:
            validator_for(v).check_schema(v)
        except SchemaError as e:
            raise ValueError(f"json_schema is not a valid JSON schema: {e.message[:300]}") from None
        return v

    @model_validator(mode="after")
    def _openai_prompt(self) -> AnswerRequest:
        if self.prompt_format != "openai":
            raise ValueError("answers are sent to an OpenAI-compatible endpoint: prompt_format must be 'openai'")
        return self


def context_request(req: AnswerRequest) -> ContextRequest:
    """The ``ContextRequest`` inside an answer request (the same fields, as the client set them)."""
    return ContextRequest.model_validate(req.model_dump(exclude=set(ANSWER_FIELDS), exclude_unset=True))


class CitationOut(Schema):
    """A citation id of the answer resolved to what it points at."""

    citation_id: str
    region_id: str = Field(description="the region that was sent (GET /v1/regions/{region_id})")
    region_ids: list[str] = Field(description="every region the block carried (sentences, rows)")
    doc_id: str
    version_id: str
    filename: str
    modality: Modality
    expansion: str = Field(description="what was sent: section, page text, window, compressed ...")
    pages: list[int]
    locators: list[LocatorOut] = Field(description="page + bbox (PDF points, top-left origin) + line boxes")
    lines: list[LineOut] = Field(
        default_factory=list,
        description="the item's lines: the line boxes of what made it relevant (ContextItem.lines)")
    image_url: str | None = None
    viewer_url: str = Field(description="the viewer opened at this region with the item's lines highlighted "
                            "(/viewer?region=ID&lines=PAGE:x0,y0,x1,y1;..., ContextItem.viewer_url)")


class StructuredCheck(Schema):
    """Schema validity and citation faithfulness of a structured answer, reported separately: a
    valid JSON object that cites an id that was never packed is ``schema_valid`` but not ``faithful``."""

    schema_name: Literal["folio", "custom"] = Field(description="folio's default schema or the request's")
    json_valid: bool | None = Field(description="the reply parsed as JSON (None: the model was not called)")
    schema_valid: bool | None = Field(description="it validates against the schema (None: not called)")
    errors: list[str] = Field(default_factory=list, description="why not, at most 10")
    fenced: bool = Field(False, description="the reply was wrapped in Markdown code fences (removed)")
    value: Any = Field(None, description="the parsed JSON value")
    cited_ids: list[str] = Field(default_factory=list, description="ids the value cites (brackets or id strings)")
    invented_ids: list[str] = Field(default_factory=list, description="cited ids that were not packed")
    faithful: bool = Field(description="no invented ids, and the answer text passed the citation check")


class AnswerUsage(Schema):
    prompt_tokens: int = Field(
        description="folio's count of what was sent to the model (the package prompt plus the schema "
        "instruction), with the package's tokenizer; 0 when the model was not called"
    )
    completion_tokens: int | None = Field(description="the endpoint's count of the reply (None if not reported)")
    endpoint_prompt_tokens: int | None = Field(
        description="the endpoint's own prompt count, for comparison (its tokenizer and template differ)"
    )
    schema_tokens: int = Field(description="the structured-answer instruction and schema, inside the budget")
    budget_limit: int = Field(description="the request's budget: package prompt + schema_tokens never exceed it")
    tokenizer: str


class AnswerResponse(Schema):
    query: str
    answer: str = Field(description="the answer text (a structured answer's 'answer' field when it has one)")
    raw: str | None = Field(None, description="the model's reply as received, when it differs from answer")
    refused: bool = Field(description="retrieval gave nothing to answer from: 'Insufficient evidence.', no model call")
    model: str | None = None
    finish_reason: str | None = None
    citations: list[CitationOut] = Field(description="the packed ids the answer cites, resolved")
    check: VerifyReport = Field(description="the citation post-check (as POST /v1/verify)")
    supporting_lines: list[SentenceLines] = Field(
        default_factory=list,
        description="for each cited sentence of the answer and each packed id it cites (check.sentences), the "
        "lines of that item that support it: the item's sentences, tables and figures sharing at least "
        "min(2, |C|) of the sentence's content words C and half as many as the best, the 3 sharing most, as "
        "line boxes (PDF points, top-left origin) with the region each belongs to; support is the best one's "
        "share of C. Lexical, like check.support (assembly.lines)",
    )
    faithful: bool = Field(description="no invented ids and no uncited factual sentences")
    structured: StructuredCheck | None = None
    usage: AnswerUsage
    warnings: list[str] = Field(default_factory=list)
    package: ContextPackage | None = None
