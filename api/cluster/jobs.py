"""The API's job runner when ``FOLIO_RAY_ADDRESS`` is set: ingest jobs run on the Ray cluster.

An ``api.service.jobs.JobRunner`` (``start``, ``stop``, ``submit_ingest``, ``get``, ``list``, ``counts``); jobs are
the board's (``api/cluster/board.py``), so every replica lists and polls the
same jobs, and a job survives the replica that accepted its upload. Nothing about a job is kept in
this process.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from folio.api.service.jobs import Ingester, JobRunner, LocalJobRunner
from folio.kernel.errors import InvalidRequest

if TYPE_CHECKING:
    from folio.ingest.pipeline import IngestJob
    from folio.settings import Settings

logger = logging.getLogger(__name__)


class RemoteJob:
    """A snapshot of one board job (an ``api.service.jobs.JobHandle``)."""

    def __init__(self, runner: ClusterJobRunner, snap: dict[str, Any]) -> None:
        self._runner = runner
        self._update(snap)

    def _update(self, snap: dict[str, Any]) -> None:
        self._snap = snap
        self.job_id: str = snap["job_id"]
        self.status: str = snap["status"]
        self.result: dict[str, Any] | None = snap.get("result")
        self.error: dict[str, Any] | None = snap.get("error")
        self.http_status: int = int(snap.get("http_status") or 200)
        self.meta = {k: snap.get(k) for k in ("filename", "doc_id", "collection")}

    def snapshot(self) -> dict[str, Any]:
        return {k: v for k, v in self._snap.items() if k != "http_status"}

    async def wait_async(self, poll_s: float = 0.2) -> None:
        """Poll the board until the job finishes (an ``await`` on the actor: no thread is held)."""
        board = self._runner.board
        while self.status not in ("done", "failed"):
            await asyncio.sleep(poll_s)
            snap = await board.get.remote(self.job_id)
            if snap is not None:
                self._update(snap)


class ClusterJobRunner:
    def __init__(self, address: str) -> None:
        self.address = address
        self.board: Any = None
        self._counts: tuple[float, dict[str, int]] = (0.0, {"queued": 0, "running": 0, "done": 0, "failed": 0})

    def start(self) -> None:
        # function-level: Ray's side (api.cluster.board) loads only when a cluster is configured
        from folio.api.cluster.board import board

        self.board = board(self.address)
        logger.info("ingest jobs run on the Ray cluster at %s", self.address)

    def stop(self, timeout: float = 30.0) -> None:
        """Nothing to stop: the jobs belong to the cluster and keep running."""

    def submit_ingest(self, job: IngestJob, ingester: Ingester) -> RemoteJob:
        """The job on the cluster's board; ``redo_degraded`` runs only in-process (``InvalidRequest``)."""
        if job.options.redo_degraded:
            raise InvalidRequest("redo_degraded is not available when ingest runs on a Ray cluster")
        import ray

        # function-level: Ray's side (api.cluster.board) loads only when a cluster is configured
        from folio.api.cluster.board import job_spec

        task = job_spec(ingester.store, job, ingester.settings)
        meta = {"filename": job.received_name, "doc_id": job.doc_id, "collection": job.collection}
        return RemoteJob(self, ray.get(self.board.submit.remote(task, meta)))

    def get(self, job_id: str) -> RemoteJob | None:
        import ray

        snap = ray.get(self.board.get.remote(job_id))
        return RemoteJob(self, snap) if snap is not None else None

    def list(self) -> list[RemoteJob]:
        """Newest first."""
        import ray

        return [RemoteJob(self, s) for s in ray.get(self.board.list.remote())]

    def counts(self) -> dict[str, int]:
        """Jobs per status (cached for a second: ``/v1/health`` calls this on every probe)."""
        import ray

        at, counts = self._counts
        if time.monotonic() - at < 1.0:
            return counts
        out = {"queued": 0, "running": 0, "done": 0, "failed": 0}
        try:
            for snap in ray.get(self.board.list.remote(), timeout=2.0):
                out[snap["status"]] = out.get(snap["status"], 0) + 1
        except (ray.exceptions.GetTimeoutError, ray.exceptions.RayError) as e:
            logger.warning("job board unreachable: %s", e)
            return counts
        self._counts = (time.monotonic(), out)
        return out


def job_runner(settings: Settings) -> JobRunner:
    """The runner for ``create_app``: on the cluster when ``settings.cluster.address`` is set, else in-process."""
    if settings.cluster.address:
        return ClusterJobRunner(settings.cluster.address)
    return LocalJobRunner()
