"""uvicorn's h11 protocol with a request-header deadline, for ``folio serve``.

uvicorn has an idle keep-alive timeout, but nothing bounds the time a client takes to send a
request's headers: every byte it sends restarts nothing and cancels the idle timer, so a client
that sends its headers one byte a second (slowloris) holds a connection, and a few thousand such
clients hold the server. Here:

- a connection that has sent nothing is closed after ``timeout_keep_alive`` (as an idle
  keep-alive connection is, between requests);
- once the first byte of a request's head has arrived, the whole head (request line and headers)
  must arrive within ``header_timeout_s``, or the connection is closed.

And a head's size: h11 holds at most ``MAX_HEAD_BYTES`` of a head that has not all arrived (its own default is
16 KB, and it measures only a head that comes in more than one read: a 60 KB head in one read passed, a 200 KB one
in several got a 400); past it the client gets ``431`` in folio's error shape, as every refusal of the protocol is
(a malformed request: ``400 bad_request``), instead of uvicorn's plain text. A head that arrived whole is measured
by ``api.http.middleware.HeadLimits``, with the limits on one header and on their number, for every server.

Request bodies are bounded in size by ``api.http.middleware`` and uploads by their own limit.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

logger = logging.getLogger(__name__)

MAX_HEAD_BYTES = 64 * 1024  # the request line and every header
MAX_HEADER_BYTES = 16 * 1024  # one header, name and value
MAX_HEADERS = 100


class HeaderDeadlineH11(H11Protocol):
    header_timeout_s: float = 15.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        self._head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)

    def connection_lost(self, exc: Exception | None) -> None:
        self._clear_head_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._head_deadline is None and self.conn.their_state is h11.IDLE:
            self._head_deadline = self.loop.call_later(self.header_timeout_s, self._head_timed_out)
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the head is in (or the connection failed)
            self._clear_head_deadline()

    def _clear_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_timed_out(self) -> None:
        self._head_deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "-"
            logger.warning(
                "%s: request headers not complete after %.0f s: connection closed", client, self.header_timeout_s
            )
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 could not read, in folio's error shape: ``431`` for a head over
        ``MAX_HEAD_BYTES``, else ``400 bad_request``; then the connection is closed, as uvicorn does."""
        if len(self.conn.trailing_data[0]) > MAX_HEAD_BYTES:
            status, code, text = 431, "limit_exceeded", f"request head is over the limit of {MAX_HEAD_BYTES} bytes"
        else:
            status, code, text = 400, "bad_request", "invalid HTTP request"
        request_id = uuid.uuid4().hex
        body = json.dumps({"error": {"code": code, "message": text, "request_id": request_id}}).encode()
        headers = [(b"content-type", b"application/json"), (b"connection", b"close"),
                   (b"x-request-id", request_id.encode())]  # fmt: skip
        for event in (h11.Response(status_code=status, headers=headers), h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()


def header_deadline_protocol(header_timeout_s: float) -> type[HeaderDeadlineH11]:
    """The protocol class for ``uvicorn.run(http=...)`` with this header deadline."""
    return type("HeaderDeadlineH11", (HeaderDeadlineH11,), {"header_timeout_s": header_timeout_s})
