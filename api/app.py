"""The FastAPI application: ``create_app(settings)``.

Resources live on ``app.state`` and are built once in ``lifespan``: the service (``api.application.Folio``:
the store, the retriever with MiniLM and CLIP / ColPali when configured, the visual indexers for
ingest, the ingest job runner) and the query pool. Routes reach them through ``api.deps``.

The viewer (``api/static``) is served by the same app at ``/viewer``; ``/`` redirects there. The API
docs (``/docs``, ``/redoc``) load their scripts from this server, never from a CDN.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.util import find_spec
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from folio.api.application import Folio
from folio.api.cluster_jobs import job_runner
from folio.api.errors import install_error_handlers
from folio.api.keys import KeyRing
from folio.api.middleware import (
    HostOriginGuard,
    JsonBodyGuard,
    KeyBeforeBody,
    RequestContext,
    ShedQueries,
    guard_options,
)
from folio.api.pool import QueryPool
from folio.api.routes import answer, documents, health, jobs, query, regions
from folio.api.routes.health import HealthCache
from folio.api.settings import Settings, warn_unknown_env

logger = logging.getLogger(__name__)

# uvicorn's HTTP protocol for `folio serve` (and the tests' live servers): h11, even where httptools is
# installed. When a client keeps streaming an upload after its 413, uvicorn's httptools protocol parses
# the rest as a new request and resets the connection, and the client may never read the 413.
# `folio serve` runs it with a deadline on request headers (api.http_protocol).
HTTP_IMPL = "h11"

STATIC = Path(__file__).resolve().parent / "static"
# The viewer runs only its own scripts and styles (no inline ones), shows page images through blob:
# URLs, talks only to this server, and may not be framed by another site.
VIEWER_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
VIEWER_HEADERS = {
    "Content-Security-Policy": VIEWER_CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

TAGS = [
    {
        "name": "documents",
        "description": "Upload PDFs (ingested as jobs), list, inspect and delete versions, page images.",
    },
    {"name": "jobs", "description": "Ingest job status and progress."},
    {
        "name": "query",
        "description": "Search hits, cited context packages under a token budget, answer checks.",
    },
    {"name": "regions", "description": "What a citation points at: locators, text, images."},
    {"name": "health", "description": "Service status and which retrievers/models are active."},
]


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings: Settings = app.state.settings
    warn_unknown_env()  # a misspelled FOLIO_ variable would otherwise be ignored in silence
    # Loads the query encoder (and, on a machine's first start, exports its ONNX file), the tokenizers and
    # the ingest indexers now, not on the first request. Ingest jobs run on the Ray cluster when
    # FOLIO_RAY_ADDRESS is set (api/cluster_jobs.py).
    folio = Folio.open(settings, jobs=job_runner(settings)).warm()
    folio.indexers  # noqa: B018 - loaded at startup, not by the first upload
    app.state.folio = folio
    app.state.health = HealthCache(folio.counts)
    server = settings.server
    pool = QueryPool(server.query_workers, server.query_queue, processes=server.query_processes or 0, settings=settings)
    app.state.query_pool = pool
    folio.start()
    logger.info("folio ready: data=%s, %d query workers (%d processes), queue %d", folio.store.uri, pool.workers,
                settings.server.query_processes or 0, settings.server.query_queue)
    # What startup loaded (the query encoder, torch, transformers: about 320,000 objects) lives as long
    # as the process: out of the collector's scans, so that a full collection under load does not stall
    # the event loop (and /v1/health) for the 175 ms one takes over them.
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        folio.close()
        pool.shutdown()


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; nothing heavy happens until the lifespan starts (``with TestClient(app)``,
    or uvicorn's startup)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        app_version = version("folio")
    except PackageNotFoundError:
        app_version = "0"
    # /docs and /redoc from Swagger UI and ReDoc files installed with fastapi-offline (served at
    # /static-offline-docs), not from a CDN: the docs work on a machine without internet access.
    app = FastAPIOffline(
        title="folio",
        summary="PDFs in; cited, budgeted LLM context out.",
        description=(
            "Ingest PDFs, retrieve text, tables, figures and pages, and get a context package packed under a "
            "token budget whose citation ids resolve to page and region locators of a specific document "
            'version. Errors are always `{"error": {"code", "message", "detail"?, "request_id"}}`; every '
            "response carries `X-Request-ID`. When the server has keys (`FOLIO_KEYS_FILE`, or the legacy "
            "`FOLIO_API_KEY`), `/v1` endpoints (except `/v1/health`) need `X-API-Key: <key>` or "
            "`Authorization: Bearer <key>`; image endpoints also accept `?key=`. A key sees only its "
            "collections (anything else is a 404, like an unknown id) and a read key cannot upload or "
            "delete (403). Only configured `Host` "
            "names are served (`FOLIO_ALLOWED_HOSTS`), and state-changing requests from another origin "
            "are refused unless it is in `FOLIO_CORS_ORIGINS`. Query endpoints answer 503 with "
            "`Retry-After` when every worker is busy and the queue is full."
        ),
        version=app_version,
        openapi_tags=TAGS,
        lifespan=lifespan,
    )
    settings = settings or Settings()
    app.state.settings = settings
    app.state.keys = KeyRing(settings.security.keys_file, settings.security.api_key)
    install_error_handlers(app)
    # Added innermost first: the request context wraps everything, so even a refused Host gets a
    # request id and an access-log line; a shed query has passed the Host and Origin checks; a
    # request without a key is turned away before its body is read, and a body is measured before it is parsed.
    app.add_middleware(JsonBodyGuard, max_body_bytes=settings.server.max_request_bytes)
    app.add_middleware(KeyBeforeBody)
    app.add_middleware(ShedQueries)
    app.add_middleware(HostOriginGuard, **guard_options(settings))
    if settings.security.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.security.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type", "X-Request-ID"],
            expose_headers=["X-Request-ID", "Retry-After", "Location"],
        )
    app.add_middleware(RequestContext)
    for module in (documents, jobs, query, answer, regions):
        app.include_router(module.router, prefix="/v1")
    app.include_router(documents.images, prefix="/v1")
    app.include_router(regions.images, prefix="/v1")
    app.include_router(health.router, prefix="/v1")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    if find_spec("mcp") is not None:  # the [mcp] extra: the MCP tools at /mcp, behind the same keys
        from folio.api.mcp_server import mount as mount_mcp

        mount_mcp(app)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/viewer")

    @app.get("/viewer", include_in_schema=False)
    def viewer() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html", headers=VIEWER_HEADERS)

    return app
