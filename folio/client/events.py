"""Server-sent events: a streamed answer (``POST /v1/answer`` with ``stream``), read into ``AnswerEvent``s (an
``error`` event raises the typed error it carries), and ingest progress (``GET /v1/jobs/{id}/events``,
``GET /v1/jobs/events?ids=``), read into ``JobEvent``s."""

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
    """Server-sent events from lines (``event:``/``data:`` fields, a blank line ends an event; ``:`` comments,
    the server's heartbeats, are skipped)."""

    def __init__(self) -> None:
        self.event = "message"
        self.data: list[str] = []

    def feed_raw(self, line: str) -> tuple[str, str] | None:
        """``(event, data)`` when ``line`` ends an event."""
        if line.startswith("event:"):
            self.event = line[6:].strip()
        elif line.startswith("data:"):
            self.data.append(line[5:].lstrip())
        elif not line and self.data:
            event, raw = self.event, "\n".join(self.data)
            self.event, self.data = "message", []
            return event, raw
        return None

    def feed(self, line: str) -> AnswerEvent | None:
        found = self.feed_raw(line)
        return _answer_event(*found) if found is not None else None

    def feed_job(self, line: str, path: str) -> JobEvent | None:
        found = self.feed_raw(line)
        return job_event(*found, path) if found is not None else None


@dataclass(frozen=True)
class JobEvent:
    """One server-sent event of ingest progress: ``progress`` (a job's status or stage changed), ``done`` or
    ``failed`` (its final state), each with ``job``, the job's ``JobOut``; ``error`` (a job the server no
    longer knows: ``data["job_id"]``, ``data["error"]``), ``timeout`` (the stream's time ran out before every
    job finished: ``data["jobs"]``), and ``end``, the last (``data``: ``done``, ``failed``, ``unfinished``)."""

    event: str
    data: dict[str, Any]
    job: models.JobOut | None = None


JOB_EVENTS_WITH_A_JOB = ("progress", "done", "failed")


def job_event(event: str, raw: str, path: str) -> JobEvent:
    import json

    try:
        data = json.loads(raw)
        job = models.JobOut.model_validate(data) if event in JOB_EVENTS_WITH_A_JOB else None
    except (ValueError, ValidationError) as e:
        raise ResponseError(f"GET {path}: a {event} event that is not what the server sends: {e}") from e
    return JobEvent(event, data, job)


def job_events(events: Iterable[JobEvent | None], path: str) -> Iterator[JobEvent]:
    """The events up to and including ``end``; a stream that breaks off before it is a ``ResponseError``."""
    for found in events:
        if found is not None:
            yield found
            if found.event == "end":
                return
    raise ResponseError(f"GET {path}: the stream ended before its end event")


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
