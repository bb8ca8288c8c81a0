"""folio on a Ray cluster: one Ray task per document, job state in a detached Ray actor.

``folio ingest --ray ADDRESS PATH...`` and ``POST /v1/documents`` (when ``FOLIO_RAY_ADDRESS`` is set,
``api/cluster/jobs.py``) hand documents to the **job board**, a named, detached actor
(``folio-jobs`` in the ``folio`` namespace). The board owns the ingest tasks, so a job outlives
the API replica or CLI that submitted it, and any replica reads the same job table (the board
keeps the newest ``KEEP`` finished jobs; it is lost only with the Ray cluster itself).

One task ingests one document end to end: the typed ``ingest.pipeline.IngestJob`` the driver checked (the door
or the CLI; the worker does not check it again), in a ``RayIngest`` of plain data, run by
``api.service.jobs.Ingester`` (parse on the worker's CPU, embed, commit; ``FOLIO_RAY_GPUS_PER_DOC`` reserves a GPU
for a task, which Ray hands it through ``CUDA_VISIBLE_DEVICES``, and the encoder runs on it under
``FOLIO_EMBED_DEVICE=auto``, the default: the job's ``worker.embed_device`` says where it ran, docs/scaling.md),
against the same store URI (an object store, for workers on several machines). A worker that dies mid-document
is retried by Ray (``max_retries``): its pending claim is dead (its pid on this host; on another
host the board tells the retry which writer ids belonged to the dead attempts), so the retry removes
that claim's rows and claims again. Readers only ever see ready versions, so no partial version
becomes visible at any point. Errors in the document (``FolioError``: not a PDF, encrypted, ...)
are results, not retries.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

# Function-level imports: the task bodies run on Ray's workers and import the service there; the
# driver, which only pickles and submits them, stays light.
if TYPE_CHECKING:
    from folio.ingest.pipeline import IngestJob
    from folio.ingest.storage.interface import ServiceStore, StoreWriter
    from folio.settings import Settings

logger = logging.getLogger(__name__)

NAMESPACE = "folio"
BOARD_NAME = "folio-jobs"
KEEP = 1000
# Retries of a document whose worker died (system failures only; document errors are not retried).
MAX_RETRIES = 3
# A task reports progress at most this often (each report is one actor call).
PROGRESS_EVERY_S = 0.25


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:  # pragma: no cover - the cluster extra is missing
        raise RuntimeError("folio on Ray needs the cluster extra: pip install -e '.[cluster]'") from e
    return ray


def connect(address: str) -> Any:
    """Join the Ray cluster at ``address`` (``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``) as a driver."""
    ray = _ray()
    if not ray.is_initialized():
        ray.init(
            address=address,
            namespace=NAMESPACE,
            log_to_driver=False,
            logging_level=logging.WARNING,
            configure_logging=False,
        )
    return ray


def board(address: str) -> Any:
    """The job board actor, created on first use (detached: it outlives this process)."""
    connect(address)
    return JobBoard.options(
        name=BOARD_NAME, namespace=NAMESPACE, lifetime="detached", get_if_exists=True, num_cpus=0, max_concurrency=16
    ).remote()


# ------------------------------------------------------------------------------------ the board
class _JobBoard:
    """Job table and owner of the ingest tasks. Threaded actor: calls may run concurrently."""

    def __init__(self) -> None:
        self._jobs: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._refs: dict[str, Any] = {}
        self._writers: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def submit(self, task: RayIngest, meta: dict[str, Any]) -> dict[str, Any]:
        """Queue one document (``task``: see ``job_spec``); returns the job's snapshot."""
        ray = _ray()
        job_id = uuid.uuid4().hex[:16]
        job = {
            "job_id": job_id,
            "kind": "ingest",
            "status": "queued",
            "progress": {"stage": "queued", "done": 0, "total": 0},
            "created_at": time.time(),
            "started_at": None,
            "finished_at": None,
            "result": None,
            "error": None,
            "http_status": 200,
            "attempts": 0,
            "worker": None,
            **meta,
        }
        options: dict[str, Any] = {"max_retries": MAX_RETRIES, "num_cpus": task.num_cpus}
        if task.num_gpus:
            options["num_gpus"] = task.num_gpus
        ref = ingest_task.options(**options).remote(ray.put(task), job_id)
        with self._lock:
            self._jobs[job_id] = job
            self._refs[job_id] = ref
            self._trim()
        return dict(job)

    def started(self, job_id: str, worker: dict[str, Any]) -> list[str]:
        """A task attempt begins; returns the writer ids of earlier attempts of this job (they died)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return []
            job["status"] = "running"
            job["attempts"] += 1
            job["worker"] = worker
            job["started_at"] = job["started_at"] or time.time()
            return list(self._writers.get(job_id, []))

    def claimed(self, job_id: str, writer: str) -> None:
        with self._lock:
            self._writers.setdefault(job_id, []).append(writer)

    def progress(self, job_id: str, stage: str, done: int, total: int) -> None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None and job["status"] == "running":
                job["progress"] = {"stage": stage, "done": done, "total": total}

    def get(self, job_id: str) -> dict[str, Any] | None:
        self._resolve([job_id])
        with self._lock:
            job = self._jobs.get(job_id)
            return dict(job) if job is not None else None

    def list(self) -> list[dict[str, Any]]:
        """Newest first."""
        self._resolve(list(self._refs))
        with self._lock:
            return [dict(j) for j in reversed(self._jobs.values())]

    def _resolve(self, job_ids: Sequence[str]) -> None:  # ``list`` here is the method of that name
        """Fold finished tasks into their jobs (without waiting for unfinished ones)."""
        ray = _ray()
        with self._lock:
            refs = {self._refs[j]: j for j in job_ids if j in self._refs}
        if not refs:
            return
        ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=0)
        for ref in ready:
            job_id = refs[ref]
            try:
                out: dict[str, Any] = ray.get(ref)
            except Exception as e:  # noqa: BLE001 - the task crashed or its workers kept dying: the job failed
                out = {
                    "status": "failed",
                    "error": {"code": "internal_error", "message": f"{type(e).__name__}: …{str(e)[-1500:]}"},
                    "http_status": 500,
                }
            with self._lock:
                self._refs.pop(job_id, None)
                job = self._jobs.get(job_id)
                if job is None:
                    continue
                job.update(out)
                job["finished_at"] = time.time()
                job["progress"] = {**job["progress"], "stage": job["status"]}

    def _trim(self) -> None:
        finished = [j for j, job in self._jobs.items() if j not in self._refs]
        for job_id in finished[: max(0, len(finished) - KEEP)]:
            del self._jobs[job_id]
            self._writers.pop(job_id, None)


def _remote_board() -> Any:
    ray = _ray()
    return ray.remote(_JobBoard)


class _LazyRemote:
    """Decorate with ``ray.remote`` on first use, so importing this module needs no Ray."""

    def __init__(self, make: Any) -> None:
        self._make = make
        self._obj: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._obj is None:
            self._obj = self._make()
        return getattr(self._obj, name)


JobBoard = _LazyRemote(_remote_board)


# ------------------------------------------------------------------------------------- the task
_STORES: dict[str, Any] = {}
_INDEXERS: dict[str, Any] = {}
_CACHE_LOCK = threading.Lock()


def _store(uri: str, storage_options: dict[str, str]) -> Any:
    """One Store per worker process and store (LanceDB connections and caches are reused)."""
    from folio.ingest.storage.store import Store

    key = uri + "|" + json.dumps(storage_options, sort_keys=True)
    with _CACHE_LOCK:
        if key not in _STORES:
            _STORES[key] = Store(uri, storage_options=storage_options or None)
        return _STORES[key]


def _indexers(settings: dict[str, Any]) -> Any:
    from folio.api.service.llm import client_from_settings
    from folio.retrieval.visual import indexers_from_settings
    from folio.settings import Settings

    key = json.dumps(settings, sort_keys=True, default=str)
    with _CACHE_LOCK:
        if key not in _INDEXERS:
            parsed = Settings(**settings)
            _INDEXERS[key] = indexers_from_settings(parsed, llm=client_from_settings(parsed))
        return _INDEXERS[key]


def _run_ingest(task: RayIngest, job_id: str) -> dict[str, Any]:
    """The body of one task attempt (a plain function: also callable in-process)."""
    import socket

    from folio.api.errors import status_for
    from folio.api.service.jobs import Ingester
    from folio.ingest.storage.claims import DEAD_WRITERS
    from folio.kernel.errors import FolioError
    from folio.settings import Settings

    ray = _ray()
    board_actor = ray.get_actor(BOARD_NAME, namespace=NAMESPACE)
    settings = Settings(**task.settings)  # the driver's settings groups: the worker reads none of its own for ingest
    worker = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "node": ray.get_runtime_context().get_node_id(),
        "embed_device": _embed_device(settings, task.num_gpus),
    }
    DEAD_WRITERS.update(ray.get(board_actor.started.remote(job_id, worker)))
    store = _store(task.store, task.storage_options)
    try:  # the indexers' and the ingest's encoders: FOLIO_EMBED_DEVICE=cuda on a node without a GPU fails the job
        ingester = Ingester(store, settings, _indexers(task.settings))
        report = ingester.run(task.job, _Reporter(board_actor, job_id, store))
    except FolioError as e:
        return {
            "status": "failed",
            "error": {"code": e.code, "message": str(e)},
            "http_status": status_for(e),
        }
    return {"status": "done", "result": report.job_result(task.job.collection)}


def _embed_device(settings: Settings, num_gpus: float) -> str:
    """Where this task's document encoder runs: ``cuda`` when Ray gave the task a GPU (``CUDA_VISIBLE_DEVICES``)
    and ``FOLIO_EMBED_DEVICE`` is ``auto`` or ``cuda``. A reserved GPU that the encoder cannot use is a warning in
    the worker's log; ``cuda`` without one is ``unavailable`` here, and the job's error when the ingest starts."""
    from folio.ingest.embed import default_text_encoder
    from folio.ingest.embed_device import EmbedDeviceUnavailable

    try:
        device = default_text_encoder(settings.embedding).resolve_devices()["document"]["device"]
    except EmbedDeviceUnavailable:
        return "unavailable"
    if num_gpus and device != "cuda":
        logger.warning(
            "this task reserves %g GPU, but its encoder runs on the %s (FOLIO_EMBED_DEVICE=%s, CUDA_VISIBLE_DEVICES "
            "as Ray set it): install onnxruntime-gpu or a CUDA build of torch on the GPU nodes",
            num_gpus, device, settings.embedding.embed_device,
        )  # fmt: skip
    return device


class _Reporter:
    """A task attempt's progress, to the board: at most every ``PROGRESS_EVERY_S`` within a stage, and each of
    this attempt's claims once (one task at a time per worker process): if the worker dies, the retry learns the
    writer id from the board and takes the claim over at once."""

    def __init__(self, board_actor: Any, job_id: str, store: StoreWriter) -> None:
        self.board, self.job_id, self.store = board_actor, job_id, store
        self.last, self.stage = 0.0, ""  # when and at which stage progress was last sent
        self.reported: set[str] = set()

    def __call__(self, stage: str, done: int, total: int) -> None:
        for writer in self.store.claimed_writers():
            if writer not in self.reported:
                self.reported.add(writer)
                self.board.claimed.remote(self.job_id, writer)
        now = time.monotonic()
        if stage != self.stage or done == total or now - self.last >= PROGRESS_EVERY_S:
            self.last, self.stage = now, stage
            self.board.progress.remote(self.job_id, stage, done, total)


def _remote_task() -> Any:
    ray = _ray()
    return ray.remote(max_retries=MAX_RETRIES)(_run_ingest)


ingest_task = _LazyRemote(_remote_task)


@dataclass(frozen=True)
class RayIngest:
    """What one Ray task is handed (plain data: it pickles): the checked ``job``, the store's URI and LanceDB
    options, the driver's settings groups for the worker's embedder and indexers (``Settings.model_dump``; the
    keys and the storage group, whose options travel as ``storage_options``, stay behind), and what the task
    reserves (``FOLIO_RAY_CPUS_PER_DOC``, ``FOLIO_RAY_GPUS_PER_DOC``)."""

    job: IngestJob
    store: str
    storage_options: dict[str, str]
    settings: dict[str, Any]
    num_cpus: float
    num_gpus: float


def job_spec(store: ServiceStore, job: IngestJob, settings: Settings) -> RayIngest:
    """What a task needs to run ``job`` against ``store`` with the driver's ``settings``. Parsing a stored
    version again (``reparse_outdated``) swaps renders in the asset folder in place: in-process only."""
    return RayIngest(
        job=job.with_options(reparse_outdated=False),
        store=store.uri,
        storage_options=dict(store.storage_options),
        settings=settings.model_dump(mode="json", exclude={"security", "storage"}),
        num_cpus=settings.cluster.cpus_per_doc,
        num_gpus=settings.cluster.gpus_per_doc,
    )
