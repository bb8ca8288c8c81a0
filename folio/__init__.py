"""folio from Python: ``folio.Client`` / ``folio.AsyncClient`` for a folio server (``folio serve``),
the typed models of its REST API (``folio.models``), the errors they raise (``folio.errors``), and
retrievers for LlamaIndex and LangChain (``folio.adapters``, optional extras).

The service itself lives in the ``ingest``, ``retrieval``, ``assembly`` and ``api`` packages; this
package only calls it (over HTTP, or in-process through ``folio.local``).
"""

from __future__ import annotations

from folio import errors, models
from folio.client import AnswerEvent, AsyncClient, Client
from folio.errors import APIConnectionError, APIError, APITimeoutError, ClientError, NotFound

__all__ = [
    "APIConnectionError",
    "AnswerEvent",
    "APIError",
    "APITimeoutError",
    "AsyncClient",
    "Client",
    "ClientError",
    "NotFound",
    "errors",
    "models",
]
