"""Service configuration: the settings tree of ``folio.settings``, under the name the api has always used.

Library functions never read settings themselves; the CLI and the FastAPI app build a ``Settings``
and pass explicit values down. The tree lives in ``folio.settings`` (the one module that reads the
environment), below every room, so that the kernel, ingest and the client may use it too.
"""

from __future__ import annotations

from folio.settings import (
    BUILTIN_TOKENIZERS,
    DEFAULT_BUDGET,
    LEGACY_NAMES,
    ClientSettings,
    ClusterSettings,
    ContextSettings,
    EmbeddingSettings,
    Group,
    IngestSettings,
    LlmSettings,
    ModelSettings,
    SecuritySettings,
    ServerSettings,
    Settings,
    StorageSettings,
    default_concurrency,
    known_env,
    nearest_setting,
    unknown_env,
    warn_unknown_env,
)

__all__ = [
    "BUILTIN_TOKENIZERS",
    "DEFAULT_BUDGET",
    "LEGACY_NAMES",
    "ClientSettings",
    "ClusterSettings",
    "ContextSettings",
    "EmbeddingSettings",
    "Group",
    "IngestSettings",
    "LlmSettings",
    "ModelSettings",
    "SecuritySettings",
    "ServerSettings",
    "Settings",
    "StorageSettings",
    "default_concurrency",
    "known_env",
    "nearest_setting",
    "unknown_env",
    "warn_unknown_env",
]
