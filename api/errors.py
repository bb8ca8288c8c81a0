"""One error shape for every 4xx/5xx response.

Every error body is ``{"error": {"code": str, "message": str, "detail": ..., "request_id": str}}``
where ``code`` is stable and machine-readable (``document_not_found``, ``not_a_pdf``,
``limit_exceeded``, ``validation_error``, ``unauthorized``, ``forbidden``, ``forbidden_origin``, ``invalid_host``,
``overloaded``, ``method_not_allowed``, ``internal_error`` ...), ``detail`` is present only when
there is more to say (the failing fields of a validation error, the job id of a failed ingest) and
``request_id`` is the request's ``X-Request-ID`` (``api.middleware`` sets it for each request).
Messages and details are capped in size: they may echo input, and input can be huge.

Mapping:

- ``FolioError`` subclasses → their ``code`` and the status ``status_for`` gives: ``KERNEL_STATUS`` for the
  kernel's classes (``folio/kernel/errors.py``, which knows nothing of HTTP), a class's own ``http_status``
  for the errors that the api layer defines;
- FastAPI's ``RequestValidationError`` → 422 ``validation_error``;
- Starlette's ``HTTPException`` (unknown route, wrong method) → its status, ``not_found`` /
  ``method_not_allowed`` / ``http_<status>``;
- anything else → 500 ``internal_error`` (logged with its traceback: that is our bug). The
  request middleware answers those itself, so the connection stays usable; the handler here is
  the last resort for errors outside it and says ``Connection: close``, because uvicorn closes
  the connection after an exception escapes the app.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from folio.kernel.errors import (
    ClaimLost,
    CollectionConflict,
    FolioError,
    InvalidDocument,
    InvalidRequest,
    LimitExceeded,
    ModelUnavailable,
    NotFound,
    VersionBusy,
)
from folio.retrieval.llm_http import LLMTimeout, LLMUpstreamError

logger = logging.getLogger(__name__)


class Unauthorized(FolioError, PermissionError):
    code = "unauthorized"
    http_status = 401


class Forbidden(FolioError, PermissionError):
    """The key is valid but may not do this (a read key uploading or deleting, a write outside its collections)."""

    code = "forbidden"
    http_status = 403


class JobNotFound(NotFound):
    code = "job_not_found"


class AssetNotFound(NotFound):
    """A region or page exists but has no stored image (e.g. an object-store deployment)."""

    code = "asset_not_found"


class PayloadTooLarge(FolioError, ValueError):
    code = "limit_exceeded"
    http_status = 413


class InvalidBody(FolioError, ValueError):
    """A request body its route's model refuses, found where FastAPI did not validate it (a query
    worker process, ``api.offloop.ForwardedJSON``): the same 422 ``validation_error``, message and
    detail as FastAPI's ``RequestValidationError`` gets. Message and detail are both in ``args``, so
    it crosses back from the worker process pickled."""

    code = "validation_error"
    http_status = 422

    def __init__(self, message: str, detail: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message, detail)
        self.detail = detail

    def __str__(self) -> str:
        return str(self.args[0])

    @classmethod
    def of(cls, errors: Sequence[Mapping[str, Any]]) -> InvalidBody:
        return cls(*validation_message(errors))


class Overloaded(FolioError, RuntimeError):
    """Every query worker is busy and the queue is full: retry after ``retry_after`` seconds."""

    code = "overloaded"
    http_status = 503

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


# The HTTP status of each kernel error class; a subclass answers with its nearest listed ancestor's.
KERNEL_STATUS: dict[type[FolioError], int] = {
    FolioError: 500,
    InvalidDocument: 422,
    LimitExceeded: 413,
    NotFound: 404,
    ModelUnavailable: 503,
    VersionBusy: 409,
    ClaimLost: 409,
    CollectionConflict: 409,
    InvalidRequest: 422,
}
# The same for the errors that a stage below the api defines (they know nothing of HTTP either).
STAGE_STATUS: dict[type[FolioError], int] = {
    LLMTimeout: 504,
    LLMUpstreamError: 502,
}


def status_for(exc: FolioError) -> int:
    """The HTTP status ``exc`` answers with: the nearest class in its MRO that says, by its own
    ``http_status`` (the api layer's errors) or in ``KERNEL_STATUS`` / ``STAGE_STATUS``.

    >>> from folio.kernel.errors import CorruptPDF, DocumentNotFound
    >>> status_for(CorruptPDF("x")), status_for(DocumentNotFound("x")), status_for(Overloaded("busy"))
    (422, 404, 503)
    """
    for cls in type(exc).__mro__:
        own = vars(cls).get("http_status")
        if isinstance(own, int):
            return own
        listed = KERNEL_STATUS.get(cls, STAGE_STATUS.get(cls))
        if listed is not None:
            return listed
    return 500


REQUEST_ID: ContextVar[str | None] = ContextVar("folio_request_id", default=None)
MAX_MESSAGE_CHARS = 1000
MAX_DETAIL_ERRORS = 20


def capped_list(items: Sequence[object], shown: int = 5) -> str:
    """``a, b, c and 9997 more``: a list for an error message that stays short whatever the input.

    >>> capped_list(["a", "b", "c", "d"], shown=2)
    'a, b and 2 more'
    """
    head = ", ".join(str(i)[:130] for i in items[:shown])
    return f"{head} and {len(items) - shown} more" if len(items) > shown else head


def _cap(message: str) -> str:
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return f"{message[:MAX_MESSAGE_CHARS]}... ({len(message) - MAX_MESSAGE_CHARS} more characters)"


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
    err: dict[str, Any] = {"code": code, "message": _cap(message)}
    if detail is not None:
        err["detail"] = detail
    request_id = REQUEST_ID.get()
    if request_id is not None:
        err["request_id"] = request_id
    return {"error": err}


def error_response(
    status: int, code: str, message: str, detail: Any = None, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(code, message, detail), status_code=status, headers=headers)


def folio_error_response(exc: FolioError, detail: Any = None) -> JSONResponse:
    headers: dict[str, str] | None = None
    if isinstance(exc, Unauthorized):
        headers = {"WWW-Authenticate": 'Bearer realm="folio"'}
    elif isinstance(exc, Overloaded):
        headers = {"Retry-After": str(exc.retry_after)}
    return error_response(status_for(exc), exc.code, str(exc) or exc.code, detail, headers)


async def _folio_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, FolioError)
    if status_for(exc) >= 500:
        logger.error("%s %s failed: %s", request.method, request.url.path, exc)
    return folio_error_response(exc, getattr(exc, "detail", None))


def validation_message(every: Sequence[Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The message and detail of a 422 ``validation_error`` for pydantic's ``errors``."""
    # Only the errors shown are encoded: 50,000 bad items must not cost 50,000 encodings on the loop.
    errors: list[dict[str, Any]] = jsonable_encoder(list(every[:MAX_DETAIL_ERRORS]), exclude={"input", "ctx", "url"})
    first = errors[0] if errors else {}
    where = ".".join(str(p) for p in first.get("loc", ()))
    message = f"invalid request: {where}: {first.get('msg', 'invalid value')}" if first else "invalid request"
    if len(every) > MAX_DETAIL_ERRORS:  # e.g. 50,000 bad page numbers: say how many, list a few
        message += f" (and {len(every) - 1} more errors; the first {MAX_DETAIL_ERRORS} are in detail)"
    return message, errors


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(422, "validation_error", *validation_message(exc.errors()))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
    message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
    if exc.status_code == 404 and message == "Not Found":
        message = f"no such route: {request.method} {request.url.path}"
    if exc.status_code == 405:
        message = f"method {request.method} not allowed on {request.url.path}"
    return error_response(exc.status_code, code, message, headers=exc.headers)


def internal_error_response(exc: BaseException, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The generic 500: the exception's type but not its text (that may hold paths or data); the
    request id in the body finds the traceback in the server log."""
    message = f"internal error: {type(exc).__name__} (logged with the request id)"
    return error_response(500, "internal_error", message, headers=headers)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unhandled error in %s %s", request.method, request.url.path)
    return internal_error_response(exc, {"Connection": "close"})


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(FolioError, _folio_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
