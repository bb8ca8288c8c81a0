"""One error shape for every 4xx/5xx response.

Every error body is ``{"error": {"code": str, "message": str, "detail": ...}}`` where ``code`` is
stable and machine-readable (``document_not_found``, ``not_a_pdf``, ``limit_exceeded``,
``validation_error``, ``unauthorized``, ``method_not_allowed``, ``internal_error`` ...) and
``detail`` is present only when there is more to say (the failing fields of a validation error,
the job id of a failed ingest).

Mapping:

- ``FolioError`` subclasses → their own ``http_status`` and ``code`` (``ingest/errors.py``);
- FastAPI's ``RequestValidationError`` → 422 ``validation_error``;
- Starlette's ``HTTPException`` (unknown route, wrong method) → its status, ``not_found`` /
  ``method_not_allowed`` / ``http_<status>``;
- anything else → 500 ``internal_error`` (logged with its traceback: that is our bug).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ingest.errors import FolioError, NotFound

logger = logging.getLogger(__name__)


class Unauthorized(FolioError, PermissionError):
    code = "unauthorized"
    http_status = 401


class JobNotFound(NotFound):
    code = "job_not_found"


class AssetNotFound(NotFound):
    """A region or page exists but has no stored image (e.g. an object-store deployment)."""

    code = "asset_not_found"


class PayloadTooLarge(FolioError, ValueError):
    code = "limit_exceeded"
    http_status = 413


_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "limit_exceeded",
    415: "unsupported_media_type",
    422: "validation_error",
}


def error_body(code: str, message: str, detail: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if detail is not None:
        err["detail"] = detail
    return {"error": err}


def error_response(
    status: int, code: str, message: str, detail: Any = None, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(code, message, detail), status_code=status, headers=headers)


def folio_error_response(exc: FolioError, detail: Any = None) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="folio"'} if isinstance(exc, Unauthorized) else None
    return error_response(exc.http_status, exc.code, str(exc) or exc.code, detail, headers)


async def _folio_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, FolioError)
    if exc.http_status >= 500:
        logger.error("%s %s failed: %s", request.method, request.url.path, exc)
    return folio_error_response(exc, getattr(exc, "detail", None))


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = jsonable_encoder(exc.errors(), exclude={"input", "ctx", "url"})
    first = errors[0] if errors else {}
    where = ".".join(str(p) for p in first.get("loc", ()))
    message = f"invalid request: {where}: {first.get('msg', 'invalid value')}" if first else "invalid request"
    return error_response(422, "validation_error", message, errors)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
    message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
    if exc.status_code == 404 and message == "Not Found":
        message = f"no such route: {request.method} {request.url.path}"
    if exc.status_code == 405:
        message = f"method {request.method} not allowed on {request.url.path}"
    return error_response(exc.status_code, code, message, headers=exc.headers)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unhandled error in %s %s", request.method, request.url.path)
    return error_response(500, "internal_error", f"internal error: {type(exc).__name__}")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(FolioError, _folio_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
