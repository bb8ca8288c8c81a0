"""``compress="llm"``: the compressor that ``assembly.compress`` calls, built on the configured
OpenAI-compatible endpoint (``FOLIO_LLM_*``, through the one client, ``api.service.llm``). Assembly stays free
of network code: it gets this callable, recounts what comes back with folio's tokenizer and cuts it
to fit, and sends an item extractive (with a note) when the call raises. Each call ends within
``TIMEOUT_S`` and all of a package's calls within ``PACKAGE_S`` (total deadlines, whatever the
endpoint does), so a slow model cannot hold a query worker for longer.

Without an endpoint configured, asking for ``compress="llm"`` is ``LLMNotConfigured`` (503
``llm_not_configured``) with the same how-to-enable hint as ``/v1/answer``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from folio.api.service.chat import LLMTimeout, require_llm, strip_fences
from folio.api.service.llm_http import Deadline

if TYPE_CHECKING:
    from folio.api.service.llm import ChatClient
    from folio.assembly.packing.compress import Compressor
    from folio.settings import Settings

TIMEOUT_S = 15.0
"""Per call, in all (a total deadline, not per read); after a timeout the rest of the package is
compressed extractively."""
PACKAGE_S = 30.0
"""Every call for one package together: past it the model is not asked again (extractive instead)."""
SYSTEM = (
    "You compress evidence for a question. From the TEXT, keep only the sentences, numbers, names and "
    "identifiers that bear on the QUESTION, in the TEXT's own words; drop everything else. Add nothing that is "
    "not in the TEXT: no preamble, no citations, no answer of your own. Reply with the compressed text only."
)


def llm_compressor(settings: Settings, *, timeout: float = TIMEOUT_S, package_s: float = PACKAGE_S,
                   client: ChatClient | None = None) -> Compressor:
    """``(question, text, max_tokens) -> compressed text`` through ``client`` (default: the configured
    endpoint's); raises ``LLMNotConfigured`` when there is none. The callable raises
    ``LLMTimeout``/``LLMUpstreamError``; each call ends within ``timeout`` s and all of them within
    ``package_s`` s of the first."""
    client = require_llm(settings, client, what="compress='llm' needs an LLM",
                         aside="; compress='extractive' needs none")
    budget: list[Deadline] = []  # started by the first call

    def compress(question: str, text: str, max_tokens: int) -> str:
        if not budget:
            budget.append(Deadline(package_s))
        left = budget[0].left()
        if left <= 0:
            raise LLMTimeout(f"compress='llm' used its {package_s:g} s for this package")

        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"QUESTION: {question}\n\nTEXT:\n{text}\n\n"
                                        f"Compressed text (at most {max_tokens} tokens):"},
        ]
        reply = client.chat(messages, max_tokens=max_tokens, temperature=0.0, timeout=min(timeout, left))
        return strip_fences(reply.text)[0]

    return compress
