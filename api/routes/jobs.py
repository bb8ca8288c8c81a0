"""Ingest jobs: status and progress."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from folio.api.deps import CallerDep, FolioDep, require_key
from folio.api.errors import JobNotFound
from folio.api.jobs import JobHandle
from folio.api.keys import Principal
from folio.api.schemas import JobList, JobOut, error_responses
from folio.ingest.storage.sql import DEFAULT_COLLECTION

router = APIRouter(prefix="/jobs", tags=["jobs"], dependencies=[Depends(require_key)])


def _sees(caller: Principal, job: JobHandle) -> bool:
    """A job belongs to the collection it writes to; a key sees only its collections' jobs."""
    return caller.sees(str(job.meta.get("collection", DEFAULT_COLLECTION)))


@router.get("", summary="Recent jobs, newest first", response_model=JobList, responses=error_responses(401))
def list_jobs(folio: FolioDep, caller: CallerDep) -> JobList:
    data = [JobOut(**j.snapshot()) for j in folio.jobs.list() if _sees(caller, j)]
    return JobList(data=data, count=len(data))


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
