"""Service health: counts, and which retrievers and models are on (and why the others are off).

``/v1/health`` is a liveness probe, so it must answer while every query worker is busy: it is an
``async def`` that does no blocking work. The store counts (a LanceDB read) come from a snapshot
that a background thread refreshes when it is older than ``HealthCache.max_age`` seconds; the
reply never waits for that refresh.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request

from api.deps import JobsDep, SettingsDep
from api.schemas import HealthOut
from ingest.model import PARSER_VERSION
from ingest.store import Store

logger = logging.getLogger(__name__)

router = APIRouter(tags=["health"])


def _folio_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("folio")
    except PackageNotFoundError:
        return "unknown"


def store_counts(store: Store) -> dict[str, int]:
    versions = store.list_versions()
    return {
        "documents": sum(1 for v in versions if v.latest),
        "versions": len(versions),
        "regions": sum(v.regions for v in versions),
        "pages": sum(v.pages for v in versions if v.latest),
    }


class HealthCache:
    """The expensive parts of ``/v1/health``: computed once at startup, refreshed in the background."""

    def __init__(self, compute: Callable[[], dict[str, int]], max_age: float = 2.0) -> None:
        self.version = _folio_version()
        self._compute = compute
        self.max_age = max_age
        self._lock = threading.Lock()
        self._refreshing = False
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
                self._refreshing = False

    def refresh_if_stale(self) -> None:
        """Start a refresh on the loop's default executor when the snapshot is old; never waits."""
        with self._lock:
            if self._refreshing or time.monotonic() - self.at < self.max_age:
                return
            self._refreshing = True
        asyncio.get_running_loop().run_in_executor(None, self._refresh)


@router.get("/health", summary="Status, counts, active retrievers and models", response_model=HealthOut)
async def health(request: Request, jobs: JobsDep, settings: SettingsDep) -> HealthOut:
    """Open without an API key (it shows no document content). ``counts`` may be up to a few
    seconds old: the probe never waits for the store."""
    cache: HealthCache = request.app.state.health
    cache.refresh_if_stale()
    retrieval: dict[str, Any] = request.app.state.retriever.status()  # attribute reads only
    return HealthOut(
        status="ok",
        version=cache.version,
        parser_version=PARSER_VERSION,
        counts=cache.counts,
        jobs=jobs.counts(),
        retrieval=retrieval,
        tokenizer=settings.tokenizer,
        auth=request.app.state.keys.enabled,
    )
