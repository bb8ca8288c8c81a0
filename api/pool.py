"""A bounded worker pool for query work (``/v1/search``, ``/v1/context``, ``/v1/verify``).

FastAPI runs plain ``def`` endpoints on one shared thread pool (40 threads), so under load every
request, ``/v1/health`` included, queues behind retrieval and assembly, and the queue is
unbounded. Query routes instead hand their work to this pool: ``workers`` threads (the cores by
default: the work is CPU-bound, more threads only add GIL contention) and at most ``queue`` waiting
requests. Past that, ``submit`` fails at once with ``Overloaded`` (503 + ``Retry-After``), so a
client learns to back off in milliseconds instead of timing out after seconds.

With ``processes`` (``FOLIO_QUERY_PROCESSES``), search, context and verify run in that many worker
processes instead (``api.query_worker``; ``run_query``), so their Python runs on every core and the
event loop, which answers ``/v1/health``, no longer shares one interpreter lock with them. The
threads stay for the work that must see the server's own state (answers, MCP tools). Waiting
requests count against one capacity either way.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from folio.api.errors import Overloaded

if TYPE_CHECKING:
    from folio.api.settings import Settings

P = ParamSpec("P")
T = TypeVar("T")


class QueryPool:
    def __init__(self, workers: int, queue: int, *, retry_after: int = 1, processes: int = 0,
                 settings: Settings | None = None) -> None:
        if workers < 1 or queue < 0 or processes < 0:
            raise ValueError(f"need workers >= 1, queue >= 0 and processes >= 0, got {workers}, {queue}, {processes}")
        self.workers = max(workers, processes)
        self.capacity = self.workers + queue
        self.retry_after = retry_after
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="folio-query")
        self.processes: ProcessPoolExecutor | None = None
        if processes:
            # function-level: the worker module (store, retriever) loads only when queries run in processes
            from folio.api import query_worker

            if settings is None:
                raise ValueError("query processes need the settings to open the store with")
            # spawn, not fork: the server process already runs LanceDB's and ONNX Runtime's threads
            self.processes = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=query_worker.init, initargs=(settings,))
            for _ in range(processes):  # start them (and load their models) now, not on the first query
                self.processes.submit(query_worker.ready)
        self._lock = threading.Lock()
        self._pending = 0  # running + queued; decremented when the work ends, not when the client leaves

    @property
    def pending(self) -> int:
        return self._pending

    @property
    def full(self) -> bool:
        """Every worker busy and the queue full: a new query would get ``Overloaded``."""
        return self._pending >= self.capacity

    def overloaded(self) -> Overloaded:
        return Overloaded(
            f"server busy: {self.workers} query workers and {self.capacity - self.workers} queued "
            f"requests; retry in {self.retry_after} s",
            retry_after=self.retry_after,
        )

    def _done(self, _: Future[Any]) -> None:
        with self._lock:
            self._pending -= 1

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn`` on a worker thread (with the caller's context variables, e.g. the request id)."""
        ctx = contextvars.copy_context()
        call: Callable[[], T] = functools.partial(fn, *args, **kwargs)
        return await self._submit(self._executor, ctx.run, call)

    async def run_query(self, op: str, req_json: str | bytes, collections: frozenset[str] | None,
                        local: Callable[[], str]) -> str:
        """Query ``op`` (``api.query_ops``) in a worker process when the pool has them, else ``local()``
        on a worker thread. ``req_json``: the request as JSON, validated here or not yet (a large body
        passed on unparsed, ``api.offloop.ForwardedJSON``)."""
        if self.processes is None:
            return await self.run(local)
        # function-level: the worker module (store, retriever) loads only when queries run in processes
        from folio.api import query_worker

        return await self._submit(self.processes, query_worker.call, op, req_json, collections)

    async def _submit(self, executor: Executor, fn: Callable[..., T], *args: Any) -> T:
        with self._lock:
            if self._pending >= self.capacity:
                raise self.overloaded()
            self._pending += 1
        try:
            future: Future[T] = executor.submit(fn, *args)
        except BaseException:
            with self._lock:
                self._pending -= 1
            raise
        future.add_done_callback(self._done)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()  # the client went away: drop the work if it has not started
            raise

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        if self.processes is not None:
            self.processes.shutdown(wait=False, cancel_futures=True)
