"""Compaction of a store's tables: LanceDB's ``optimize`` on each, and the bytes on disk before and after.

A writer compacts every ``compact_every`` commits (``Store.maintain``), ``folio ingest`` at its end and
``folio compact`` by hand (through ``folio.ingest.storage.maintenance``, which re-exports these names). This module
types the store as a protocol, so that the store can call it without an import circle.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

logger = logging.getLogger(__name__)


class Compactable(Protocol):
    """What compaction needs of a store (``folio.ingest.storage.store.Store`` is one)."""

    uri: str
    local: bool
    assets_root: Path
    _write_lock: threading.RLock

    def table_names(self) -> Sequence[str]: ...

    def table(self, name: str) -> Any | None: ...


# Old table versions younger than this survive a compaction: a reader that picked a version up
# just before may still be reading its files (reads check for the latest version on every query,
# so a read would have to last this long to notice).
COMPACT_OLDER_THAN = timedelta(minutes=2)


def _dir_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:  # removed meanwhile (a concurrent cleanup)
                pass
    return total


def sizes(store: Compactable) -> dict[str, int]:
    """Bytes on disk per table (``<name>.lance``), of ``assets``, and ``total`` (local stores only)."""
    if not store.local:
        return {}
    out: dict[str, int] = {}
    db_dir = Path(store.uri) / "lancedb"
    if db_dir.exists():
        for child in sorted(db_dir.iterdir()):
            if child.name.endswith(".lance"):
                out[child.name.removesuffix(".lance")] = _dir_bytes(child)
    out["assets"] = _dir_bytes(store.assets_root) if store.assets_root.exists() else 0
    out["total"] = _dir_bytes(Path(store.uri))
    return out


def compact(store: Compactable, older_than: timedelta = COMPACT_OLDER_THAN) -> dict[str, Any]:
    """Compact every table and remove versions older than ``older_than``; sizes before and after.

    ``older_than=timedelta(0)`` reclaims everything at once but breaks a concurrent reader or
    writer still on an older version: use it only when nothing else uses the store.
    """
    before = sizes(store)
    names = store.table_names()
    for name in names:
        table = store.table(name)
        if table is None:
            continue
        with store._write_lock, warnings.catch_warnings():
            # LanceDB warns that older_than=0 breaks concurrent users; the caller asked for it.
            warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than=0\)")
            table.optimize(cleanup_older_than=older_than)
    after = sizes(store)
    logger.info("compacted %s: %d -> %d bytes", store.uri, before.get("total", 0), after.get("total", 0))
    return {"before": before, "after": after, "tables": names}
