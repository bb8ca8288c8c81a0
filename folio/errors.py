"""What ``folio.Client`` raises. Every HTTP error of a folio server has one shape,
``{"error": {"code", "message", "detail"?, "request_id"}}`` (``api/errors.py``); the client turns it
into an exception of the status's class that carries the code::

    ClientError
    ├── APIConnectionError          the server could not be reached, or the connection broke
    │   └── APITimeoutError         (also a TimeoutError)
    ├── ResponseError               a 2xx whose body is not what the endpoint promises
    ├── JobFailed                   wait_for_job: the job ended "failed" (.job, .code, .message)
    └── APIError                    an error response: .status, .code, .message, .detail, .request_id
        ├── BadRequest              400 (also a ValueError)
        ├── Unauthorized            401 (also a PermissionError)
        ├── Forbidden               403 (also a PermissionError)
        ├── NotFound                404 (also a LookupError): document_not_found, region_not_found ...
        ├── Conflict                409
        ├── PayloadTooLarge         413
        ├── InvalidRequest          422 (also a ValueError): validation_error, not_a_pdf, corrupt_pdf ...
        │                           also raised before sending when an option is misspelt or mistyped
        ├── UpstreamError           502: the LLM endpoint failed or replied with garbage (llm_upstream_error)
        │   └── UpstreamTimeout     504: it did not answer in time (llm_timeout; also a TimeoutError)
        ├── ServiceUnavailable      503: no LLM configured (llm_not_configured), no keys file ...
        │   └── Overloaded          503 overloaded, with .retry_after seconds
        └── ServerError             other 5xx (folio's own bugs: quote .request_id)

Branch on ``.code`` for the precise reason (``e.code == "not_a_pdf"``); the class is for the
usual ``except NotFound:``.
"""

from __future__ import annotations

from typing import Any


class ClientError(Exception):
    """Anything ``folio.Client`` raises on purpose."""


class APIConnectionError(ClientError):
    """No HTTP response: refused connection, DNS failure, broken or timed-out connection."""


class APITimeoutError(APIConnectionError, TimeoutError):
    pass


class ResponseError(ClientError):
    """A success status with a body that does not parse as the endpoint's model."""


class JobFailed(ClientError):
    """``wait_for_job``: the job finished with status ``failed``; ``.job`` is its last ``JobOut``,
    ``.code``/``.message`` its error (``not_a_pdf``, ``ingest_timeout`` ...)."""

    def __init__(self, job: Any) -> None:
        error = job.error
        self.job = job
        self.code: str = error.code if error is not None else "job_failed"
        self.message: str = error.message if error is not None else "the job failed"
        super().__init__(f"job {job.job_id} failed: {self.code}: {self.message}")


class APIError(ClientError):
    """An error response from the server, in folio's error shape (or a stand-in for one from a proxy)."""

    def __init__(self, status: int, code: str, message: str, detail: Any = None, request_id: str | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.detail = detail
        self.request_id = request_id


class BadRequest(APIError, ValueError):
    pass


class Unauthorized(APIError, PermissionError):
    pass


class Forbidden(APIError, PermissionError):
    pass


class NotFound(APIError, LookupError):
    pass


class Conflict(APIError):
    pass


class PayloadTooLarge(APIError):
    pass


class InvalidRequest(APIError, ValueError):
    pass


class UpstreamError(APIError):
    pass


class UpstreamTimeout(UpstreamError, TimeoutError):
    pass


class ServiceUnavailable(APIError):
    pass


class Overloaded(ServiceUnavailable):
    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after


class ServerError(APIError):
    pass


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: InvalidRequest,
    502: UpstreamError,
    503: ServiceUnavailable,
    504: UpstreamTimeout,
}


def error_for(status: int, body: Any, headers: dict[str, str] | None = None) -> APIError:
    """The exception for an error response; ``body`` is its parsed JSON (anything else when it was
    not folio's shape, e.g. a proxy's HTML page: then the code is ``http_<status>``)."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict) and isinstance(err.get("code"), str):
        code, message = err["code"], str(err.get("message") or err["code"])
        detail, request_id = err.get("detail"), err.get("request_id")
    else:
        code, message, detail, request_id = f"http_{status}", f"HTTP {status}", body, None
    headers = headers or {}
    request_id = request_id or headers.get("x-request-id")
    if status == 503 and code == "overloaded":
        retry = headers.get("retry-after")
        try:
            retry_after = float(retry) if retry is not None else None
        except ValueError:
            retry_after = None
        return Overloaded(status, code, message, detail, request_id, retry_after=retry_after)
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else APIError)
    return cls(status, code, message, detail, request_id)
