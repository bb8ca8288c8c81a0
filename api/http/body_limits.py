"""What one JSON request body may hold, measured before anything parses it.

Parsing and validating JSON hold the interpreter lock for the whole call (``json.loads`` and
pydantic-core are single C / Rust calls), whichever thread runs them: a 9.3 MB body of 500,000 keys
held ``/v1/health`` for seconds even when parsed on a query thread. So every JSON body is measured
first by ``json_shape``, which finds its members and its nesting without parsing: a few numpy passes
over the body (tens of milliseconds for 10 MB, nearly all without the lock), so a refusal costs
little. A body past its route's ``BodyLimits`` is refused (``api.http.middleware.JsonBodyGuard``): over
the bytes or the members, 413 ``limit_exceeded``; nested too deep, 400 ``bad_request`` (Python's
parser would raise ``RecursionError`` on it, at any size).

Only ``/v1/verify`` takes a large body (a whole context package); every other JSON route has a small
one (``SMALL_BODY_BYTES``). A body over 64 KB that gets through is parsed and validated in another process,
never in the server's (``api.http.offloop``): a query worker process, or with query threads a body-parsing one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_DEPTH = 64  # a json_schema nests up to 32 levels (answer_schemas.MAX_SCHEMA_DEPTH) inside a request, MCP's too
SMALL_BODY_BYTES = 1024 * 1024  # search, context, answer, MCP: at most 1,000 ids, pages, pins: under 400 KB
SMALL_BODY_MEMBERS = 20_000  # array elements and object members in all; the largest valid request has about 5,000
LARGE_BODY_MEMBERS = 500_000  # a verify package: about 30 per KB, a real one of 10 MB would have 300,000
LARGE_BODY_PATHS = frozenset({"/v1/verify"})
MCP_PATH = "/mcp"  # its ingest tool carries a PDF in base64: a large body of few values

_QUOTE, _BACKSLASH, _COMMA, _OPEN, _CLOSE = ord('"'), ord("\\"), ord(","), ord("["), ord("]")
_CURLY = np.uint8(~(ord("{") - ord("[")) & 0xFF)  # "{" & _CURLY == "[", "}" & _CURLY == "]"


@dataclass(frozen=True)
class BodyLimits:
    """The most one request body may hold: bytes, members (array elements and object members) and depth."""

    max_bytes: int
    max_members: int
    max_depth: int = MAX_DEPTH


def limits_for(path: str, max_request_bytes: int) -> BodyLimits:
    """A route's limits: ``/v1/verify`` gets ``max_request_bytes`` (``FOLIO_MAX_REQUEST_BYTES``), ``/mcp`` as many
    bytes but only ``SMALL_BODY_MEMBERS`` values (the ingest tool's PDF is one base64 string), every other route
    the smaller of ``max_request_bytes`` and ``SMALL_BODY_BYTES``.

    >>> limits_for("/v1/search", 10 * 1024 * 1024).max_bytes, limits_for("/v1/verify", 10 * 1024 * 1024).max_bytes
    (1048576, 10485760)
    """
    if path in LARGE_BODY_PATHS:
        return BodyLimits(max_request_bytes, LARGE_BODY_MEMBERS)
    if path == MCP_PATH:  # bytes up to max_request_bytes, but values as few as any small body's: one long string
        return BodyLimits(max_request_bytes, SMALL_BODY_MEMBERS)
    return BodyLimits(min(max_request_bytes, SMALL_BODY_BYTES), SMALL_BODY_MEMBERS)


@dataclass(frozen=True)
class JsonShape:
    members: int  # commas and opening brackets outside strings: an upper bound of elements and members
    depth: int  # the deepest nesting of brackets outside strings


def json_shape(body: bytes) -> JsonShape:
    """Members and depth of a JSON text, counted outside its strings, without parsing it.

    numpy finds the quotes that open and close strings (not the escaped ones), and the brackets and
    commas outside them. Its array operations let other threads run meanwhile (the event loop
    among them), which ``json.loads`` does not. A text that is not JSON gets a shape too (its
    parser refuses it later). Every accumulation runs in the type of its input: numpy holds the
    lock for one that converts as it goes.

    >>> json_shape(rb'{"a": [1, 2, {"b": "x,[y\\\"]"}], "c": null}')
    JsonShape(members=6, depth=3)
    >>> json_shape(b"[" * 100 + b"]" * 100).depth
    100
    """
    chars = np.frombuffer(body, np.uint8)
    quotes = chars == _QUOTE
    if b'\\"' in body:
        quotes[1:] &= ~_escaping(chars)[:-1]
    in_string = np.bitwise_xor.accumulate(quotes.view(np.uint8))  # 1 from an opening quote to its closing one
    outside = chars[(in_string == 0) & ~quotes]
    square = outside & _CURLY
    opens = square == _OPEN
    brackets = square[opens | (square == _CLOSE)]
    steps = (brackets == _OPEN).astype(np.int32) * 2 - 1  # +1 opens, -1 closes
    depth = int(np.cumsum(steps, dtype=np.int32).max(initial=0))
    return JsonShape(members=int(np.count_nonzero(outside == _COMMA)) + int(np.count_nonzero(opens)), depth=depth)


def _escaping(chars: np.ndarray) -> np.ndarray:
    """The backslashes that escape the next character: the 1st, 3rd, 5th ... of each run."""
    backslash = chars == _BACKSLASH
    seen = np.cumsum(backslash.astype(np.int32), dtype=np.int32)  # backslashes up to here
    before_run = np.maximum.accumulate(np.where(backslash, 0, seen))  # ... up to the run's start
    escaping: np.ndarray = backslash & ((seen - before_run) & 1 == 1)
    return escaping


def refusal(body: bytes, limits: BodyLimits, path: str) -> tuple[int, str, str] | None:
    """``(status, code, message)`` when ``body`` is past ``limits``; None when it may be parsed."""
    if len(body) > limits.max_bytes:
        return 413, "limit_exceeded", f"request body is over the limit of {limits.max_bytes} bytes for {path}"
    shape = json_shape(body)
    if shape.depth > limits.max_depth:
        return 400, "bad_request", f"request body nests JSON {shape.depth} levels deep, over the limit of {MAX_DEPTH}"
    if shape.members > limits.max_members:
        return (
            413,
            "limit_exceeded",
            f"request body has {shape.members} JSON values, over the limit of {limits.max_members} for {path}",
        )
    return None
