"""``POST /v1/answer``: a cited answer from the configured OpenAI-compatible model, checked.

Retrieval and assembly run on the bounded query pool like ``/v1/context``; the model call is awaited
on the event loop (it waits on the network, and must hold neither a query worker nor a thread of
Starlette's shared pool), at most ``FOLIO_LLM_CONCURRENCY`` at once and ``FOLIO_LLM_QUEUE`` waiting
(``api.service.model_calls``; past that 503 ``overloaded`` + ``Retry-After``, before any retrieval). The call
ends within the request's ``timeout_s`` in all, and a client that disconnects cancels it (the
access log says 499). With ``"stream": true`` the reply is ``text/event-stream``: ``event: package``
first, ``event: delta`` as text arrives, then ``event: done`` (the ``AnswerResponse`` without the
package, the check included) or ``event: error`` (the one error shape, plus ``status``). Errors found
before the stream starts (no model configured, unknown document, bad request) are ordinary error
responses.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from folio.api.http.deps import CallerDep, FolioDep, QueryPoolDep, SettingsDep, require_key
from folio.api.http.offloop import OffLoopJSON
from folio.api.schemas import error_responses
from folio.api.service.answer import acall, answer_events_async, finish
from folio.api.service.answer_schemas import AnswerRequest, AnswerResponse
from folio.api.service.chat import ENABLE_HINT
from folio.api.service.model_calls import Slot
from folio.kernel.errors import FolioError

# A large body is parsed and validated on the query pool, not on the event loop (api.http.offloop).
router = APIRouter(tags=["query"], dependencies=[Depends(require_key)], route_class=OffLoopJSON)
T = TypeVar("T")


class ClientClosed(FolioError, ConnectionError):
    """The client disconnected before its answer was ready; nobody reads this response."""

    code = "client_closed_request"
    http_status = 499


@router.post(
    "/answer",
    summary="Answer from the package with the configured LLM, then check the citations",
    response_model=AnswerResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "JSON, or server-sent events with stream=true"},
        **error_responses(400, 401, 404, 413, 422, 502, 503, 504),
    },
)
async def answer(
    req: AnswerRequest,
    request: Request,
    folio: FolioDep,
    pool: QueryPoolDep,
    caller: CallerDep,
) -> Response:
    """Every ``/v1/context`` field, plus ``stream``, ``response_format`` (``text`` | ``json``),
    ``json_schema``, ``max_tokens``, ``temperature``, ``timeout_s``, ``include_package``. Without
    ``FOLIO_LLM_BASE_URL``/``FOLIO_LLM_MODEL`` this is 503 ``llm_not_configured``; an endpoint that
    does not finish within ``timeout_s`` is 504 ``llm_timeout``, one that fails or replies with garbage
    502 ``llm_upstream_error``; every model call slot and waiting place taken is 503 ``overloaded``.
    When retrieval finds nothing to answer from, the answer is "Insufficient evidence." and the model
    is not called."""
    slot = folio.model_calls.reserve()
    streaming = False
    try:
        prep = await pool.run(folio.prepare_answer, req, collections=caller.collections)
        if req.stream:
            streaming = True
            off_loop: Callable[[Callable[[], Any]], Awaitable[Any]] = pool.run
            return HeldStream(slot, _sse(answer_events_async(prep, off_loop, slot)))
        completion = None if prep.package.refused else await _unless_gone(request.receive, acall(prep, slot))
    finally:
        if not streaming:
            slot.release()
    done = await pool.run(finish, prep, completion)
    return Response(done.model_dump_json(), media_type="application/json")


class HeldStream(StreamingResponse):
    """An event stream that gives its model call slot back however it ends (done, error, or the
    client leaving, which Starlette answers by cancelling the stream and with it the model call)."""

    def __init__(self, slot: Slot, events: AsyncIterator[str]) -> None:
        super().__init__(events, media_type="text/event-stream",
                         headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self.slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.slot.release()


async def _unless_gone(receive: Receive, call: Awaitable[T]) -> T:
    """``await call``, cancelled if the client disconnects first (``ClientClosed``)."""
    task = asyncio.ensure_future(call)

    async def disconnected() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    gone = asyncio.ensure_future(disconnected())
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if task.cancelled():
        raise ClientClosed("the client disconnected; the model call was cancelled")
    return task.result()


@router.get(
    "/answer/status",
    summary="Whether answers are enabled: the configured model, or how to configure one",
    responses=error_responses(401),
)
async def answer_status(settings: SettingsDep) -> dict[str, object]:
    """The viewer asks this to decide whether "Ask" answers or only shows evidence. The endpoint's
    URL is not shown (it may be an internal host); the model name is."""
    enabled = bool(settings.llm.base_url and settings.llm.model)
    return {"enabled": enabled, "model": settings.llm.model if enabled else None,
            "how_to_enable": None if enabled else ENABLE_HINT}


async def _sse(events: AsyncIterator[tuple[str, dict[str, Any]]]) -> AsyncIterator[str]:
    async for event, data in events:
        yield f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
