"""Questions: ranked hits (``/search``), packed context packages (``/context``), answer checks
(``/verify``). Plain ``def`` endpoints: retrieval and assembly block (LanceDB, torch), so FastAPI
runs them in its threadpool, beside a running ingest job."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from api.deps import RetrieverDep, SettingsDep, StoreDep, require_key
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

router = APIRouter(tags=["query"], dependencies=[Depends(require_key)])


@router.post(
    "/search",
    summary="Ranked hits on small units (sentences, tables, figures, pages)",
    response_model=SearchResponse,
    responses=error_responses(401, 404, 422),
)
def search(req: SearchRequest, store: StoreDep, retriever: RetrieverDep) -> SearchResponse:
    hits = search_hits(store, retriever, req, strategy=req.strategy)
    names = version_filenames(store)
    data = []
    for h in hits:
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
    return SearchResponse(data=data, count=len(data))


@router.post(
    "/context",
    summary="Retrieve and pack a cited context package under a token budget",
    response_model=ContextPackage,
    responses=error_responses(401, 404, 422),
)
def context(
    req: ContextRequest,  # type: ignore[valid-type]
    store: StoreDep,
    retriever: RetrieverDep,
    settings: SettingsDep,
) -> ContextPackage:
    """Every ``AssemblyOptions`` field is accepted at the top level (``budget``, ``strategy``,
    ``window_before``, ``order``, ``include_images`` ...); ``retrieval_strategy``, ``k`` and
    ``rerank`` steer retrieval. ``budget.used`` counts the whole rendered prompt."""
    return build_context(store, retriever, req, settings)


@router.post(
    "/verify",
    summary="Check an answer's citations against the package it was written from",
    response_model=VerifyReport,
    responses=error_responses(401, 404, 422),
)
def verify(req: VerifyRequest, store: StoreDep, retriever: RetrieverDep, settings: SettingsDep) -> Any:
    from assembly import verify_answer

    if req.package is not None:
        package = req.package
    elif req.context_request is not None:
        package = build_context(store, retriever, req.context_request, settings)
    else:
        raise InvalidRequest("send either 'package' (a ContextPackage) or 'context_request'")
    return verify_answer(req.answer, package)
