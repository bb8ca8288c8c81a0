"""LanceDB's Python package, imported without building what folio never uses: the REST client of ``lance_namespace``.

``import lancedb`` imports ``lance_namespace``, whose generated REST client (``lance_namespace_urllib3_client``)
defines some 400 pydantic models and, in its package's ``__init__``, nine API classes with a thousand validated
methods. That was most of the import's cost (about 1.5 of 2.2 s on the 2-core development machine), and the
import is most of a ``folio context`` run's start-up. folio reaches LanceDB through local and object-store
connections, never through that REST client. Two things change when work happens, not what it does:

- the import runs with pydantic's ``defer_build`` as the default of every class it defines, so a model's
  validator is built when first used (pydantic offers the switch per class, and the classes are LanceDB's: the
  default every class reads, ``config_defaults``, is set for the import and restored right after);
- the REST client's package is registered without running its ``__init__``: its ``models`` and other modules
  import as usual, and the first name asked of the package itself (``ApiClient``, ``TableApi`` ...) runs the
  ``__init__`` then, as a REST namespace connection would.

One check is not made at all: on Python before 3.12, LanceDB marks its connection classes' methods with the
``overrides`` package's ``@override``, which reads each class body's bytecode to find its base classes and compares
signatures when the class is defined (a hundred methods: about 0.1 s of CPU, a tenth of the import). During the
import ``override`` marks the method and checks nothing, which is what LanceDB's ``@override`` is on Python 3.12
and later (``typing.override``); the classes and methods are the same.

Each step is skipped when the library it relies on does not look as expected: LanceDB then imports as it is,
slower, the same.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

_LOCK = threading.RLock()  # import_lancedb holds it while LanceDB's import may ask the package
REST_CLIENT = "lance_namespace_urllib3_client"


def import_lancedb() -> ModuleType:
    """``lancedb``, imported once per process, with deferred validator builds and the REST client's package
    ``__init__`` run on first use."""
    found = sys.modules.get("lancedb")
    if found is not None:
        return found
    with _LOCK:
        try:
            from pydantic._internal._config import config_defaults
        except ImportError:  # pragma: no cover - a pydantic without the table: import as it is
            return importlib.import_module("lancedb")
        _register_lazily(REST_CLIENT)
        before = config_defaults.get("defer_build", False)
        config_defaults["defer_build"] = True
        try:
            with _override_marks_only():
                return importlib.import_module("lancedb")
        finally:
            config_defaults["defer_build"] = before


@contextlib.contextmanager
def _override_marks_only() -> Iterator[None]:
    """Within the block, ``overrides.override`` is ``typing.override``'s behaviour: it marks the method and
    returns it (LanceDB takes it from the package when its modules run). Nothing changes on Python 3.12 and
    later, where LanceDB uses ``typing.override``, or without the package."""
    overrides: Any = None
    if sys.version_info < (3, 12) and importlib.util.find_spec("overrides") is not None:
        overrides = importlib.import_module("overrides")
    checked = getattr(overrides, "override", None)
    if not callable(checked):
        yield
        return
    overrides.override = _marks_only
    try:
        yield
    finally:
        overrides.override = checked


def _marks_only(method: Any = None, **_: Any) -> Any:
    """``@override`` and ``@override(check_signature=...)`` as ``typing.override``: ``__override__`` set, no check
    (``overrides.EnforceOverrides`` reads the mark)."""
    if method is None:
        return _marks_only
    method.__override__ = True
    return method


def _register_lazily(name: str) -> None:
    """Put package ``name`` in ``sys.modules`` with its ``__init__`` not yet run: its submodules import from its
    folder as usual, and the first attribute asked of the package runs the ``__init__`` (then answers)."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return  # not installed, or not a package: nothing to defer
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def first_use(attr: str) -> Any:
        with _LOCK:  # once, also when two threads ask at the same moment
            if package.__dict__.pop("__getattr__", None) is not None:
                loader.exec_module(package)
        return getattr(package, attr)

    package.__getattr__ = first_use  # type: ignore[method-assign]  # a module's own __getattr__ (PEP 562)
    sys.modules[name] = package


import_lancedb()
# The names folio's row models build on, from the package imported above (importing them is what imports it).
from lancedb.pydantic import LanceModel as LanceModel  # noqa: E402
from lancedb.pydantic import MultiVector as MultiVector  # noqa: E402
from lancedb.pydantic import Vector as Vector  # noqa: E402
from lancedb.pydantic import pydantic_to_schema as pydantic_to_schema  # noqa: E402
