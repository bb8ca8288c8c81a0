"""A single background worker that runs ingest jobs one at a time, with progress.

Why one thread: LanceDB takes one writer per table at a time anyway, and a single writer keeps
the store's pending → ready protocol simple. Queries never wait on it: they run in FastAPI's
threadpool and read committed LanceDB versions while the worker writes (PyMuPDF, the tokenizer
and torch release the GIL for most of their work, so the worker does not starve the readers).

``JobRunner`` is the protocol the application (``api.application.Folio``) and the routes use: this
module's ``LocalJobRunner`` (in-process) and ``api.cluster.jobs.ClusterJobRunner`` (the Ray cluster,
``FOLIO_RAY_ADDRESS``) implement it. What one ingest job is asked to do is the pipeline's typed
``IngestJob`` (checked once, by the door); where it writes and with what is an ``Ingester``, whose ``run`` is
the one place an ingest of the api builds its encoder and calls the pipeline (the door's ``ingest_path``, this
runner's jobs and the Ray task all call it).

A job is ``queued`` → ``running`` → ``done`` | ``failed``. ``progress`` is the latest
``(stage, done, total)`` from the ingest pipeline. Finished jobs are kept in memory (the newest
``keep`` of them) so clients can poll; job ids are random and not persisted across restarts.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from folio.api.errors import status_for
from folio.kernel.errors import FolioError

if TYPE_CHECKING:
    from folio.ingest.pipeline import IngestJob, VersionIndexer
    from folio.ingest.storage.interface import ServiceStore
    from folio.kernel.model import IngestReport
    from folio.settings import Settings

logger = logging.getLogger(__name__)

JobStatus = Literal["queued", "running", "done", "failed"]
Progress = Callable[[str, int, int], None]
# The work a job runs: it gets a progress callback and returns a JSON-able result.
JobWork = Callable[[Progress], dict[str, Any]]


@dataclass(frozen=True)
class Ingester:
    """Where an ingest job writes and with what: the store, the settings (their embedder; a Ray task rebuilds
    its own from the driver's groups) and the ingest-time indexers. The door hands one to its runner."""

    store: ServiceStore
    settings: Settings
    indexers: Sequence[VersionIndexer] = ()

    def run(self, job: IngestJob, progress: Progress | None = None) -> IngestReport:
        """Run ``job`` here: its options, the settings' embedder, these indexers (the pipeline reads no setting)."""
        # function-level: the parser (PyMuPDF) and the embedder load with the first ingest, not for queries
        from folio.ingest.embed import default_text_encoder
        from folio.ingest.pipeline import ingest

        encoder = default_text_encoder(self.settings.embedding)
        return ingest(self.store, job, encoder=encoder, indexers=self.indexers, progress=progress)


class JobHandle(Protocol):
    """A job as the routes see it, wherever it runs."""

    job_id: str
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    http_status: int
    meta: dict[str, Any]

    @property
    def status(self) -> str: ...

    def snapshot(self) -> dict[str, Any]: ...

    async def wait_async(self) -> None: ...


class JobRunner(Protocol):
    """Runs ingest jobs and answers for them: ``start``/``stop`` in the app's lifespan, ``submit_ingest``
    per upload (a runner that cannot do what ``job`` asks raises ``InvalidRequest``), ``get``/``list``/
    ``counts`` for ``/v1/jobs`` and ``/v1/health``."""

    def start(self) -> None: ...

    def stop(self, timeout: float = 30.0) -> None: ...

    def submit_ingest(self, job: IngestJob, ingester: Ingester) -> JobHandle: ...

    def get(self, job_id: str) -> JobHandle | None: ...

    def list(self) -> Sequence[JobHandle]: ...

    def counts(self) -> dict[str, int]: ...


@dataclass
class Job:
    job_id: str
    kind: str
    work: JobWork | None
    meta: dict[str, Any] = field(default_factory=dict)
    status: JobStatus = "queued"
    stage: str = "queued"
    done: int = 0
    total: int = 0
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    http_status: int = 200
    finished: threading.Event = field(default_factory=threading.Event)

    def snapshot(self) -> dict[str, Any]:
        """A consistent, JSON-able view (the worker mutates the job while clients read it)."""
        return {
            "job_id": self.job_id,
            "kind": self.kind,
            "status": self.status,
            "progress": {"stage": self.stage, "done": self.done, "total": self.total},
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "result": self.result,
            "error": self.error,
            **self.meta,
        }

    async def wait_async(self, poll_s: float = 0.05) -> None:
        """Wait without holding a threadpool thread (a blocked thread per waiting upload would
        starve the query endpoints)."""
        while not self.finished.is_set():
            await asyncio.sleep(poll_s)


class LocalJobRunner:
    """``JobRunner`` in this process: owns the worker thread and the job table."""

    def __init__(self, *, keep: int = 200) -> None:
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._keep = keep
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="folio-ingest-worker", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the running job (queued ones are dropped as failed) and stop the worker."""
        if self._thread is None:
            return
        with self._lock:
            for job in self._jobs.values():
                if job.status == "queued":
                    self._fail(job, "shutting_down", "the server stopped before this job ran", 503)
        self._queue.put(None)
        self._thread.join(timeout)
        self._thread = None

    def submit(self, kind: str, work: JobWork, **meta: Any) -> Job:
        job = Job(job_id=uuid.uuid4().hex[:16], kind=kind, work=work, meta=meta)
        with self._lock:
            self._jobs[job.job_id] = job
            self._trim()
        self._queue.put(job)
        return job

    def submit_ingest(self, job: IngestJob, ingester: Ingester) -> Job:
        def work(progress: Progress) -> dict[str, Any]:
            return ingester.run(job, progress).job_result(job.collection)

        return self.submit("ingest", work, filename=job.received_name, doc_id=job.doc_id, collection=job.collection)

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def list(self) -> list[Job]:
        """Newest first."""
        with self._lock:
            return list(reversed(self._jobs.values()))

    def counts(self) -> dict[str, int]:
        out = {"queued": 0, "running": 0, "done": 0, "failed": 0}
        for job in self.list():
            out[job.status] += 1
        return out

    def _trim(self) -> None:
        finished = [j for j in self._jobs.values() if j.finished.is_set()]
        for job in finished[: max(0, len(finished) - self._keep)]:
            del self._jobs[job.job_id]

    @staticmethod
    def _fail(job: Job, code: str, message: str, http_status: int) -> None:
        job.status = "failed"
        job.error = {"code": code, "message": message}
        job.http_status = http_status
        job.finished_at = time.time()
        job.work = None
        job.finished.set()

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            if job.finished.is_set() or job.work is None:
                continue
            job.status = "running"
            job.stage = "starting"
            job.started_at = time.time()

            def progress(stage: str, done: int, total: int, job: Job = job) -> None:
                job.stage, job.done, job.total = stage, done, total

            try:
                job.result = job.work(progress)
            except FolioError as e:
                logger.info("job %s failed: %s", job.job_id, e)
                self._fail(job, e.code, str(e), status_for(e))
                continue
            except Exception as e:  # noqa: BLE001 - a crashed job must not kill the worker; logged as our bug
                logger.exception("job %s crashed", job.job_id)
                self._fail(job, "internal_error", f"internal error: {type(e).__name__}: {e}", 500)
                continue
            job.status = "done"
            job.stage = "done"
            job.finished_at = time.time()
            job.work = None  # drop the upload bytes
            job.finished.set()
