"""A bounded worker pool for query work (``/v1/search``, ``/v1/context``, ``/v1/verify``).

FastAPI runs plain ``def`` endpoints on one shared thread pool (40 threads), so under load every
request, ``/v1/health`` included, queues behind retrieval and assembly, and the queue is
unbounded. Query routes instead hand their work to this pool: ``workers`` threads (the cores by
default: the work is CPU-bound, more threads only add GIL contention) and at most ``queue`` waiting
requests. Past that, ``submit`` fails at once with ``Overloaded`` (503 + ``Retry-After``), so a
client learns to back off in milliseconds instead of timing out after seconds.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

from api.errors import Overloaded

P = ParamSpec("P")
T = TypeVar("T")


class QueryPool:
    def __init__(self, workers: int, queue: int, *, retry_after: int = 1) -> None:
        if workers < 1 or queue < 0:
            raise ValueError(f"need workers >= 1 and queue >= 0, got {workers} and {queue}")
        self.workers = workers
        self.capacity = workers + queue
        self.retry_after = retry_after
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="folio-query")
        self._lock = threading.Lock()
        self._pending = 0  # running + queued; decremented when the work ends, not when the client leaves

    @property
    def pending(self) -> int:
        return self._pending

    def _done(self, _: Future[Any]) -> None:
        with self._lock:
            self._pending -= 1

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn`` on a worker (with the caller's context variables, e.g. the request id)."""
        with self._lock:
            if self._pending >= self.capacity:
                raise Overloaded(
                    f"server busy: {self.workers} query workers and {self.capacity - self.workers} queued "
                    f"requests; retry in {self.retry_after} s",
                    retry_after=self.retry_after,
                )
            self._pending += 1
        ctx = contextvars.copy_context()
        try:
            call: Callable[[], T] = functools.partial(fn, *args, **kwargs)
            future: Future[T] = self._executor.submit(ctx.run, call)
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
