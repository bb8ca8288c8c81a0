"""folio: PDFs in, cited and budgeted LLM context out. One installed package, in rooms by role:

- ``folio.settings``: the configuration, one typed tree read from ``FOLIO_*`` variables (the only module that
  reads the environment; it imports nothing of folio);
- ``folio.kernel``: what every stage shares (the domain model, geometry, errors, tokens, text normalisation);
- ``folio.ingest``, ``folio.retrieval``, ``folio.assembly``, ``folio.api``: the four stages, in the
  repository's top-level folders of those names (pyproject.toml maps them into this package);
- ``folio.Client`` / ``folio.AsyncClient`` for a folio server (``folio serve``), the typed models of its REST
  API (``folio.models``), the errors they raise (``folio.errors``), and retrievers for LlamaIndex and
  LangChain (``folio.adapters``, optional extras); ``folio.local`` calls the service in-process.

The client names below are imported on first use, so that ``import folio.api.cli`` (the ``folio`` command)
does not pay for httpx and the client models. Import paths that moved keep working, with a warning
(``folio._migration``). ``folio.__version__`` is the version; the distribution that installs this package is
``folio-context`` (``folio._version``: the registry's ``folio`` is another project).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from folio import _migration
from folio._version import __version__ as __version__

_migration.install()

if TYPE_CHECKING:
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
_HOMES = {
    "AnswerEvent": "folio.client",
    "AsyncClient": "folio.client",
    "Client": "folio.client",
    "APIConnectionError": "folio.errors",
    "APIError": "folio.errors",
    "APITimeoutError": "folio.errors",
    "ClientError": "folio.errors",
    "NotFound": "folio.errors",
}


def __getattr__(name: str) -> Any:
    """``folio.Client`` and the other names of ``__all__``, imported when first asked for (PEP 562)."""
    if name in ("errors", "models"):
        return importlib.import_module(f"folio.{name}")
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'folio' has no attribute {name!r}")
