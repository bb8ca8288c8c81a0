"""Regions: what a citation resolves to (locators, text, headings) and its image."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from fastapi.responses import FileResponse, Response

from folio.api.deps import CallerDep, ImageCallerDep, StoreDep, require_key, require_key_or_query
from folio.api.errors import AssetNotFound
from folio.api.highlight import MAX_BOXES, MAX_CHARS, highlighted_png
from folio.api.routes.documents import image_file
from folio.api.schemas import RegionLocatorOut, RegionOut, error_responses
from folio.api.service import region_image_url, visible_region
from folio.ingest.store import DEFAULT_COLLECTION

router = APIRouter(prefix="/regions", tags=["regions"], dependencies=[Depends(require_key)])
images = APIRouter(prefix="/regions", tags=["regions"], dependencies=[Depends(require_key_or_query)])


@router.get(
    "/{region_id}",
    summary="A region: locators, text, kind, document version, headings",
    response_model=RegionOut,
    responses=error_responses(401, 404),
)
def get_region(region_id: str, store: StoreDep, caller: CallerDep) -> RegionOut:
    """A region of another collection than the key's is a 404, like an unknown id."""
    r = visible_region(store, region_id, collections=caller.collections)
    filename = next((v.filename for v in store.list_versions(r.doc_id) if v.version_id == r.version_id), None)
    return RegionOut(
        region_id=r.region_id,
        doc_id=r.doc_id,
        collection=store.collection_of(r.doc_id) or DEFAULT_COLLECTION,
        version_id=r.version_id,
        filename=filename,
        kind=r.kind,
        text=r.text,
        pages=r.pages,
        locators=[
            RegionLocatorOut(
                page=loc.page,
                bbox=loc.bbox,
                page_width=loc.page_width,
                page_height=loc.page_height,
                line_boxes=list(loc.line_boxes),
                char_start=loc.char_start,
                char_end=loc.char_end,
            )
            for loc in r.locators
        ],
        heading_path=list(r.heading_path),
        parent_id=r.parent_id,
        section_id=r.section_id,
        level=r.level,
        tokens=r.tokens,
        meta=dict(r.meta),
        image_url=region_image_url(r.region_id),
    )


@images.get(
    "/{region_id}/image",
    summary="The region's image: figure crop or page render (PNG), optionally with lines highlighted",
    response_class=FileResponse,
    responses={200: {"content": {"image/png": {}}, "description": "a PNG"}, **error_responses(401, 404, 422)},
)
def region_image(
    region_id: str,
    store: StoreDep,
    caller: ImageCallerDep,
    highlight: str | None = Query(
        None, max_length=MAX_CHARS,
        description="'lines' (the region's own line boxes) or boxes 'x0,y0,x1,y1;...' in PDF points of the page "
        f"shown (e.g. a context item's lines), at most {MAX_BOXES}: the page render with them painted "
        "(api.highlight)"),
    page_no: int | None = Query(None, alias="page", ge=1, le=1_000_000,
                                description="with highlight: which of the region's pages (default its first)"),
) -> Response:
    """Figures and pages have their own image; for text and tables this is the render of the
    region's first page (draw the bbox from ``GET /v1/regions/{region_id}`` on it). With
    ``highlight`` it is always the render of one of the region's pages, with those boxes painted."""
    r = visible_region(store, region_id, collections=caller.collections)
    if highlight is not None:
        return Response(highlighted_png(store, r, highlight, page_no), media_type="image/png",
                        headers={"Cache-Control": "private, max-age=86400, immutable"})
    if r.kind in ("figure", "page") and r.meta_get("image"):
        return image_file(store, r.meta_get("image"), region_id)
    page = store.region_index(r.doc_id, r.version_id).page(r.doc_id, r.version_id, r.first_page)
    if page is None:
        raise AssetNotFound(f"no page image for {region_id}")
    return image_file(store, page.meta_get("image"), region_id)
