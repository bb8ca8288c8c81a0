"""Regions: what a citation resolves to (locators, text, headings) and its image."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, Response

from folio.api.deps import CallerDep, FolioDep, ImageCallerDep, require_key, require_key_or_query
from folio.api.routes.documents import image_response
from folio.api.schemas import RegionOut, error_responses

router = APIRouter(prefix="/regions", tags=["regions"], dependencies=[Depends(require_key)])
images = APIRouter(prefix="/regions", tags=["regions"], dependencies=[Depends(require_key_or_query)])


@router.get(
    "/{region_id}",
    summary="A region: locators, text, kind, document version, headings",
    response_model=RegionOut,
    responses=error_responses(401, 404),
)
def get_region(region_id: str, folio: FolioDep, caller: CallerDep) -> RegionOut:
    """A region of another collection than the key's is a 404, like an unknown id."""
    return folio.region(region_id, collections=caller.collections)


@images.get(
    "/{region_id}/image",
    summary="The region's image: figure crop or page render (PNG)",
    response_class=FileResponse,
    responses={200: {"content": {"image/png": {}}, "description": "a PNG"}, **error_responses(401, 404)},
)
def region_image(region_id: str, folio: FolioDep, caller: ImageCallerDep) -> Response:
    """Figures and pages have their own image; for text and tables this is the render of the
    region's first page (draw the bbox from ``GET /v1/regions/{region_id}`` on it)."""
    return image_response(folio.region_image(region_id, collections=caller.collections))
