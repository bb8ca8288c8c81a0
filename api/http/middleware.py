"""HTTP hardening around the routes, as plain ASGI middleware (no ``BaseHTTPMiddleware``: that
buffers and runs the app in another task, which breaks streaming uploads and context variables).

Outermost first:

- ``RequestContext``: gives each request an id (a sane ``X-Request-ID`` from the client, else a
  new one), returns it in ``X-Request-ID`` and in every error body, writes one access-log line per
  request (method, path, status, duration, id) and answers an unhandled exception itself with the
  standard 500 body. Answering it here, instead of letting it escape to uvicorn, keeps the
  keep-alive connection usable: uvicorn closes the socket, without ``Connection: close``, when an
  exception leaves the app after the response was sent.
- ``HeadLimits``: a request head over ``MAX_HEAD_BYTES``, a header over ``MAX_HEADER_BYTES`` or more than
  ``MAX_HEADERS`` headers (``api.http.protocol``) gets its ``431`` before anything reads it.
- ``HostOriginGuard``: only ``Host`` values the server was configured for (DNS rebinding), no
  state-changing request from another site (a web page can ``POST`` a form or a ``no-cors`` fetch
  to a loopback server), and a size limit on every request body but uploads' (which have their own),
  whatever the ``Content-Type``.
- ``ShedQueries``: while the query pool is full, a query (``/v1/search``, ``/v1/context``,
  ``/v1/verify``) gets its ``503`` + ``Retry-After`` before its body is read, parsed and validated.
- ``KeyBeforeBody``: when the server has keys, a request without a valid one gets its ``401``
  before its body is read.
- ``JsonBodyGuard``: reads every body but an upload's, and refuses one past its route's limits on
  bytes, JSON values and nesting (``api.http.body_limits``) before anything parses it.

CORS (``FOLIO_CORS_ORIGINS``) sits between them when configured: see ``api.http.app.create_app``.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from folio.api.errors import REQUEST_ID, error_response, folio_error_response, internal_error_response
from folio.api.http.body_limits import BodyLimits, limits_for, refusal
from folio.api.http.deps import authenticate
from folio.api.http.offloop import OFF_LOOP_BYTES
from folio.api.http.protocol import MAX_HEAD_BYTES, MAX_HEADER_BYTES, MAX_HEADERS
from folio.kernel.errors import FolioError
from folio.settings import Settings

logger = logging.getLogger(__name__)
access_log = logging.getLogger(f"{__name__}.access")

_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,128}\Z")
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})
_ANY_INTERFACE = frozenset({"0.0.0.0", "::", "[::]", ""})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


class RequestContext:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = _header(scope, b"x-request-id")
        request_id = given if given and _REQUEST_ID_RE.match(given) else uuid.uuid4().hex
        token = REQUEST_ID.set(request_id)
        started = time.perf_counter()
        status = 0

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            logger.exception("unhandled error in %s %s (request %s)", scope["method"], scope["path"], request_id)
            if status:  # the response had started: all we can do is end the connection
                raise
            await internal_error_response(exc)(scope, receive, send_with_id)
        finally:
            REQUEST_ID.reset(token)
            client = scope.get("client")
            access_log.info(
                '%s "%s %s" %d %.1fms id=%s',
                f"{client[0]}:{client[1]}" if client else "-",
                scope["method"],
                scope["path"],
                status,
                (time.perf_counter() - started) * 1000,
                request_id,
            )


class HeadLimits:
    """``431 limit_exceeded`` for a request whose head is past a limit of ``api.http.protocol``, under any server
    (h11 measures only a head that arrives in more than one read, and has no limit on one header or their
    number): a 60 KB header or 10,000 headers reached the routes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = head_refusal(scope)
            if refused is not None:
                await error_response(431, "limit_exceeded", refused)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def head_refusal(scope: Scope) -> str | None:
    """Why the request's head is too large, or None. A header counts its name and value; the head, the request
    line and every header line (``name: value`` and its line break)."""
    headers = scope.get("headers", ())
    if len(headers) > MAX_HEADERS:
        return f"request has {len(headers)} headers, over the limit of {MAX_HEADERS}"
    head = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"") + 16
    for name, value in headers:
        size = len(name) + len(value)
        if size > MAX_HEADER_BYTES:
            shown = name[:64].decode("latin-1")
            return f"request header {shown!r} is {size} bytes, over the limit of {MAX_HEADER_BYTES}"
        head += size + 4
    if head > MAX_HEAD_BYTES:
        return f"request head is {head} bytes, over the limit of {MAX_HEAD_BYTES}"
    return None


