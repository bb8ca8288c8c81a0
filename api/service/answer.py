"""Answers with checked citations: retrieve, assemble, ask an OpenAI-compatible model, check.

``answer(store, retriever, req, settings)`` is the whole of ``POST /v1/answer`` in-process (front ends
call it through ``api.application.Folio.answer``); ``answer_events`` is the streaming form, yielding
``(event, data)`` pairs: ``package`` (the package and the usage known before the call), ``delta``
(text as it arrives), then ``done`` (the ``AnswerResponse`` without the package) or ``error`` (the
one error shape, ``internal_error`` for our own bugs, so a started stream always ends with an event).
``acall`` and ``answer_events_async`` are the forms the server awaits on its event loop. Steps:

1. ``prepare``: no endpoint configured is ``LLMNotConfigured`` (503, says how to enable one). The
   package is built by the ``/v1/context`` code path; a structured answer's instruction and schema
   are counted first and taken off the budget, so package prompt + schema never exceed it.
2. The package's own messages are sent, with image parts inlined as ``data:`` URLs (the endpoint
   cannot fetch folio's relative image URLs). The refuse branch answers "Insufficient evidence."
   without calling the model.
3. ``finish``: code fences are stripped, JSON is parsed and validated (structured answers), and the
   answer text goes through ``assembly.verify_answer``; kept ids are resolved to region, pages and
   boxes, and each cited sentence to the lines of its cited items that support it (``supporting_lines``,
   ``assembly.lines``). Schema validity and citation faithfulness are reported separately. A client's schema is
   checked by ``api.service.schema_check`` (no reference fetched, patterns and the whole check bounded in
   time), and a reply nested deeper than ``MAX_VALUE_DEPTH`` is not parsed into a value.

The model call has a total deadline (``timeout_s``) and a bounded reply (``api.service.llm``, the one client).
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from folio.api.errors import error_body, status_for
from folio.api.service.answer_schemas import (
    AnswerRequest,
    AnswerResponse,
    AnswerUsage,
    CitationOut,
    StructuredCheck,
    context_request,
)
from folio.api.service.chat import require_llm, strip_fences
from folio.api.service.context import build_context, context_options, visible_region
from folio.api.service.llm import ChatClient, Completion
from folio.api.service.llm_http import Deadline
from folio.api.service.schema_check import MAX_VALUE_DEPTH, depth
from folio.api.service.schema_check import validate as bounded_validate
from folio.assembly.budget import get_counter
from folio.assembly.lines import answer_lines, viewer_url
from folio.assembly.package import ContextPackage
from folio.assembly.verify import cited_ids, verify_answer
from folio.kernel.errors import FolioError, InvalidRequest
from folio.kernel.index import MergedSource, RegionSource

if TYPE_CHECKING:
    from folio.api.service.model_calls import Slot
    from folio.ingest.storage.interface import ServiceStore
    from folio.retrieval.search import Retriever
    from folio.settings import Settings

logger = logging.getLogger(__name__)

INSUFFICIENT = "Insufficient evidence."
MAX_INLINE_IMAGE_BYTES = 8 * 1024 * 1024
FOLIO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "description": "the answer, each factual sentence cited like [S1]"},
        "citations": {"type": "array", "items": {"type": "string"}, "description": "every id cited, e.g. S1"},
        "insufficient": {"type": "boolean", "description": "true when the CONTEXT is not enough"},
    },
    "required": ["answer", "citations", "insufficient"],
    "additionalProperties": False,
}
_BARE_ID = re.compile(r"^\s*\[?\s*([A-Za-z]{1,3}\d{1,4})\s*\]?\s*$")


@dataclass
class Prepared:
    """Everything decided before the model is called."""

    req: AnswerRequest
    package: ContextPackage
    messages: list[dict[str, Any]]
    client: ChatClient
    schema: dict[str, Any] | None
    schema_name: str | None
    schema_tokens: int
    limit: int
    warnings: list[str] = field(default_factory=list)
    source: RegionSource | None = None  # the packed versions' regions, for the supporting lines

    @property
    def prompt_tokens(self) -> int:
        return 0 if self.package.refused else self.package.budget.used + self.schema_tokens

    def response_format(self) -> dict[str, Any] | None:
        if self.schema is None or not self.req.enforce_schema:
            return None
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": self.schema}}


def schema_instruction(schema: dict[str, Any], name: str) -> str:
    """The text part appended after the question when a structured answer is asked for."""
    text = ("\n\nANSWER FORMAT\nReply with one JSON object and nothing else (no code fences) that validates "
            "against this JSON schema:\n" + json.dumps(schema, separators=(",", ":"), ensure_ascii=False))
    if name == "folio":
        text += ("\nPut the answer, each factual sentence cited like [S1], in \"answer\"; every id you cite in "
                 "\"citations\"; \"insufficient\": true when the CONTEXT is not enough.")
    else:
        text += "\nCite the CONTEXT ids you rely on, like [S1], inside the string values."
    return text


def prepare(store: ServiceStore, retriever: Retriever, req: AnswerRequest, settings: Settings, *,  # noqa: PLR0913
            collections: Collection[str] | None = None, client: ChatClient | None = None) -> Prepared:
    """Check the endpoint is configured, then build the package (schema counted in the budget)."""
    client = require_llm(settings, client)
    ctx = context_request(req)
    options = context_options(ctx, settings)
    limit = options.limit
    schema: dict[str, Any] | None = None
    name: str | None = None
    if req.json_schema is not None:
        schema, name = req.json_schema, "custom"
    elif req.response_format == "json":
        schema, name = FOLIO_SCHEMA, "folio"
    instruction = schema_instruction(schema, name or "folio") if schema is not None else ""
    schema_tokens = get_counter(options.tokenizer).count(instruction) if instruction else 0
    if schema_tokens:
        if limit - schema_tokens < 1:
            raise InvalidRequest(f"the answer schema and its instruction need {schema_tokens} tokens; "
                                 f"the budget is {limit}")
        ctx = ctx.model_copy(update={"budget": limit - schema_tokens})
    package = build_context(store, retriever, ctx, settings, collections=collections, llm=client)
    warnings: list[str] = []
    messages = _inline_images(package, store, collections, warnings)
    if instruction and messages:
        user = messages[-1]
        user["content"] = [*user["content"], {"type": "text", "text": instruction}]
    return Prepared(req, package, messages, client, schema, name, schema_tokens, limit, warnings,
                    source=packed_source(store, package))


def packed_source(store: ServiceStore, package: ContextPackage) -> RegionSource:
    """The regions of the versions the package's items come from (the store caches each version's index)."""
    versions = sorted({(it.doc_id, it.version_id) for it in package.items})
    return MergedSource([store.region_index(d, v) for d, v in versions])


def _inline_images(package: ContextPackage, store: ServiceStore, collections: Collection[str] | None,
                   warnings: list[str]) -> list[dict[str, Any]]:
    """The package's messages (copied) with each image part's URL replaced by a ``data:`` URL."""
    by_url = {it.image_url: it for it in package.items if it.image_url}
    out: list[dict[str, Any]] = []
    for m in package.prompt.messages:
        content = m.get("content")
        if not isinstance(content, list):
            out.append(dict(m))
            continue
        parts: list[dict[str, Any]] = []
        for p in content:
            if p.get("type") != "image_url":
                parts.append(dict(p))
                continue
            url = p["image_url"]["url"]
            item = by_url.get(url)
            data = None
            if item is not None:
                try:
                    region = visible_region(store, item.region_id, collections=collections)
                    rel = region.meta_get("image")
                    path = store.asset_path(rel) if rel else None
                    if path is not None and path.is_file() and path.stat().st_size <= MAX_INLINE_IMAGE_BYTES:
                        data = base64.b64encode(path.read_bytes()).decode("ascii")
                except (FolioError, OSError) as e:
                    logger.warning("image of %s not inlined: %s", item.region_id, e)
            if data is None:
                warnings.append(f"image {url} could not be read and was left out of the request")
                continue
            parts.append({"type": "image_url", "image_url": {**p["image_url"], "url": f"data:image/png;base64,{data}"}})
        out.append({**m, "content": parts})
    return out


def call(prep: Prepared) -> Completion:
    """One non-streaming completion (not for the refuse branch)."""
    r = prep.req
    return prep.client.chat(prep.messages, max_tokens=r.max_tokens, temperature=r.temperature,
                            response_format=prep.response_format(), timeout=r.timeout_s)


def finish(prep: Prepared, completion: Completion | None) -> AnswerResponse:
    """Parse, validate and check a reply (None: the refuse branch, the model was not called)."""
    pkg = prep.package
    raw = completion.text if completion is not None else None
    structured: StructuredCheck | None = None
    if completion is None:
        text = INSUFFICIENT
        if prep.schema is not None:
            value = {"answer": INSUFFICIENT, "citations": [], "insufficient": True} if prep.schema_name == "folio" \
                else None
            structured = StructuredCheck(schema_name=prep.schema_name or "folio", json_valid=None, schema_valid=None,
                                         errors=[f"refused ({pkg.refusal_reason or 'no evidence'}); the model "
                                                 "was not called"],
                                         value=value, faithful=True)
    elif prep.schema is not None:
        text, structured = _structured(prep, completion.text)
    else:
        text = completion.text.strip()
    check = verify_answer(text, pkg)
    if structured is not None and completion is not None:
        structured = structured.model_copy(update={
            "faithful": not structured.invented_ids and not check.invented_ids and not check.uncited_sentences})
    items = pkg.citation_map()
    cited = list(check.kept_ids)
    if structured is not None:
        cited += [c for c in structured.cited_ids if c in items and c not in cited]
    usage = AnswerUsage(
        prompt_tokens=prep.prompt_tokens,
        completion_tokens=completion.completion_tokens if completion else None,
        endpoint_prompt_tokens=completion.prompt_tokens if completion else None,
        schema_tokens=prep.schema_tokens,
        budget_limit=prep.limit,
        tokenizer=pkg.budget.tokenizer,
    )
    faithful = not check.invented_ids and not check.uncited_sentences and (
        structured is None or not structured.invented_ids)
    return AnswerResponse(
        query=pkg.query,
        answer=text,
        raw=raw if raw is not None and raw.strip() != text else None,
        refused=completion is None,
        model=(completion.model or prep.client.model) if completion else None,
        finish_reason=completion.finish_reason if completion else None,
        citations=[_citation(items[c]) for c in cited if c in items],
        check=check,
        supporting_lines=answer_lines(check, items, prep.source) if prep.source is not None else [],
        faithful=faithful,
        structured=structured,
        usage=usage,
        warnings=list(prep.warnings) + (["the reply was cut at max_tokens"] if completion is not None
                                        and completion.finish_reason == "length" else []),
        package=pkg if prep.req.include_package else None,
    )


def _structured(prep: Prepared, reply: str) -> tuple[str, StructuredCheck]:
    body, fenced = strip_fences(reply)
    errors: list[str] = []
    value: Any = None
    json_valid = False
    try:
        value = json.loads(body)
        json_valid = True
    except (ValueError, RecursionError):
        candidate = _first_object(body)
        if candidate is not None:
            try:
                value = json.loads(candidate)
                json_valid = True
                errors.append("the JSON object was surrounded by other text")
            except (ValueError, RecursionError):
                pass
    if json_valid and depth(value, MAX_VALUE_DEPTH) > MAX_VALUE_DEPTH:
        json_valid, value = False, None
        errors.append(f"the reply's JSON nests deeper than {MAX_VALUE_DEPTH} levels")
    schema_valid = False
    if not json_valid and not errors:
        errors.append("the reply is not JSON")
    else:
        schema_errors = validate(value, prep.schema or {})
        schema_valid = not schema_errors
        errors += schema_errors
    ids = _value_ids(value) if json_valid else []
    items = prep.package.citation_map()
    invented = [c for c in ids if c not in items]
    if isinstance(value, dict) and isinstance(value.get("answer"), str):
        text = value["answer"].strip()
    else:
        text = body.strip()
    return text, StructuredCheck(schema_name=prep.schema_name or "custom", json_valid=json_valid,
                                 schema_valid=schema_valid, errors=errors[:10], fenced=fenced, value=value,
                                 cited_ids=ids, invented_ids=invented, faithful=not invented)


def _first_object(text: str) -> str | None:
    start = text.find("{")
    end = text.rfind("}")
    return text[start:end + 1] if 0 <= start < end else None


def validate(value: Any, schema: dict[str, Any]) -> list[str]:
    """Schema errors of ``value`` (empty: valid), at most 10, each with its JSON path; bounded in
    time and never fetching a reference (``api.service.schema_check``)."""
    return bounded_validate(value, schema)


def _value_ids(value: Any) -> list[str]:
    """Citation ids in a JSON value: ``[S1]`` inside any string, and strings that are an id alone."""
    out: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            m = _BARE_ID.match(v)
            found = [m.group(1).upper()] if m else cited_ids(v)
            out.extend(c for c in found if c not in out)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(value)
    return out


def _citation(item: Any) -> CitationOut:
    return CitationOut(
        citation_id=item.citation_id, region_id=item.region_id, region_ids=list(item.region_ids),
        doc_id=item.doc_id, version_id=item.version_id, filename=item.filename, modality=item.modality,
        expansion=item.expansion, pages=list(item.pages), locators=list(item.locators), lines=list(item.lines),
        image_url=item.image_url,
        viewer_url=item.viewer_url or viewer_url(item.region_id, item.lines))  # the item's link, built once


def answer(store: ServiceStore, retriever: Retriever, req: AnswerRequest, settings: Settings, *,  # noqa: PLR0913
           collections: Collection[str] | None = None, client: ChatClient | None = None) -> AnswerResponse:
    """Retrieve, assemble, ask the configured model, check the citations (``POST /v1/answer``).

    Raises ``LLMNotConfigured`` (503), ``LLMTimeout`` (504), ``LLMUpstreamError`` (502) and the
    errors of ``/v1/context`` (404 unknown documents, 422 bad options).
    """
    prep = prepare(store, retriever, req, settings, collections=collections, client=client)
    if prep.package.refused:
        return finish(prep, None)
    return finish(prep, call(prep))


def package_event(prep: Prepared) -> dict[str, Any]:
    """The ``package`` event's data: the package and the usage known before the call."""
    pkg = prep.package
    return {
        "query": pkg.query,
        "refused": pkg.refused,
        "usage": {"prompt_tokens": prep.prompt_tokens, "schema_tokens": prep.schema_tokens,
                  "budget_limit": prep.limit, "tokenizer": pkg.budget.tokenizer},
        "package": pkg.model_dump(mode="json"),
    }


