"""The indexes of a store's tables and their upkeep: built once, kept current incrementally, rebuilt by hand.

A commit's index work does not grow with the corpus. The first index of a table is built when the table has
rows and none (the full-text index of a collection's chunk text at its first commit, ``ensure_fts``). After
that, a full-text table of at most ``IndexOptions.fts_rebuild_rows`` rows is indexed whole again at each commit
that added rows to it, as every commit did before (a few seconds at most: BM25 then scores exactly as a fresh
index does, and the flat scan's statistics, which differ slightly, never rank a small store's rows). A larger
one keeps its index: the commit only appends rows, and LanceDB searches the fragments no index covers yet by a
flat scan (full-text and vector search alike, unless a query asks for ``fast_search``), so a query sees every
committed row; once those rows pass ``IndexOptions.fts_stale_share`` of the rows indexed, the commit that
passed it indexes the table whole again. A rebuild over n rows every ``fts_stale_share`` x n rows added costs a
constant amount per row, whatever the corpus (``fts_due``). Deleted
rows are hidden from an index by LanceDB's deletion vectors. The new rows are folded into the existing
indexes by ``Table.optimize()`` (``folio.ingest.storage.compaction.compact``), which writers run every
``compact_every`` commits and ``folio ingest`` at its end; LanceDB merges the new rows' index into the old
one there, it does not retrain. A whole rebuild (``rebuild``) is maintenance only: ``folio compact
--reindex``; it also brings BM25's statistics back to the live rows (an index counts the rows it was built
over until then, deleted or not).

The chunk vectors get an ANN index (``ensure_ann``) once the table passes ``IndexOptions.ann_min_rows``
rows; small stores stay exact. Retrieval uses it only for scopes over many regions
(``folio.retrieval.text.TextRetriever``): a query scoped to a few documents keeps exact search.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from folio.ingest.storage.claims import retry_conflicts
from folio.settings import StorageSettings

logger = logging.getLogger(__name__)

AnnIndexType = Literal["IVF_PQ", "IVF_HNSW_SQ"]


@dataclass(frozen=True)
class IndexOptions:
    """The chunk vectors' ANN index: built once the chunks table has ``ann_min_rows`` rows (0: never), of
    type ``ann_index``, searched with ``nprobes`` partitions and ``refine_factor`` times the limit re-ranked
    by exact distance (IVF_PQ's refine step); and when a commit indexes a full-text table whole again
    (``fts_due``)."""

    ann_min_rows: int = 500_000
    ann_index: AnnIndexType = "IVF_PQ"
    nprobes: int = 64
    refine_factor: int = 20
    fts_rebuild_rows: int = 100_000  # ~3 s a rebuild on a 2-core machine; the development stores have 22k-88k rows
    fts_stale_share: float = 0.1  # past fts_rebuild_rows: the share of unindexed rows that makes a commit rebuild


def index_options(settings: StorageSettings) -> IndexOptions:
    """The ``FOLIO_ANN_*`` settings as the store takes them."""
    return IndexOptions(
        ann_min_rows=settings.ann_min_rows,
        ann_index=settings.ann_index,
        nprobes=settings.ann_nprobes,
        refine_factor=settings.ann_refine_factor,
    )


def has_index(table: Any, column: str) -> bool:
    """Whether ``table`` has an index on ``column`` (False also when the listing fails: then it is built)."""
    try:
        return any(column in idx.columns for idx in table.list_indices())
    except (OSError, RuntimeError, ValueError):
        return False


def fts_due(indexed: int, unindexed: int, options: IndexOptions) -> bool:
    """Whether a commit indexes a full-text table whole again: rows were added since its index was built, and the
    table is small (``fts_rebuild_rows``) or those rows passed ``fts_stale_share`` of the rows indexed.

    >>> opts = IndexOptions()
    >>> fts_due(20_000, 700, opts), fts_due(1_000_000, 700, opts), fts_due(1_000_000, 100_001, opts)
    (True, False, True)
    >>> fts_due(20_000, 0, opts)
    False
    """
    if unindexed <= 0:
        return False
    return indexed + unindexed <= options.fts_rebuild_rows or unindexed > options.fts_stale_share * indexed


def _fts_counts(table: Any, column: str) -> tuple[int, int] | None:
    """Rows in the full-text index of ``column`` and rows not yet in it; None when it has none (or its statistics
    cannot be read: then it is built again)."""
    try:
        for idx in table.list_indices():
            if column in idx.columns:
                stats = table.index_stats(idx.name)
                return None if stats is None else (stats.num_indexed_rows, stats.num_unindexed_rows)
    except (OSError, RuntimeError, ValueError):
        return None
    return None


def ensure_fts(table: Any, column: str, *, with_position: bool, options: IndexOptions | None = None) -> bool:
    """At a commit: build the full-text index of ``column`` when the table has rows and none, or again whole when
    ``fts_due`` says so (``options``: default ``IndexOptions()``); True when it built one."""
    if table.count_rows() == 0:
        return False
    counts = _fts_counts(table, column)
    if counts is not None and not fts_due(*counts, options or IndexOptions()):
        return False
    from lancedb.index import FTS  # function-level: LanceDB's index types load with the first index build

    retry_conflicts(partial(table.create_index, column, config=FTS(with_position=with_position), replace=True))
    return True


def rebuild_fts(table: Any, column: str, *, with_position: bool) -> None:
    """The full-text index of ``column`` built again over the live rows (maintenance only)."""
    if table.count_rows() == 0:
        return
    from lancedb.index import FTS  # function-level: see ensure_fts

    retry_conflicts(partial(table.create_index, column, config=FTS(with_position=with_position), replace=True))


def ann_partitions(rows: int) -> int:
    """IVF partitions for ``rows`` vectors: about √rows, at least 1 (LanceDB's default rule, made explicit).

    >>> ann_partitions(1_000_000)
    1000
    """
    return max(1, int(math.sqrt(rows)))


def build_ann(table: Any, options: IndexOptions, column: str = "vector") -> None:
    """Build (or rebuild) the ANN index on ``column`` (cosine) over the table's rows: IVF with about √rows
    partitions, PQ codes of 8 dimensions each (IVF_PQ) or HNSW graphs over scalar-quantized vectors (IVF_HNSW_SQ)."""
    from lancedb.index import HnswSq, IvfPq  # function-level: see ensure_fts

    rows = table.count_rows()
    dim = table.schema.field(column).type.list_size
    partitions = ann_partitions(rows)
    config: Any = (
        IvfPq(distance_type="cosine", num_partitions=partitions, num_sub_vectors=max(1, dim // 8))
        if options.ann_index == "IVF_PQ"
        else HnswSq(distance_type="cosine", num_partitions=partitions)
    )
    logger.info("building the %s index on %s.%s (%d rows)", options.ann_index, table.name, column, rows)
    retry_conflicts(partial(table.create_index, column, config=config, replace=True))


def ensure_ann(table: Any, options: IndexOptions, column: str = "vector") -> bool:
    """Build the ANN index when the table has passed ``options.ann_min_rows`` rows and has none; True when built."""
    if options.ann_min_rows <= 0 or has_index(table, column):
        return False
    if table.count_rows() < options.ann_min_rows:
        return False
    build_ann(table, options, column)
    return True


def ensure_btrees(table: Any, columns: tuple[str, ...]) -> list[str]:
    """BTREE indexes on those of ``columns`` that have none (when the table has rows); the columns that got one."""
    if table.count_rows() == 0:
        return []
    from lancedb.index import BTree  # function-level: see ensure_fts

    have = {c for idx in table.list_indices() for c in idx.columns}
    made = [c for c in columns if c not in have]
    for col in made:
        retry_conflicts(partial(table.create_index, col, config=BTree()))
    return made


def rebuild_btrees(table: Any, columns: tuple[str, ...]) -> None:
    """The BTREE indexes of ``columns`` built again (maintenance only)."""
    if table.count_rows() == 0:
        return
    from lancedb.index import BTree  # function-level: see ensure_fts

    for col in columns:
        retry_conflicts(partial(table.create_index, col, config=BTree(), replace=True))


def index_status(table: Any) -> list[dict[str, Any]]:
    """Each index of ``table``: name, type, columns, rows indexed and not yet (what ``optimize`` folds in)."""
    out = []
    for idx in table.list_indices():
        stats = table.index_stats(idx.name)
        out.append({
            "table": table.name,
            "name": idx.name,
            "type": str(idx.index_type),
            "columns": list(idx.columns),
            "indexed_rows": None if stats is None else stats.num_indexed_rows,
            "unindexed_rows": None if stats is None else stats.num_unindexed_rows,
        })
    return out
