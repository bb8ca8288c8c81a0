"""Service health: counts, and which retrievers and models are on (and why the others are off); readiness.

``/v1/health`` is a liveness probe, so it must answer while every query worker is busy, and while the server
is still loading (``state: starting``; ``api.http.startup``): it is an ``async def`` that does no blocking work.
``/v1/ready`` is the readiness probe: 200 once a query will be fast. The store counts (a LanceDB read) come
from a snapshot that a background thread refreshes when it is older than ``HealthCache.max_age`` seconds; the
reply does not wait for that refresh, except on the first call after an idle spell (a snapshot older
than ``HealthCache.idle_s``), which waits for it a bounded time so that it does not report counts
from before the idle spell.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Query, Request

from folio._version import __version__
from folio.api.http.startup import Startup
from folio.api.schemas import ErrorResponse, HealthOut, HealthProofOut, ReadyOut
from folio.kernel.handshake import NONCE_PATTERN, instance_proof
from folio.kernel.model import PARSER_VERSION
from folio.settings import Settings

if TYPE_CHECKING:
    from folio.api.application import Folio

logger = logging.getLogger(__name__)

router = APIRouter(tags=["health"])


class HealthCache:
    """The expensive parts of ``/v1/health``: computed once at startup, refreshed in the background."""

    def __init__(self, compute: Callable[[], dict[str, int]], max_age: float = 2.0, idle_s: float = 10.0,
                 idle_wait_s: float = 2.0) -> None:
        self.version = __version__
        self._compute = compute
        self.max_age = max_age
        self.idle_s = idle_s
        self.idle_wait_s = idle_wait_s
        self._lock = threading.Lock()
        self._refreshing: asyncio.Future[None] | None = None
        self.counts = compute()
        self.at = time.monotonic()

    def _refresh(self) -> None:
        try:
            counts = self._compute()
        except Exception:  # keep serving the last snapshot; the failure is logged, not hidden
            logger.exception("health: refreshing the store counts failed")
        else:
            self.counts, self.at = counts, time.monotonic()
        finally:
            with self._lock:
                self._refreshing = None

    def refresh_if_stale(self) -> asyncio.Future[None] | None:
        """Start a refresh on the loop's default executor when the snapshot is old; never waits.
        The refresh under way, if any."""
        with self._lock:
            if self._refreshing is None and time.monotonic() - self.at >= self.max_age:
                self._refreshing = asyncio.get_running_loop().run_in_executor(None, self._refresh)
            return self._refreshing

    async def current(self) -> dict[str, int]:
        """The counts. A snapshot from before an idle spell (older than ``idle_s``: nobody asked for a
        while, and documents may have come and gone since) is refreshed first, waiting at most
        ``idle_wait_s``; otherwise the snapshot, refreshed in the background when stale."""
        idle = time.monotonic() - self.at >= self.idle_s
        refresh = self.refresh_if_stale()
        if idle and refresh is not None and refresh.get_loop() is asyncio.get_running_loop():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(refresh), self.idle_wait_s)
        return self.counts


@router.get("/health", summary="Liveness: state (starting, ready), counts, active retrievers and models",
            response_model=HealthOut)
async def health(request: Request) -> HealthOut:
    """Open without an API key (it shows no document content), and answered from the server's first moment:
    ``state`` says whether it is still ``starting`` (then counts, jobs and retrieval are empty) or ``ready``.
    ``counts`` may be up to a few seconds old; only the first call after an idle spell waits (at most 2 s) for
    fresh ones."""
    startup: Startup = request.app.state.startup
    settings: Settings = request.app.state.settings
    auth = request.app.state.keys.enabled
    folio: Folio | None = getattr(request.app.state, "folio", None)
    if folio is None:
        return HealthOut(status="ok", state=startup.state, instance=startup.instance, version=__version__,
                         parser_version=PARSER_VERSION, counts={}, jobs={}, retrieval={},
                         tokenizer=settings.context.tokenizer, auth=auth)
    cache: HealthCache = request.app.state.health
    counts = await cache.current()
    out = folio.health(counts=counts, version=cache.version, auth=auth)
    return out.model_copy(update={"state": startup.state, "instance": startup.instance})


@router.get("/health/proof", summary="Proofs for folio's CLI: this server wrote its data directory's server file, "
            "and holds a key", response_model=HealthProofOut,
            responses={422: {"model": ErrorResponse, "description": "a nonce or tag that is not 64 hex digits"}})
async def health_proof(
    request: Request,
    nonce: Annotated[str, Query(pattern=NONCE_PATTERN, description="64 hex digits, fresh for each call")],
    key_tag: Annotated[str | None, Query(pattern=NONCE_PATTERN, description="names a key without sending it")] = None,
) -> HealthProofOut:
    """Open without an API key: it reveals nothing a caller did not already hold. ``instance_proof`` shows that
    this server holds the secret of the ``server.json`` it wrote (readable by its user only); ``key_proof``, that
    it holds the key ``key_tag`` names. A command on the data directory sends its question, and its key, only
    after checking both (``api.cli.discovery``; the protocol is ``folio.kernel.handshake``)."""
    startup: Startup = request.app.state.startup
    keys = request.app.state.keys
    proved = await asyncio.to_thread(keys.prove, nonce, key_tag) if key_tag and keys.enabled else None
    return HealthProofOut(state=startup.state, auth=keys.enabled, instance_proof=instance_proof(startup.secret, nonce),
                          key_proof=proved)


@router.get(
    "/ready",
    summary="Readiness: 200 once queries are fast, 503 while starting or stopping",
    response_model=ReadyOut,
    responses={503: {"model": ErrorResponse, "description": "starting (with Retry-After) or stopping"}},
)
async def ready(request: Request) -> ReadyOut:
    """Open without an API key. 200 when the store and models are loaded and warmed by a query (in the server
    and in every query worker process), else 503 ``not_ready`` with ``Retry-After``: a load balancer or
    container platform sends queries only to a server that answers them fast."""
    startup: Startup = request.app.state.startup
    if startup.state != "ready":
        raise startup.not_ready()
    return ReadyOut(state="ready", ready_after_s=startup.ready_after_s or 0.0)
