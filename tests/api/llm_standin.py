"""A stand-in for an OpenAI-compatible chat server, on loopback, for tests of ``/v1/answer``.

It is a stand-in, not a model: it answers ``POST /v1/chat/completions`` with scripted replies
(queued per test) over real HTTP, so folio's real client code runs against it, streaming included.
Each ``Reply`` can also misbehave the ways real servers do: an error status, a body that is not
JSON, a stream cut off before its end, a stall longer than the client's timeout, a reply dripped
one byte at a time (each read well inside any per-read timeout), a huge body, a raw event stream, a
compressed body (``encoded`` with its ``Content-Encoding``, e.g. a small zstd body that expands a
thousandfold), raw bytes in place of the whole response (``head``: a malformed status line).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


@dataclass
class Reply:
    content: str = ""
    status: int = 200
    raw: str | None = None  # sent as the body instead of a chat completion (e.g. not JSON)
    delay: float = 0.0  # seconds before anything is sent
    truncate: bool = False  # stream: stop after half the chunks, no finish_reason, no [DONE]
    chunk_delay: float = 0.0
    usage: bool = True
    drip: float = 0.0  # send the whole response (status line included) one byte every `drip` seconds
    pad: int = 0  # bytes of whitespace before a JSON body (still valid JSON): a huge reply
    raw_stream: str | None = None  # sent as a text/event-stream body as it is
    encoded: bytes | None = None  # sent as the body as it is, with Content-Encoding: `encoding`
    encoding: str = ""
    head: bytes | None = None  # sent as the whole response as it is (a malformed status line, say)


class StandInLLM:
    """``with StandInLLM() as llm:`` then ``llm.url`` (ends in /v1), ``llm.replies.append(Reply(...))``,
    ``llm.requests`` (each request's JSON body and Authorization header)."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.dripping = 0  # replies being dripped right now (a cancelled call stops its drip)
        handler = type("Handler", (_Handler,), {"llm": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, name="llm-standin", daemon=True)

    def __enter__(self) -> StandInLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    """One request to the stand-in: answered from the queue of ``llm`` (a subclass per ``StandInLLM`` sets it)."""

    llm: ClassVar[StandInLLM]
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        try:
            self._handle()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
            self.close_connection = True

    def _handle(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.llm.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization"),
                               "accept_encoding": self.headers.get("Accept-Encoding")})
        reply = self.llm.replies.pop(0) if self.llm.replies else Reply("stand-in default reply")
        if reply.delay:
            time.sleep(reply.delay)
        if reply.head is not None:
            self.wfile.write(reply.head)
            self.close_connection = True
        elif reply.drip:
            self._drip(reply, body)
        elif reply.encoded is not None:
            self._send_bytes(200, reply.encoded, "application/json", {"Content-Encoding": reply.encoding})
        elif reply.raw_stream is not None:
            self._send(200, reply.raw_stream, "text/event-stream")
        elif reply.raw is not None or reply.status != 200:
            self._send(reply.status, reply.raw if reply.raw is not None else '{"error": "stand-in error"}',
                       "application/json")
        elif body.get("stream"):
            self._stream(reply, body)
        else:
            self._send(200, " " * reply.pad + json.dumps(self._completion(reply, body)), "application/json")

    def _drip(self, reply: Reply, body: dict[str, Any]) -> None:
        data = json.dumps(self._completion(reply, body)).encode()
        head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                f"Connection: close\r\n\r\n").encode()
        self.llm.dripping += 1
        try:
            for i in range(len(head + data)):
                self.wfile.write((head + data)[i:i + 1])
                self.wfile.flush()
                time.sleep(reply.drip)
        finally:
            self.llm.dripping -= 1
        self.close_connection = True

    def _completion(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": "standin-1",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content},
                         "finish_reason": "stop"}],
        }
        if reply.usage:
            out["usage"] = {"prompt_tokens": 123, "completion_tokens": len(reply.content.split()),
                            "total_tokens": 123 + len(reply.content.split())}
        return out

    def _send(self, status: int, text: str, ctype: str) -> None:
        self._send_bytes(status, text.encode(), ctype, {})

    def _send_bytes(self, status: int, data: bytes, ctype: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        words = reply.content.split(" ")
        pieces = [w + (" " if k < len(words) - 1 else "") for k, w in enumerate(words)]
        if reply.truncate:
            pieces = pieces[: max(1, len(pieces) // 2)]
        for p in pieces:
            chunk = {"model": body.get("model"), "choices": [{"index": 0, "delta": {"content": p},
                                                              "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
            if reply.chunk_delay:
                time.sleep(reply.chunk_delay)
        if reply.truncate:
            self.close_connection = True
            return
        end = {"model": body.get("model"), "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        self.wfile.write(f"data: {json.dumps(end)}\n\n".encode())
        if reply.usage:
            usage = {"model": body.get("model"), "choices": [],
                     "usage": {"prompt_tokens": 123, "completion_tokens": len(words)}}
            self.wfile.write(f"data: {json.dumps(usage)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args: Any) -> None:
        pass