QUERY_PATHS = frozenset({"/v1/search", "/v1/context", "/v1/verify"})
UPLOAD_PATHS = frozenset({"/v1/documents", "/v1/documents/batch"})  # each streams to its own limit


class ShedQueries:
    """Under overload most requests are the ones being turned away (at 100 clients on 2 cores, about
    four 503s per query served), and the server process that turns them away also answers
    ``/v1/health``. Answering them before routing, key checks and body validation keeps each one to a
    few tens of microseconds; the route still sheds any that slip past between the check and the queue
    (``api.http.pool.QueryPool``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] in QUERY_PATHS:
            pool = getattr(scope["app"].state, "query_pool", None)
            if pool is not None and pool.full:
                await folio_error_response(pool.overloaded())(scope, receive, send)
                return
        await self.app(scope, receive, send)


OPEN_PATHS = frozenset({"/v1/health", "/v1/health/proof", "/v1/ready"})
_NO_BODY_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _keyed_path(path: str) -> bool:
    """Paths behind the keys: ``/v1/...`` (except ``/v1/health``, its proof and ``/v1/ready``) and ``/mcp``."""
    return (path.startswith("/v1/") and path not in OPEN_PATHS) or path == "/mcp" or path.startswith("/mcp/")


def _candidate_keys(scope: Scope) -> list[str | None]:
    """The secrets a request offers in its headers (the query-string key is for image GETs only)."""
    auth = _header(scope, b"authorization") or ""
    scheme, _, rest = auth.partition(" ")
    bearer = rest if scheme.lower() == "bearer" else None
    return [_header(scope, b"x-api-key"), bearer, bearer.strip() if bearer else None]


class KeyBeforeBody:
    """When the server has keys, a request that may carry a body (any method but ``GET``, ``HEAD``
    and ``OPTIONS``) to a keyed path gets its ``401`` before a byte of its body is read: FastAPI
    reads and parses a body before the route's key dependency runs. The route's own check
    (``api.http.deps.require_key``) still decides access; this one only turns away callers without a key."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in _NO_BODY_METHODS and _keyed_path(scope["path"]):
            ring = scope["app"].state.keys
            try:
                authenticate(ring, *_candidate_keys(scope))
            except FolioError as e:
                await folio_error_response(e)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class JsonBodyGuard:
    """Reads the body of every request that may carry one (uploads excepted: they stream to their own
    limit), measures it (``api.http.body_limits.json_shape``) and answers 413 or 400 when it is past its
    route's ``BodyLimits``; otherwise hands the app the body it read. The app parses only what the
    guard let through, so no single request can hold the interpreter lock for long while it is
    parsed. A body over ``OFF_LOOP_BYTES`` is measured on the query pool (numpy lets the event loop
    run meanwhile). Innermost: a caller without a key never gets its body read."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in STATE_CHANGING or scope["path"] in UPLOAD_PATHS:
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        limits = limits_for(path, self.max_body_bytes)
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > limits.max_bytes:
            await _too_large(limits, path)(scope, receive, send)
            return
        try:
            body = await read_body(receive, limits.max_bytes)
            if body is None:  # the client left before sending all of it
                return
            refused = await _measure(scope, body, limits)
        except StarletteHTTPException as e:  # HostOriginGuard's limit, for a body without Content-Length
            await error_response(e.status_code, "limit_exceeded", str(e.detail))(scope, receive, send)
            return
        except FolioError as e:  # a full query pool
            await folio_error_response(e)(scope, receive, send)
            return
        if refused is not None:
            status, code, message = refused
            await error_response(status, code, message)(scope, receive, send)
            return
        await self.app(scope, replay(body, receive), send)


def _too_large(limits: BodyLimits, path: str) -> Any:
    message = f"request body is over the limit of {limits.max_bytes} bytes for {path}"
    return error_response(413, "limit_exceeded", message)


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, at most ``limit + 1`` bytes of it (enough to refuse), or None on a disconnect."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if size > limit or not message.get("more_body", False):
            return b"".join(chunks)


async def _measure(scope: Scope, body: bytes, limits: BodyLimits) -> tuple[int, str, str] | None:
    """``body_limits.refusal`` here for a small body, on the query pool for a large one."""
    pool = getattr(scope["app"].state, "query_pool", None)
    if len(body) <= OFF_LOOP_BYTES or pool is None:
        return refusal(body, limits, scope["path"])
    found: tuple[int, str, str] | None = await pool.run(refusal, body, limits, scope["path"])
    return found


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app ``body`` in one message, then whatever the client sends next
    (its disconnect: an answer being written stops when its client leaves)."""
    sent = False

    async def next_message() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return next_message


