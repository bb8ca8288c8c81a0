"""Documents and their versions: upload (an ingest job), list, inspect, delete, page images."""

from __future__ import annotations

from pathlib import Path as PathType
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException

from folio.api.application import DEFAULT_COLLECTION, check_collection
from folio.api.errors import Forbidden, PayloadTooLarge, error_body
from folio.api.http.deps import (
    CallerDep,
    FolioDep,
    ImageCallerDep,
    SettingsDep,
    WriterDep,
    require_key,
    require_key_or_query,
)
from folio.api.http.multipart import FormLimits, malformed, read_form, upload_filename
from folio.api.schemas import (
    MAX_PAGE,
    DeleteResponse,
    DocumentDetail,
    DocumentExport,
    DocumentList,
    IngestResponse,
    JobOut,
    PageList,
    error_responses,
)
from folio.kernel.errors import InvalidRequest
from folio.kernel.metadata import parse_metadata_json

router = APIRouter(prefix="/documents", tags=["documents"], dependencies=[Depends(require_key)])
images = APIRouter(prefix="/documents", tags=["documents"], dependencies=[Depends(require_key_or_query)])

# Multipart framing (boundaries, part headers, the doc_id field) on top of the file itself.

_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": "the PDF"},
                        "doc_id": {
                            "type": "string",
                            "description": "document id (default: from the file name)",
                        },
                        "collection": {
                            "type": "string",
                            "description": "the collection to put the document in (default: default); "
                            "a doc_id lives in one collection",
                        },
                        "metadata": {
                            "type": "string",
                            "description": "the version's user metadata, a JSON object {key: value} (values: "
                            "strings, finite numbers, booleans, YYYY-MM-DD dates; at most 32 keys, 8 KiB); "
                            "docs/api.md, Metadata",
                        },
                    },
                }
            }
        },
    }
}


async def _read_upload(request: Request, max_bytes: int) -> tuple[bytes, str, str | None, str, dict[str, Any]]:
    limits = FormLimits(max_bytes, "upload", "send the PDF as multipart/form-data with a 'file' part")
    try:
        form = await read_form(request, limits)
    except MultiPartException as e:
        raise malformed(e) from e
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidRequest("missing multipart part 'file' (the PDF)")
        data = await upload.read()  # from a spooled temp file: at most 1 MB of it was ever in memory
        if len(data) > max_bytes:
            raise PayloadTooLarge(f"file is {len(data)} bytes, over the limit of {max_bytes} bytes")
        raw_id = form.get("doc_id")
        doc_id = raw_id.strip() if isinstance(raw_id, str) and raw_id.strip() else None
        raw_collection = form.get("collection")
        collection = raw_collection.strip() if isinstance(raw_collection, str) and raw_collection.strip() else None
        filename = upload_filename(upload)
        raw_meta = form.get("metadata")
        metadata = parse_metadata_json(raw_meta if isinstance(raw_meta, str) else None)  # bad: a 422 here
        return data, filename, doc_id, collection or DEFAULT_COLLECTION, metadata
    finally:
        await form.close()


@router.post(
    "",
    summary="Upload a PDF (ingested as a job)",
    response_model=IngestResponse,
    responses={
        202: {"model": JobOut, "description": "wait=false: the queued job"},
        **error_responses(401, 403, 409, 413, 422),
    },
    openapi_extra=_UPLOAD_BODY,
)
async def upload_document(  # noqa: PLR0913
    request: Request,
    caller: WriterDep,
    settings: SettingsDep,
    folio: FolioDep,
    wait: Annotated[
        bool, Query(description="wait for the ingest to finish (true) or return the job at once (false)")
    ] = True,
    redo_degraded: Annotated[
        bool,
        Query(
            description="when these bytes are stored with degraded pages (past the page time limit), parse them "
            "again and replace the version if fewer pages come out degraded"
        ),
    ] = False,
) -> Any:
    """Ingest one PDF. Same bytes under the same ``doc_id`` are a no-op (``status: unchanged``); new
    bytes become a new version and old versions stay queryable. Bad input is a 422 with a specific
    code (``not_a_pdf``, ``corrupt_pdf``, ``encrypted_pdf``, ``empty_pdf``); over the size or page
    limit is a 413 (``limit_exceeded``). A failed ingest leaves the store as it was. ``metadata`` (a JSON
    object, docs/api.md) is the new version's; bad metadata is a 422 before any job is queued.

    ``collection`` (default ``default``) must be one the key writes to (else 403); a doc_id that
    already lives in another collection is a 409 (``collection_conflict``)."""
    data, filename, doc_id, collection, metadata = await _read_upload(request, settings.ingest.max_upload_bytes)
    check_collection(collection)
    if not caller.sees(collection):
        raise Forbidden(f"this API key cannot write to collection {collection}")
    # The upload checked once, by the door: the typed job every runner takes (bad input: a 4xx here, at once).
    checked = await run_in_threadpool(
        folio.check_upload, data, filename=filename, doc_id=doc_id, collection=collection, redo_degraded=redo_degraded
    )
    checked = checked.with_metadata(metadata)
    # On the runner (api.service.jobs.JobRunner): in-process, or the Ray cluster's (FOLIO_RAY_ADDRESS), which
    # refuses redo_degraded with a 422; submitting to the cluster waits on it, so not on the event loop.
    job = await run_in_threadpool(folio.submit_ingest, checked)
    if not wait:
        return JSONResponse(job.snapshot(), status_code=202, headers={"Location": f"/v1/jobs/{job.job_id}"})
    await job.wait_async()
    if job.status == "failed":
        err = job.error or {}
        body = error_body(
            err.get("code", "internal_error"), err.get("message", "") or "ingest failed", {"job_id": job.job_id}
        )
        return JSONResponse(body, status_code=job.http_status)
    return IngestResponse(**(job.result or {}), job_id=job.job_id)


