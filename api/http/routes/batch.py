"""Several PDFs in one request: ``POST /v1/documents/batch``, one ingest job per file.

A route of its own rather than several ``file`` parts on ``POST /v1/documents``: that route answers one
``IngestResponse`` (or, with ``wait=false``, one job) and may wait for the ingest; a batch answers a list and
never waits (its progress is pushed by ``GET /v1/jobs/events?ids=...``), and its body has a limit of its own.
The single upload's contract stays as it was.

Limits, enforced as the body streams in (never buffered whole; file parts spool to temporary files):
at most ``MAX_BATCH_FILES`` file parts, the whole body at most ``BATCH_BYTES_FACTOR`` times the single upload's
``FOLIO_MAX_UPLOAD_BYTES``, each file at most ``FOLIO_MAX_UPLOAD_BYTES`` and ``FOLIO_MAX_PAGES`` pages. A body
past the count or the total is a 413 for the whole batch, and nothing is queued.

Per-file results, not all-or-nothing: each file is checked at the door as its single upload would be (not a
PDF, encrypted, over a limit, a doc id of another collection, the same doc id twice in one batch) and either
queued as a job or refused with that upload's error. A refused file writes nothing, and every job writes its
version atomically (a version becomes visible only when complete), so a batch never leaves a half-written
document. The key must write to the batch's ``collection`` (else 403, nothing queued); ``metadata`` (a JSON
object, as for a single upload) goes with every file's new version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException

from folio.api.application import DEFAULT_COLLECTION, Folio, check_collection
from folio.api.errors import Forbidden, PayloadTooLarge, status_for
from folio.api.http.deps import FolioDep, SettingsDep, WriterDep, require_key
from folio.api.http.multipart import FormLimits, malformed, read_form, too_many_files, upload_filename
from folio.api.schemas import BatchItem, BatchUploadResponse, ErrorBody, error_responses
from folio.kernel.errors import FolioError, InvalidRequest
from folio.kernel.metadata import parse_metadata_json

if TYPE_CHECKING:
    from folio.ingest.pipeline import IngestJob

router = APIRouter(prefix="/documents", tags=["documents"], dependencies=[Depends(require_key)])

MAX_BATCH_FILES = 20
BATCH_BYTES_FACTOR = 4  # the whole body: at most this many single uploads' worth of bytes

_BATCH_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {
                            "type": "array",
                            "items": {"type": "string", "format": "binary"},
                            "description": f"the PDFs: one 'file' part each, at most {MAX_BATCH_FILES}; each "
                            "document id comes from its file name",
                        },
                        "collection": {
                            "type": "string",
                            "description": "the collection to put every document in (default: default)",
                        },
                        "metadata": {
                            "type": "string",
                            "description": "every new version's user metadata, a JSON object (as for a single "
                            "upload); bad metadata is a 422 for the whole batch",
                        },
                    },
                }
            }
        },
    }
}


async def _read_batch(request: Request, max_bytes: int) -> FormData:
    """The multipart form, within the batch's limits (413) and well formed (422)."""
    limits = FormLimits(BATCH_BYTES_FACTOR * max_bytes, "batch", "send the PDFs as multipart/form-data, one 'file' "
                        "part each", max_files=MAX_BATCH_FILES, max_fields=4, scope=" in all")
    try:
        return await read_form(request, limits)
    except MultiPartException as e:
        if too_many_files(e):
            raise PayloadTooLarge(f"a batch holds at most {MAX_BATCH_FILES} files") from e
        raise malformed(e) from e


def _collection(form: FormData) -> str:
    raw = form.get("collection")
    return raw.strip() if isinstance(raw, str) and raw.strip() else DEFAULT_COLLECTION


def _refused(filename: str, e: FolioError, doc_id: str | None = None) -> BatchItem:
    status = status_for(e)
    return BatchItem(
        filename=filename, doc_id=doc_id, status="refused", error=ErrorBody(code=e.code, message=str(e)[:500]),
        http_status=status,
    )


