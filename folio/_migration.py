"""Names that moved, in one table: an import from the old place still works, with a ``DeprecationWarning`` that
says where the name lives now (in the style of pydantic's ``_migration.py``).

A moved module that callers outside the repository may still import (a name documented in ``docs/``) keeps a
stub at its old path whose module ``__getattr__`` asks ``moved``; the code in the repository imports the new
names (``scripts/migrate_namespace.py`` rewrites old imports). Nothing else keeps an alias: a name not in
``MOVED`` is an ``AttributeError`` as usual.

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     value = moved("folio.ingest.store", "DEFAULT_COLLECTION")
>>> value, caught[0].category.__name__
('default', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

# "old.module:name" -> "new.module:name". Issue 32: the store became one package, ``folio.ingest.storage``.
MOVED: dict[str, str] = {
    "folio.ingest.store:Store": "folio.ingest.storage.store:Store",
    "folio.ingest.store:Claim": "folio.ingest.storage.catalogue:Claim",
    "folio.ingest.store:default_data_dir": "folio.settings:default_data_dir",
    **{
        f"folio.ingest.store:{name}": f"folio.ingest.storage.sql:{name}"
        for name in ("COLLECTION_COLUMN", "DEFAULT_COLLECTION", "FTS_COLUMN", "SEARCH_KINDS", "WRITER_FIELD",
                     "check_collection", "row_collection", "sql_in")
    },
    **{
        f"folio.ingest.store:{name}": f"folio.ingest.storage.schema:{name}"
        for name in ("CHUNKS_SCHEMA", "CLAIM_FIELDS", "REGIONS_SCHEMA", "VERSIONS_SCHEMA", "region_to_row",
                     "row_to_region")
    },
}


def moved(module: str, name: str) -> Any:
    """``module.name`` from where it lives now, with a ``DeprecationWarning`` naming that place; an
    ``AttributeError`` for a name that never moved from ``module``."""
    target = MOVED.get(f"{module}:{name}")
    if target is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    new_module, _, new_name = target.partition(":")
    warnings.warn(
        f"{module}.{name} has moved: import it from {new_module} ({module} goes in a later release)",
        DeprecationWarning,
        stacklevel=3,  # the caller's import line, past the module __getattr__ that called this
    )
    return getattr(importlib.import_module(new_module), new_name)
