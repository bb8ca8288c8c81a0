"""folio's storage: one LanceDB database in one data directory (or object-store URI).

Tables (every row of every version-scoped table carries ``doc_id`` and ``version_id``):

- ``versions``: one row per document version; ``status`` is ``pending`` while it is being written
  and ``ready`` once complete. **Only ready versions are visible**: every read filters by them.
- ``regions``: every region of every version, no vectors (sections, paragraphs, pages, ...).
- ``chunks``: the small searchable units (sentences, tables, figures, page texts) with their MiniLM
  vectors. Images never enter these scans.
- ``chunks_text-<collection>``: each collection's chunk text with LanceDB's native full-text index, so
  that BM25's statistics are the collection's own (``ingest/storage/chunks.py``).
- ``figures`` / ``pages`` / ``summaries`` (created by the retrieval layer's indexers when CLIP /
  ColPali / summaries are on): CLIP image vectors of figure crops; ColPali page multivectors;
  section summaries. The retrieval layer describes them by ``TableSpec`` and writes them with
  ``Store.add``; the store knows no list of them (``Store.version_tables`` finds every table with
  the version key).

Every schema is derived from a row model (``ingest/storage/schema.py``); regions are stored and read back
through ``RegionRow``, which migrates rows of older parser versions.

Rendered page images and figure crops are PNG files under ``<data>/assets/<doc_id>@<version_id>/``;
on an object store (``s3://…``) they are rows of the version-scoped ``assets`` table instead
(``ingest/storage/objstore.py``, ``ingest/storage/assets.py``), and the store's connection options come from
the environment.

Collections: every versions row names the ``collection`` its document belongs to (``default``
unless the ingest said otherwise; data dirs from before collections read as ``default`` and get the
column from their first writer). A doc_id lives in one collection: a writer refuses to add a
version of it to another (``CollectionConflict``). API keys are scoped to collections
(``api/keys.py``); reads take a ``collections`` filter.

Atomicity and writers: an ingest first **claims** its version by adding a ``pending`` versions
row that names the writer (a random ``writer`` id, its pid, host and process start time, and a
``heartbeat``), then writes regions, chunks, vectors and assets (every row tagged with the same
``writer``), then flips *its own* row to ``ready`` in one LanceDB commit and reads it back. Only
one live writer holds a version: a second writer of the same bytes waits for the first and then
finds the version ready (a no-op), or takes over a claim whose writer is dead (pid gone on this
host, or heartbeat older than ``LEASE`` from another host). LanceDB's conditional insert
(``merge_insert``) is not atomic across processes, so a claim is decided by commit order: a writer
whose claim row was preceded by another live claim (visible in the table version just before its
own) withdraws. A process killed midway leaves only rows of a pending version, which no query
sees. **Readers never write**: crash cleanup runs in writers (dead writers' claims, before each
claim) or explicitly (``Store.recover``, ``folio check --repair``). Deleting flips visibility
first too: the versions row goes, then the rows and assets behind it.

A re-parse of a ready version (``begin_version(replacing=True)``) writes its rows beside the ready ones and
swaps its row in, in one commit; its new ready row names the writer whose rows it replaced (``retiring``)
until the writer has removed them, ``RETIRE_AFTER_S`` later. A writer killed in between leaves that note,
and the next store to open (or writer to claim, or ``folio check``) finishes the removal once
``RETIRE_AFTER_S`` has passed (``recovery.finish_retires``): the one write a reader's open may make.

Maintenance (``ingest/storage/maintenance.py``): LanceDB keeps every table version and deleted row until
told otherwise, so writers compact and clean up old versions every ``COMPACT_EVERY`` commits.

The parts (``ingest/storage/``), each with one job, which ``Store`` composes: ``Database`` (the
connection and its tables), ``Catalogue`` (versions and claims), ``RegionTable``, ``ChunkTable``
(text vectors, the full-text index and their searches), ``Assets`` (``LocalAssets`` or
``ObjectStoreAssets``, chosen once when the store opens) and ``recovery`` (removing versions and
crash leftovers). Retrieval and the application see the store through ``StoreReader``
(``ingest/storage/interface.py``): scans and searches that take a ``Scope``, never a query string.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np
import pyarrow as pa

from folio.ingest.storage import maintenance, recovery
from folio.ingest.storage.assets import Assets, assets_for
from folio.ingest.storage.catalogue import Catalogue, ClaimRequest
from folio.ingest.storage.chunks import ChunkTable
from folio.ingest.storage.compaction import COMPACT_OLDER_THAN, compact
from folio.ingest.storage.database import Database
from folio.ingest.storage.indexes import IndexOptions, index_status
from folio.ingest.storage.interface import ClaimOptions, VersionCommit
from folio.ingest.storage.objstore import is_local
from folio.ingest.storage.objstore import storage_options as storage_options_from_settings
from folio.ingest.storage.regions import RegionTable
from folio.ingest.storage.sql import (
    DEFAULT_COLLECTION,
    check_collection,
    metadata_where,
)
from folio.kernel.index import RegionIndex
from folio.kernel.metadata import FilterLeaf, MetaValue
from folio.kernel.model import DocumentVersion, Region
from folio.kernel.scope import Scope
from folio.settings import StorageSettings, default_data_dir

# Function-level imports: ``folio.ingest.storage.schema`` imports LanceDB (about a second); the store loads it on
# first use, so that importing the store stays cheap (the CLI reads ``default_data_dir`` from it).
if TYPE_CHECKING:
    from lancedb.pydantic import LanceModel

    from folio.ingest.storage.schema import TableSpec

logger = logging.getLogger(__name__)

# How long a second writer of the same version waits for the first before giving up.
CLAIM_WAIT = timedelta(minutes=30)
# Bound of the per-version region cache (``Store.region_index``).
REGION_CACHE_SIZE = 64
# Writers compact after this many commits (``ingest/storage/maintenance.py``).
COMPACT_EVERY = 20
# Seconds the rows of a replaced version stay after the swap (``retire_rows``), for the readers that resolved
# the version just before it and read its rows just after.
RETIRE_AFTER_S = recovery.RETIRE_AFTER_S


class Store:
    """The LanceDB-backed store: a facade over its parts (module docstring). Thread-safe for one writer
    and many readers in a process; any number of processes may read and write one store (claims)."""

    def __init__(
        self,
        uri: str | os.PathLike[str] | None = None,
        *,
        recover: bool = False,
        region_cache_size: int = REGION_CACHE_SIZE,
        compact_every: int = COMPACT_EVERY,
        storage_options: dict[str, str] | None = None,
    ) -> None:
        """Open (creating when absent) the store at ``uri``. Opening never writes to existing data
        (except the one-time migrations of data from an older folio: the ``fts`` column, the
        collections' full-text tables; and the end of a re-parse whose writer died after its swap:
        ``finish_retires``); ``recover=True`` runs
        the crash cleanup, which only a writer should ask for. ``storage_options``: LanceDB's
        object-store options (default: from the environment, ``ingest.storage.objstore``). The ANN index's options are
        ``IndexOptions()`` until ``configure_indexes`` says otherwise."""
        self.uri = str(uri or default_data_dir())
        self.local = is_local(self.uri)
        if self.uri.startswith("file://"):
            self.uri = self.uri.removeprefix("file://")
        if self.local:
            Path(self.uri).mkdir(parents=True, exist_ok=True)
        if storage_options is None:  # the one place the store reads settings, for a caller that hands none in
            storage_options = storage_options_from_settings(self.uri, StorageSettings())
        self.storage_options = storage_options
        self.database = Database(self.uri, local=self.local, storage_options=self.storage_options)
        self.assets: Assets = assets_for(self.uri, local=self.local)
        # The folder the parser renders a version's images into (a staging folder on an object store).
        self.assets_root = self.assets.root
        self._write_lock = self.database.write_lock  # one writer thread at a time in this process
        self.compact_every = compact_every
        self._commits = 0
        self.catalogue = Catalogue(self.database)
        self.region_table = RegionTable(self.database, cache_size=region_cache_size)
        self.chunk_table = ChunkTable(self.database)
        self.chunk_table.migrate()
        # The parts' LanceDB tables and state under the names callers and tests have always used.
        self.versions, self.regions, self.chunks = self.catalogue.table, self.region_table.table, self.chunk_table.table
        self._claims, self._index_cache = self.catalogue.claims, self.region_table.cache
        if recover:
            self.recover()
        else:
            self._finish_retires_on_open()

    def configure_indexes(self, options: IndexOptions) -> Store:
        """When the chunk vectors get their ANN index and how it is searched (``FOLIO_ANN_*``); this store."""
        self.chunk_table.options = options
        return self

    # ------------------------------------------------ the parts' tables, as before
    def table(self, name: str, schema: pa.Schema | None = None) -> Any | None:
        """Open a version-scoped table by name (creating it when a schema is given)."""
        return self.database.table(name, schema)

    def table_names(self) -> list[str]:
        return self.database.table_names()

    def version_tables(self) -> list[Any]:
        """Every version-scoped table in the database (``Database.version_tables``)."""
        return self.database.version_tables()

    # ------------------------------------------------------------- the catalogue
    def versions_version(self) -> int:
        return self.catalogue.version()

    @contextmanager
    def pinned_versions(self) -> Iterator[int]:
        """Read the versions table's version once for a whole request (``Catalogue.pinned``)."""
        with self.catalogue.pinned() as version:
            yield version

    def list_versions(
        self, doc_id: str | None = None, *, include_pending: bool = False, collections: Collection[str] | None = None
    ) -> list[DocumentVersion]:
        return self.catalogue.list_versions(doc_id, include_pending=include_pending, collections=collections)

    def collections(self) -> dict[str, str]:
        return self.catalogue.collections()

    def collection_of(self, doc_id: str) -> str | None:
        return self.catalogue.collection_of(doc_id)

    def check_collection_free(self, doc_id: str, collection: str, rows: list[dict[str, Any]] | None = None) -> None:
        self.catalogue.check_collection_free(doc_id, collection, rows)

    def latest_versions(self, doc_ids: Sequence[str] | None = None) -> list[DocumentVersion]:
        return self.catalogue.latest_versions(doc_ids)

    def get_version(self, doc_id: str, version_id: str | None = None) -> DocumentVersion:
        return self.catalogue.get_version(doc_id, version_id)

    def version_report(self, doc_id: str, version_id: str) -> dict[str, Any]:
        return self.catalogue.version_report(doc_id, version_id)

    def has_ready(self, doc_id: str, version_id: str) -> bool:
        return self.catalogue.has_ready(doc_id, version_id)

    def version_stamp(self, doc_id: str, version_id: str) -> str:
        """An opaque token of the rows a ready version reads now: it changes when they are replaced by a new
        parse of the same bytes (``redo_degraded``), so a cache of a version's rows keys on it."""
        return self.catalogue.ready_writer(doc_id, version_id) or ""

    def _writers(self, keys: Iterable[tuple[str, str]]) -> set[str]:
        """The writers of these versions' ready rows: the rows of them readers see (``Catalogue.ready_writers``)."""
        return self.catalogue.ready_writers(keys)

    # ------------------------------------------------------------------ writing
    def begin_version(
        self, doc_id: str, version_id: str, filename: str, size_bytes: int, parser_version: str,
        **claim: Unpack[ClaimOptions],
    ) -> bool:
        """Claim a version for writing. False when it is already ready (identical bytes: nothing to do).

        Another live writer of the same version is waited for (up to ``claim["wait"]``, default ``CLAIM_WAIT``;
        then ``VersionBusy``); a dead one's claim and rows are removed first. Nothing of any other writer is
        touched. ``CollectionConflict`` when the document lives in another collection than
        ``claim["collection"]`` (default: ``default``).

        ``replacing``: claim a ready version to write its rows again (a new parse of the same bytes); False
        when it is not ready. Readers see its old rows until ``commit_version`` swaps the new ones in, in one
        commit; the old rows are then the caller's to remove (``retire_rows``).
        """
        request = ClaimRequest(
            doc_id, version_id, filename, size_bytes, parser_version,
            collection=claim.get("collection", DEFAULT_COLLECTION), replacing=claim.get("replacing", False),
        )
        check_collection(request.collection)
        self.catalogue.ensure_claim_columns()
        recovery.remove_dead_claims(self)
        recovery.finish_retires(self)
        return self.catalogue.claim(
            request, wait=claim.get("wait", CLAIM_WAIT), remove_claim=partial(recovery.remove_claim, self)
        )

    def claimed_writers(self) -> list[str]:
        """The writer ids of this store's claims now (one per version it is writing)."""
        return [claim.writer for claim in list(self.catalogue.claims.values())]

    def add_regions(self, regions: Sequence[Region]) -> None:
        if not regions:
            return
        with self.database.write_lock:
            self.region_table.add(regions, self.catalogue.tagged)
            for doc_id, version_id in {(r.doc_id, r.version_id) for r in regions}:
                self.assets.written(self, doc_id, version_id)

    def add_chunks(self, regions: Sequence[Region], vectors: np.ndarray) -> None:
        """Searchable small units of claimed versions with their text vectors (row i of ``vectors``
        belongs to ``regions[i]``); their text is indexed with their collection's (``ChunkTable``)."""
        by_collection: dict[str, list[int]] = {}
        for i, r in enumerate(regions):
            collection = self.catalogue.claim_for(r.doc_id, r.version_id).collection
            by_collection.setdefault(collection, []).append(i)
        for collection, rows in by_collection.items():
            self.chunk_table.add([regions[i] for i in rows], vectors[rows], self.catalogue.tagged, collection)

    def add(self, spec: TableSpec, rows: Sequence[LanceModel] | pa.Table) -> None:
        """Append rows of claimed versions to the version-scoped table ``spec`` describes, creating
        the table from its row model when absent: how other layers write their tables (figure and
        page vectors, summaries). The store sets each row's ``writer`` from its claim."""
        from folio.ingest.storage.schema import rows_table

        self.add_rows(spec.name, spec.schema, rows if isinstance(rows, pa.Table) else rows_table(spec, rows))

    def add_rows(self, table_name: str, schema: pa.Schema, rows: pa.Table | list[dict[str, Any]]) -> None:
        """Append to a version-scoped table given by name and Arrow schema (``add`` takes a ``TableSpec``).

        The store adds its ``writer`` column to that schema."""
        self.database.append(table_name, schema, rows, self.catalogue.tagged)

    def add_metadata(self, doc_id: str, version_id: str, metadata: dict[str, MetaValue]) -> None:
        """A claimed version's user metadata (checked: ``folio.kernel.metadata.check_metadata``), as rows of the
        ``metadata`` table written under the claim (``ingest.storage.metadata``); nothing for ``{}``."""
        from folio.ingest.storage.metadata import METADATA, metadata_rows  # function-level: imports LanceDB

        if metadata:
            self.add(METADATA, metadata_rows(doc_id, version_id, metadata))

    def metadata_matches(self, leaf: FilterLeaf) -> set[tuple[str, str]]:
        """The ready versions whose metadata satisfies ``leaf``: one LanceDB filter (``sql.metadata_where``)."""
        from folio.ingest.storage.metadata import matching_versions  # function-level: imports LanceDB

        return matching_versions(self.database, metadata_where(leaf), self.catalogue.ready_map())

    def version_metadata(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """The metadata of these ready versions as JSON values; a version without any is absent."""
        from folio.ingest.storage.metadata import read_metadata  # function-level: imports LanceDB

        keys = list(keys)
        return read_metadata(self.database, keys, self._writers(keys))

    def index_text(self, table: str, column: str = "text") -> None:
        """Build a full-text index on ``column`` of a version-scoped table (summaries) when it has none, or again
        when its new rows call for it, as the chunks' text (``folio.ingest.storage.indexes.fts_due``)."""
        self.database.index_text(table, column, self.chunk_table.options)

    def commit_version(self, doc_id: str, version_id: str, **commit: Unpack[VersionCommit]) -> None:
        """Make this writer's pending version visible, in one LanceDB commit; a collection's first commit builds
        its full-text index, later ones build it again only while it is small or once their rows pass a share of
        it (``folio.ingest.storage.indexes``).

        ``commit``: the version's ``pages`` and ``regions`` counts and its ``report``; ``created_at`` (default:
        now) orders a document's versions; a version parsed again keeps its own.

        Only the caller's own claim is flipped (the update is conditional on its writer id), and the
        row is read back afterwards: ``ClaimLost`` if the claim was taken over or deleted meanwhile,
        or if rows this writer wrote are gone.
        """
        with self.database.write_lock:
            claim = self.catalogue.claim_for(doc_id, version_id)
            self.catalogue.check_written(claim)
            self.ensure_fts()
            self.catalogue.flip_ready(
                claim, pages=commit["pages"], regions=commit["regions"], report=commit["report"],
                created_at=commit.get("created_at"),
            )
            self.committed()

    def committed(self) -> None:
        """Count a commit (or a delete); every ``compact_every`` of them, compact (``maintain``)."""
        self._commits += 1
        if self.compact_every and self._commits % self.compact_every == 0:
            self.maintain()

    def maintain(self) -> None:
        """Periodic upkeep in a writer: the indexes the tables' sizes call for built (``ensure_indexes``), then
        every table compacted, which folds the rows committed since into the existing indexes (LanceDB's
        ``optimize``). A failure is logged, never fails the commit that triggered it."""
        try:
            self.ensure_indexes()
            compact(self)
        except (OSError, RuntimeError, ValueError) as exc:
            logger.warning("compaction of %s failed: %s", self.uri, exc)

    def compact(self, older_than: timedelta = COMPACT_OLDER_THAN, *, reindex: bool = False) -> dict[str, Any]:
        """Every table compacted, versions older than ``older_than`` removed (``folio compact``); sizes.
        ``reindex``: every index of the chunks built again whole first (``reindex``), listed in ``reindexed``."""
        rebuilt = self.reindex() if reindex else []
        self.ensure_indexes()
        result = compact(self, older_than)
        return {**result, "reindexed": rebuilt} if reindex else result

    def ensure_indexes(self) -> list[str]:
        """Build the indexes the chunks table's size calls for and it has not yet: full-text, the scope columns'
        BTREEs, the ANN index past ``IndexOptions.ann_min_rows`` rows (``ChunkTable.ensure_indexes``)."""
        return self.chunk_table.ensure_indexes()

    def reindex(self) -> list[str]:
        """Maintenance: every index of the chunks and their text built again whole (``ChunkTable.reindex``)."""
        return self.chunk_table.reindex()

    def index_status(self) -> list[dict[str, Any]]:
        """Every index of every table: its rows indexed and not yet (``folio.ingest.storage.indexes.index_status``)."""
        tables = [self.database.table(name) for name in self.table_names()]
        return [entry for table in tables if table is not None for entry in index_status(table)]

    def check(self, *, repair: bool = False) -> dict[str, Any]:
        """Complete versions, no orphan rows or assets (``folio check``; ``maintenance.check``)."""
        return maintenance.check(self, repair=repair)

    def ensure_fts(self) -> None:
        """Build the full-text index of each collection's chunk text that has rows and none
        (``ChunkTable.ensure_fts``)."""
        self.chunk_table.ensure_fts()

    def has_fts(self) -> bool:
        """Whether any collection's chunk text has its full-text index (False also when the listing fails)."""
        return self.chunk_table.has_fts()

    # --------------------------------------------------------- removing versions
    def abort_version(self, doc_id: str, version_id: str) -> None:
        """Undo a failed ingest: this writer's rows and claim go; nothing of any other writer is touched."""
        with self.database.write_lock:
            claim = self.catalogue.release(doc_id, version_id)
            if claim is None:
                return
            recovery.remove_claim(self, doc_id, version_id, claim.writer)
            self.assets.aborted(self, doc_id, version_id)

    def delete_version(self, doc_id: str, version_id: str) -> None:
        recovery.delete_version(self, doc_id, version_id)

    def retire_rows(self, doc_id: str, version_id: str, writer: str) -> None:
        """Remove the rows one writer wrote of a version that another writer's rows have replaced
        (``begin_version(replacing=True)``); nothing when ``writer``'s rows are still the ones readers see."""
        recovery.retire(self, doc_id, version_id, writer)

    def delete_document(self, doc_id: str) -> list[str]:
        return recovery.delete_document(self, doc_id)

    def finish_retires(self, *, wait: bool = False) -> list[tuple[str, str]]:
        """Remove the rows that re-parses killed after their swap left (``recovery.finish_retires``)."""
        return recovery.finish_retires(self, wait=wait)

    def _finish_retires_on_open(self) -> None:
        try:
            self.finish_retires()
        except (OSError, RuntimeError, ValueError) as exc:  # a read-only store, say: readers never see those rows
            logger.warning("could not finish a re-parse that a dead writer left in %s: %s", self.uri, exc)

    def recover(self) -> list[tuple[str, str]]:
        """Crash cleanup (writers and ``folio check --repair`` only): ``ingest.storage.recovery.recover``."""
        return recovery.recover(self)

    # -------------------------------------------------------------------- reads
    def region_index(self, doc_id: str, version_id: str) -> RegionIndex:
        """All regions of one ready version (its ready row's writer's), indexed in memory and kept in an
        LRU cache of the ``region_cache_size`` most recently used versions."""
        return self.region_table.index(doc_id, version_id, self.catalogue.ready_writer(doc_id, version_id))

    def get_region(self, region_id: str) -> Region:
        """A region of a ready version (``RegionNotFound`` for any other)."""
        return self.region_table.get(region_id, self.catalogue.ready_writer)

    def read_asset(self, relative: str) -> bytes:
        """The bytes of a stored image named in a region's meta (``RegionNotFound`` when absent)."""
        return self.assets.read(self, relative)

    def asset_path(self, relative: str) -> Path:
        """Resolve an asset path stored in a region's meta, refusing anything outside the data dir."""
        return self.assets.path(relative)

    # ------------------------------------------------------- scans and searches
    def has_table(self, table: str) -> bool:
        """Whether the database has the table (a layer's table exists once it wrote a row)."""
        return self.database.table(table) is not None

    def scan_versions(self, table: str, keys: Iterable[tuple[str, str]], columns: Sequence[str]) -> pa.Table | None:
        """The ``columns`` of every row of these versions in a version-scoped table (None: no such table)."""
        keys = list(keys)
        return self.database.scan_versions(table, keys, columns, self._writers(keys))

    def vector_dim(self, table: str, column: str = "vector") -> int | None:
        return self.database.vector_dim(table, column)

    def fts(self, query: str, scope: Scope, limit: int) -> list[dict[str, Any]]:
        """Full-text search of the chunks within ``scope``, each collection against its own statistics, the rows
        of the versions' ready writers (``ChunkTable.fts``)."""
        return self.chunk_table.fts(query, scope, limit, self.catalogue.collections(), self._writers(scope.versions))

    def vector_search(
        self, vector: np.ndarray, scope: Scope, limit: int, *, exact: bool = False
    ) -> list[dict[str, Any]]:
        """Nearest chunks to ``vector`` within ``scope`` (``ChunkTable.vector_search``; ``exact``: no ANN index)."""
        return self.chunk_table.vector_search(vector, scope, limit, self._writers(scope.versions), exact=exact)

    def has_vector_index(self) -> bool:
        return self.chunk_table.has_vector_index()

    def ensure_scalar_indexes(self) -> list[str]:
        """BTREE indexes on the chunks' scope columns (``ChunkTable.ensure_scalar_indexes``)."""
        return self.chunk_table.ensure_scalar_indexes()
