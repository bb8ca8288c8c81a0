"""Bounded HTTP to an OpenAI-compatible endpoint: every model call has a total deadline and a reply cap.

httpx's timeouts bound each network operation, not the call: an endpoint that sends one byte every
few seconds, or its headers a byte at a time, never trips them (issue 20: a 5 s answer held for
303 s). Here every await of a call (connect, send, headers, each body chunk) runs under what is left
of one deadline (``asyncio.timeout``), so a call ends by ``seconds`` whatever the endpoint does, and
a client that goes away cancels it. The reply is read in chunks up to ``MAX_REPLY_BYTES``, counted after
decoding: a compressed reply is decoded a bounded piece at a time (``decoded_chunks``).

The async functions serve the server's event loop; ``run_sync`` and ``iterate_sync`` drive them from
plain threads (query workers, ingest, the CLI). Errors never name the endpoint's URL (it may be an
internal host, and ``/v1/answer/status`` keeps it hidden); the server log has it, never the key (a
caller scrubs the text an endpoint echoes: ``redact``). The HTTP statuses are
the classes' own ``http_status`` (the api layer's errors, ``folio.api.errors.status_for``):

    ModelUnavailable (503)       folio.kernel.errors
    ├── LLMTimeout (504)         the call ran past its deadline
    └── LLMUpstreamError (502)   unreachable, an error status, a reply too big or of the wrong shape
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from folio.api.service.redact import ENDPOINT, hide_key
from folio.kernel.errors import ModelUnavailable

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)

T = TypeVar("T")
MAX_REPLY_BYTES = 16 * 1024 * 1024
"""The most of one reply read (a stream's events included); past it the call is ``LLMUpstreamError``."""
MAX_ERROR_READ = 64 * 1024
"""The most of an upstream error's text read and kept in the error raised here."""
MAX_ERROR_MESSAGE = 400
"""The most of an upstream error's message a client is shown: cut after it was scrubbed (``redact.scrub``), as a
cut before could leave the start of the key in it."""
ACCEPT_ENCODING = "gzip, deflate"
"""What a model call accepts as ``Content-Encoding`` (sent as ``Accept-Encoding``), besides none."""
DECODE_STEP = 64 * 1024
"""The most of a compressed reply decoded in one step (``decoded_chunks``)."""


class LLMTimeout(ModelUnavailable, TimeoutError):
    code = "llm_timeout"
    http_status = 504


class LLMUpstreamError(ModelUnavailable):
    code = "llm_upstream_error"
    http_status = 502


class Deadline:
    """``seconds`` from now; ``step(aw)`` awaits ``aw`` for at most what is left, else ``LLMTimeout``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        return self.at - time.monotonic()

    def expired(self) -> LLMTimeout:
        return LLMTimeout(f"{ENDPOINT} did not finish its reply within {self.seconds:.3g} s")

    async def step(self, aw: Awaitable[T]) -> T:
        left = self.left()
        if left <= 0:
            close = getattr(aw, "close", None)  # a coroutine, or an async generator's __anext__, never awaited
            if close is not None:
                close()
            raise self.expired()
        try:
            async with asyncio.timeout(left):
                return await aw
        except LLMTimeout:
            raise
        except TimeoutError as exc:
            raise self.expired() from exc


@contextlib.asynccontextmanager
async def post(
    url: str, body: dict[str, Any], headers: dict[str, str], deadline: Deadline
) -> AsyncIterator[httpx.Response]:
    """The response to ``POST url`` (body not read yet), the headers received within ``deadline``;
    transport failures become ``LLMTimeout``/``LLMUpstreamError``, without the URL."""
    import httpx

    try:
        async with httpx.AsyncClient(timeout=max(deadline.left(), 0.001)) as client:
            request = client.build_request(
                "POST", url, json=body, headers={**headers, "Accept-Encoding": ACCEPT_ENCODING}
            )
            resp = await deadline.step(client.send(request, stream=True))
            try:
                yield resp
            finally:
                await resp.aclose()
    except httpx.TimeoutException as exc:
        raise deadline.expired() from exc
    except httpx.HTTPError as exc:
        # httpx's text may quote the reply (h11: "illegal status line: b'...'"): never the key it was sent
        why = hide_key(f"{type(exc).__name__}: {exc}", _sent_key(headers))
        logger.warning("LLM call to %s failed: %s", url, why)
        raise LLMUpstreamError(
            f"cannot reach {ENDPOINT} ({type(exc).__name__}); the server log has the details"
        ) from exc


def _sent_key(headers: dict[str, str]) -> str | None:
    """The key a call sends (``Authorization: Bearer <key>``), for ``hide_key``."""
    scheme, _, key = headers.get("Authorization", "").partition(" ")
    return (key.strip() or None) if scheme.lower() == "bearer" else None


async def decoded_chunks(resp: httpx.Response, deadline: Deadline) -> AsyncIterator[bytes]:
    """The body as it arrives, decoded (``gzip``, ``deflate``) in pieces of at most ``DECODE_STEP`` bytes, each
    received within ``deadline``: a caller that stops at its limit has decoded at most one piece past it,
    however far the body would expand (a few KB of zstd can make 400 MB). An encoding folio did not ask for
    (``ACCEPT_ENCODING``: no ``br``, no ``zstd``, which cannot be decoded a bounded piece at a time here) is
    ``LLMUpstreamError``, before any of it is decoded."""
    sent = resp.headers.get("content-encoding", "").strip()
    encoding = sent.lower()
    if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
        raise LLMUpstreamError(  # as sent, whole: the caller scrubs it (a cut or lower-cased key is harder to find)
            f"{ENDPOINT} replied with Content-Encoding {sent!r}, which folio does not accept (it asks for "
            f"{ACCEPT_ENCODING}, or none)"
        )
    inflater = zlib.decompressobj(32 + zlib.MAX_WBITS) if encoding not in ("", "identity") else None  # gzip or zlib
    raw = resp.aiter_raw()
    while True:
        try:
            data = await deadline.step(anext(raw))
        except StopAsyncIteration:
            return
        if inflater is None:
            yield data
            continue
        while data:
            try:
                piece = inflater.decompress(data, DECODE_STEP)
            except zlib.error as exc:
                raise LLMUpstreamError(f"{ENDPOINT} sent a {encoding} body that does not decode ({exc})") from exc
            data = inflater.unconsumed_tail
            if piece:
                yield piece


async def read_body(
    resp: httpx.Response, deadline: Deadline, limit: int = MAX_REPLY_BYTES, *, truncate: bool = False
) -> bytes:
    """The (decoded) body, at most ``limit`` bytes: more is ``LLMUpstreamError``, or cut (``truncate``)."""
    declared = resp.headers.get("content-length", "")
    if not truncate and declared.isdigit() and int(declared) > limit:
        raise too_big(limit)
    out = bytearray()
    async for chunk in decoded_chunks(resp, deadline):
        out += chunk
        if len(out) > limit:
            if truncate:
                return bytes(out[:limit])
            raise too_big(limit)
    return bytes(out)


async def iter_lines(resp: httpx.Response, deadline: Deadline, limit: int = MAX_REPLY_BYTES) -> AsyncIterator[str]:
    """The body's lines as they arrive (without line ends), ``limit`` bytes in all."""
    pending = b""
    seen = 0
    async for chunk in decoded_chunks(resp, deadline):
        seen += len(chunk)
        if seen > limit:
            raise too_big(limit)
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            yield line.rstrip(b"\r").decode("utf-8", errors="replace")
    if pending:
        yield pending.rstrip(b"\r").decode("utf-8", errors="replace")


def too_big(limit: int) -> LLMUpstreamError:
    return LLMUpstreamError(f"the reply of {ENDPOINT} is over the limit of {limit} bytes")


def parse_json(raw: bytes | str, what: str = "replied with something") -> Any:
    """JSON of a reply; not JSON, or nested too deep to parse, is ``LLMUpstreamError``."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        shown = raw[:MAX_ERROR_READ] if isinstance(raw, str) else raw[:MAX_ERROR_READ].decode("utf-8", "replace")
        why = "nested too deep" if isinstance(exc, RecursionError) else "not JSON"
        raise LLMUpstreamError(f"{ENDPOINT} {what} that is {why}: {shown!r}") from exc


async def raise_for_status(resp: httpx.Response, deadline: Deadline) -> None:
    """An error status is ``LLMTimeout`` (408, 504) or ``LLMUpstreamError`` with the start of its body."""
    if resp.status_code < 400:
        return
    if resp.status_code in (408, 504):
        raise LLMTimeout(f"{ENDPOINT} timed out (HTTP {resp.status_code})")
    text = (await read_body(resp, deadline, MAX_ERROR_READ, truncate=True)).decode("utf-8", errors="replace")
    raise LLMUpstreamError(f"{ENDPOINT} answered HTTP {resp.status_code}: {text!r}")


async def post_json(url: str, body: dict[str, Any], headers: dict[str, str], seconds: float) -> Any:
    """One JSON request and its JSON reply, all within ``seconds``."""
    deadline = Deadline(seconds)
    async with post(url, body, headers, deadline) as resp:
        await raise_for_status(resp, deadline)
        raw = await read_body(resp, deadline)
    return parse_json(raw)


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """``await make()`` from plain code: on a fresh event loop, or on a helper thread when this thread
    already runs one (async code calling a blocking API blocks its loop, as it chose to)."""

    async def main() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with ThreadPoolExecutor(1, thread_name_prefix="folio-llm") as ex:
        return ex.submit(asyncio.run, main()).result()


def iterate_sync(make: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
    """The items of the async iterator ``make()``, from plain code (one event loop for the whole
    iteration; leaving early closes it, and the connection with it)."""
    with asyncio.Runner() as runner:
        items = make()

        async def step() -> tuple[bool, T | None]:
            try:
                return True, await anext(items)
            except StopAsyncIteration:
                return False, None

        try:
            while True:
                more, item = runner.run(step())
                if not more:
                    return
                yield item  # type: ignore[misc]
        finally:
            aclose = getattr(items, "aclose", None)
            if aclose is not None:
                runner.run(aclose())
