"""Large JSON bodies are parsed and validated in another process, never on the event loop.

FastAPI parses a route's JSON body and validates it against the route's model on the event loop,
before the route runs: a 9.6 MB ``/v1/verify`` package of 50,000 items took 10 s to reject, and
``/v1/health`` waited as long. ``OffLoopJSON`` is the route class of the JSON routes: a body over
``OFF_LOOP_BYTES`` is parsed and validated in a process of the query pool (``QueryPool.parse``: a worker
process, or without them the one body-parsing process; a full pool is a 503 like any query), with
FastAPI's own field validation, so the errors are the same. A valid body is handed to FastAPI as the
validated model, which it accepts without validating again; an invalid one is the usual 422
``validation_error``, and one that is JSON but cannot be read (not UTF-8, an integer past Python's 4,300
digits) the 400 FastAPI gives a small one. Small bodies take FastAPI's path unchanged.

Not a thread: ``json.loads`` and pydantic-core hold the interpreter lock for the whole call, so a 6 MB
package parsed on a query thread still held ``/v1/health`` for 0.1 to 0.9 s (issue 44). The model comes
back pickled, which is cheap for every route's body but one: a ``/v1/verify`` package, up to 500,000
values, would cost as much to rebuild here as to parse. A verify of a package sent in reads nothing from
the store, so it is answered where its body was parsed (``Answered``), and the route sends that answer
(``answered_apart``). The body's size, values and nesting are bounded before it gets here
(``api.http.middleware.JsonBodyGuard``), and with query processes ``ForwardedJSON`` (the query routes'
class) does not parse the body in a process of its own: the worker process that runs the query parses and
validates it (``api.http.query_worker.call``).
"""

from __future__ import annotations

import email.message
import json
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from folio.api.errors import InvalidBody
from folio.api.schemas import VerifyRequest

OFF_LOOP_BYTES = 64 * 1024
UNREADABLE_BODY = "There was an error parsing the body"  # FastAPI's 400 for a body ``json.loads`` cannot read


def _is_json(content_type: str | None) -> bool:
    """What FastAPI parses as JSON: ``application/json`` or ``application/*+json``."""
    if not content_type:
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


def _parse_and_validate(field: Any, body: bytes) -> tuple[Any, list[dict[str, Any]]]:
    """The body as the route's model, or the errors FastAPI would give (in another process): a 422 for what is
    not JSON or not the model, FastAPI's 400 for what ``json.loads`` refuses otherwise (a ``ValueError``: bytes
    that are not UTF-8, an integer of more than 4,300 digits), as for a body under ``OFF_LOOP_BYTES``."""
    try:
        value = json.loads(body)
    except json.JSONDecodeError as e:
        error = {
            "type": "json_invalid",
            "loc": ("body", e.pos),
            "msg": "JSON decode error",
            "input": {},
            "ctx": {"error": e.msg},
        }
        return None, [error]
    except ValueError:  # UnicodeDecodeError, int_max_str_digits: FastAPI answers a small body's with this 400
        raise HTTPException(400, UNREADABLE_BODY) from None
    validated, errors = field.validate(value, {}, loc=("body",))
    return validated, list(errors)


@dataclass(frozen=True)
class Answered:
    """The answer to a request that reads nothing from the store, given where its body was parsed."""

    json: str


def parse_apart(field: Any, body: bytes) -> Any:
    """The body as the route's model (in another process: ``QueryPool.parse``), or the answer to a verify of a
    package (``Answered``); else the 422 ``InvalidBody`` that FastAPI's ``RequestValidationError`` would give,
    "did you mean" included, or FastAPI's 400. Only what is shown crosses back: the errors of a body of
    500,000 values are as many dicts, to unpickle in one call."""
    validated, errors = _parse_and_validate(field, body)
    if errors:
        raise InvalidBody.of(errors, field.field_info.annotation)
    if isinstance(validated, VerifyRequest) and validated.package is not None:
        # what Folio.verify does with a package sent in: it reads nothing from the store
        from folio.assembly.verify import verify_answer  # function-level: the parsing process loads it when needed

        return Answered(verify_answer(validated.answer, validated.package).model_dump_json())
    return validated


class OffLoopJSON(APIRoute):
    """An ``APIRoute`` whose JSON body, when large, is parsed and validated in a process of the query pool."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        field = self.body_field
        if field is None:
            return handler

        async def route(request: Request) -> Response:
            if _is_json(request.headers.get("content-type")):
                body = await request.body()  # the body-size middleware has bounded it
                if len(body) > OFF_LOOP_BYTES:
                    # FastAPI takes the JSON from here (Request.json caches it in ``_json``) and
                    # passes a model instance of the route's own model through without validating it again.
                    parsed = await request.app.state.query_pool.parse(parse_apart, field, body)
                    if isinstance(parsed, Answered):  # a verify: the route sends the answer (answered_apart)
                        request.state.answered = parsed.json
                        parsed = VerifyRequest.model_construct(answer="")  # a placeholder
                    request._json = parsed
            return await handler(request)

        return route


class ForwardedJSON(OffLoopJSON):
    """``OffLoopJSON`` for the query routes (``api.http.query_ops``): when the query pool has worker
    processes, a large JSON body is not parsed here at all. The route gets a placeholder of its model
    and ``forwarded_body(request)`` gives the body, which the route hands to the worker process
    as it is; the worker answers a body its model refuses with the same 422 (``errors.InvalidBody``)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        off_loop = super().get_route_handler()
        plain = APIRoute.get_route_handler(self)
        model = self.body_field.field_info.annotation if self.body_field is not None else None
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return off_loop

        async def route(request: Request) -> Response:
            if request.app.state.query_pool.processes is None or not _is_json(request.headers.get("content-type")):
                return await off_loop(request)
            body = await request.body()
            if len(body) <= OFF_LOOP_BYTES:
                return await plain(request)
            request.state.forwarded_body = body
            request._json = model.model_construct()  # FastAPI passes an instance of its model through
            return await plain(request)

        return route


def answered_apart(request: Request) -> str | None:
    """The answer (JSON) given where a large body was parsed (``parse_apart``), if it was answered there."""
    answered: str | None = getattr(request.state, "answered", None)
    return answered


def forwarded_body(request: Request) -> bytes | None:
    """The JSON body ``ForwardedJSON`` left for a worker process to parse, if it left one."""
    body: bytes | None = getattr(request.state, "forwarded_body", None)
    return body
