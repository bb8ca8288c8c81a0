"""Ingest jobs: status and progress, polled or pushed as server-sent events (``api.http.job_stream``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from folio.api.application import DEFAULT_COLLECTION, Folio
from folio.api.errors import JobNotFound
from folio.api.http.deps import CallerDep, FolioDep, require_key
from folio.api.http.job_stream import DEFAULT_TIMEOUT_S, HEADERS, MAX_STREAM_JOBS, MAX_TIMEOUT_S, job_events
from folio.api.keys import Principal
from folio.api.schemas import JobList, JobOut, error_responses
from folio.api.service.jobs import JobHandle
from folio.kernel.errors import InvalidRequest

router = APIRouter(prefix="/jobs", tags=["jobs"], dependencies=[Depends(require_key)])


def _sees(caller: Principal, job: JobHandle) -> bool:
    """A job belongs to the collection it writes to; a key sees only its collections' jobs."""
    return caller.sees(str(job.meta.get("collection", DEFAULT_COLLECTION)))


@router.get("", summary="Recent jobs, newest first", response_model=JobList, responses=error_responses(401))
def list_jobs(folio: FolioDep, caller: CallerDep) -> JobList:
    data = [JobOut(**j.snapshot()) for j in folio.jobs.list() if _sees(caller, j)]
    return JobList(data=data, count=len(data))


_EVENTS = {
    200: {
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
        "description": "events progress, done, failed, error, timeout and a last end; ': ping' comments between",
    },
    **error_responses(401, 404, 422),
}
Timeout = Annotated[
    float,
    Query(gt=0, le=MAX_TIMEOUT_S, description="end the stream after this many seconds (a timeout event), at most "
          f"{MAX_TIMEOUT_S:g}"),
]


async def _stream(folio: Folio, caller: Principal, job_ids: list[str], timeout: float) -> StreamingResponse:
    """The events of ``job_ids``, each checked first: unknown, or of a collection the key does not see, is a 404."""
    for job_id in job_ids:
        job = await run_in_threadpool(folio.jobs.get, job_id)
        if job is None or not _sees(caller, job):
            raise JobNotFound(f"no such job: {job_id} (jobs are kept in memory until the server restarts)")
    return StreamingResponse(
        job_events(folio.jobs.get, job_ids, timeout), media_type="text/event-stream", headers=HEADERS
    )


@router.get("/events", summary="Several jobs' progress as server-sent events", response_class=StreamingResponse,
            responses=_EVENTS)
async def jobs_events(
    folio: FolioDep,
    caller: CallerDep,
    ids: Annotated[str, Query(max_length=40 * MAX_STREAM_JOBS, description="job ids, comma-separated")],
    timeout: Timeout = DEFAULT_TIMEOUT_S,
) -> StreamingResponse:
    """One stream for the jobs of a batch upload (``POST /v1/documents/batch``): a ``progress`` event per
    change of a job's status or stage, its ``done`` or ``failed`` event, and ``end`` once every job has
    finished (or after ``timeout`` seconds: ``timeout``, then ``end``)."""
    job_ids = list(dict.fromkeys(i.strip() for i in ids.split(",") if i.strip()))
    if not job_ids or len(job_ids) > MAX_STREAM_JOBS:
        raise InvalidRequest(f"ids: give 1 to {MAX_STREAM_JOBS} job ids, comma-separated")
    return await _stream(folio, caller, job_ids, timeout)


@router.get("/{job_id}/events", summary="One job's progress as server-sent events",
            response_class=StreamingResponse, responses=_EVENTS)
async def job_events_route(
    job_id: str, folio: FolioDep, caller: CallerDep, timeout: Timeout = DEFAULT_TIMEOUT_S
) -> StreamingResponse:
    """The job's ``progress`` events (one now, then one per change of status or stage), its ``done`` or
    ``failed`` event, then ``end``; the stream closes. A ``: ping`` comment every 15 s while nothing changes."""
    return await _stream(folio, caller, [job_id], timeout)


@router.get(
    "/{job_id}",
    summary="One job's status, progress and result",
    response_model=JobOut,
    responses=error_responses(401, 404),
)
def get_job(job_id: str, folio: FolioDep, caller: CallerDep) -> JobOut:
    job = folio.jobs.get(job_id)
    if job is None or not _sees(caller, job):
        raise JobNotFound(f"no such job: {job_id} (jobs are kept in memory until the server restarts)")
    return JobOut(**job.snapshot())
