"""The ``regions`` table: every region of every version (no vectors), and a cache of versions' region indexes.

Regions are stored and read back through ``RegionRow`` (``ingest/storage/schema.py``), which migrates rows of
older parser versions. A version's rows change only when they are replaced as a whole, by another writer
(``redo_degraded``), so a version's ``RegionIndex`` is built once per writer and kept in an LRU of the
``cache_size`` most recently used.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from folio.ingest.storage.catalogue import version_key, writer_key
from folio.ingest.storage.claims import retry_conflicts
from folio.ingest.storage.database import Database, Tagger
from folio.ingest.storage.sql import sql_str
from folio.kernel.errors import RegionNotFound
from folio.kernel.index import RegionIndex
from folio.kernel.model import Region


class RegionTable:
    """Writes and reads of the ``regions`` table."""

    def __init__(self, database: Database, *, cache_size: int) -> None:
        # function-level: the row models import LanceDB, which loads when a store opens
        from folio.ingest.storage.schema import REGIONS

        self.table = database.open(REGIONS.name, REGIONS.schema)
        self.cache_size = cache_size
        self.cache: OrderedDict[str, RegionIndex] = OrderedDict()
        self._lock = threading.Lock()
        self._has_writers = False

    def add(self, regions: Sequence[Region], tagged: Tagger) -> None:
        from folio.ingest.storage.schema import REGIONS, RegionRow, rows_table  # function-level: see __init__

        data = rows_table(REGIONS, [RegionRow.from_region(r) for r in regions])
        rows = tagged(self.table, "regions", data)
        retry_conflicts(lambda: self.table.add(rows))

    def index(self, doc_id: str, version_id: str, writer: str | None = None) -> RegionIndex:
        """All regions of one version, indexed in memory (the caller checks that it is ready): those of
        ``writer``, the ready row's (None: every row of the version). Cached per writer, so a version whose
        rows were replaced (``redo_degraded``) is read again."""
        key = f"{version_id}|{doc_id}|{writer}"
        with self._lock:
            hit = self.cache.get(key)
            if hit is not None:
                self.cache.move_to_end(key)
        if hit is not None:
            return hit
        where = version_key(doc_id, version_id)
        if writer is not None and self.has_writers():
            where = writer_key(doc_id, version_id, writer)
        rows = self.table.search().where(where).limit(None).to_arrow().to_pylist()
        from folio.ingest.storage.schema import row_to_region  # function-level: see __init__

        index = RegionIndex(row_to_region(r) for r in rows)
        with self._lock:
            self.cache[key] = index
            self.cache.move_to_end(key)
            while len(self.cache) > max(self.cache_size, 0):
                self.cache.popitem(last=False)
        return index

    def get(self, region_id: str, writer_of: Callable[[str, str], str | None]) -> Region:
        """One region by id, as readers see it: the row written by ``writer_of(doc_id, version_id)`` (the
        writer of that version's ready row; None: not ready, so no such region). While a version's rows are
        replaced, a region id has a row of each writer."""
        rows = self.table.search().where(f"region_id = {sql_str(region_id)}").limit(None).to_arrow().to_pylist()
        writers = self.has_writers()
        for row in rows:
            writer = writer_of(row["doc_id"], row["version_id"])
            if writer is not None and (not writers or (row.get("writer") or "") == writer):
                from folio.ingest.storage.schema import row_to_region  # function-level: see __init__

                return row_to_region(row)
        raise RegionNotFound(f"no such region: {region_id}")

    def has_writers(self) -> bool:
        """Whether the rows carry their writer (a table of an older folio gets the column from its next writer)."""
        if not self._has_writers:
            self._has_writers = "writer" in self.table.schema.names
        return self._has_writers

    def forget(self, doc_id: str, version_id: str) -> None:
        with self._lock:
            for key in [k for k in self.cache if k.startswith(f"{version_id}|{doc_id}|")]:
                del self.cache[key]
