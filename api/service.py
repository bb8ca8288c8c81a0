"""The work behind the endpoints that the CLI shares: building a context package, and the
ingest job. Plain functions over explicit resources (no FastAPI types), so ``folio context``
runs the exact code path of ``POST /v1/context`` in-process."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from api.errors import capped_list
from api.schemas import assembly_options
from assembly.types import ContextPackage
from ingest.errors import DocumentNotFound
from ingest.store import Store

if TYPE_CHECKING:
    from api.schemas import _ContextRequestBase
    from api.settings import Settings
    from ingest.pipeline import VersionIndexer
    from retrieval.hit import Hit
    from retrieval.search import Retriever

logger = logging.getLogger(__name__)


def version_filenames(store: Store) -> dict[str, str]:
    """version_id → file name, over every ready version (old versions can be queried too)."""
    return {v.version_id: v.filename for v in store.list_versions()}


def page_image_url(doc_id: str, version_id: str, page: int) -> str:
    return f"/v1/documents/{doc_id}/versions/{version_id}/pages/{page}/image"


def region_image_url(region_id: str) -> str:
    return f"/v1/regions/{region_id}/image"


def search_hits(store: Store, retriever: Retriever, req: Any, *, strategy: str) -> list[Hit]:
    """Run the retriever for a search or context request (same filters for both endpoints)."""
    if req.doc_ids:  # unknown doc ids are a 404, not an empty result
        missing = sorted(set(req.doc_ids) - {v.doc_id for v in store.latest_versions()})
        if missing:
            raise DocumentNotFound(f"no such document: {capped_list(missing)}")
    hits: list[Hit] = retriever.search(
        req.query,
        doc_ids=req.doc_ids,
        versions=req.versions,
        pages=req.pages,
        kinds=req.kinds,
        k=req.k,
        strategy=strategy,
        quotas=req.quotas,
        rerank=req.rerank,
    )
    return hits


def build_context(
    store: Store, retriever: Retriever, req: _ContextRequestBase, settings: Settings
) -> ContextPackage:
    """Retrieve, then assemble: what ``POST /v1/context`` and ``folio context`` return."""
    from assembly import assemble

    options = assembly_options(
        req,
        default_tokenizer=settings.tokenizer,
        default_budget=settings.default_budget,
        tokenizers=settings.request_tokenizers(),
    )
    hits = search_hits(store, retriever, req, strategy=req.retrieval_strategy)
    source = retriever.source_for(hits)
    package: ContextPackage = assemble(req.query, hits, source, options, filenames=version_filenames(store))
    return package


def ingest_job(
    store: Store,
    data: bytes,
    *,
    filename: str,
    doc_id: str | None,
    settings: Settings,
    indexers: Sequence[VersionIndexer],
    on_done: Callable[[], None] | None = None,
) -> Callable[[Callable[[str, int, int], None]], dict[str, Any]]:
    """The work of one ingest job: returns the ``IngestResponse`` fields (minus ``job_id``)."""

    def work(progress: Callable[[str, int, int], None]) -> dict[str, Any]:
        from ingest.pipeline import ingest_bytes

        report = ingest_bytes(
            store,
            data,
            filename=filename,
            doc_id=doc_id,
            ocr=settings.ocr,
            indexers=indexers,
            progress=progress,
            max_bytes=settings.max_upload_bytes,
            max_pages=settings.max_pages,
        )
        if on_done is not None:
            on_done()
        rep = report.model_dump(mode="json")
        return {
            "doc_id": report.doc_id,
            "version_id": report.version_id,
            "filename": report.filename,
            "pages": report.pages,
            "status": report.status,
            "report": rep,
        }

    return work
