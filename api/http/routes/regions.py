"""Regions: what a citation resolves to (locators, text, headings) and its image."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from fastapi.responses import FileResponse, Response

from folio.api.http.deps import CallerDep, FolioDep, ImageCallerDep, require_key, require_key_or_query
from folio.api.http.routes.documents import image_response
from folio.api.schemas import RegionOut, error_responses
from folio.api.service.highlight import MAX_BOXES, MAX_CHARS

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
    summary="The region's image: figure crop or page render (PNG), optionally with lines highlighted",
    response_class=FileResponse,
    responses={200: {"content": {"image/png": {}}, "description": "a PNG"}, **error_responses(401, 404, 422)},
)
def region_image(
    region_id: str,
    folio: FolioDep,
    caller: ImageCallerDep,
    highlight: str | None = Query(
        None, max_length=MAX_CHARS,
        description="'lines' (the region's own line boxes) or boxes 'x0,y0,x1,y1;...' in PDF points of the page "
        f"shown (e.g. a context item's lines), at most {MAX_BOXES}: the page render with them painted "
        "(api.highlight)"),  # the OpenAPI text stays as published: the module is api.service.highlight
    page_no: int | None = Query(None, alias="page", ge=1, le=1_000_000,
                                description="with highlight: which of the region's pages (default its first)"),
) -> Response:
    """Figures and pages have their own image; for text and tables this is the render of the
    region's first page (draw the bbox from ``GET /v1/regions/{region_id}`` on it). With
    ``highlight`` it is always the render of one of the region's pages, with those boxes painted."""
    if highlight is not None:
        png = folio.highlighted_region_image(region_id, highlight, page_no, collections=caller.collections)
        return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=86400, immutable"})
    return image_response(folio.region_image(region_id, collections=caller.collections))
