"""Questions: ranked hits (``/search``), packed context packages (``/context``), answer checks
(``/verify``). Retrieval and assembly block (LanceDB, torch), so each endpoint hands its work to
the bounded query pool (``api.http.pool``): a full pool is a 503 with ``Retry-After`` at once, and the
event loop stays free for ``/v1/health`` and uploads."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel

from folio.api.application import Folio
from folio.api.http.deps import CallerDep, FolioDep, QueryPoolDep, require_key
from folio.api.http.offloop import ForwardedJSON, answered_apart, forwarded_body
from folio.api.http.pool import QueryPool
from folio.api.http.query_ops import OPS
from folio.api.schemas import ContextRequest, SearchRequest, SearchResponse, VerifyRequest, error_responses
from folio.assembly.package import ContextPackage, VerifyReport

# Large JSON bodies are parsed and validated in a process of the query pool: with query processes, the worker
# process that runs the query (api.http.offloop).
router = APIRouter(tags=["query"], dependencies=[Depends(require_key)], route_class=ForwardedJSON)


@dataclass(frozen=True)
class _Question:
    """One call of a query endpoint: the operation (a key of ``OPS``), its validated request, and the
    collections the caller's key sees (None: all)."""

    op: str
    req: BaseModel
    collections: frozenset[str] | None


async def _run(question: _Question, request: Request, pool: QueryPool, folio: Folio) -> Response:
    """``question.op`` on the query pool (a worker process, or a thread of this one); the JSON is built there:
    FastAPI would encode an ``async def`` route's return value on the event loop, where a large
    package would hold up every other request. A large body goes to the worker process as it came; without
    worker processes, a large package to verify was answered where it was parsed (``answered_apart``)."""
    answered = answered_apart(request)
    if answered is not None:
        return Response(answered, media_type="application/json")
    fn = OPS[question.op][1]
    local = functools.partial(fn, question.req, folio, question.collections)
    forwarded = forwarded_body(request)
    req_json = forwarded if forwarded is not None else question.req.model_dump_json() if pool.processes else ""
    body = await pool.run_query(question.op, req_json, question.collections, local)
    return Response(body, media_type="application/json")


@router.post(
    "/search",
    summary="Ranked hits on small units (sentences, tables, figures, pages)",
    response_model=SearchResponse,
    responses=error_responses(400, 401, 404, 413, 422, 503),
)
async def search(
    req: SearchRequest, request: Request, folio: FolioDep, pool: QueryPoolDep, caller: CallerDep,
) -> Response:
    """Hits only from the collections the key sees; naming a document elsewhere is a 404."""
    return await _run(_Question("search", req, caller.collections), request, pool, folio)


@router.post(
    "/context",
    summary="Retrieve and pack a cited context package under a token budget",
    response_model=ContextPackage,
    responses=error_responses(400, 401, 404, 413, 422, 503),
)
async def context(
    req: ContextRequest,
    request: Request,
    folio: FolioDep,
    pool: QueryPoolDep,
    caller: CallerDep,
) -> Response:
    """Every ``AssemblyOptions`` field is accepted at the top level (``budget``, ``strategy``,
    ``window_before``, ``order``, ``include_images`` ...); ``retrieval_strategy``, ``k`` and
    ``rerank`` steer retrieval. ``budget.used`` counts the whole rendered prompt. ``tokenizer``
    names one of the server's tokenizers, never a path."""
    return await _run(_Question("context", req, caller.collections), request, pool, folio)


@router.post(
    "/verify",
    summary="Check an answer's citations against the package it was written from",
    response_model=VerifyReport,
    responses=error_responses(400, 401, 404, 413, 422, 503),
)
async def verify(
    req: VerifyRequest,
    request: Request,
    folio: FolioDep,
    pool: QueryPoolDep,
    caller: CallerDep,
) -> Response:
    """A ``context_request`` is built within the key's collections; a ``package`` sent in is
    checked as it is (it reads nothing from the store)."""
    return await _run(_Question("verify", req, caller.collections), request, pool, folio)
