"""The ``regions`` table: every region of every version (no vectors), and a cache of versions' region indexes.

Regions are stored and read back through ``RegionRow`` (``ingest/tables.py``), which migrates rows of
older parser versions. Versions are immutable, so a version's ``RegionIndex`` is built once and kept in
an LRU of the ``cache_size`` most recently used versions.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from folio.ingest.claims import retry_conflicts
from folio.ingest.rows import sql_str
from folio.ingest.storage.database import Database, Tagger
from folio.kernel.errors import RegionNotFound
from folio.kernel.index import RegionIndex
from folio.kernel.model import Region


class RegionTable:
    """Writes and reads of the ``regions`` table."""

    def __init__(self, database: Database, *, cache_size: int) -> None:
        # function-level: the row models import LanceDB, which loads when a store opens
        from folio.ingest.tables import REGIONS

        self.table = database.open(REGIONS.name, REGIONS.schema)
        self.cache_size = cache_size
        self.cache: OrderedDict[str, RegionIndex] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, regions: Sequence[Region], tagged: Tagger) -> None:
        from folio.ingest.tables import REGIONS, RegionRow, rows_table  # function-level: see __init__

        data = rows_table(REGIONS, [RegionRow.from_region(r) for r in regions])
        rows = tagged(self.table, "regions", data)
        retry_conflicts(lambda: self.table.add(rows))

    def index(self, doc_id: str, version_id: str) -> RegionIndex:
        """All regions of one version, indexed in memory (the caller checks that it is ready)."""
        key = version_id + "|" + doc_id
        with self._lock:
            hit = self.cache.get(key)
            if hit is not None:
                self.cache.move_to_end(key)
        if hit is not None:
            return hit
        rows = (
            self.table.search()
            .where(f"doc_id = {sql_str(doc_id)} AND version_id = {sql_str(version_id)}")
            .limit(None)
            .to_arrow()
            .to_pylist()
        )
        from folio.ingest.tables import row_to_region  # function-level: see __init__

        index = RegionIndex(row_to_region(r) for r in rows)
        with self._lock:
            self.cache[key] = index
            self.cache.move_to_end(key)
            while len(self.cache) > max(self.cache_size, 0):
                self.cache.popitem(last=False)
        return index

    def get(self, region_id: str) -> Region:
        """One region by id, in any version state (the caller checks visibility)."""
        rows = self.table.search().where(f"region_id = {sql_str(region_id)}").limit(1).to_arrow().to_pylist()
        if not rows:
            raise RegionNotFound(f"no such region: {region_id}")
        from folio.ingest.tables import row_to_region  # function-level: see __init__

        return row_to_region(rows[0])

    def forget(self, doc_id: str, version_id: str) -> None:
        with self._lock:
            self.cache.pop(version_id + "|" + doc_id, None)
