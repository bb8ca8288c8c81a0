"""One error shape for every 4xx/5xx response.

Every error body is ``{"error": {"code": str, "message": str, "detail": ..., "request_id": str}}``
where ``code`` is stable and machine-readable (``document_not_found``, ``not_a_pdf``,
``limit_exceeded``, ``validation_error``, ``unauthorized``, ``forbidden``, ``forbidden_origin``, ``invalid_host``,
``overloaded``, ``method_not_allowed``, ``internal_error`` ...), ``detail`` is present only when
there is more to say (the failing fields of a validation error, the job id of a failed ingest) and
``request_id`` is the request's ``X-Request-ID`` (``api.http.middleware`` sets it for each request).
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

import difflib
import logging
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, get_args, get_origin

from pydantic import BaseModel

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

# Function-level imports: FastAPI loads where a response is built. The error classes are also raised by the
# application layer that `folio context` runs in-process, where the web framework would only add start-up time.
if TYPE_CHECKING:
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

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


class InvalidId(InvalidRequest):
    """An id path parameter that is ``.`` or ``..``: no id is, and a client or proxy that resolves dot
    segments would send the request to another resource (``DELETE .../versions/..`` deletes the document)."""

    code = "invalid_id"


class AssetNotFound(NotFound):
    """A region or page exists but has no stored image (e.g. an object-store deployment)."""

    code = "asset_not_found"


class PayloadTooLarge(FolioError, ValueError):
    code = "limit_exceeded"
    http_status = 413


class InvalidBody(FolioError, ValueError):
    """A request body its route's model refuses, found where FastAPI did not validate it (a query
    worker process, ``api.http.offloop.ForwardedJSON``): the same 422 ``validation_error``, message and
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
    def of(cls, errors: Sequence[Mapping[str, Any]], annotation: Any = None) -> InvalidBody:
        """The 422 for pydantic's ``errors`` of a body of the route's ``annotation`` (its "did you mean")."""
        return cls(*validation_message(errors, annotation=annotation))


class NoStore(FolioError, FileNotFoundError):
    """A command names a data directory that holds no folio store (``Folio.open(must_exist=True)``); the
    CLI exits 2 with its message, as for any file named on the command line that is not there."""

    code = "no_store"


class Overloaded(FolioError, RuntimeError):
    """Every query worker is busy and the queue is full: retry after ``retry_after`` seconds."""

    code = "overloaded"
    http_status = 503

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class NotReady(FolioError, RuntimeError):
    """The server is still starting (loading its store and models), or stopping: retry after ``retry_after`` s."""

    code = "not_ready"
    http_status = 503

    def __init__(self, message: str, retry_after: int = 2) -> None:
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


def status_for(exc: FolioError) -> int:
    """The HTTP status ``exc`` answers with: the nearest class in its MRO that says, by its own
    ``http_status`` (the api layer's errors) or in ``KERNEL_STATUS``.

    >>> from folio.kernel.errors import CorruptPDF, DocumentNotFound
    >>> status_for(CorruptPDF("x")), status_for(DocumentNotFound("x")), status_for(Overloaded("busy"))
    (422, 404, 503)
    """
    for cls in type(exc).__mro__:
        own = vars(cls).get("http_status")
        if isinstance(own, int):
            return own
        listed = KERNEL_STATUS.get(cls)
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
    from fastapi.responses import JSONResponse

    return JSONResponse(error_body(code, message, detail), status_code=status, headers=headers)


def folio_error_response(exc: FolioError, detail: Any = None) -> JSONResponse:
    headers: dict[str, str] | None = None
    if isinstance(exc, Unauthorized):
        headers = {"WWW-Authenticate": 'Bearer realm="folio"'}
    elif isinstance(exc, Overloaded | NotReady):
        headers = {"Retry-After": str(exc.retry_after)}
    return error_response(status_for(exc), exc.code, str(exc) or exc.code, detail, headers)


