"""The ``chunks`` table: the small searchable units with their text vectors, its full-text index and its searches.

Images never enter these rows. The full-text index reads the ``fts`` column (the text with CJK runs as
bigrams, ``folio.kernel.textnorm.fts_text``) and is rebuilt before a commit when rows were added or
removed since the last build. The searches take a ``Scope`` and build their own prefilter
(``folio.ingest.rows.scope_filter``); retrieval ranks what they return.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from folio.ingest.claims import retry_conflicts
from folio.ingest.rows import FTS_COLUMN, TEXT_DIM, scope_filter, writers_filter
from folio.ingest.storage.database import Database, Tagger
from folio.kernel.model import Region
from folio.kernel.scope import Scope
from folio.kernel.textnorm import fts_text

logger = logging.getLogger(__name__)

HIT_COLUMNS = ["region_id", "doc_id", "version_id", "kind", "page"]


def chunk_rows(regions: Sequence[Region], vectors: np.ndarray) -> pa.Table:
    """The ``chunks`` rows (without ``writer``) of ``regions`` with their text vectors (row i of ``vectors``)."""
    if vectors.shape != (len(regions), TEXT_DIM):
        raise ValueError(f"expected vectors of shape ({len(regions)}, {TEXT_DIM}), got {vectors.shape}")
    from folio.ingest.tables import CHUNKS_SCHEMA  # function-level: see ChunkTable.__init__

    return pa.table(
        {
            "region_id": [r.region_id for r in regions],
            "doc_id": [r.doc_id for r in regions],
            "version_id": [r.version_id for r in regions],
            "kind": [r.kind for r in regions],
            "page": pa.array([r.first_page for r in regions], pa.int32()),
            "text": [r.text for r in regions],
            "fts": [fts_text(r.text) for r in regions],
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(vectors.astype(np.float32).ravel(), pa.float32()), TEXT_DIM
            ),
        },
        schema=CHUNKS_SCHEMA,
    )  # column-wise, not as ChunkRow models: the vectors go from numpy to Arrow without Python floats


class ChunkTable:
    """Writes, full-text index and searches of the ``chunks`` table."""

    def __init__(self, database: Database) -> None:
        # function-level: the row models import LanceDB, which loads when a store opens
        from folio.ingest.tables import CHUNKS

        self.database = database
        self.table = database.open(CHUNKS.name, CHUNKS.schema)
        self.fts_dirty = False
        self._has_writers = False  # the column, once seen, stays (``visible``)

    def migrate(self) -> None:
        """Data dirs written before the ``fts`` column existed get it (a copy of ``text``).

        Their CJK text stays unsplit until re-ingested; Latin text indexes exactly as before.
        """
        if FTS_COLUMN in self.table.schema.names:
            return
        logger.warning("adding the %r column to chunks (data written by an older folio)", FTS_COLUMN)
        with self.database.write_lock:
            self.table.add_columns({FTS_COLUMN: "text"})
            self.fts_dirty = True
            self.ensure_fts()

    def add(self, regions: Sequence[Region], vectors: np.ndarray, tagged: Tagger) -> None:
        """Searchable small units with their text vectors (row i of ``vectors`` belongs to ``regions[i]``)."""
        table = chunk_rows(regions, vectors)
        with self.database.write_lock:
            rows = tagged(self.table, "chunks", table)
            retry_conflicts(lambda: self.table.add(rows))
            self.fts_dirty = True

    # ------------------------------------------------------------ indexes
    def ensure_fts(self) -> None:
        """(Re)build the native full-text index over chunk text when rows were added since the last build."""
        from lancedb.index import FTS  # function-level: LanceDB's index types load with the first index build

        with self.database.write_lock:
            if not self.fts_dirty and self.has_fts():
                return
            if self.table.count_rows() == 0:
                return
            retry_conflicts(lambda: self.table.create_index(FTS_COLUMN, config=FTS(with_position=True), replace=True))
            self.fts_dirty = False

    def has_fts(self) -> bool:
        """Whether the chunks table has its full-text index (False also when the listing fails)."""
        try:
            return any(FTS_COLUMN in idx.columns for idx in self.table.list_indices())
        except Exception:  # noqa: BLE001 - an index listing failure only means "rebuild"
            return False

    def has_vector_index(self) -> bool:
        """Whether the chunks table has an ANN index on its vectors (False when the listing fails)."""
        try:
            return any("vector" in idx.columns for idx in self.table.list_indices())
        except (OSError, RuntimeError, ValueError):
            return False

    def ensure_scalar_indexes(self) -> list[str]:
        """BTREE indexes on ``version_id`` and ``doc_id`` (the scope prefilter columns); the columns
        that got a new one (``folio.retrieval.text.ensure_scalar_indexes``)."""
        from lancedb.index import BTree  # function-level: see ensure_fts

        have = {c for idx in self.table.list_indices() for c in idx.columns}
        made = []
        for col in ("version_id", "doc_id"):
            if col not in have:
                self.table.create_index(col, config=BTree())
                made.append(col)
        return made

    # ----------------------------------------------------------- searches
    def visible(self, scope: Scope, writers: Collection[str]) -> str:
        """The prefilter of a search: ``scope``, and of its versions the rows of their ready rows' ``writers``
        (a table of an older folio, without writers: every row of them)."""
        if not self._has_writers:
            self._has_writers = "writer" in self.table.schema.names
        where = scope_filter(scope)
        return f"{where} AND {writers_filter(writers)}" if self._has_writers else where

    def fts(self, query: str, scope: Scope, limit: int, writers: Collection[str]) -> list[dict[str, Any]]:
        """Rows (``HIT_COLUMNS`` and ``_score``) matching the full-text ``query`` within ``scope``'s
        versions, pages and kinds (the rows of ``writers``, ``visible``), best first: at most ``limit``.
        ``query`` must already be safe match syntax (``folio.retrieval.text.fts_query``)."""
        rows: list[dict[str, Any]] = (
            self.table.search(query, query_type="fts", fts_columns=FTS_COLUMN)
            .where(self.visible(scope, writers), prefilter=True)
            .select([*HIT_COLUMNS, "_score"])
            .limit(limit)
            .to_arrow()
            .to_pylist()
        )
        return rows

    def vector_search(
        self, vector: np.ndarray, scope: Scope, limit: int, writers: Collection[str]
    ) -> list[dict[str, Any]]:
        """Rows (``HIT_COLUMNS`` and ``_distance``, cosine) nearest to ``vector`` within ``scope`` (the rows of
        ``writers``, ``visible``), through LanceDB's vector index when the table has one."""
        rows: list[dict[str, Any]] = (
            self.table.search(vector, vector_column_name="vector")
            .distance_type("cosine")
            .where(self.visible(scope, writers), prefilter=True)
            .select([*HIT_COLUMNS, "_distance"])
            .limit(limit)
            .to_arrow()
            .to_pylist()
        )
        return rows
