"""Ingest progress pushed as server-sent events (``GET /v1/jobs/{id}/events``, ``GET /v1/jobs/events?ids=``).

The stream polls the job runner (``api.service.jobs.JobRunner.get``: the in-process table, or the Ray job board
through ``api.cluster.jobs``) every ``POLL_S`` seconds, on a worker thread (a board lookup blocks), and sends an
event whenever a job's status or progress changed:

- ``progress``: a job's ``JobOut`` (status, ``progress: {stage, done, total}``), once when the stream opens and
  again on each change seen (the runner is polled: a stage over within ``POLL_S`` may show no event of its own);
- ``done`` / ``failed``: a job's final ``JobOut`` (its ``result``, or its ``error``);
- ``error``: a job that is gone from the runner (finished jobs are kept in memory, the newest ones only);
- ``timeout``: ``timeout`` seconds passed before every job finished (the unfinished jobs' ``JobOut``); ask again;
- ``end``: the last event, ``{"done", "failed", "unfinished"}`` counts; then the stream closes.

A comment line (``: ping``) goes out after ``HEARTBEAT_S`` seconds without an event, so that proxies and clients
keep the connection; a stream lasts at most ``timeout`` seconds (at most ``MAX_TIMEOUT_S``), never for ever. The
routes check the ids and the caller's collections before the stream opens (a job of another collection is a 404).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import anyio

from folio.api.service.jobs import JobHandle

POLL_S = 0.1
HEARTBEAT_S = 15.0
DEFAULT_TIMEOUT_S = 600.0
MAX_TIMEOUT_S = 3600.0
MAX_STREAM_JOBS = 100
FINISHED = ("done", "failed")
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}  # no proxy holds the events back


def sse(event: str, data: Any) -> bytes:
    """One server-sent event: its name and its data as one line of JSON.

    >>> sse("end", {"done": 1})
    b'event: end\\ndata: {"done": 1}\\n\\n'
    """
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n".encode()


def _key(snap: dict[str, Any]) -> tuple[Any, ...]:
    progress = snap.get("progress") or {}
    return snap.get("status"), progress.get("stage"), progress.get("done"), progress.get("total")


async def job_events(
    lookup: Callable[[str], JobHandle | None],
    job_ids: Sequence[str],
    timeout_s: float,
    *,
    poll_s: float = POLL_S,
    heartbeat_s: float = HEARTBEAT_S,
) -> AsyncIterator[bytes]:
    """The events of ``job_ids`` (see the module's docstring) until each has finished, is gone, or
    ``timeout_s`` has passed. ``lookup`` is the runner's ``get`` (called on a worker thread)."""
    shown: dict[str, tuple[Any, ...]] = {}
    open_ids = list(dict.fromkeys(job_ids))
    counts = {"done": 0, "failed": 0}
    deadline = time.monotonic() + timeout_s
    last_sent = time.monotonic()
    while True:
        found = await anyio.to_thread.run_sync(lambda: [(i, lookup(i)) for i in open_ids])
        sent = False
        for job_id, job in found:
            if job is None:
                message = f"job {job_id} is gone (finished jobs are kept in memory, the newest only)"
                yield sse("error", {"job_id": job_id, "error": {"code": "job_not_found", "message": message}})
                counts["failed"] += 1
                open_ids.remove(job_id)
                sent = True
                continue
            snap = job.snapshot()
            if snap.get("status") in FINISHED:
                yield sse(str(snap["status"]), snap)
                counts[str(snap["status"])] += 1
                open_ids.remove(job_id)
                sent = True
            elif shown.get(job_id) != _key(snap):
                shown[job_id] = _key(snap)
                yield sse("progress", snap)
                sent = True
        now = time.monotonic()
        if not open_ids or now >= deadline:
            break
        if sent:
            last_sent = now
        elif now - last_sent >= heartbeat_s:
            yield b": ping\n\n"
            last_sent = now
        await anyio.sleep(min(poll_s, max(0.0, deadline - now)))
    if open_ids:
        left = [j.snapshot() for _, j in found if j is not None and j.job_id in open_ids]
        yield sse("timeout", {"message": f"the stream's {timeout_s:g} s passed; ask again", "jobs": left})
    yield sse("end", {**counts, "unfinished": len(open_ids)})
