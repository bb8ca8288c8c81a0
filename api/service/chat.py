"""What the API layer adds to the one LLM client (``api.service.llm.ChatClient``): the how-to-enable hint,
``LLMNotConfigured`` (503) for a call that needs a model when none is configured, and ``strip_fences``.

Answers, ``compress="llm"``, the reranker and LLM summaries all go through ``api.service.llm``'s client
(``Folio.llm`` holds the server's one instance); each call passes its own deadline (an answer's
``timeout_s``, 15 s per compression call, the client's 30 s for rerank and summaries).

    ModelUnavailable (503)           kernel.errors
    ├── LLMNotConfigured (503)       no endpoint configured (this module)
    ├── LLMTimeout (504)             the reply did not end within the timeout (api.service.llm_http)
    └── LLMUpstreamError (502)       unreachable, an error status, a bad or truncated reply (api.service.llm_http)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from folio.api.service.llm import MAX_REPLY_CHARS, ChatClient, Completion, client_from_settings
from folio.api.service.llm_http import MAX_REPLY_BYTES, LLMTimeout, LLMUpstreamError
from folio.kernel.errors import ModelUnavailable

if TYPE_CHECKING:
    from folio.settings import Settings

__all__ = [
    "MAX_REPLY_BYTES",
    "MAX_REPLY_CHARS",
    "AnswerClient",
    "ChatClient",
    "Completion",
    "LLMNotConfigured",
    "LLMTimeout",
    "LLMUpstreamError",
    "require_llm",
]

ENABLE_HINT = (
    "set FOLIO_LLM_BASE_URL to an OpenAI-compatible server (llama.cpp `llama-server --port 8080` -> "
    "http://127.0.0.1:8080/v1, vLLM `vllm serve MODEL` -> http://127.0.0.1:8000/v1, Ollama -> "
    "http://127.0.0.1:11434/v1, or a hosted API), FOLIO_LLM_MODEL to the model name it serves and, if it "
    "needs one, FOLIO_LLM_API_KEY; then restart folio"
)
AnswerClient = ChatClient
"""The answers' client is the one client (the name stays for callers of earlier releases)."""


class LLMNotConfigured(ModelUnavailable):
    code = "llm_not_configured"
    http_status = 503


def require_llm(
    settings: Settings,
    client: ChatClient | None = None,
    *,
    what: str = "no LLM is configured for answers",
    aside: str = "",
) -> ChatClient:
    """``client``, else the configured endpoint's client; none configured is ``LLMNotConfigured`` (503),
    saying which variables are missing and how to set them."""
    client = client or client_from_settings(settings)
    if client is None:
        base, model = settings.llm.base_url, settings.llm.model
        missing = " and ".join(n for n, v in (("FOLIO_LLM_BASE_URL", base), ("FOLIO_LLM_MODEL", model)) if not v)
        raise LLMNotConfigured(f"{what} ({missing} not set{aside}): {ENABLE_HINT}")
    return client


_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.S)


def strip_fences(reply: str) -> tuple[str, bool]:
    """A reply without Markdown code fences around it, and whether it had them.

    >>> strip_fences('```json\\n{"a": 1}\\n```')
    ('{"a": 1}', True)
    """
    m = _FENCE.match(reply)
    return (m.group(1).strip(), True) if m else (reply.strip(), False)
