"""A bound on the model calls of ``POST /v1/answer``, apart from the query pool.

A model call waits on the network for seconds to minutes. Run on Starlette's shared thread pool,
eighty slow answers took every thread and starved unrelated routes (issue 20). Answers instead await
the endpoint on the event loop (no thread at all) under this gate: at most ``running`` calls at once
(``FOLIO_LLM_CONCURRENCY``) and ``queue`` more waiting (``FOLIO_LLM_QUEUE``). Past that an answer gets
``Overloaded`` (503 + ``Retry-After``, the same error as a full query pool) before any retrieval
work, and an answer that waits longer than its own deadline for a slot gets it too.

``reserve()`` takes a place (running or waiting) and returns a ``Slot``; ``async with slot:`` waits
for a running place, within a deadline; ``slot.release()`` gives the place back (idempotent, so a
stream can release it in ``finally`` whatever happened before).
"""

from __future__ import annotations

import asyncio
from types import TracebackType

from folio.api.errors import Overloaded


class ModelCalls:
    def __init__(self, running: int, queue: int, *, retry_after: int = 1) -> None:
        if running < 1 or queue < 0:
            raise ValueError(f"need running >= 1 and queue >= 0, got {running}, {queue}")
        self.running = running
        self.capacity = running + queue
        self.retry_after = retry_after
        self.pending = 0  # reserved: running + waiting (the event loop's thread only)
        self._sem: asyncio.Semaphore | None = None

    @property
    def full(self) -> bool:
        return self.pending >= self.capacity

    def overloaded(self) -> Overloaded:
        return Overloaded(
            f"server busy: {self.running} model calls running and {self.capacity - self.running} waiting; "
            f"retry in {self.retry_after} s",
            retry_after=self.retry_after,
        )

    def reserve(self) -> Slot:
        if self.full:
            raise self.overloaded()
        self.pending += 1
        return Slot(self)

    def semaphore(self) -> asyncio.Semaphore:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.running)
        return self._sem


class Slot:
    """One answer's place under ``ModelCalls``; ``async with slot.within(seconds):`` runs the call."""

    def __init__(self, gate: ModelCalls) -> None:
        self.gate = gate
        self.wait_s: float | None = None
        self._held = False
        self._released = False

    def within(self, seconds: float) -> Slot:
        """Wait at most ``seconds`` for a running place (then ``Overloaded``)."""
        self.wait_s = seconds
        return self

    async def __aenter__(self) -> Slot:
        try:
            async with asyncio.timeout(self.wait_s):
                await self.gate.semaphore().acquire()
        except TimeoutError:
            raise self.gate.overloaded() from None
        self._held = True
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._unhold()

    def _unhold(self) -> None:
        if self._held:
            self._held = False
            self.gate.semaphore().release()

    def release(self) -> None:
        """Give the place back (and the running place, if still held)."""
        self._unhold()
        if not self._released:
            self._released = True
            self.gate.pending -= 1