@router.get(
    "",
    summary="List documents (latest version of each)",
    response_model=DocumentList,
    responses=error_responses(401),
)
def list_documents(
    folio: FolioDep,
    caller: CallerDep,
    collection: Annotated[
        str | None, Query(max_length=128, description="only this collection (default: every one the key sees)")
    ] = None,
) -> DocumentList:
    return folio.documents(collections=caller.collections, collection=collection)


@router.get(
    "/{doc_id}",
    summary="A document with all its versions",
    response_model=DocumentDetail,
    responses=error_responses(401, 404),
)
def get_document(doc_id: str, folio: FolioDep, caller: CallerDep) -> DocumentDetail:
    return folio.document(doc_id, collections=caller.collections)


@router.delete(
    "/{doc_id}",
    summary="Delete a document and all its versions",
    response_model=DeleteResponse,
    responses=error_responses(401, 403, 404),
)
def delete_document(doc_id: str, folio: FolioDep, caller: WriterDep) -> DeleteResponse:
    return folio.delete_document(doc_id, collections=caller.collections)


@router.get(
    "/{doc_id}/versions/{version_id}",
    summary="One version and its ingest report",
    response_model=DocumentDetail,
    responses=error_responses(401, 404),
)
def get_version(doc_id: str, version_id: str, folio: FolioDep, caller: CallerDep) -> DocumentDetail:
    return folio.version(doc_id, version_id, collections=caller.collections)


@router.get(
    "/{doc_id}/export",
    summary="A document version as Markdown or as JSON regions",
    response_model=DocumentExport,
    responses={
        200: {
            "content": {"text/markdown": {"schema": {"type": "string"}}},
            "description": "format=markdown: the Markdown; format=json: the DocumentExport",
        },
        **error_responses(401, 404, 413, 422),
    },
)
def export_document(
    doc_id: str,
    folio: FolioDep,
    caller: CallerDep,
    fmt: Annotated[
        Literal["markdown", "json"],
        Query(alias="format", description="markdown (text/markdown) or json (the regions with their locators)"),
    ] = "markdown",
    version_id: Annotated[
        str | None, Query(max_length=128, description="the version to export (default: the latest)")
    ] = None,
) -> Any:
    """A version in reading order, to take elsewhere. Markdown: headings (``#`` by level), paragraphs, tables
    (their Markdown), figures as ``![caption](/v1/regions/{region_id}/image)`` with the caption under them, and
    ``<!-- page N -->`` where each page starts; running headers, footers and page numbers are left out (ingest
    keeps them out of the regions). JSON: the version's facts and its sections, paragraphs, tables and figures,
    each with its locators (page, bbox), kind, text, heading path and ids. A document too large to export whole
    is a 413, never a cut-short file."""
    out = folio.export(doc_id, fmt, version_id, collections=caller.collections)
    if isinstance(out, str):
        return Response(out, media_type="text/markdown; charset=utf-8")
    return out


@router.delete(
    "/{doc_id}/versions/{version_id}",
    summary="Delete one version",
    response_model=DeleteResponse,
    responses=error_responses(401, 403, 404),
)
def delete_version(doc_id: str, version_id: str, folio: FolioDep, caller: WriterDep) -> DeleteResponse:
    return folio.delete_version(doc_id, version_id, collections=caller.collections)


@router.get(
    "/{doc_id}/versions/{version_id}/pages",
    summary="Pages of a version: sizes in points and image URLs",
    response_model=PageList,
    responses=error_responses(401, 404),
)
def list_pages(doc_id: str, version_id: str, folio: FolioDep, caller: CallerDep) -> PageList:
    return folio.pages(doc_id, version_id, collections=caller.collections)


def image_response(image: bytes | PathType) -> Response:
    """A stored PNG (``Folio.image``): its bytes (an object store) or its file."""
    # Versions are immutable, so their images are too.
    headers = {"Cache-Control": "private, max-age=86400, immutable"}
    if isinstance(image, bytes):
        return Response(image, media_type="image/png", headers=headers)
    return FileResponse(image, media_type="image/png", headers=headers)


@images.get(
    "/{doc_id}/versions/{version_id}/pages/{n}/image",
    summary="The rendered page (PNG)",
    response_class=FileResponse,
    responses={
        200: {"content": {"image/png": {}}, "description": "the page render"},
        **error_responses(401, 404),
    },
)
def page_image(
    doc_id: str,
    version_id: str,
    n: Annotated[int, Path(ge=1, le=MAX_PAGE)],
    folio: FolioDep,
    caller: ImageCallerDep,
) -> Response:
    """The server-rendered page image. Its pixel width divided by the page width in points (from
    ``/pages``) is the scale that maps region bboxes onto it."""
    return image_response(folio.page_image(doc_id, version_id, n, collections=caller.collections))
