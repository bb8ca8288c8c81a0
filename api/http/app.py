"""The FastAPI application: ``create_app(settings)``.

Resources live on ``app.state`` and are built once in ``lifespan``: the service (``api.application.Folio``:
the store, the retriever with MiniLM and CLIP / ColPali when configured, the visual indexers for
ingest, the ingest job runner) and the query pool. Routes reach them through ``api.http.deps``.

The viewer (``api/http/static``) is served by the same app at ``/viewer``; ``/`` redirects there. The API
docs (``/docs``, ``/redoc``: ``api.http.docs_pages``) load their scripts from this server, never from a CDN.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.util import find_spec
from pathlib import Path

from fastapi import Depends, FastAPI
from fastapi.responses import FileResponse, RedirectResponse

from folio._version import __version__
from folio.api.application import Folio
from folio.api.cluster.jobs import job_runner
from folio.api.errors import install_error_handlers
from folio.api.http.deps import canonical_ids
from folio.api.http.docs_pages import FilesWithHeaders, add_docs, security_headers
from folio.api.http.middleware import (
    HeadLimits,
    HostOriginGuard,
    JsonBodyGuard,
    KeyBeforeBody,
    RequestContext,
    ShedQueries,
    guard_options,
)
from folio.api.http.pool import QueryPool
from folio.api.http.routes import answer, batch, documents, health, jobs, query, regions
from folio.api.http.routes.health import HealthCache
from folio.api.http.startup import Hooks, Startup, in_daemon_thread
from folio.api.keys import KeyRing
from folio.settings import Settings, warn_unknown_env

logger = logging.getLogger(__name__)

# uvicorn's HTTP protocol for `folio serve` (and the tests' live servers): h11, even where httptools is
# installed. When a client keeps streaming an upload after its 413, uvicorn's httptools protocol parses
# the rest as a new request and resets the connection, and the client may never read the 413.
# `folio serve` runs it with a deadline on request headers (api.http.protocol).
HTTP_IMPL = "h11"

STATIC = Path(__file__).resolve().parent / "static"
# The viewer runs only its own scripts and styles (no inline ones), shows page images through blob:
# URLs, talks only to this server, and may not be framed by another site.
VIEWER_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# On /viewer and every file under /static: the page is framed by no other site whichever URL serves it
# (``/viewer`` or ``/static/index.html``).
VIEWER_HEADERS = security_headers(VIEWER_CSP)


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
    """Start the query pool and load the service (``_start``); with ``hooks.background`` (``folio serve``) the
    port opens first and ``/v1/health`` answers ``starting`` meanwhile (``api.http.startup``), else (tests, an
    embedding app) the app starts once everything is loaded. Stopping ends what started, also halfway."""
    settings: Settings = app.state.settings
    hooks: Hooks = app.state.hooks
    warn_unknown_env()  # a misspelled FOLIO_ variable would otherwise be ignored in silence
    app.state.startup = Startup()
    server = settings.server
    # The worker processes start now and load their own store and models while this process loads its own.
    pool = QueryPool(server.query_workers, server.query_queue, processes=server.query_processes or 0, settings=settings)
    app.state.query_pool = pool
    loading = asyncio.ensure_future(_start(app, pool))
    try:
        if not hooks.background:
            await loading  # what fails here fails the app's start
        yield
    finally:
        await _stop(app, pool, loading)


def _open_service(settings: Settings) -> tuple[Folio, HealthCache]:
    """Everything blocking of a start: the service with its models loaded and warmed by one query (and, on a
    machine's first start, the query encoder's ONNX export), the ingest indexers, the first health counts.
    Ingest jobs run on the Ray cluster when FOLIO_RAY_ADDRESS is set (api/cluster/jobs.py)."""
    folio = Folio.open(settings, jobs=job_runner(settings)).warm()
    folio.indexers  # noqa: B018 - loaded at startup, not by the first upload
    return folio, HealthCache(folio.counts)


async def _start(app: FastAPI, pool: QueryPool) -> None:
    settings: Settings = app.state.settings
    startup: Startup = app.state.startup
    hooks: Hooks = app.state.hooks
    try:
        folio, health = await in_daemon_thread(lambda: _open_service(settings))
        await pool.started()  # every query worker process has loaded its models and answered a warm-up query
    except Exception as e:
        startup.failed(e)
        logger.error("folio failed to start: %s", startup.error)
        if hooks.on_failed is not None:
            hooks.on_failed()
        raise
    app.state.folio, app.state.health = folio, health
    folio.start()
    # What startup loaded (the query encoder, the store's handles and caches) lives as long as the process: out
    # of the collector's scans, so that a full collection under load does not stall the event loop (and
    # /v1/health) for the 175 ms one took over them when torch was loaded too.
    gc.collect()
    gc.freeze()
    startup.ready()
    logger.info("folio ready after %.1f s: data=%s, %d query workers (%d processes), queue %d",
                startup.ready_after_s or 0.0, folio.uri, pool.workers, settings.server.query_processes or 0,
                settings.server.query_queue)
    if hooks.on_ready is not None:
        hooks.on_ready(startup)


async def _stop(app: FastAPI, pool: QueryPool, loading: asyncio.Future[None]) -> None:
    """End a start at any point: a load still under way is abandoned (its thread is a daemon: it does not hold
    the process), worker processes still loading are ended with the pool, and the service is closed."""
    startup: Startup = app.state.startup
    hooks: Hooks = app.state.hooks
    if startup.state != "failed":
        startup.stopping()
    loading.cancel()
    with contextlib.suppress(BaseException):
        await loading
    folio: Folio | None = getattr(app.state, "folio", None)
    try:
        if folio is not None:
            folio.close()
    finally:
        pool.shutdown()
        if hooks.on_stop is not None:
            hooks.on_stop()


def create_app(settings: Settings | None = None, hooks: Hooks | None = None) -> FastAPI:
    """Build the app; nothing heavy happens until the lifespan starts (``with TestClient(app)``,
    or uvicorn's startup). ``hooks``: how ``folio serve`` starts it (in the background, with a "ready"
    line and a server file; ``api.http.startup``)."""
    # /docs and /redoc from Swagger UI and ReDoc files installed with fastapi-offline, with security headers
    # (api.http.docs_pages), not from a CDN: the docs work on a machine without internet access.
    app = FastAPI(
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
        version=__version__,
        openapi_tags=TAGS,
        lifespan=lifespan,
        docs_url=None,  # both served by add_docs below
        redoc_url=None,
        # No 307 from `/x/` to `/x`: Starlette writes the Location from the decoded path, so `versions/%2E%2E/`
        # became `versions/..`, which a client that follows redirects resolved to the whole document (issue 44).
        redirect_slashes=False,
    )
    settings = settings or Settings()
    app.state.settings = settings
    app.state.hooks = hooks or Hooks()
    app.state.startup = Startup()  # replaced by each start of the lifespan
    app.state.keys = KeyRing(settings.security.keys_file, settings.security.api_key)
    install_error_handlers(app)
    _add_middleware(app, settings)
    routers = (*(m.router for m in (documents, batch, jobs, query, answer, regions)), documents.images, regions.images)
    for router in (*routers, health.router):
        app.include_router(router, prefix="/v1", dependencies=[Depends(canonical_ids)])

    app.mount("/static", FilesWithHeaders(directory=STATIC, headers=VIEWER_HEADERS), name="static")
    if find_spec("mcp") is not None:  # the [mcp] extra: the MCP tools at /mcp, behind the same keys
        from folio.api.http.mcp_mount import mount as mount_mcp  # function-level: the optional [mcp] extra

        mount_mcp(app)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/viewer")

    add_docs(app)

    @app.get("/viewer", include_in_schema=False)
    def viewer() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html", headers=VIEWER_HEADERS)

    return app


def _add_middleware(app: FastAPI, settings: Settings) -> None:
    """Added innermost first: the request context wraps everything, so even a refused Host or an oversized head
    gets a request id and an access-log line; a shed query has passed the Host and Origin checks; a request
    without a key is turned away before its body is read, and a body is measured before it is parsed."""
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
    app.add_middleware(HeadLimits)  # a head past its limits is refused before anything else reads it
    app.add_middleware(RequestContext)
