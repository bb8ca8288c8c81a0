"""``POST /v1/answer``: a cited answer from the configured OpenAI-compatible model, checked.

Retrieval and assembly run on the bounded query pool like ``/v1/context``; the model call runs on
a plain worker thread (it waits on the network, and must not hold a query worker meanwhile). With
``"stream": true`` the reply is ``text/event-stream``: ``event: package`` first, ``event: delta`` as
text arrives, then ``event: done`` (the ``AnswerResponse`` without the package, the check included)
or ``event: error`` (the one error shape, plus ``status``). Errors found before the stream starts
(no model configured, unknown document, bad request) are ordinary error responses.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from fastapi import APIRouter, Depends, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from api.answer import answer_events, call, finish, prepare
from api.answer_schemas import AnswerRequest, AnswerResponse
from api.deps import CallerDep, QueryPoolDep, RetrieverDep, SettingsDep, StoreDep, require_key
from api.schemas import error_responses

router = APIRouter(tags=["query"], dependencies=[Depends(require_key)])


@router.post(
    "/answer",
    summary="Answer from the package with the configured LLM, then check the citations",
    response_model=AnswerResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "JSON, or server-sent events with stream=true"},
        **error_responses(401, 404, 422, 502, 503, 504),
    },
)
async def answer(
    req: AnswerRequest,
    store: StoreDep,
    retriever: RetrieverDep,
    settings: SettingsDep,
    pool: QueryPoolDep,
    caller: CallerDep,
) -> Response:
    """Every ``/v1/context`` field, plus ``stream``, ``response_format`` (``text`` | ``json``),
    ``json_schema``, ``max_tokens``, ``temperature``, ``timeout_s``, ``include_package``. Without
    ``FOLIO_LLM_BASE_URL``/``FOLIO_LLM_MODEL`` this is 503 ``llm_not_configured``; an endpoint that
    times out is 504 ``llm_timeout``, one that fails or replies with garbage 502
    ``llm_upstream_error``. When retrieval finds nothing to answer from, the answer is "Insufficient
    evidence." and the model is not called."""
    prep = await pool.run(prepare, store, retriever, req, settings, collections=caller.collections)
    if req.stream:
        return StreamingResponse(
            _sse(answer_events(prep)),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    completion = None if prep.package.refused else await run_in_threadpool(call, prep)
    done = await pool.run(finish, prep, completion)
    return Response(done.model_dump_json(), media_type="application/json")


@router.get(
    "/answer/status",
    summary="Whether answers are enabled: the configured model, or how to configure one",
    responses=error_responses(401),
)
async def answer_status(settings: SettingsDep) -> dict[str, object]:
    """The viewer asks this to decide whether "Ask" answers or only shows evidence. The endpoint's
    URL is not shown (it may be an internal host); the model name is."""
    from api.chat import ENABLE_HINT

    enabled = bool(settings.llm_base_url and settings.llm_model)
    return {"enabled": enabled, "model": settings.llm_model if enabled else None,
            "how_to_enable": None if enabled else ENABLE_HINT}


def _sse(events: Iterator[tuple[str, dict[str, object]]]) -> Iterator[str]:
    for event, data in events:
        yield f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
