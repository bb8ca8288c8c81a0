"""The query work behind ``/v1/search``, ``/v1/context`` and ``/v1/verify``: plain functions from a
validated request and the server's resources to the response's JSON text.

They run on a query thread of the server process, or, with ``FOLIO_QUERY_PROCESSES``, in a worker
process (``api.query_worker``) that holds its own store and retriever: the same code either way.
The JSON is built where the work runs, so the event loop only passes text along."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from folio.api.schemas import ContextRequest, HitOut, SearchRequest, SearchResponse, SourceOut, VerifyRequest
from folio.api.service import build_context, search_hits, version_filenames
from folio.assembly import verify_answer
from folio.ingest.store import Store
from folio.kernel.errors import InvalidRequest

if TYPE_CHECKING:
    from folio.api.settings import Settings
    from folio.retrieval.search import Retriever

Collections = frozenset[str] | None
Op = Callable[[Any, Store, "Retriever", "Settings", Collections], str]


def search(req: SearchRequest, store: Store, retriever: Retriever, settings: Settings,
           collections: Collections) -> str:
    with store.pinned_versions():
        found = search_hits(store, retriever, req, strategy=req.strategy, collections=collections)
        names = version_filenames(store, collections)
    data = []
    for h in found.hits:
        region = store.region_index(h.doc_id, h.version_id).get(h.region_id)
        data.append(HitOut(
            region_id=h.region_id, doc_id=h.doc_id, version_id=h.version_id, kind=h.kind, modality=h.modality,
            pages=list(h.pages), score=h.score, rank=h.rank, retriever=h.retriever,
            sources=[SourceOut(**s.model_dump()) for s in h.sources], filename=names.get(h.version_id),
            text=region.text[:500] if region else None,
        ))
    return SearchResponse(data=data, count=len(data), notes=found.notes).model_dump_json()


def context(req: ContextRequest, store: Store, retriever: Retriever, settings: Settings,  # type: ignore[valid-type]
            collections: Collections) -> str:
    return build_context(store, retriever, req, settings, collections=collections).model_dump_json()


def verify(req: VerifyRequest, store: Store, retriever: Retriever, settings: Settings,
           collections: Collections) -> str:
    if req.package is not None:
        package = req.package
    elif req.context_request is not None:
        package = build_context(store, retriever, req.context_request, settings, collections=collections)
    else:
        raise InvalidRequest("send either 'package' (a ContextPackage) or 'context_request'")
    return verify_answer(req.answer, package).model_dump_json()


OPS: dict[str, tuple[type[BaseModel], Op]] = {
    "search": (SearchRequest, search),
    "context": (ContextRequest, context),
    "verify": (VerifyRequest, verify),
}
