"""The chat client behind ``POST /v1/answer``: any OpenAI-compatible ``/v1/chat/completions``
endpoint (llama.cpp's ``llama-server``, vLLM, Ollama, a hosted API), one reply or a stream.

``retrieval.llm.ChatClient`` serves rerankers and summaries (text in, text out); answers need more
of the protocol: the endpoint's token usage, ``finish_reason``, ``response_format`` for structured
answers, and server-sent-event streaming. Failures are typed so the API can map them onto the one
error shape:

    ModelUnavailable (503)           ingest.errors: no endpoint configured
    ├── LLMTimeout (504)             no reply, or no stream chunk, within the timeout
    └── LLMUpstreamError (502)       HTTP error status, a reply that is not JSON or has no content,
                                     a stream that ends without a finish (truncated)

The base URL may end in ``/v1`` or not (``http://127.0.0.1:8080`` and ``http://127.0.0.1:8080/v1``
both work), as with ``retrieval.llm``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ingest.errors import ModelUnavailable

if TYPE_CHECKING:
    from api.settings import Settings

logger = logging.getLogger(__name__)

ENABLE_HINT = (
    "set FOLIO_LLM_BASE_URL to an OpenAI-compatible server (llama.cpp `llama-server --port 8080` -> "
    "http://127.0.0.1:8080/v1, vLLM `vllm serve MODEL` -> http://127.0.0.1:8000/v1, Ollama -> "
    "http://127.0.0.1:11434/v1, or a hosted API), FOLIO_LLM_MODEL to the model name it serves and, if it "
    "needs one, FOLIO_LLM_API_KEY; then restart folio"
)
MAX_ERROR_BODY = 300


class LLMTimeout(ModelUnavailable, TimeoutError):
    code = "llm_timeout"
    http_status = 504


class LLMUpstreamError(ModelUnavailable):
    code = "llm_upstream_error"
    http_status = 502


class LLMNotConfigured(ModelUnavailable):
    code = "llm_not_configured"
    http_status = 503


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


class AnswerClient:
    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 60.0) -> None:
        base = base_url.rstrip("/")
        self.url = base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

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

    def chat(self, messages: Sequence[dict[str, Any]], *, max_tokens: int = 1024, temperature: float = 0.0,
             response_format: dict[str, Any] | None = None, timeout: float | None = None) -> Completion:
        """One non-streaming completion."""
        import httpx

        body = self._body(messages, max_tokens, temperature, response_format, stream=False)
        try:
            resp = httpx.post(self.url, json=body, headers=self._headers(), timeout=timeout or self.timeout)
        except httpx.TimeoutException as exc:
            raise LLMTimeout(f"the LLM at {self.url} did not answer within {timeout or self.timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise LLMUpstreamError(f"cannot reach the LLM at {self.url}: {type(exc).__name__}: {exc}") from exc
        _raise_for_status(resp.status_code, resp.text, self.url)
        try:
            data = resp.json()
        except ValueError as exc:
            raise LLMUpstreamError(f"the LLM at {self.url} replied with something that is not JSON: "
                                   f"{resp.text[:MAX_ERROR_BODY]!r}") from exc
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMUpstreamError(f"the LLM reply from {self.url} has no choices[0].message.content") from exc
        if not isinstance(content, str):
            raise LLMUpstreamError(f"the LLM reply from {self.url} has no text content")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return Completion(
            text=content,
            finish_reason=choice.get("finish_reason") if isinstance(choice, dict) else None,
            model=data.get("model") if isinstance(data.get("model"), str) else None,
            prompt_tokens=_int(usage.get("prompt_tokens")),
            completion_tokens=_int(usage.get("completion_tokens")),
            raw_usage=usage,
        )

    def stream(self, messages: Sequence[dict[str, Any]], *, max_tokens: int = 1024, temperature: float = 0.0,
               response_format: dict[str, Any] | None = None, timeout: float | None = None
               ) -> Iterator[str | Completion]:
        """Yield text deltas as they arrive, then the whole ``Completion`` last.

        ``timeout`` bounds the wait for each chunk and the whole reply (twice the timeout in all,
        so a slow but steady stream can finish). A stream that ends without a ``finish_reason`` or
        ``[DONE]`` is truncated: ``LLMUpstreamError``.
        """
        import httpx

        limit = timeout or self.timeout
        deadline = time.monotonic() + 2 * limit
        body = self._body(messages, max_tokens, temperature, response_format, stream=True)
        parts: list[str] = []
        finish: str | None = None
        model: str | None = None
        usage: dict[str, Any] = {}
        done = False
        try:
            with httpx.stream("POST", self.url, json=body, headers=self._headers(), timeout=limit) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    _raise_for_status(resp.status_code, resp.text, self.url)
                ctype = resp.headers.get("content-type", "")
                if "text/event-stream" not in ctype:  # a server that ignores "stream": one JSON reply
                    resp.read()
                    yield from _single_reply_as_stream(resp.text, self.url)
                    return
                for line in resp.iter_lines():
                    if time.monotonic() > deadline:
                        raise LLMTimeout(f"the LLM stream from {self.url} ran past {2 * limit:g} s")
                    line = line.strip()
                    if not line or line.startswith(":") or not line.startswith("data:"):
                        continue
                    payload = line[5:].strip()
                    if payload == "[DONE]":
                        done = True
                        break
                    try:
                        chunk = json.loads(payload)
                    except ValueError as exc:
                        raise LLMUpstreamError(
                            f"the LLM stream from {self.url} sent a chunk that is not JSON: {payload[:200]!r}"
                        ) from exc
                    if not isinstance(chunk, dict):
                        raise LLMUpstreamError(f"the LLM stream from {self.url} sent a chunk that is not an object")
                    if isinstance(chunk.get("error"), dict | str):
                        raise LLMUpstreamError(f"the LLM stream from {self.url} reported an error: "
                                               f"{str(chunk['error'])[:MAX_ERROR_BODY]}")
                    if isinstance(chunk.get("model"), str):
                        model = chunk["model"]
                    if isinstance(chunk.get("usage"), dict):
                        usage = chunk["usage"]
                    for choice in chunk.get("choices") or []:
                        if not isinstance(choice, dict):
                            continue
                        delta = choice.get("delta") or {}
                        text = delta.get("content") if isinstance(delta, dict) else None
                        if isinstance(text, str) and text:
                            parts.append(text)
                            yield text
                        if choice.get("finish_reason"):
                            finish = str(choice["finish_reason"])
        except httpx.TimeoutException as exc:
            raise LLMTimeout(f"the LLM at {self.url} sent nothing for {limit:g} s") from exc
        except httpx.HTTPError as exc:
            raise LLMUpstreamError(f"the LLM stream from {self.url} broke: {type(exc).__name__}: {exc}") from exc
        if not done and finish is None:
            raise LLMUpstreamError(f"the LLM stream from {self.url} ended before the reply was complete "
                                   f"(no finish_reason, no [DONE]; {len(''.join(parts))} characters received)")
        yield Completion(
            text="".join(parts),
            finish_reason=finish,
            model=model,
            prompt_tokens=_int(usage.get("prompt_tokens")),
            completion_tokens=_int(usage.get("completion_tokens")),
            raw_usage=usage,
        )


def _single_reply_as_stream(text: str, url: str) -> Iterator[str | Completion]:
    try:
        data = json.loads(text)
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LLMUpstreamError(f"the LLM at {url} replied with neither a stream nor a chat completion: "
                               f"{text[:MAX_ERROR_BODY]!r}") from exc
    if not isinstance(content, str):
        raise LLMUpstreamError(f"the LLM reply from {url} has no text content")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    if content:
        yield content
    yield Completion(text=content, finish_reason=choice.get("finish_reason"), model=data.get("model"),
                     prompt_tokens=_int(usage.get("prompt_tokens")),
                     completion_tokens=_int(usage.get("completion_tokens")), raw_usage=usage)


def _raise_for_status(status: int, text: str, url: str) -> None:
    if status < 400:
        return
    if status in (408, 504):
        raise LLMTimeout(f"the LLM at {url} timed out (HTTP {status})")
    raise LLMUpstreamError(f"the LLM at {url} answered HTTP {status}: {text[:MAX_ERROR_BODY]!r}")


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def client_from_settings(settings: Settings, *, timeout: float = 60.0) -> AnswerClient:
    """The configured endpoint, or ``LLMNotConfigured`` (503) saying how to configure one."""
    base, model = settings.llm_base_url, settings.llm_model
    if not base or not model:
        missing = " and ".join(n for n, v in (("FOLIO_LLM_BASE_URL", base), ("FOLIO_LLM_MODEL", model)) if not v)
        raise LLMNotConfigured(f"no LLM is configured for answers ({missing} not set): {ENABLE_HINT}")
    return AnswerClient(base, model, api_key=settings.llm_api_key, timeout=timeout)
