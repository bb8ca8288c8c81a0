"""Service health: counts, and which retrievers and models are on (and why the others are off)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from api.deps import JobsDep, SettingsDep, StoreDep
from api.schemas import HealthOut
from ingest.model import PARSER_VERSION

router = APIRouter(tags=["health"])


@router.get("/health", summary="Status, counts, active retrievers and models", response_model=HealthOut)
def health(request: Request, store: StoreDep, jobs: JobsDep, settings: SettingsDep) -> HealthOut:
    """Open without an API key (it shows no document content)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        folio_version = version("folio")
    except PackageNotFoundError:
        folio_version = "unknown"
    versions = store.list_versions()
    retrieval = request.app.state.retriever.status()
    return HealthOut(
        status="ok",
        version=folio_version,
        parser_version=PARSER_VERSION,
        counts={
            "documents": sum(1 for v in versions if v.latest),
            "versions": len(versions),
            "regions": sum(v.regions for v in versions),
            "pages": sum(v.pages for v in versions if v.latest),
        },
        jobs=jobs.counts(),
        retrieval=retrieval,
        tokenizer=settings.tokenizer,
        auth=bool(settings.api_key),
    )
