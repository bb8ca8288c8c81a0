"""The few settings a ``folio`` command reads before it knows whether it needs the settings tree, without pydantic.

A command that asks a running server (``folio context`` or ``search`` with a ``folio serve`` on its data
directory, ``--server`` or ``$FOLIO_URL``) reads four things of the environment: the server's URL and key
(``ClientSettings.url``, ``.api_key``), the data directory (``StorageSettings.data``) and whether a ``FOLIO_``
variable is misspelled (``warn_unknown_env``). Reading them through ``folio.settings`` imports pydantic and
pydantic-settings: two thirds of such a command's CPU time, for four strings. Here they are read as
pydantic-settings reads them (a name in any case, an empty value kept as given); tests/test_settings_light.py
keeps both readings, and ``KNOWN_ENV`` and ``known_env()``, equal. Everything else goes through ``folio.settings``.
It imports nothing of folio: every room may import it, as it may the settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

KNOWN_ENV = frozenset(
    {
        "FOLIO_ALLOWED_HOSTS", "FOLIO_ANN_INDEX", "FOLIO_ANN_MIN_ROWS", "FOLIO_ANN_NPROBES", "FOLIO_ANN_REFINE_FACTOR",
        "FOLIO_ANN_SCOPE_REGIONS", "FOLIO_API_KEY", "FOLIO_CLIP_MODEL", "FOLIO_CLIP_PRETRAINED", "FOLIO_COLPALI_MODEL",
        "FOLIO_COLPALI_POOL_FACTOR", "FOLIO_CORS_ORIGINS", "FOLIO_DATA", "FOLIO_DEFAULT_BUDGET", "FOLIO_EMBED_BACKEND",
        "FOLIO_EMBED_DEVICE",
        "FOLIO_EMBED_THREADS", "FOLIO_HEADER_TIMEOUT_S", "FOLIO_HOST", "FOLIO_INGEST_ISOLATE", "FOLIO_INGEST_MEMORY_MB",
        "FOLIO_INGEST_TIMEOUT_S", "FOLIO_KEEP_ALIVE_S", "FOLIO_KEYS_FILE", "FOLIO_LLM_API_KEY", "FOLIO_LLM_BASE_URL",
        "FOLIO_LLM_CONCURRENCY", "FOLIO_LLM_MODEL", "FOLIO_LLM_QUEUE", "FOLIO_LLM_SUMMARIES", "FOLIO_MAX_PAGES",
        "FOLIO_MAX_REQUEST_BYTES", "FOLIO_MAX_UPLOAD_BYTES", "FOLIO_MODEL_CACHE", "FOLIO_OCR", "FOLIO_OCR_BUDGET_S",
        "FOLIO_PAGE_TIMEOUT_S", "FOLIO_PORT", "FOLIO_QUERY_BACKEND", "FOLIO_QUERY_PROCESSES", "FOLIO_QUERY_QUEUE",
        "FOLIO_QUERY_WORKERS", "FOLIO_RAY_ADDRESS", "FOLIO_RAY_CPUS_PER_DOC", "FOLIO_RAY_GPUS_PER_DOC",
        "FOLIO_STORAGE_OPTIONS", "FOLIO_TOKENIZER", "FOLIO_TOKENIZERS", "FOLIO_URL", "FOLIO_WORD_TABLES",
    }
)  # fmt: skip
"""Every ``FOLIO_`` variable folio reads: ``folio.settings.known_env()``, written out."""


def _variables(environ: Mapping[str, str] | None) -> dict[str, str]:
    """The variables by lower-case name, as pydantic-settings matches them (the last of two spellings wins)."""
    return {k.lower(): v for k, v in (os.environ if environ is None else environ).items()}


def client_url(environ: Mapping[str, str] | None = None) -> str | None:
    """``ClientSettings().url``: ``$FOLIO_URL``."""
    return _variables(environ).get("folio_url")


def client_api_key(environ: Mapping[str, str] | None = None) -> str | None:
    """``ClientSettings().api_key``: ``$FOLIO_API_KEY``."""
    return _variables(environ).get("folio_api_key")


def data_dir(environ: Mapping[str, str] | None = None) -> str:
    """``StorageSettings().data``: ``$FOLIO_DATA``, else ``$XDG_DATA_HOME/folio``, else ``~/.local/share/folio``."""
    found = _variables(environ).get("folio_data")
    if found is not None:
        return found
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "folio")


def any_unknown_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether a ``FOLIO_`` variable is one folio does not read (``folio.settings.warn_unknown_env`` then says
    which, and what it may mean)."""
    names = os.environ if environ is None else environ
    return any(name.startswith("FOLIO_") and name not in KNOWN_ENV for name in names)
