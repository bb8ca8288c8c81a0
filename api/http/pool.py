"""A bounded worker pool for query work (``/v1/search``, ``/v1/context``, ``/v1/verify``).

FastAPI runs plain ``def`` endpoints on one shared thread pool (40 threads), so under load every
request, ``/v1/health`` included, queues behind retrieval and assembly, and the queue is
unbounded. Query routes instead hand their work to this pool: ``workers`` threads (the cores by
default: the work is CPU-bound, more threads only add GIL contention) and at most ``queue`` waiting
requests. Past that, ``submit`` fails at once with ``Overloaded`` (503 + ``Retry-After``), so a
client learns to back off in milliseconds instead of timing out after seconds.

With ``processes`` (``FOLIO_QUERY_PROCESSES``), search, context and verify run in that many worker
processes instead (``api.http.query_worker``; ``run_query``), so their Python runs on every core and the
event loop, which answers ``/v1/health``, no longer shares one interpreter lock with them. The
threads stay for the work that must see the server's own state (answers, MCP tools). Waiting
requests count against one capacity either way.

Large request bodies are parsed in a process too (``parse``; ``api.http.offloop``): in a worker process, or,
without them, in one body-parsing process started by the first such body.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from folio.api.errors import Overloaded

if TYPE_CHECKING:
    from folio.settings import Settings

P = ParamSpec("P")
T = TypeVar("T")


class QueryPool:
    def __init__(
        self, workers: int, queue: int, *, retry_after: int = 1, processes: int = 0, settings: Settings | None = None
    ) -> None:
        if workers < 1 or queue < 0 or processes < 0:
            raise ValueError(f"need workers >= 1, queue >= 0 and processes >= 0, got {workers}, {queue}, {processes}")
        self.workers = max(workers, processes)
        self.capacity = self.workers + queue
        self.retry_after = retry_after
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="folio-query")
        self.processes: ProcessPoolExecutor | None = None
        if processes:
            # function-level: the worker module (store, retriever) loads only when queries run in processes
            from folio.api.http import query_worker

            if settings is None:
                raise ValueError("query processes need the settings to open the store with")
            # spawn, not fork: the server process already runs LanceDB's and ONNX Runtime's threads. Each
            # worker is told this process's id, to leave as soon as it is gone (query_worker.init).
            self.processes = ProcessPoolExecutor(
                processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=query_worker.init,
                initargs=(settings, os.getpid()),
            )
            for _ in range(processes):  # start them (and load their models) now, not on the first query
                self.processes.submit(query_worker.ready)
        self.process_count = processes
        self._parser: ProcessPoolExecutor | None = None  # without processes: started by the first large body
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

    async def run_query(
        self, op: str, req_json: str | bytes, collections: frozenset[str] | None, local: Callable[[], str]
    ) -> str:
        """Query ``op`` (``api.http.query_ops``) in a worker process when the pool has them, else ``local()``
        on a worker thread. ``req_json``: the request as JSON, validated here or not yet (a large body
        passed on unparsed, ``api.http.offloop.ForwardedJSON``)."""
        if self.processes is None:
            return await self.run(local)
        # function-level: the worker module (store, retriever) loads only when queries run in processes
        from folio.api.http import query_worker

        return await self._submit(self.processes, query_worker.call, op, req_json, collections)

    async def parse(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn`` in another process: a worker process when the pool has them, else the body parser, one process
        started on first use. For work that holds the interpreter lock for its whole length (``json.loads``
        and pydantic-core over a large body): on a thread it would hold up the event loop as long. ``fn``, its
        arguments and its result cross pickled. A parser that died (killed) is replaced on the next call."""
        executor = self.processes or self._body_parser()
        try:
            return await self._submit(executor, functools.partial(fn, *args, **kwargs))
        except BrokenProcessPool:
            with self._lock:
                if self._parser is executor:
                    self._parser = None
            raise self.overloaded() from None

    def _body_parser(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._parser is None:
                from folio.api.http import query_worker  # function-level: its watcher, see __init__

                # spawn, as the worker processes; it leaves when this process is gone (exit_with_parent)
                self._parser = ProcessPoolExecutor(
                    1,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=query_worker.exit_with_parent,
                    initargs=(os.getpid(),),
                )
            return self._parser

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

    async def started(self, poll_s: float = 0.2) -> None:
        """Return once every worker process has loaded its models and answered its warm-up query
        (``query_worker.init``). A worker takes tasks only after its initializer, so the workers that
        answer ``ready`` are the ready ones; this asks until each has answered."""
        if self.processes is None:
            return
        from folio.api.http import query_worker  # function-level: loaded with the processes (above)

        seen: set[int] = set()
        while len(seen) < self.process_count:
            asked = [self.processes.submit(query_worker.ready) for _ in range(self.process_count)]
            seen.update(await asyncio.gather(*(asyncio.wrap_future(f) for f in asked)))
            if len(seen) < self.process_count:
                await asyncio.sleep(poll_s)

    def shutdown(self) -> None:
        """Stop taking work and end the worker processes now, also those still loading. The process pool's
        own shutdown only queues a stop that a worker reads after its initializer: a server stopped while
        its workers loaded left them running, with the resource tracker, for as long as they loaded and
        then some (issue 31); a query in flight at shutdown has no client left to answer."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        for executor in (self.processes, self._parser):
            if executor is not None:
                _end(executor)


def _end(executor: ProcessPoolExecutor) -> None:
    """Stop ``executor`` and end its processes now."""
    # ProcessPoolExecutor has no public way to end its workers before Python 3.14 (terminate_workers);
    # _processes is the pid -> Process map it has kept since 3.2.
    workers = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for p in workers:
        if p.is_alive():
            p.terminate()
    for p in workers:
        p.join(timeout=5)
    # Its manager thread closes its wake-up pipe when it sees the workers gone; at exit, Python 3.11's
    # _python_exit writes to that pipe, and a close still under way makes that write an EBADF traceback on
    # stderr (CI saw one from a server that failed to load). Let the manager finish first.
    manager = getattr(executor, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(timeout=5)
