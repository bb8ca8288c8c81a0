"""Import paths that moved, in one table, with a warning (in the style of pydantic's ``_migration.py``).

Issue 32 gave the api rooms by role (``api/http``, ``api/cli``, ``api/mcp``, ``api/service``, ``api/cluster``),
moved the chat client from ``retrieval`` to the service room, removed ``folio.api.settings`` (an alias of
``folio.settings``), made the store one package (``folio.ingest.storage``): ``folio.ingest.store``, which
``docs/api.md`` documented, is gone; and gave assembly two rooms, ``assembly/expansion`` and
``assembly/packing`` (the modules that ``docs/`` names answer here: ``pagetext``, ``compress``, ``pack``).
Code that still imports an old path keeps working: it gets the same object and a ``DeprecationWarning`` that
names the new path. The code in the repository imports the new names
(``scripts/migrate_namespace.py`` rewrites old imports); nothing else keeps an alias.

``MOVED`` maps ``"old.module"`` (every name of a module that is gone) or ``"old.module:name"`` (one name of a
module that is gone or is a package now) to the new home. An old module with no file of its own is made
importable by ``install()`` (called by ``folio/__init__.py``) as an empty module whose ``__getattr__`` is
``getattr_migration(old)``; the packages that took an old module's name (``folio.api.service``,
``folio.api.cluster``) set that ``__getattr__`` themselves. Nothing is imported until a moved name is asked for.

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     value = getattr_migration("folio.ingest.store")("DEFAULT_COLLECTION")
>>> value, caught[0].category.__name__
('default', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

MOVED: dict[str, str] = {
    # the settings: one tree, in folio.settings
    "folio.api.settings": "folio.settings",
    # the work behind the door: api/service/
    "folio.api.service:version_filenames": "folio.api.service.context:version_filenames",
    "folio.api.service:visible_version": "folio.api.service.context:visible_version",
    "folio.api.service:visible_region": "folio.api.service.context:visible_region",
    "folio.api.service:page_image_url": "folio.api.service.context:page_image_url",
    "folio.api.service:region_image_url": "folio.api.service.context:region_image_url",
    "folio.api.service:search_hits": "folio.api.service.context:search_hits",
    "folio.api.service:build_context": "folio.api.service.context:build_context",
    "folio.api.answer": "folio.api.service.answer",
    "folio.api.answer_schemas": "folio.api.service.answer_schemas",
    "folio.api.schema_check": "folio.api.service.schema_check",
    "folio.api.chat": "folio.api.service.chat",
    "folio.api.compress_llm": "folio.api.service.compress_llm",
    "folio.api.model_calls": "folio.api.service.model_calls",
    "folio.api.jobs": "folio.api.service.jobs",
    "folio.api.highlight": "folio.api.service.highlight",
    "folio.retrieval.llm": "folio.api.service.llm",
    "folio.retrieval.llm_http": "folio.api.service.llm_http",
    # REST: api/http/
    "folio.api.app": "folio.api.http.app",
    "folio.api.deps": "folio.api.http.deps",
    "folio.api.middleware": "folio.api.http.middleware",
    "folio.api.body_limits": "folio.api.http.body_limits",
    "folio.api.http_protocol": "folio.api.http.protocol",
    "folio.api.offloop": "folio.api.http.offloop",
    "folio.api.startup": "folio.api.http.startup",
    "folio.api.pool": "folio.api.http.pool",
    "folio.api.query_worker": "folio.api.http.query_worker",
    "folio.api.query_ops": "folio.api.http.query_ops",
    "folio.api.routes": "folio.api.http.routes",
    # the command line: api/cli/
    "folio.api.cli_common": "folio.api.cli.common",
    "folio.api.cli_query": "folio.api.cli.query",
    "folio.api.cli_answer": "folio.api.cli.answer",
    "folio.api.cli_keys": "folio.api.cli.keys",
    "folio.api.cli_mcp": "folio.api.cli.mcp",
    "folio.api.discovery": "folio.api.cli.discovery",
    "folio.api.cluster_cli": "folio.api.cli.ray_ingest",
    # MCP: api/mcp/ (its HTTP mount is REST's)
    "folio.api.mcp_server": "folio.api.mcp.server",
    "folio.api.mcp_server:mount": "folio.api.http.mcp_mount:mount",
    "folio.api.mcp_outputs": "folio.api.mcp.outputs",
    # the Ray cluster: api/cluster/
    "folio.api.cluster:connect": "folio.api.cluster.board:connect",
    "folio.api.cluster:board": "folio.api.cluster.board:board",
    "folio.api.cluster:job_spec": "folio.api.cluster.board:job_spec",
    "folio.api.cluster:ingest_task": "folio.api.cluster.board:ingest_task",
    "folio.api.cluster_jobs": "folio.api.cluster.jobs",
    "folio.api.cluster_local": "folio.api.cluster.local",
    # the store: one package, folio.ingest.storage (only the names docs/api.md documented keep an old path)
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
    # assembly's rooms: expansion (hit -> unit) and packing (candidates -> what fits the budget)
    "folio.assembly.pagetext": "folio.assembly.expansion.pagetext",
    "folio.assembly.compress": "folio.assembly.packing.compress",
    "folio.assembly.pack:entry_budgets": "folio.assembly.packing.monotone:entry_budgets",
    "folio.assembly.pack:pack_monotone": "folio.assembly.packing.monotone:pack_monotone",
    "folio.assembly.pack:coverage_order": "folio.assembly.priority:coverage_order",
    "folio.assembly.pack:mmr_order": "folio.assembly.priority:mmr_order",
}
MODULES = frozenset(key for key in MOVED if ":" not in key)
"""The old modules that are gone as a whole (the others are packages now, with their own ``__getattr__``)."""
OLD_MODULES = frozenset(key.partition(":")[0] for key in MOVED)
"""Every old module the table answers for; the finder serves those that no real module answers for first."""


def new_home(module: str, name: str) -> str | None:
    """``"new.module:name"`` for ``name`` of the old ``module``, or None when it did not move."""
    if f"{module}:{name}" in MOVED:
        return MOVED[f"{module}:{name}"]
    if module in MODULES:
        return f"{MOVED[module]}:{name}"
    return None


def getattr_migration(module: str) -> Callable[[str], Any]:
    """The module-level ``__getattr__`` of the old ``module``: a moved name warns and is imported from its new
    home; any other name is the ``AttributeError`` Python raises for a missing one."""

    def wrapper(name: str) -> Any:
        if name.startswith("__"):  # the import system's and tools' own probes (__path__, __file__, ...)
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        home = new_home(module, name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new_module, new_name = home.split(":")
        warnings.warn(
            f"{module}.{name} moved to {new_module}.{new_name}: import it from there (this path goes in a "
            "future release)",
            DeprecationWarning,
            stacklevel=2,
        )
        try:
            return getattr(importlib.import_module(new_module), new_name)
        except AttributeError:  # a module of a moved package (folio.api.routes.documents)
            return importlib.import_module(f"{new_module}.{new_name}")

    return wrapper


class _OldModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old modules of ``OLD_MODULES`` after every real finder has looked (a real module always wins)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in OLD_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default: an empty module

    def exec_module(self, module: ModuleType) -> None:
        home = MOVED.get(module.__name__, "the homes folio._migration.MOVED names")
        module.__doc__ = f"Moved to {home} (folio._migration)."
        module.__getattr__ = getattr_migration(module.__name__)  # type: ignore[method-assign]


_FINDER = _OldModules()


def install() -> None:
    """Make the old modules importable (once per process), behind every other finder."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
