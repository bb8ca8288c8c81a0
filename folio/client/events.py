"""A streamed answer (``POST /v1/answer`` with ``stream``): its server-sent events, read into ``AnswerEvent``s;
an ``error`` event raises the typed error it carries."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from folio import models
from folio.errors import ResponseError, error_for


@dataclass(frozen=True)
class AnswerEvent:
    """One server-sent event of a streamed answer: ``package`` (the package and the usage known
    before the model is asked), ``delta`` (``data["text"]``), ``done`` (``answer`` is the
    ``AnswerResponse``, the citation check included, without the package)."""

    event: str
    data: dict[str, Any]
    answer: models.AnswerResponse | None = None


class SSE:
    """Server-sent events from lines (``event:``/``data:`` fields, a blank line ends an event)."""

    def __init__(self) -> None:
        self.event = "message"
        self.data: list[str] = []

    def feed(self, line: str) -> AnswerEvent | None:
        if line.startswith("event:"):
            self.event = line[6:].strip()
        elif line.startswith("data:"):
            self.data.append(line[5:].lstrip())
        elif not line and self.data:
            event, raw = self.event, "\n".join(self.data)
            self.event, self.data = "message", []
            return _answer_event(event, raw)
        return None


def _answer_event(event: str, raw: str) -> AnswerEvent:
    import json

    try:
        data = json.loads(raw)
    except ValueError as e:
        raise ResponseError(f"POST /v1/answer: a {event} event whose data is not JSON") from e
    if event == "error":  # the one error shape plus the status the error would have had
        raise error_for(int(data.get("status") or 502), data)
    if event == "done":
        try:
            return AnswerEvent(event, data, models.AnswerResponse.model_validate(data))
        except ValidationError as e:
            raise ResponseError(f"POST /v1/answer: the done event is not an AnswerResponse: {e}") from e
    return AnswerEvent(event, data)


def answer_events(lines: Iterable[str]) -> Iterator[AnswerEvent]:
    sse = SSE()
    for line in lines:
        found = sse.feed(line)
        if found is not None:
            yield found
            if found.event == "done":
                return
    raise ResponseError("POST /v1/answer: the stream ended before its done event")
