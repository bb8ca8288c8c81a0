"""Ingest jobs: status and progress."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from api.deps import JobsDep, require_key
from api.errors import JobNotFound
from api.schemas import JobList, JobOut, error_responses

router = APIRouter(prefix="/jobs", tags=["jobs"], dependencies=[Depends(require_key)])


@router.get("", summary="Recent jobs, newest first", response_model=JobList, responses=error_responses(401))
def list_jobs(jobs: JobsDep) -> JobList:
    data = [JobOut(**j.snapshot()) for j in jobs.list()]
    return JobList(data=data, count=len(data))


@router.get(
    "/{job_id}",
    summary="One job's status, progress and result",
    response_model=JobOut,
    responses=error_responses(401, 404),
)
def get_job(job_id: str, jobs: JobsDep) -> JobOut:
    job = jobs.get(job_id)
    if job is None:
        raise JobNotFound(f"no such job: {job_id} (jobs are kept in memory until the server restarts)")
    return JobOut(**job.snapshot())
