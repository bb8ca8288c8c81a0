"""LanceDB's Python package, imported with the pydantic validators it defines built on first use.

``import lancedb`` imports ``lance_namespace``, whose generated REST client defines some 400 pydantic models
and a thousand validated functions. Building their validators was most of the import's cost (about 1.5 of
2.2 s on the 2-core development machine), and the import is most of a ``folio context`` run's start-up.
folio reaches LanceDB through local and object-store connections, never through that REST client, so the
validators are hardly ever used; building them when first used (pydantic's ``defer_build``) changes no
behaviour, only when the work happens.

pydantic offers ``defer_build`` per class; the classes are LanceDB's, so the import runs with it as the
default of the configuration every class reads (``config_defaults``), restored right after. A pydantic
without that table imports LanceDB as it is: slower, the same.
"""

from __future__ import annotations

import importlib
import sys
import threading
from types import ModuleType

_LOCK = threading.Lock()


def import_lancedb() -> ModuleType:
    """``lancedb``, imported once per process with deferred validator builds."""
    found = sys.modules.get("lancedb")
    if found is not None:
        return found
    with _LOCK:
        try:
            from pydantic._internal._config import config_defaults
        except ImportError:  # pragma: no cover - a pydantic without the table: import as it is
            return importlib.import_module("lancedb")
        before = config_defaults.get("defer_build", False)
        config_defaults["defer_build"] = True
        try:
            return importlib.import_module("lancedb")
        finally:
            config_defaults["defer_build"] = before


import_lancedb()
# The names folio's row models build on, from the package imported above (importing them is what imports it).
from lancedb.pydantic import LanceModel as LanceModel  # noqa: E402
from lancedb.pydantic import MultiVector as MultiVector  # noqa: E402
from lancedb.pydantic import Vector as Vector  # noqa: E402
from lancedb.pydantic import pydantic_to_schema as pydantic_to_schema  # noqa: E402
