"""The ``chunks`` table: the small searchable units with their text vectors, the full-text indexes and the searches.

Images never enter these rows. Full-text search reads the ``fts`` text (the text with CJK runs as bigrams,
``folio.kernel.textnorm.fts_text``) from one table per collection (``folio.ingest.storage.sql.fts_table``), each
with its own index: BM25 weighs a word by how many units hold it and a unit by its length against the
average, and with one index over every collection those statistics were the whole store's, so a
collection's scores moved when another tenant ingested documents with the same words. Now they depend
only on the collection's own units; a store of one collection scores exactly as before. A scope over
several collections gets each one's best hits, merged by score. A collection's index is built at its first
commit, and again whole at a commit while the table is small or once its new rows pass a share of it; other
commits leave it as it is, their rows searched flat until then or until maintenance folds them in
(``folio.ingest.storage.indexes``). The searches take a ``Scope`` and build their own prefilter
(``folio.ingest.storage.sql.scope_filter``); retrieval ranks what they return.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa

from folio.ingest.storage.claims import retry_conflicts
from folio.ingest.storage.database import Database, Tagger
from folio.ingest.storage.indexes import (
    IndexOptions,
    build_ann,
    ensure_ann,
    ensure_btrees,
    ensure_fts,
    has_index,
    rebuild_btrees,
    rebuild_fts,
)
from folio.ingest.storage.sql import (
    DEFAULT_COLLECTION,
    FTS_COLUMN,
    FTS_TABLE_PREFIX,
    TEXT_DIM,
    WRITER_FIELD,
    fts_table,
    scope_filter,
    writers_filter,
)
from folio.kernel.model import Region
from folio.kernel.scope import Scope
from folio.kernel.textnorm import fts_text

logger = logging.getLogger(__name__)

HIT_COLUMNS = ["region_id", "doc_id", "version_id", "kind", "page"]
SCOPE_COLUMNS = ("version_id", "doc_id")  # the prefilter's columns, BTREE-indexed by maintenance
TEXT_COLUMNS = [*HIT_COLUMNS, FTS_COLUMN]  # a collection's full-text table (``ChunkTextRow``) without ``writer``


def chunk_rows(regions: Sequence[Region], vectors: np.ndarray) -> pa.Table:
    """The ``chunks`` rows (without ``writer``) of ``regions`` with their text vectors (row i of ``vectors``)."""
    if vectors.shape != (len(regions), TEXT_DIM):
        raise ValueError(f"expected vectors of shape ({len(regions)}, {TEXT_DIM}), got {vectors.shape}")
    from folio.ingest.storage.schema import CHUNKS_SCHEMA  # function-level: see ChunkTable.__init__

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
    """Writes, full-text indexes and searches of the ``chunks`` table and the collections' full-text tables."""

    def __init__(self, database: Database, options: IndexOptions | None = None) -> None:
        # function-level: the row models import LanceDB, which loads when a store opens
        from folio.ingest.storage.schema import CHUNKS

        self.database = database
        self.table = database.open(CHUNKS.name, CHUNKS.schema)
        self.options = options if options is not None else IndexOptions()
        self._has_writers = False  # the column, once seen, stays (``visible``)

    def migrate(self) -> None:
        """Data dirs written before the ``fts`` column existed get it (a copy of ``text``), and those
        written before the collections' full-text tables get them (``_split_text``).

        Their CJK text stays unsplit until re-ingested; Latin text indexes exactly as before.
        """
        if FTS_COLUMN not in self.table.schema.names:
            logger.warning("adding the %r column to chunks (data written by an older folio)", FTS_COLUMN)
            with self.database.write_lock:
                self.table.add_columns({FTS_COLUMN: "text"})
        if not self.text_tables() and self.table.count_rows():
            self._split_text()

    def _split_text(self) -> None:
        """Copy every chunk's ``fts`` text into its collection's full-text table, in the order of the chunks
        (a store of one collection then indexes, and scores, exactly as its one index did), and index them."""
        from folio.ingest.storage.schema import CHUNK_TEXT_SCHEMA  # function-level: see __init__

        logger.warning("indexing chunk text per collection (data written by an older folio)")
        with self.database.write_lock:
            has_writer = "writer" in self.table.schema.names  # chunks written before claims have none
            columns = [*TEXT_COLUMNS, "writer"] if has_writer else TEXT_COLUMNS
            rows = self.table.search().select(columns).limit(None).to_arrow()
            versions = self.database.table("versions")
            listed = [] if versions is None else versions.search().limit(None).to_arrow().to_pylist()
            of = {(r["doc_id"], r["version_id"]): r.get("collection") or DEFAULT_COLLECTION for r in listed}
            keys = list(zip(rows.column("doc_id").to_pylist(), rows.column("version_id").to_pylist(), strict=True))
            if not has_writer:  # the rows of such chunks are their version's ready row's (searches filter by it)
                ready = {(r["doc_id"], r["version_id"]): r.get("writer") or ""
                         for r in listed if r.get("status") == "ready"}
                rows = rows.append_column(WRITER_FIELD, pa.array([ready.get(k, "") for k in keys], pa.string()))
            collections = [of.get(k, DEFAULT_COLLECTION) for k in keys]
            for collection in sorted(set(collections)):
                mask = pa.array([c == collection for c in collections])
                table = self.database.open(fts_table(collection), CHUNK_TEXT_SCHEMA)
                part = rows.filter(mask).select(table.schema.names).cast(table.schema)
                retry_conflicts(partial(table.add, part))
            self.ensure_fts()

    def add(self, regions: Sequence[Region], vectors: np.ndarray, tagged: Tagger, collection: str) -> None:
        """Searchable small units with their text vectors (row i of ``vectors`` belongs to ``regions[i]``),
        all of versions in ``collection``; their ``fts`` text goes to that collection's full-text table too."""
        from folio.ingest.storage.schema import CHUNK_TEXT_SCHEMA  # function-level: see __init__

        table = chunk_rows(regions, vectors)
        name = fts_table(collection)
        with self.database.write_lock:
            rows = tagged(self.table, "chunks", table)
            retry_conflicts(lambda: self.table.add(rows))
            text = self.database.open(name, CHUNK_TEXT_SCHEMA)
            text_rows = tagged(text, name, table.select(TEXT_COLUMNS))
            retry_conflicts(lambda: text.add(text_rows))

    # ------------------------------------------------------------ indexes
    def text_tables(self) -> list[str]:
        """The names of the collections' full-text tables."""
        return [n for n in self.database.table_names() if n.startswith(FTS_TABLE_PREFIX)]

    def ensure_fts(self) -> None:
        """At a commit: build the full-text index of each collection's table that has rows and none (its first
        commit), or again whole when its new rows call for it (a small table, or past ``fts_stale_share``:
        ``folio.ingest.storage.indexes.fts_due``); otherwise rows added since are searched flat until then or
        until ``optimize`` folds them in, and removed rows are hidden by deletion vectors."""
        with self.database.write_lock:
            for name in self.text_tables():
                table = self.database.table(name)
                if table is not None:
                    ensure_fts(table, FTS_COLUMN, with_position=True, options=self.options)

    def rebuild_fts(self, collection: str) -> None:
        """Build one collection's full-text index again over its live rows: after a re-parse removed the rows it
        replaced (``recovery.retire``), so that its BM25 statistics are a clean store's again. Nothing else
        rebuilds an index outside maintenance."""
        with self.database.write_lock:
            table = self.database.table(fts_table(collection))
            if table is not None:
                rebuild_fts(table, FTS_COLUMN, with_position=True)

    def has_fts(self) -> bool:
        """Whether any collection's full-text table has its index (False also when the listing fails)."""
        return any(has_index(t, FTS_COLUMN) for t in map(self.database.table, self.text_tables()) if t is not None)

    def has_vector_index(self) -> bool:
        """Whether the chunks table has an ANN index on its vectors (False when the listing fails)."""
        return has_index(self.table, "vector")

    def ensure_scalar_indexes(self) -> list[str]:
        """BTREE indexes on ``version_id`` and ``doc_id`` (the scope prefilter columns); the columns
        that got a new one (``folio.retrieval.text.ensure_scalar_indexes``)."""
        with self.database.write_lock:
            return ensure_btrees(self.table, SCOPE_COLUMNS)

    def ensure_indexes(self) -> list[str]:
        """The indexes a table of its size should have and has not yet (maintenance: ``Store.maintain``): the
        full-text ones, the scope columns' BTREEs, the ANN index past ``options.ann_min_rows`` rows; what was built."""
        self.ensure_fts()
        made = [f"chunks.{c}" for c in self.ensure_scalar_indexes()]
        with self.database.write_lock:
            if ensure_ann(self.table, self.options):
                made.append("chunks.vector")
        return made

    def reindex(self) -> list[str]:
        """Every index of the chunks and their text built again whole, over the live rows (``folio compact
        --reindex``): BM25's statistics then count no removed row; the ANN index retrains (built when the table
        has passed ``options.ann_min_rows`` rows or already had one). The indexes rebuilt."""
        done = []
        with self.database.write_lock:
            for name in self.text_tables():
                table = self.database.table(name)
                if table is not None:
                    rebuild_fts(table, FTS_COLUMN, with_position=True)
                    done.append(f"{name}.{FTS_COLUMN}")
            if self.table.count_rows():
                rebuild_btrees(self.table, SCOPE_COLUMNS)
                done += [f"chunks.{c}" for c in SCOPE_COLUMNS]
            had_ann = self.has_vector_index()
            if had_ann or (self.options.ann_min_rows > 0 and self.table.count_rows() >= self.options.ann_min_rows):
                build_ann(self.table, self.options)
                done.append("chunks.vector")
        return done

    # ----------------------------------------------------------- searches
    def visible(self, scope: Scope, writers: Collection[str]) -> str:
        """The prefilter of a vector search: ``scope``, and of its versions the rows of their ready rows'
        ``writers`` (a table of an older folio, without writers: every row of them)."""
        if not self._has_writers:
            self._has_writers = "writer" in self.table.schema.names
        where = scope_filter(scope)
        return f"{where} AND {writers_filter(writers)}" if self._has_writers else where

    def fts(
        self, query: str, scope: Scope, limit: int, collection_of: Mapping[str, str], writers: Collection[str]
    ) -> list[dict[str, Any]]:
        """Rows (``HIT_COLUMNS`` and ``_score``) matching the full-text ``query`` within ``scope``'s
        versions, pages and kinds (the rows of their ready rows' ``writers``), best first: at most ``limit``.
        Each collection of the scope's documents (``collection_of``: doc_id → collection) is searched in its own
        table, against its own statistics. ``query`` must already be safe match syntax
        (``folio.retrieval.text.fts_query``)."""
        groups: dict[str, list[tuple[str, str]]] = {}
        for doc_id, version_id in scope.versions:
            groups.setdefault(collection_of.get(doc_id, DEFAULT_COLLECTION), []).append((doc_id, version_id))
        rows: list[dict[str, Any]] = []
        for collection, versions in sorted(groups.items()):
            table = self.database.table(fts_table(collection))
            if table is None:
                continue
            where = f"{scope_filter(replace(scope, versions=tuple(versions)))} AND {writers_filter(writers)}"
            rows += (
                table.search(query, query_type="fts", fts_columns=FTS_COLUMN)
                .where(where, prefilter=True)
                .select([*HIT_COLUMNS, "_score"])
                .limit(limit)
                .to_arrow()
                .to_pylist()
            )
        if len(groups) > 1:
            rows.sort(key=lambda r: -float(r["_score"]))  # stable: a tie keeps its collection's order
        return rows[:limit]

    def vector_search(
        self, vector: np.ndarray, scope: Scope, limit: int, writers: Collection[str], *, exact: bool = False
    ) -> list[dict[str, Any]]:
        """Rows (``HIT_COLUMNS`` and ``_distance``, cosine) nearest to ``vector`` within ``scope`` (the rows of
        ``writers``, ``visible``), through LanceDB's vector index when the table has one (``nprobes`` partitions,
        ``refine_factor`` re-ranked exactly: ``IndexOptions``); ``exact``: a flat scan, the index bypassed.
        Rows not yet in the index are scanned flat either way."""
        query = (
            self.table.search(vector, vector_column_name="vector")
            .distance_type("cosine")
            .where(self.visible(scope, writers), prefilter=True)
            .select([*HIT_COLUMNS, "_distance"])
            .limit(limit)
        )
        if exact:
            query = query.bypass_vector_index()
        else:
            query = query.nprobes(self.options.nprobes).refine_factor(self.options.refine_factor)
        rows: list[dict[str, Any]] = query.to_arrow().to_pylist()
        return rows
