"""The one client for OpenAI-compatible ``/v1/chat/completions`` endpoints (llama.cpp's ``llama-server``,
vLLM, Ollama, a hosted API), used by every model call folio makes: answers (``POST /v1/answer``),
``compress="llm"``, the LLM reranker and LLM section summaries.

``complete`` is the text-in, text-out form (rerankers, summaries); ``chat``/``stream`` return the
endpoint's token usage and ``finish_reason``, take ``response_format`` (structured answers) and stream
server-sent events; ``achat``/``astream`` are the async forms the server awaits on its event loop (a
client that leaves cancels them). Every call has a total deadline (``timeout``: connect to the last
byte, streaming or not; the client's default, 30 s, serves rerank and summaries) and a bounded reply
(``MAX_REPLY_BYTES`` read, ``MAX_REPLY_CHARS`` of text), through ``api.service.llm_http``. Failures are
typed so the API maps them onto the one error shape, and never show the endpoint's URL:

    ModelUnavailable (503)           kernel.errors
    ├── LLMTimeout (504)             the reply did not end within the timeout
    └── LLMUpstreamError (502)       unreachable, an HTTP error status, a reply that is not JSON, too
                                     big, of the wrong shape or without content, a stream that ends
                                     without a finish (truncated)

The base URL may end in ``/v1`` or not (``http://127.0.0.1:8080`` and ``http://127.0.0.1:8080/v1``
both work).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from folio.api.service.llm_http import (
    MAX_ERROR_MESSAGE,
    MAX_ERROR_READ,
    Deadline,
    LLMUpstreamError,
    iter_lines,
    iterate_sync,
    parse_json,
    post,
    raise_for_status,
    read_body,
    run_sync,
)
from folio.api.service.redact import ENDPOINT, scrub
from folio.settings import Settings

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30.0
"""A call's total deadline unless it passes its own: the reranker's and the summaries' (issue 20)."""
MAX_REPLY_CHARS = 1_000_000
"""The most reply text kept (32,768 completion tokens are far less); more is ``LLMUpstreamError``."""


@dataclass
class Completion:
    """One assistant reply. ``prompt_tokens``/``completion_tokens`` are the endpoint's own counts,
    None when it reported none."""

    text: str
    finish_reason: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    raw_usage: dict[str, Any] = field(default_factory=dict)