async def _folio_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, FolioError)
    if status_for(exc) >= 500 and not isinstance(exc, NotReady):  # not ready: a state, said by /v1/health
        logger.error("%s %s failed: %s", request.method, request.url.path, exc)
    return folio_error_response(exc, getattr(exc, "detail", None))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (``X``, ``X | None``, ``list[X]``, ``dict[str, X]`` ...)."""
    if get_origin(annotation) is None and isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]  # (``list[X]`` passes ``isinstance(..., type)``: hence the origin first)
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def nearest_field(model: type[BaseModel], loc: Sequence[str | int]) -> str | None:
    """The field name nearest to the unknown one at the end of ``loc`` (the path inside a ``model`` body), if
    one is near enough: what a 422 for a misspelt field suggests.

    >>> from folio.api.schemas import ContextRequest, VerifyRequest
    >>> nearest_field(ContextRequest, ["budgt"]), nearest_field(ContextRequest, ["xyz"])
    ('budget', None)
    >>> nearest_field(VerifyRequest, ["context_request", "kk"])
    'k'
    """
    current = model
    for part in loc[:-1]:
        if isinstance(part, int):  # a list index: the items are the model found for the list's field
            continue
        field = current.model_fields.get(part) or next(
            (f for f in current.model_fields.values() if f.alias == part), None
        )
        found = _models_in(field.annotation) if field is not None else []
        if not found:
            return None
        current = found[0]
    names = set(current.model_fields) | {f.alias for f in current.model_fields.values() if f.alias}
    close = difflib.get_close_matches(str(loc[-1]), sorted(names), n=1, cutoff=0.6) if loc else []
    return close[0] if close else None


def body_annotation(request: Request) -> Any:
    """The annotation of the body of ``request``'s route (its model), None without one."""
    body = getattr(getattr(request.scope.get("route"), "body_field", None), "field_info", None)
    return getattr(body, "annotation", None)


def _suggest_fields(annotation: Any, errors: list[dict[str, Any]]) -> None:
    """Add "did you mean" to the message of each unknown body field that is near a known one (``budgt``)."""
    models = _models_in(annotation)
    for err in errors:
        loc = err.get("loc") or ()
        if err.get("type") != "extra_forbidden" or not models or not loc or loc[0] != "body":
            continue
        near = nearest_field(models[0], list(loc[1:]))
        if near is not None:
            err["msg"] = f"unknown field; did you mean {near!r}?"


def validation_message(
    every: Sequence[Mapping[str, Any]], request: Request | None = None, *, annotation: Any = None
) -> tuple[str, list[dict[str, Any]]]:
    """The message and detail of a 422 ``validation_error`` for pydantic's ``errors``; with the ``request`` (or
    its body's ``annotation``, where the body is validated without the request: another process), an unknown
    body field near a known one says which (``_suggest_fields``)."""
    from fastapi.encoders import jsonable_encoder  # function-level: see the module's imports

    # Only the errors shown are encoded: 50,000 bad items must not cost 50,000 encodings on the loop.
    errors: list[dict[str, Any]] = jsonable_encoder(list(every[:MAX_DETAIL_ERRORS]), exclude={"input", "ctx", "url"})
    if request is not None:
        annotation = body_annotation(request)
    if annotation is not None:
        _suggest_fields(annotation, errors)
    first = errors[0] if errors else {}
    where = ".".join(str(p) for p in first.get("loc", ()))
    message = f"invalid request: {where}: {first.get('msg', 'invalid value')}" if first else "invalid request"
    if len(every) > MAX_DETAIL_ERRORS:  # e.g. 50,000 bad page numbers: say how many, list a few
        message += f" (and {len(every) - 1} more errors; the first {MAX_DETAIL_ERRORS} are in detail)"
    return message, errors


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    from fastapi.exceptions import RequestValidationError

    assert isinstance(exc, RequestValidationError)
    return error_response(422, "validation_error", *validation_message(exc.errors(), request))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    from starlette.exceptions import HTTPException as StarletteHTTPException

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
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException as StarletteHTTPException

    app.add_exception_handler(FolioError, _folio_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