def error_event(e: BaseException) -> dict[str, Any]:
    """The ``error`` event's data: the one error shape plus ``status``; an unexpected error is logged
    and reported as ``internal_error`` (the stream still ends with an event)."""
    if isinstance(e, FolioError):
        return {**error_body(e.code, str(e) or e.code), "status": status_for(e)}
    logger.error("answer stream failed", exc_info=e)
    return {**error_body("internal_error", "internal error while answering; the server log has the details"),
            "status": 500}


def _done(prep: Prepared, completion: Completion | None) -> dict[str, Any]:
    return finish(prep, completion).model_dump(mode="json", exclude={"package"})


def answer_events(prep: Prepared) -> Iterator[tuple[str, dict[str, Any]]]:
    """The streaming answer as ``(event, data)`` pairs; errors of the call become an ``error`` event
    (the HTTP status was sent before the model was asked)."""
    yield "package", package_event(prep)
    try:
        if prep.package.refused:
            yield "delta", {"text": INSUFFICIENT}
            done = _done(prep, None)
        else:
            r = prep.req
            completion: Completion | None = None
            for piece in prep.client.stream(prep.messages, max_tokens=r.max_tokens, temperature=r.temperature,
                                            response_format=prep.response_format(), timeout=r.timeout_s):
                if isinstance(piece, Completion):
                    completion = piece
                else:
                    yield "delta", {"text": piece}
            done = _done(prep, completion)
    except Exception as e:
        yield "error", error_event(e)
        return
    yield "done", done


