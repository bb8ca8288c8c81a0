"""A minimal client for OpenAI-compatible ``/v1/chat/completions`` endpoints (vLLM, llama.cpp, OpenAI).

Only what folio needs: one non-streaming completion within a total deadline (``timeout``, from
connect to the last byte) and a bounded reply (``retrieval.llm_http``). Failures raise
``ModelUnavailable`` with the reason, never the endpoint's URL, so callers can fall back and say why.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from folio.kernel.errors import ModelUnavailable
from folio.retrieval.config import ModelSettings
from folio.retrieval.llm_http import post_json, run_sync

logger = logging.getLogger(__name__)

LLM_ENABLE_HINT = (
    "set FOLIO_LLM_BASE_URL (an OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1), "
    "FOLIO_LLM_MODEL and, if the server needs one, FOLIO_LLM_API_KEY"
)


class ChatClient:
    def __init__(
        self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 30.0
    ) -> None:
        base = base_url.rstrip("/")
        self.url = base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    def complete(
        self, messages: Sequence[dict[str, Any]], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> str:
        """The assistant message text of one completion."""
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = {
            "model": self.model,
            "messages": list(messages),
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        data = run_sync(lambda: post_json(self.url, body, headers, self.timeout))  # LLMTimeout, LLMUpstreamError
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ModelUnavailable("LLM reply has no choices[0].message.content") from exc
        if not isinstance(content, str):
            raise ModelUnavailable("LLM reply has no text content")
        return content


def client_from_settings(settings: ModelSettings) -> ChatClient | None:
    """The configured LLM client, or None when ``llm_base_url`` or ``llm_model`` is not set."""
    if not settings.llm_base_url or not settings.llm_model:
        return None
    return ChatClient(settings.llm_base_url, settings.llm_model, api_key=settings.llm_api_key)
