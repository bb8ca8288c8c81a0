"""The MCP tools (``api.mcp.server``) over streamable HTTP at ``/mcp`` of the API app: stateless, JSON
responses, ``POST`` only, behind the REST API's keys (``api.http.deps``) and its query pool. The HTTP side of
the MCP server lives here, with the app, so that the MCP room needs nothing of HTTP.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from folio.api.errors import folio_error_response
from folio.api.http.deps import authenticate
from folio.api.http.middleware import read_body, replay
from folio.api.http.startup import service
from folio.api.keys import Principal
from folio.api.mcp.server import build_server
from folio.kernel.errors import FolioError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from folio.api.application import Folio
    from folio.settings import Settings

T = TypeVar("T")
PRINCIPAL_KEY = "folio_principal"  # where the HTTP mount leaves the caller in the ASGI scope's state
INVALID_REQUEST = -32600  # JSON-RPC 2.0


def mount(app: FastAPI, path: str = "/mcp") -> None:
    """Serve the tools over streamable HTTP at ``path`` of the API app, behind its keys and pool.

    The route is added to the app itself (not a sub-app mount), so the app's middleware (request
    ids, Host/Origin guard, body limits) applies; the MCP session manager runs inside the app's
    lifespan."""

    def folio() -> Folio:
        return service(app.state)  # opened in the app's lifespan; NotReady while it loads

    def principal(ctx: Context[Any, Any]) -> Principal:
        request = ctx.request_context.request
        found = getattr(request, "scope", {}).get("state", {}).get(PRINCIPAL_KEY)
        if not isinstance(found, Principal):  # never reached through the route below
            raise RuntimeError("MCP call without an authenticated caller")
        return found

    async def run(fn: Callable[[], T]) -> T:
        result: T = await app.state.query_pool.run(fn)
        return result

    settings: Settings = app.state.settings
    server = build_server(folio, run, principal, with_answer=bool(settings.llm.base_url and settings.llm.model))
    handler = _Authenticated(server, settings)
    # POST only. Stateless JSON mode has no sessions to delete and no server-initiated messages, so the
    # standalone GET event stream would stay open and silent for ever: the streamable-HTTP transport
    # lets a server answer that GET with 405 instead, which clients take as "no stream here".
    app.router.routes.append(Route(path, endpoint=handler, methods=["POST"]))

    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        # A session manager runs once: each start of the app (a test may start one app twice) gets its own.
        async with outer(a) as state, handler.start().run():
            yield state

    app.router.lifespan_context = lifespan


class _Authenticated:
    """The MCP endpoint: the REST API's key check (``api.http.deps``) in front of the SDK's streamable
    HTTP handler; the caller's principal goes into the scope's state for the tools."""

    def __init__(self, server: MCPServer[Any], settings: Settings) -> None:
        self.server = server
        self.settings = settings
        self.manager: StreamableHTTPSessionManager | None = None

    def start(self) -> StreamableHTTPSessionManager:
        """A fresh session manager (stateless, JSON responses) for one run of the app."""
        # Host and Origin are checked by folio's own middleware (api.http.middleware), for every route.
        self.server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=self.settings.server.max_request_bytes,
        )
        self.manager = self.server.session_manager
        return self.manager

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope)
        header = request.headers.get("x-api-key")
        auth = request.headers.get("authorization", "")
        bearer = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        try:
            caller = authenticate(request.app.state.keys, header, bearer)
        except FolioError as e:
            await folio_error_response(e)(scope, receive, send)
            return
        if self.manager is None:  # the app was not started (no lifespan): nothing can serve MCP
            raise RuntimeError("the MCP session manager runs in the app's lifespan, which has not started")
        scope.setdefault("state", {})[PRINCIPAL_KEY] = caller
        body = await read_body(receive, self.settings.server.max_request_bytes)  # measured by JsonBodyGuard
        if body is None:  # the client left
            return
        if _bad_id(body):
            message = "Invalid Request: a JSON-RPC id must be a string or an integer"
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
            await JSONResponse(error, status_code=400)(scope, receive, send)
            return
        await self.manager.handle_request(scope, replay(body, receive), send)


def _bad_id(body: bytes) -> bool:
    """Whether a message of ``body`` (one, or a batch) has an ``id`` that MCP does not allow: anything but a string
    or an integer (an object, an array, null, a boolean, a fraction). The SDK took such a request for a
    notification (its ``id`` ignored) and answered 202 with nothing (issue 44). The body is at most 1 MB and 20,000
    values (``api.http.body_limits``); one that is not JSON is the SDK's to answer (a parse error)."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    messages = parsed if isinstance(parsed, list) else [parsed]
    for m in messages:
        if isinstance(m, dict) and "id" in m:
            rid = m["id"]
            if not isinstance(rid, str) and (not isinstance(rid, int) or isinstance(rid, bool)):
                return True
    return False