@dataclass
class _Door:
    """What every file of one batch is checked against, and the doc ids its accepted files took."""

    folio: Folio
    collection: str
    max_bytes: int
    redo_degraded: bool
    metadata: dict[str, Any] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)

    async def check(self, upload: UploadFile) -> BatchItem | tuple[str, IngestJob]:
        """One file checked as its single upload would be: its filename and job, else its refusal."""
        filename = upload_filename(upload)
        data = await upload.read()  # from its spooled temporary file
        if len(data) > self.max_bytes:
            too_large = PayloadTooLarge(f"file is {len(data)} bytes, over the limit of {self.max_bytes} bytes")
            return _refused(filename, too_large)
        try:
            checked = await run_in_threadpool(
                self.folio.check_upload, data, filename=filename, doc_id=None, collection=self.collection,
                redo_degraded=self.redo_degraded,
            )
        except FolioError as e:
            return _refused(filename, e)
        if checked.doc_id in self.taken:
            twice = InvalidRequest(f"another file of this batch is document {checked.doc_id!r} too: upload it alone")
            return _refused(filename, twice, checked.doc_id)
        self.taken.add(checked.doc_id)
        return filename, checked.with_metadata(self.metadata)

    async def submit(self, checked: BatchItem | tuple[str, IngestJob]) -> BatchItem:
        """A checked file queued as a job (the runner may still refuse it: a Ray cluster and redo_degraded)."""
        if isinstance(checked, BatchItem):
            return checked
        filename, job = checked
        try:
            handle = await run_in_threadpool(self.folio.submit_ingest, job)
        except FolioError as e:
            return _refused(filename, e, job.doc_id)
        return BatchItem(filename=filename, doc_id=job.doc_id, status="accepted", job_id=handle.job_id)


@router.post(
    "/batch",
    summary="Upload several PDFs (one ingest job each)",
    status_code=202,
    response_model=BatchUploadResponse,
    responses=error_responses(401, 403, 413, 422),
    openapi_extra=_BATCH_BODY,
)
async def upload_batch(
    request: Request,
    caller: WriterDep,
    settings: SettingsDep,
    folio: FolioDep,
    redo_degraded: Annotated[
        bool, Query(description="as for a single upload, for every file of the batch")
    ] = False,
) -> Any:
    """Queue each PDF as an ingest job and answer at once (202) with one item per file, in the order sent:
    ``accepted`` with its ``job_id``, or ``refused`` with the error its single upload would get (nothing of it
    is written). Follow the jobs with ``GET /v1/jobs/events?ids=...`` (server-sent events) or ``GET
    /v1/jobs/{id}``. Too many files or too many bytes in all is a 413 for the whole batch."""
    max_bytes = settings.ingest.max_upload_bytes
    form = await _read_batch(request, max_bytes)
    try:
        files = [f for f in form.getlist("file") if isinstance(f, UploadFile)]
        if not files:
            raise InvalidRequest("missing multipart part 'file' (one per PDF)")
        collection = _collection(form)
        raw_meta = form.get("metadata")
        metadata = parse_metadata_json(raw_meta if isinstance(raw_meta, str) else None)  # bad: a 422, nothing queued
        check_collection(collection)
        if not caller.sees(collection):
            raise Forbidden(f"this API key cannot write to collection {collection}")
        door = _Door(folio, collection, max_bytes, redo_degraded, dict(metadata))
        # every file checked before any is queued: the checks read the store, and the first job may be creating it
        checked = [await door.check(f) for f in files]
        items = [await door.submit(c) for c in checked]
    finally:
        await form.close()
    accepted = sum(1 for i in items if i.status == "accepted")
    body = BatchUploadResponse(data=items, count=len(items), accepted=accepted, refused=len(items) - accepted)
    return JSONResponse(body.model_dump(mode="json"), status_code=202)