class ChatClient:
    """One OpenAI-compatible chat endpoint. ``timeout`` is the default total deadline of a call; each
    call may pass its own (answers: the request's ``timeout_s``; ``compress='llm'``: 15 s)."""

    def __init__(
        self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT_S
    ) -> None:
        base = base_url.rstrip("/")
        self.url = base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    @contextlib.contextmanager
    def _hidden(self) -> Iterator[None]:
        """Upstream errors without this endpoint's address or key: their text (an error body, the start
        of a reply that is not JSON, an error in a stream) may echo either, in any spelling (``redact.scrub``). The
        original is not chained, so the key stays out of the server log too."""
        try:
            yield
        except LLMUpstreamError as e:
            message = scrub(str(e), self.url, self.api_key)
            cut = message[:MAX_ERROR_MESSAGE] + ("…" if len(message) > MAX_ERROR_MESSAGE else "")
            raise LLMUpstreamError(cut) from None

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _body(self, messages: Sequence[dict[str, Any]], max_tokens: int, temperature: float,
              response_format: dict[str, Any] | None, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if response_format is not None:
            body["response_format"] = response_format
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    async def achat(self, messages: Sequence[dict[str, Any]], *, max_tokens: int = 1024, temperature: float = 0.0,
                    response_format: dict[str, Any] | None = None, deadline: Deadline | None = None) -> Completion:
        """One non-streaming completion, all of it by ``deadline`` (default: the client's ``timeout`` from now)."""
        deadline = deadline or Deadline(self.timeout)
        body = self._body(messages, max_tokens, temperature, response_format, stream=False)
        with self._hidden():
            async with post(self.url, body, self._headers(), deadline) as resp:
                await raise_for_status(resp, deadline)
                raw = await read_body(resp, deadline)
            return completion_of(parse_json(raw))

    def chat(self, messages: Sequence[dict[str, Any]], *, max_tokens: int = 1024, temperature: float = 0.0,
             response_format: dict[str, Any] | None = None, timeout: float | None = None) -> Completion:
        """``achat`` from plain code."""
        return run_sync(lambda: self.achat(messages, max_tokens=max_tokens, temperature=temperature,
                                           response_format=response_format,
                                           deadline=Deadline(timeout or self.timeout)))

    def complete(self, messages: Sequence[dict[str, Any]], *, max_tokens: int = 512, temperature: float = 0.0,
                 timeout: float | None = None) -> str:
        """The reply's text alone (rerankers, summaries): ``chat`` within ``timeout`` (default: the client's)."""
        return self.chat(messages, max_tokens=max_tokens, temperature=temperature, timeout=timeout).text

    async def astream(self, messages: Sequence[dict[str, Any]], *, max_tokens: int = 1024, temperature: float = 0.0,
                      response_format: dict[str, Any] | None = None,
                      deadline: Deadline | None = None) -> AsyncIterator[str | Completion]:
        """Yield text deltas as they arrive, then the whole ``Completion`` last, all by ``deadline``
        (default: the client's ``timeout`` from the first step). A stream that ends without a
        ``finish_reason`` or ``[DONE]`` is truncated: ``LLMUpstreamError``."""
        deadline = deadline or Deadline(self.timeout)
        body = self._body(messages, max_tokens, temperature, response_format, stream=True)
        with self._hidden():
            async with post(self.url, body, self._headers(), deadline) as resp:
                await raise_for_status(resp, deadline)
                if "text/event-stream" not in resp.headers.get("content-type", ""):  # one JSON reply: no stream
                    raw = await read_body(resp, deadline)
                    completion = completion_of(parse_json(raw, "replied with neither a stream nor a chat completion,"))
                    if completion.text:
                        yield completion.text
                    yield completion
                    return
                state = _Stream()
                async for line in iter_lines(resp, deadline):
                    text = state.feed(line)
                    if text:
                        yield text
                    if state.done:
                        break
            yield state.completion()

    def stream(self, messages: Sequence[dict[str, Any]], *, max_tokens: int = 1024, temperature: float = 0.0,
               response_format: dict[str, Any] | None = None, timeout: float | None = None
               ) -> Iterator[str | Completion]:
        """``astream`` from plain code."""
        yield from iterate_sync(lambda: self.astream(messages, max_tokens=max_tokens, temperature=temperature,
                                                     response_format=response_format,
                                                     deadline=Deadline(timeout or self.timeout)))


class _Stream:
    """The server-sent events of one streamed reply, fed line by line."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.chars = 0
        self.finish: str | None = None
        self.model: str | None = None
        self.usage: dict[str, Any] = {}
        self.done = False

    def feed(self, line: str) -> str:
        """The text a ``data:`` line adds (``[DONE]`` sets ``done``)."""
        line = line.strip()
        if not line.startswith("data:"):
            return ""
        payload = line[5:].strip()
        if payload == "[DONE]":
            self.done = True
            return ""
        text = self._choices_text(self._chunk(payload))
        self.chars += len(text)
        if self.chars > MAX_REPLY_CHARS:
            raise LLMUpstreamError(f"the reply of {ENDPOINT} is longer than {MAX_REPLY_CHARS} characters")
        if text:
            self.parts.append(text)
        return text

    def _chunk(self, payload: str) -> dict[str, Any]:
        """One chunk's JSON object, its ``model`` and ``usage`` kept; an error chunk or one of another shape is
        ``LLMUpstreamError``."""
        chunk = parse_json(payload, "sent a stream chunk")
        if not isinstance(chunk, dict):
            raise LLMUpstreamError(f"{ENDPOINT} sent a stream chunk that is not an object")
        if isinstance(chunk.get("error"), dict | str):
            raise LLMUpstreamError(f"{ENDPOINT} reported an error in its stream: "
                                   f"{str(chunk['error'])[:MAX_ERROR_READ]}")
        if isinstance(chunk.get("model"), str):
            self.model = chunk["model"]
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        return chunk

    def _choices_text(self, chunk: dict[str, Any]) -> str:
        """The text deltas of a chunk's choices, joined (a ``finish_reason`` among them is kept)."""
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise LLMUpstreamError(f"{ENDPOINT} sent a stream chunk whose choices is not a list")
        text = ""
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta")
            piece = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(piece, str):
                text += piece
            if choice.get("finish_reason"):
                self.finish = _finish_reason(choice["finish_reason"])
        return text

    def completion(self) -> Completion:
        if not self.done and self.finish is None:
            raise LLMUpstreamError(f"the stream of {ENDPOINT} ended before the reply was complete (no "
                                   f"finish_reason, no [DONE]; {self.chars} characters received)")
        return Completion(text="".join(self.parts), finish_reason=self.finish, model=self.model,
                          prompt_tokens=_int(self.usage.get("prompt_tokens")),
                          completion_tokens=_int(self.usage.get("completion_tokens")), raw_usage=self.usage)


def completion_of(data: Any) -> Completion:
    """The ``Completion`` in a chat completion's JSON; a reply of another shape is ``LLMUpstreamError``."""
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(choice, dict) or not isinstance(content, str):
        raise LLMUpstreamError(f"the reply of {ENDPOINT} has no choices[0].message.content text")
    if len(content) > MAX_REPLY_CHARS:
        raise LLMUpstreamError(f"the reply of {ENDPOINT} is longer than {MAX_REPLY_CHARS} characters")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Completion(
        text=content,
        finish_reason=_finish_reason(choice.get("finish_reason")),
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        raw_usage=usage,
    )


def _finish_reason(v: Any) -> str | None:
    if v is None or isinstance(v, str) and len(v) <= 100:
        return v
    raise LLMUpstreamError(f"the reply of {ENDPOINT} has a finish_reason that is not a short string")


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def client_from_settings(settings: Settings, *, timeout: float = DEFAULT_TIMEOUT_S) -> ChatClient | None:
    """The configured LLM client, or None when ``llm_base_url`` or ``llm_model`` is not set."""
    if not settings.llm.base_url or not settings.llm.model:
        return None
    return ChatClient(settings.llm.base_url, settings.llm.model, api_key=settings.llm.api_key, timeout=timeout)
