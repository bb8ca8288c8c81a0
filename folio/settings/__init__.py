"""folio's configuration: one typed tree of settings groups, read from ``FOLIO_*`` variables.

``Settings`` is the tree: ``server``, ``security``, ``storage``, ``ingest``, ``embedding``, ``models``,
``context``, ``llm`` and ``cluster``, each a group that reads its own variables when it is built (the
names are those folio always had: ``FOLIO_LLM_MODEL`` is ``settings.llm.model``, ``FOLIO_INGEST_TIMEOUT_S``
is ``settings.ingest.timeout_s``). ``ClientSettings`` is what ``folio.Client`` reads. The composition
roots (the CLI, ``create_app``, the workers, ``folio.local``) build a ``Settings`` and pass values down;
a library function that is given nothing builds only the group it needs, here.

This is the only package of folio that reads or writes ``os.environ`` (``tests/test_environ.py``): the
variables a child process or a library needs (Tesseract's thread limit, Hugging Face's offline switch,
tiktoken's cache, Ray's loopback switch) are set through :func:`child_environ`,
:func:`apply_process_environment` and :func:`tiktoken_cache_dir`. It imports nothing of folio, so that
every room may import it (the kernel for tiktoken's cache, the client for its URL and key).

Its modules, bottom up: ``environ`` (the process's environment), ``base`` (``Group``, how a group reads its
variables), ``groups`` (the groups and the shared defaults), ``tree`` (``Settings``) and ``misspelled``
(unknown ``FOLIO_`` variables). Import the names from here: ``from folio.settings import Settings``.
"""

from __future__ import annotations

from folio.settings.base import Group, env_names
from folio.settings.environ import (
    apply_process_environment,
    child_environ,
    default_concurrency,
    default_data_dir,
    hub_offline,
    tiktoken_cache_dir,
    usable_cpus,
)
from folio.settings.groups import (
    BUILTIN_TOKENIZERS,
    DEFAULT_BUDGET,
    DEFAULT_DOCUMENT_BACKEND,
    DEFAULT_QUERY_BACKEND,
    DEFAULT_TOKENIZER,
    LLM_ENABLE_HINT,
    ClientSettings,
    ClusterSettings,
    ContextSettings,
    EmbeddingSettings,
    IngestSettings,
    LlmSettings,
    ModelSettings,
    SecuritySettings,
    ServerSettings,
    StorageSettings,
)
from folio.settings.misspelled import known_env, nearest_setting, setting_groups, unknown_env, warn_unknown_env
from folio.settings.tree import LEGACY_NAMES, Settings

__all__ = [
    "BUILTIN_TOKENIZERS",
    "DEFAULT_BUDGET",
    "DEFAULT_DOCUMENT_BACKEND",
    "DEFAULT_QUERY_BACKEND",
    "DEFAULT_TOKENIZER",
    "LEGACY_NAMES",
    "LLM_ENABLE_HINT",
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
    "apply_process_environment",
    "child_environ",
    "default_concurrency",
    "default_data_dir",
    "env_names",
    "hub_offline",
    "known_env",
    "nearest_setting",
    "setting_groups",
    "tiktoken_cache_dir",
    "unknown_env",
    "usable_cpus",
    "warn_unknown_env",
]
