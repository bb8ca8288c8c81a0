"""The process's environment: what the settings read, and what they set for others.

Every ``os.environ`` read or write of folio is in this package (``tests/test_environ.py``), most of it here:
the variables a child process or a library needs (Tesseract's thread limit, Hugging Face's offline switch,
tiktoken's cache, Ray's loopback switch) are set through :func:`child_environ`,
:func:`apply_process_environment` and :func:`tiktoken_cache_dir`. ``Group.from_env`` and
``Settings.from_env`` read another mapping instead, through :func:`reading`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

# The variables ``from_env`` reads instead of the process's (None: the process's).
_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("folio_settings_environ", default=None)


@contextmanager
def reading(environ: Mapping[str, str]) -> Iterator[None]:
    """Within the block, settings groups read ``environ`` instead of the process's environment."""
    token = _ENVIRON.set(environ)
    try:
        yield
    finally:
        _ENVIRON.reset(token)


def given_environ() -> Mapping[str, str] | None:
    """The mapping ``from_env`` was given, inside its block; None: the process's environment."""
    return _ENVIRON.get()


def current_environ() -> Mapping[str, str]:
    """The variables being read: those given to ``from_env``, else the process's."""
    environ = _ENVIRON.get()
    return os.environ if environ is None else environ


def usable_cpus() -> int:
    """The cores this process may run on (its CPU affinity: a container's cpuset, ``taskset``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def default_concurrency() -> int:
    """Query threads, and `folio serve`'s query processes, when not set: the cores, at most 8."""
    return max(1, min(8, usable_cpus()))


def default_data_dir() -> str:
    """``$FOLIO_DATA``, else ``$XDG_DATA_HOME/folio``, else ``~/.local/share/folio``."""
    environ = current_environ()
    if environ.get("FOLIO_DATA"):
        return environ["FOLIO_DATA"]
    base = environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "folio")


def child_environ(**overrides: str) -> dict[str, str]:
    """The environment for a child process: this process's, with ``overrides`` on top."""
    return {**os.environ, **overrides}


def apply_process_environment(values: Mapping[str, str], *, override: bool = True) -> None:
    """Set variables that a library reads from this process's environment (and that child processes
    inherit); ``override=False`` keeps a value that is already set."""
    for name, value in values.items():
        if override:
            os.environ[name] = value
        else:
            os.environ.setdefault(name, value)


def hub_offline() -> None:
    """Hugging Face never goes online (weights come from local caches), unless the user said otherwise:
    set before transformers, open_clip or colpali load."""
    apply_process_environment({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}, override=False)


def tiktoken_cache_dir() -> str:
    """``$TIKTOKEN_CACHE_DIR``, else a folder under the temp dir, which is then set for tiktoken to find."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR")
    if not cache_dir:
        cache_dir = os.path.join(tempfile.gettempdir(), "folio-tiktoken-cache")
        os.environ["TIKTOKEN_CACHE_DIR"] = cache_dir
    return cache_dir
