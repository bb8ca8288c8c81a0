"""Questions: ranked hits (``/search``), packed context packages (``/context``), answer checks
(``/verify``). Retrieval and assembly block (LanceDB, torch), so each endpoint hands its work to
the bounded query pool (``api.pool``): a full pool is a 503 with ``Retry-After`` at once, and the
event loop stays free for ``/v1/health`` and uploads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel

from api.deps import CallerDep, QueryPoolDep, RetrieverDep, SettingsDep, StoreDep, require_key
from api.schemas import (
    ContextRequest,
    HitOut,
    SearchRequest,
    SearchResponse,
    SourceOut,
    VerifyRequest,
    error_responses,
)
from api.service import build_context, search_hits, version_filenames
from assembly.types import ContextPackage, VerifyReport
from ingest.errors import InvalidRequest
from ingest.store import Store

if TYPE_CHECKING:
    from api.settings import Settings
    from retrieval.search import Retriever

router = APIRouter(tags=["query"], dependencies=[Depends(require_key)])


@router.post(
    "/search",
    summary="Ranked hits on small units (sentences, tables, figures, pages)",
    response_model=SearchResponse,
    responses=error_responses(401, 404, 422, 503),
)
async def search(
    req: SearchRequest, store: StoreDep, retriever: RetrieverDep, pool: QueryPoolDep, caller: CallerDep
) -> Response:
    """Hits only from the collections the key sees; naming a document elsewhere is a 404."""
    return await pool.run(_search, req, store, retriever, caller.collections)


def _json(model: BaseModel) -> Response:
    """Serialized on the worker: FastAPI would encode an ``async def`` route's return value on the
    event loop, where a large package would hold up every other request."""
    return Response(model.model_dump_json(), media_type="application/json")


def _search(
    req: SearchRequest, store: Store, retriever: Retriever, collections: frozenset[str] | None
) -> Response:
    found = search_hits(store, retriever, req, strategy=req.strategy, collections=collections)
    names = version_filenames(store, collections)
    data = []
    for h in found.hits:
        region = store.region_index(h.doc_id, h.version_id).get(h.region_id)
        data.append(
            HitOut(
                region_id=h.region_id,
                doc_id=h.doc_id,
                version_id=h.version_id,
                kind=h.kind,
                modality=h.modality,
                pages=list(h.pages),
                score=h.score,
                rank=h.rank,
                retriever=h.retriever,
                sources=[SourceOut(**s.model_dump()) for s in h.sources],
                filename=names.get(h.version_id),
                text=region.text[:500] if region else None,
            )
        )
    return _json(SearchResponse(data=data, count=len(data), notes=found.notes))


@router.post(
    "/context",
    summary="Retrieve and pack a cited context package under a token budget",
    response_model=ContextPackage,
    responses=error_responses(401, 404, 422, 503),
)
async def context(
    req: ContextRequest,  # type: ignore[valid-type]
    store: StoreDep,
    retriever: RetrieverDep,
    settings: SettingsDep,
    pool: QueryPoolDep,
    caller: CallerDep,
) -> Response:
    """Every ``AssemblyOptions`` field is accepted at the top level (``budget``, ``strategy``,
    ``window_before``, ``order``, ``include_images`` ...); ``retrieval_strategy``, ``k`` and
    ``rerank`` steer retrieval. ``budget.used`` counts the whole rendered prompt. ``tokenizer``
    names one of the server's tokenizers, never a path."""
    return await pool.run(_context, req, store, retriever, settings, caller.collections)


def _context(
    req: ContextRequest,  # type: ignore[valid-type]
    store: Store,
    retriever: Retriever,
    settings: Settings,
    collections: frozenset[str] | None,
) -> Response:
    return _json(build_context(store, retriever, req, settings, collections=collections))


@router.post(
    "/verify",
    summary="Check an answer's citations against the package it was written from",
    response_model=VerifyReport,
    responses=error_responses(401, 404, 422, 503),
)
async def verify(
    req: VerifyRequest,
    store: StoreDep,
    retriever: RetrieverDep,
    settings: SettingsDep,
    pool: QueryPoolDep,
    caller: CallerDep,
) -> Response:
    """A ``context_request`` is built within the key's collections; a ``package`` sent in is
    checked as it is (it reads nothing from the store)."""
    return await pool.run(_verify, req, store, retriever, settings, caller.collections)


def _verify(
    req: VerifyRequest, store: Store, retriever: Retriever, settings: Settings, collections: frozenset[str] | None
) -> Response:
    from assembly import verify_answer

    if req.package is not None:
        package = req.package
    elif req.context_request is not None:
        package = build_context(store, retriever, req.context_request, settings, collections=collections)
    else:
        raise InvalidRequest("send either 'package' (a ContextPackage) or 'context_request'")
    return _json(verify_answer(req.answer, package))
