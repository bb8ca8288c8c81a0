"""The REST response models the door (``api.application.Folio``) returns, built from the domain's values:
a search hit (``hit_out``) and a region (``region_out``). One place, so REST, the CLI, MCP and the query
workers give the same shape."""

from __future__ import annotations

from folio.api.schemas import HitOut, RegionLocatorOut, RegionOut, SourceOut
from folio.api.service.context import region_image_url
from folio.kernel.hit import Hit
from folio.kernel.model import Region


def hit_out(h: Hit, filename: str | None, text: str | None) -> HitOut:
    """``h`` as ``POST /v1/search`` lists it, with its version's file name and the start of its text."""
    return HitOut(
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
        filename=filename,
        text=text,
    )


def region_out(r: Region, collection: str, filename: str | None) -> RegionOut:
    """``GET /v1/regions/{id}``'s body: the region, where it is on its pages, and its image's URL."""
    return RegionOut(
        region_id=r.region_id,
        doc_id=r.doc_id,
        collection=collection,
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