def _holding(slot: Slot | None, deadline: Deadline) -> contextlib.AbstractAsyncContextManager[Any]:
    return slot.within(deadline.left()) if slot is not None else contextlib.nullcontext()


async def acall(prep: Prepared, slot: Slot | None = None) -> Completion:
    """``call`` awaited (the server's event loop, no thread): within ``timeout_s`` in all, the wait for
    a model call slot included."""
    r = prep.req
    deadline = Deadline(r.timeout_s)
    async with _holding(slot, deadline):
        return await prep.client.achat(prep.messages, max_tokens=r.max_tokens, temperature=r.temperature,
                                       response_format=prep.response_format(), deadline=deadline)


async def answer_events_async(prep: Prepared, off_loop: Callable[[Callable[[], Any]], Awaitable[Any]],
                              slot: Slot | None = None) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """``answer_events`` for the server: the model streamed on the event loop (a client that leaves
    cancels it), the check run by ``off_loop`` (the query pool), every failure an ``error`` event."""
    yield "package", package_event(prep)
    try:
        if prep.package.refused:
            yield "delta", {"text": INSUFFICIENT}
            done = await off_loop(lambda: _done(prep, None))
        else:
            r = prep.req
            deadline = Deadline(r.timeout_s)
            completion: Completion | None = None
            async with _holding(slot, deadline):
                async for piece in prep.client.astream(prep.messages, max_tokens=r.max_tokens,
                                                       temperature=r.temperature,
                                                       response_format=prep.response_format(),
                                                       deadline=deadline):
                    if isinstance(piece, Completion):
                        completion = piece
                    else:
                        yield "delta", {"text": piece}
            done = await off_loop(lambda: _done(prep, completion))
    except Exception as e:
        yield "error", error_event(e)
        return
    yield "done", done
