"""The API reference pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), with the security headers the viewer
has: a Content-Security-Policy, ``X-Frame-Options: DENY``, ``nosniff`` and ``no-referrer`` (issue 44: ``/docs``
had none). Their scripts and styles are fastapi-offline's copies, served here at ``/static-offline-docs`` with the
same headers, never from a CDN: the docs work on a machine without internet access.

Swagger UI starts from one inline script (FastAPI's page); the policy allows that script by its sha256, computed
from the page as served, and no other inline script. Both bundles inject styles at run time (``'unsafe-inline'``
for styles only). Neither page may be framed, post a form elsewhere or fetch from another host.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

DOCS_STATIC = Path(fastapi_offline.__file__).resolve().parent / "static"
DOCS_STATIC_URL = "/static-offline-docs"

# What both pages may load: scripts and the OpenAPI document from this server, the styles the bundles inject,
# images from here or inline, ReDoc's search worker (a blob: URL). ReDoc's sidebar logo at cdn.redoc.ly is not
# fetched. ``{scripts}``: the hashes of the page's own inline scripts.
_DOCS_CSP = (
    "default-src 'self'; script-src 'self'{scripts}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
REDOC_CSP = _DOCS_CSP.format(scripts="")
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def security_headers(csp: str) -> dict[str, str]:
    """The headers of every page folio serves: ``csp``, and no framing, sniffing or referrer."""
    return {
        "Content-Security-Policy": csp,
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }


def page_csp(html: str) -> str:
    """The docs policy for ``html``: its inline scripts (``<script>`` without ``src``) allowed by their sha256.

    >>> page_csp("<script>go()</script>").split("; ")[1]
    "script-src 'self' 'sha256-5KYv+PUboo5h+0+YAtGRPbwv5d/QxzHslP4YGnUaxRw='"
    """
    digests = (base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() for s in _INLINE_SCRIPT.findall(html))
    return _DOCS_CSP.format(scripts="".join(f" 'sha256-{d}'" for d in digests))


class FilesWithHeaders(StaticFiles):
    """Static files with ``headers`` on every response, whichever file and status."""

    def __init__(self, *, directory: Path, headers: dict[str, str]) -> None:
        super().__init__(directory=directory)
        self.headers = headers

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(self.headers)
        return response


def _page(body: Any) -> HTMLResponse:
    html = bytes(body).decode()
    return HTMLResponse(html, headers=security_headers(page_csp(html)))


def add_docs(app: FastAPI) -> None:
    """``/docs``, ``/redoc`` and their files on ``app`` (built with ``docs_url=None, redoc_url=None``). No OAuth2
    redirect page: folio's keys are headers, not an OAuth flow."""
    app.mount(DOCS_STATIC_URL, FilesWithHeaders(directory=DOCS_STATIC, headers=security_headers(REDOC_CSP)),
              name="static-offline-docs")  # fmt: skip

    @app.get("/docs", include_in_schema=False)
    def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{DOCS_STATIC_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_STATIC_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_STATIC_URL}/favicon.png",
            oauth2_redirect_url=None,
            swagger_ui_parameters=app.swagger_ui_parameters,
        )
        return _page(page.body)

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_redoc_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{DOCS_STATIC_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{DOCS_STATIC_URL}/favicon.png",
            with_google_fonts=False,
        )
        return _page(page.body)