def _host_name(host: str) -> str:
    """``Host`` without the port, lowercased: ``[::1]:8000`` → ``[::1]``, ``a.b:80`` → ``a.b``."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end > 0 else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def allowed_host_names(bound_host: str, extra: Iterable[str]) -> frozenset[str] | None:
    """The ``Host`` names accepted: loopback, the bound host (unless it is every interface) and
    ``extra``; ``None`` when ``extra`` has ``*`` (no check)."""
    extra = [h.strip().lower() for h in extra if h.strip()]
    if "*" in extra:
        return None
    names = set(LOOPBACK_HOSTS) | {_host_name(h) for h in extra}
    bound = bound_host.strip().lower()
    if bound not in _ANY_INTERFACE:
        names.add(f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound)
    return frozenset(names)


def _origin_netloc(origin: str) -> str | None:
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return parts.netloc.lower()


class HostOriginGuard:
    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: frozenset[str] | None,
        cors_origins: Iterable[str] = (),
        max_body_bytes: int,
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.cors_origins = frozenset(o.rstrip("/").lower() for o in cors_origins)
        self.max_body_bytes = max_body_bytes

    def _refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        host = _header(scope, b"host")
        if self.allowed_hosts is not None and (host is None or _host_name(host) not in self.allowed_hosts):
            shown = (host or "")[:100]
            return (
                400,
                "invalid_host",
                f"Host {shown!r} is not served here; add it to FOLIO_ALLOWED_HOSTS if it should be",
            )
        if scope["method"] not in STATE_CHANGING:
            return None
        # A browser says where a request comes from; other clients send neither header.
        origin = _header(scope, b"origin")
        site = _header(scope, b"sec-fetch-site")
        if origin is not None:
            netloc = _origin_netloc(origin)
            same = netloc is not None and host is not None and netloc == host.strip().lower()
            if not same and origin.rstrip("/").lower() not in self.cors_origins:
                return 403, "forbidden_origin", f"cross-site request from origin {origin[:100]!r} refused"
        elif site is not None and site not in ("same-origin", "none"):
            return 403, "forbidden_origin", f"cross-site request refused (Sec-Fetch-Site: {site[:40]})"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            status, code, message = refusal
            await error_response(status, code, message)(scope, receive, send)
            return
        if scope["method"] == "POST" and scope["path"] in UPLOAD_PATHS:
            # Uploads enforce FOLIO_MAX_UPLOAD_BYTES themselves, as they stream (api.http.routes.documents).
            # Every other route has this limit, whatever its Content-Type says.
            await self.app(scope, receive, send)
            return
        limit = self.max_body_bytes
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            await error_response(413, "limit_exceeded", f"request body is over the limit of {limit} bytes")(
                scope, receive, send
            )
            return
        seen = 0

        # Counted as the body streams, so a chunked body (no Content-Length) is cut off at the limit too.
        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise StarletteHTTPException(413, f"request body is over the limit of {limit} bytes")
            return message

        await self.app(scope, limited_receive, send)


def guard_options(settings: Settings) -> dict[str, Any]:
    """``HostOriginGuard`` keyword arguments from ``Settings``."""
    return {
        "allowed_hosts": allowed_host_names(settings.server.host, settings.security.allowed_hosts),
        "cors_origins": settings.security.cors_origins,
        "max_body_bytes": settings.server.max_request_bytes,
    }
