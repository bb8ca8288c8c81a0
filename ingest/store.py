"""folio's storage: one LanceDB database in one data directory (or object-store URI).

Tables (every row of every version-scoped table carries ``doc_id`` and ``version_id``):

- ``versions``: one row per document version; ``status`` is ``pending`` while it is being written
  and ``ready`` once complete. **Only ready versions are visible**: every read filters by them.
- ``regions``: every region of every version, no vectors (sections, paragraphs, pages, ...).
- ``chunks``: the small searchable units (sentences, tables, figures, page texts) with their MiniLM
  vectors and LanceDB's native full-text index on ``text``. Images never enter these scans.
- ``figures`` / ``pages`` / ``summaries`` (created by the retrieval layer's indexers when CLIP /
  ColPali / summaries are on): CLIP image vectors of figure crops; ColPali page multivectors;
  section summaries. The retrieval layer describes them by ``TableSpec`` and writes them with
  ``Store.add``; the store knows no list of them (``Store.version_tables`` finds every table with
  the version key).

Every schema is derived from a row model (``ingest/tables.py``); regions are stored and read back
through ``RegionRow``, which migrates rows of older parser versions.

Rendered page images and figure crops are PNG files under ``<data>/assets/<doc_id>@<version_id>/``;
on an object store (``s3://…``) they are rows of the version-scoped ``assets`` table instead
(``ingest/objstore.py``), and the store's connection options come from the environment.

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

Maintenance (``ingest/maintenance.py``): LanceDB keeps every table version and deleted row until
told otherwise, so writers compact and clean up old versions every ``COMPACT_EVERY`` commits.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from folio.ingest.claims import HOST, LEASE, LIVE_WRITERS, PROCESS_START, claim_alive, retry_conflicts
from folio.ingest.compaction import compact
from folio.ingest.objstore import (
    STAGING_PREFIX,
    discard_staged,
    is_local,
    read_asset,
    storage_options_from_env,
    sweep_staging,
    upload_staged,
)
from folio.ingest.rows import (
    COLLECTION_COLUMN,
    DEFAULT_COLLECTION,
    FTS_COLUMN,
    SEARCH_KINDS,
    TEXT_DIM,
    WRITER_FIELD,
    check_collection,
    row_collection,
    sql_in,
)
from folio.ingest.rows import sql_str as _sql_str
from folio.kernel.errors import (
    ClaimLost,
    CollectionConflict,
    DocumentNotFound,
    RegionNotFound,
    VersionBusy,
    VersionNotFound,
)
from folio.kernel.index import RegionIndex
from folio.kernel.model import DocumentVersion, Region
from folio.kernel.textnorm import fts_text
from folio.settings import default_data_dir  # the store's default place is a setting (FOLIO_DATA)

# Function-level imports: ``folio.ingest.tables`` imports LanceDB (about a second); the store loads it on
# first use, so that importing the store stays cheap (the CLI reads ``default_data_dir`` from it).
if TYPE_CHECKING:
    from lancedb.pydantic import LanceModel

    from folio.ingest.tables import TableSpec

# Names callers have always imported from here. The table models and schemas live in
# ``ingest.tables``, which imports LanceDB: they are loaded on first use (``__getattr__``), so that
# importing this module stays cheap.
__all__ = [
    "COLLECTION_COLUMN", "DEFAULT_COLLECTION", "FTS_COLUMN", "SEARCH_KINDS", "WRITER_FIELD", "Claim", "Store",
    "check_collection", "default_data_dir", "row_collection", "sql_in",
]
_FROM_TABLES = frozenset({"CHUNKS_SCHEMA", "CLAIM_FIELDS", "REGIONS_SCHEMA", "VERSIONS_SCHEMA", "region_to_row",
                          "row_to_region"})


def __getattr__(name: str) -> Any:
    if name in _FROM_TABLES:
        from folio.ingest import tables

        return getattr(tables, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


logger = logging.getLogger(__name__)
_PINNED_VERSION: ContextVar[tuple[Store, int] | None] = ContextVar("folio_pinned_versions", default=None)

# How long a second writer of the same version waits for the first before giving up.
CLAIM_WAIT = timedelta(minutes=30)
# Bound of the per-version region cache (``Store.region_index``).
REGION_CACHE_SIZE = 64
# Writers compact after this many commits (``ingest/maintenance.py``).
COMPACT_EVERY = 20


@dataclass
class Claim:
    """This Store's hold on one pending version: the writer id its rows carry, and what it wrote."""

    doc_id: str
    version_id: str
    writer: str
    collection: str = DEFAULT_COLLECTION
    counts: dict[str, int] = field(default_factory=dict)
    heartbeat: float = field(default_factory=time.time)

    @property
    def key(self) -> str:
        return f"doc_id = {_sql_str(self.doc_id)} AND version_id = {_sql_str(self.version_id)}"

    @property
    def mine(self) -> str:
        return f"{self.key} AND writer = {_sql_str(self.writer)}"


class Store:
    """The LanceDB-backed store. Thread-safe for one writer and many readers in a process; any number
    of processes may read and write one store (module docstring: claims)."""

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
        (except the one-time ``fts`` migration of data from an older folio); ``recover=True`` runs
        the crash cleanup, which only a writer should ask for. ``storage_options``: LanceDB's
        object-store options (default: from the environment, ``ingest.objstore``)."""
        import tempfile

        import lancedb

        self.uri = str(uri or default_data_dir())
        self.local = is_local(self.uri)
        if self.uri.startswith("file://"):
            self.uri = self.uri.removeprefix("file://")
        if self.local:
            Path(self.uri).mkdir(parents=True, exist_ok=True)
        self.storage_options = storage_options if storage_options is not None else storage_options_from_env(self.uri)
        # Strong consistency: every read sees the latest commit, also another process's (CLI ingest
        # while the server runs, other API replicas, Ray workers). The check is one manifest lookup
        # per read (a LIST request on an object store).
        self.db = lancedb.connect(
            os.path.join(self.uri, "lancedb") if self.local else self.uri,
            read_consistency_interval=timedelta(0),
            storage_options=self.storage_options or None,
        )
        self._tables: dict[str, Any] = {}
        if not self.local:
            sweep_staging()  # what killed writers of this machine left in their staging folders
        # Remote stores: a local staging folder the parser renders into; ``add_regions`` moves its
        # PNGs into the ``assets`` table.
        self.assets_root = (
            Path(self.uri) / "assets"
            if self.local
            else Path(tempfile.gettempdir()) / f"{STAGING_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}" / "assets"
        )
        self._write_lock = threading.RLock()
        self._index_cache: OrderedDict[str, RegionIndex] = OrderedDict()
        self.region_cache_size = region_cache_size
        self.compact_every = compact_every
        self._claims: dict[tuple[str, str], Claim] = {}
        self._claim_columns_ok = False
        self._commits = 0
        self._versions_cache: tuple[int, list[dict[str, Any]]] | None = None
        self._cache_lock = threading.Lock()
        from folio.ingest.tables import CHUNKS, REGIONS, VERSIONS

        self.versions = self._table(VERSIONS.name, VERSIONS.schema)
        self.regions = self._table(REGIONS.name, REGIONS.schema)
        self.chunks = self._table(CHUNKS.name, CHUNKS.schema)
        self._fts_dirty = False
        self._migrate_chunks()
        if recover:
            self.recover()

    # ----------------------------------------------------------------- tables
    def _table(self, name: str, schema: pa.Schema) -> Any:
        """Open ``name``, creating it with ``schema`` when absent (an existing table keeps its own
        schema, so data written by an older folio opens and can be migrated)."""
        if name not in self._tables:
            try:
                self._tables[name] = self.db.open_table(name)
            except (ValueError, FileNotFoundError):
                self._tables[name] = self.db.create_table(name, schema=schema, exist_ok=True)
        return self._tables[name]

    def table(self, name: str, schema: pa.Schema | None = None) -> Any | None:
        """Open a version-scoped table by name (creating it when a schema is given)."""
        if schema is not None:
            return self._table(name, schema)
        if name in self._tables:
            return self._tables[name]
        try:
            self._tables[name] = self.db.open_table(name)
        except (ValueError, FileNotFoundError):
            return None
        return self._tables[name]

    def table_names(self) -> list[str]:
        """Names of the tables in the database, sorted."""
        names: list[str] = []
        token: str | None = None
        while True:
            page = self.db.list_tables(page_token=token)
            names += page.tables
            token = page.page_token
            if not token:
                return sorted(names)

    def version_tables(self) -> list[Any]:
        """Every version-scoped table in the database: each table but ``versions`` that has the
        ``doc_id`` and ``version_id`` columns, whichever layer created it (``ingest.tables.TableSpec``).

        Found in the database rather than from a list of names, so a process that never imported
        the layer owning a table (``folio check``, a delete) still cleans, checks and deletes its rows."""
        out = []
        for name in self.table_names():
            if name == "versions":
                continue
            t = self.table(name)
            if t is not None and {"doc_id", "version_id"} <= set(t.schema.names):
                out.append(t)
        return out

    def _migrate_chunks(self) -> None:
        """Data dirs written before the ``fts`` column existed get it (a copy of ``text``).

        Their CJK text stays unsplit until re-ingested; Latin text indexes exactly as before.
        """
        if FTS_COLUMN in self.chunks.schema.names:
            return
        logger.warning("adding the %r column to chunks (data written by an older folio)", FTS_COLUMN)
        with self._write_lock:
            self.chunks.add_columns({FTS_COLUMN: "text"})
            self._fts_dirty = True
            self.ensure_fts()

    # ------------------------------------------------------------- versions
    def versions_version(self) -> int:
        """The versions table's LanceDB version: the one pinned for this request (``pinned_versions``),
        else read now (a round trip that sees other processes' commits)."""
        pinned = _PINNED_VERSION.get()
        if pinned is not None and pinned[0] is self:
            return pinned[1]
        return int(self.versions.version)

    @contextmanager
    def pinned_versions(self) -> Iterator[int]:
        """Read the versions table's version once for a whole request: inside the block, scope
        resolution, file names and region sources all see that one snapshot (and skip the round trip)."""
        version = int(self.versions.version)
        token = _PINNED_VERSION.set((self, version))
        try:
            yield version
        finally:
            _PINNED_VERSION.reset(token)

    def _version_rows(
        self, *, doc_id: str | None = None, version_id: str | None = None, status: str | None = None
    ) -> list[dict[str, Any]]:
        """Rows of the (small) versions table, cached per LanceDB table version.

        Every query resolves its scope through here, so re-reading the table each time (~5 ms)
        would dominate warm query latency; checking the table version costs ~0.3 ms and still
        sees commits made by other processes (strong read consistency).
        """
        current = self.versions_version()
        with self._cache_lock:
            cached = self._versions_cache
        if cached is None or cached[0] != current:
            rows_all: list[dict[str, Any]] = self.versions.search().limit(None).to_arrow().to_pylist()
            cached = (current, rows_all)
            with self._cache_lock:
                self._versions_cache = cached
        return [
            r
            for r in cached[1]
            if (doc_id is None or r["doc_id"] == doc_id)
            and (version_id is None or r["version_id"] == version_id)
            and (status is None or r["status"] == status)
        ]

    def list_versions(
        self,
        doc_id: str | None = None,
        *,
        include_pending: bool = False,
        collections: Collection[str] | None = None,
    ) -> list[DocumentVersion]:
        """Ready versions (newest first within a document); ``latest`` marks each document's newest.

        ``collections``: only documents in these collections (None: every collection)."""
        rows = self._version_rows(doc_id=doc_id, status=None if include_pending else "ready")
        if collections is not None:
            rows = [r for r in rows if row_collection(r) in collections]
        rows.sort(key=lambda r: (r["doc_id"], -r["created_at"]))
        out: list[DocumentVersion] = []
        seen: set[str] = set()
        for r in rows:
            latest = r["doc_id"] not in seen and r["status"] == "ready"
            seen.add(r["doc_id"])
            out.append(
                DocumentVersion(
                    doc_id=r["doc_id"],
                    version_id=r["version_id"],
                    filename=r["filename"],
                    pages=r["pages"],
                    size_bytes=r["size_bytes"],
                    parser_version=r["parser_version"],
                    created_at=r["created_at"],
                    regions=r["regions"],
                    latest=latest,
                )
            )
        return out

    def collections(self) -> dict[str, str]:
        """doc_id → collection, over documents with a ready version."""
        return {r["doc_id"]: row_collection(r) for r in self._version_rows(status="ready")}

    def collection_of(self, doc_id: str) -> str | None:
        """The collection of a document with a ready version, else None."""
        rows = self._version_rows(doc_id=doc_id, status="ready")
        return row_collection(rows[0]) if rows else None

    def check_collection_free(self, doc_id: str, collection: str, rows: list[dict[str, Any]] | None = None) -> None:
        """Raise ``CollectionConflict`` when ``doc_id`` has a ready version, or a live claim, in
        another collection (``rows``: that document's versions rows, else read from the cache).

        The message does not name the other collection: the caller may not be allowed to see it."""
        rows = self._version_rows(doc_id=doc_id) if rows is None else rows
        for r in rows:
            if row_collection(r) != collection and (r["status"] == "ready" or claim_alive(r)):
                raise CollectionConflict(
                    f"document {doc_id} already exists in another collection; a doc_id lives in one "
                    f"collection, so upload to {collection} under another doc_id"
                )

    def latest_versions(self, doc_ids: Sequence[str] | None = None) -> list[DocumentVersion]:
        vs = [v for v in self.list_versions() if v.latest]
        if doc_ids:
            wanted = set(doc_ids)
            missing = wanted - {v.doc_id for v in vs}
            if missing:
                raise DocumentNotFound(f"no such document: {', '.join(sorted(missing))}")
            vs = [v for v in vs if v.doc_id in wanted]
        return vs

    def get_version(self, doc_id: str, version_id: str | None = None) -> DocumentVersion:
        vs = self.list_versions(doc_id)
        if not vs:
            raise DocumentNotFound(f"no such document: {doc_id}")
        if version_id is None:
            return vs[0]
        for v in vs:
            if v.version_id == version_id:
                return v
        raise VersionNotFound(f"document {doc_id} has no version {version_id}")

    def version_report(self, doc_id: str, version_id: str) -> dict[str, Any]:
        rows = self._version_rows(doc_id=doc_id, version_id=version_id, status="ready")
        if not rows:
            raise VersionNotFound(f"document {doc_id} has no version {version_id}")
        report: dict[str, Any] = json.loads(rows[0]["report"] or "{}")
        return report

    def has_ready(self, doc_id: str, version_id: str) -> bool:
        return bool(self._version_rows(doc_id=doc_id, version_id=version_id, status="ready"))

    # --------------------------------------------------------------- claims
    def _ensure_claim_columns(self) -> None:
        """Give tables written by an older folio the claim columns (a writer-only migration)."""
        if self._claim_columns_ok:
            return
        with self._write_lock:
            from folio.ingest.tables import CLAIM_FIELDS

            missing = [f for f in CLAIM_FIELDS if f.name not in self.versions.schema.names]
            if missing:
                logger.warning("adding writer-claim columns to versions (data written by an older folio)")
                retry_conflicts(lambda: self.versions.add_columns(missing))
            if COLLECTION_COLUMN not in self.versions.schema.names:
                logger.warning("adding the collection column to versions (existing documents: %r)", DEFAULT_COLLECTION)
                retry_conflicts(
                    lambda: self.versions.add_columns({COLLECTION_COLUMN: _sql_str(DEFAULT_COLLECTION)})
                )
            for t in self.version_tables():
                if "writer" not in t.schema.names:
                    retry_conflicts(partial(t.add_columns, [WRITER_FIELD]))
            self._claim_columns_ok = True

    def _doc_rows(self, doc_id: str) -> list[dict[str, Any]]:
        """Every versions row of one document, read now (not from the cache)."""
        rows: list[dict[str, Any]] = (
            self.versions.search().where(f"doc_id = {_sql_str(doc_id)}").limit(None).to_arrow().to_pylist()
        )
        return rows

    def _claim_rows(self, doc_id: str, version_id: str, table: Any | None = None) -> list[dict[str, Any]]:
        """The versions rows of one (doc, version), read now (not from the cache)."""
        t = table if table is not None else self.versions
        where = f"doc_id = {_sql_str(doc_id)} AND version_id = {_sql_str(version_id)}"
        rows: list[dict[str, Any]] = t.search().where(where).limit(None).to_arrow().to_pylist()
        return rows

    def begin_version(
        self,
        doc_id: str,
        version_id: str,
        filename: str,
        size_bytes: int,
        parser_version: str,
        *,
        collection: str = DEFAULT_COLLECTION,
        wait: timedelta = CLAIM_WAIT,
    ) -> bool:
        """Claim a version for writing. False when it is already ready (identical bytes: nothing to do).

        Another live writer of the same version is waited for (up to ``wait``; then ``VersionBusy``);
        a dead one's claim and rows are removed first. Nothing of any other writer is touched.
        ``CollectionConflict`` when the document lives in another collection than ``collection``.
        """
        check_collection(collection)
        self._ensure_claim_columns()
        self._remove_dead_claims()
        deadline = time.monotonic() + wait.total_seconds()
        pause = 0.1
        with self._write_lock:
            if (doc_id, version_id) in self._claims:
                raise VersionBusy(f"{doc_id}@{version_id} is already being written by this store")
            while True:
                self.check_collection_free(doc_id, collection, self._doc_rows(doc_id))
                rows = self._claim_rows(doc_id, version_id)
                if any(r["status"] == "ready" for r in rows):
                    return False
                live = [r for r in rows if claim_alive(r)]
                for r in rows:
                    if r not in live:
                        self._remove_claim(doc_id, version_id, r.get("writer") or "")
                if not live:
                    claim = self._try_claim(doc_id, version_id, filename, size_bytes, parser_version, collection)
                    if claim is not None:
                        self._claims[(doc_id, version_id)] = claim
                        LIVE_WRITERS.add(claim.writer)
                        return True
                    continue  # lost the race: look again at once
                if time.monotonic() >= deadline:
                    raise VersionBusy(
                        f"{doc_id}@{version_id} is being written by another process "
                        f"(pid {live[0].get('writer_pid')} on {live[0].get('writer_host') or HOST})"
                    )
                time.sleep(pause)
                pause = min(pause * 1.5, 1.0)

    def _remove_dead_claims(self) -> list[tuple[str, str]]:
        """Crash cleanup a writer does before it claims: pending versions of dead writers (any
        document), with their rows and assets. Cheap: one read of the small versions table."""
        removed = []
        for r in self._claim_rows_all():
            if r["status"] == "pending" and not claim_alive(r):
                self._remove_claim(r["doc_id"], r["version_id"], r.get("writer") or "")
                removed.append((r["doc_id"], r["version_id"]))
        return removed

    def _try_claim(
        self, doc_id: str, version_id: str, filename: str, size_bytes: int, parser_version: str, collection: str
    ) -> Claim | None:
        """Insert a pending row for (doc, version) unless one exists, and win or withdraw.

        ``merge_insert`` skips the insert when it sees a row, but two processes racing can both
        insert. The claim goes to the earliest commit: a writer whose table version just before its
        own already held another live claim row withdraws its row.
        """
        claim = Claim(doc_id, version_id, uuid.uuid4().hex, collection)
        # Live from before its row exists: another Store of this process must not take it for a
        # leftover of this pid.
        LIVE_WRITERS.add(claim.writer)
        won = False
        try:
            won = self._insert_claim(claim, filename, size_bytes, parser_version, collection)
        finally:
            if not won:
                LIVE_WRITERS.discard(claim.writer)
        return claim if won else None

    def _insert_claim(
        self, claim: Claim, filename: str, size_bytes: int, parser_version: str, collection: str
    ) -> bool:
        doc_id, version_id = claim.doc_id, claim.version_id
        now = time.time()
        from folio.ingest.tables import VersionRow

        row = VersionRow(
            doc_id=doc_id,
            version_id=version_id,
            filename=filename,
            pages=0,
            size_bytes=size_bytes,
            parser_version=parser_version,
            created_at=now,
            regions=0,
            status="pending",
            writer_pid=os.getpid(),
            report="{}",
            writer=claim.writer,
            writer_host=HOST,
            writer_start=PROCESS_START,
            heartbeat=now,
            counts="{}",
            collection=collection,
        )
        data = pa.Table.from_pylist([row.model_dump()], schema=self.versions.schema)
        result = retry_conflicts(
            lambda: self.versions.merge_insert(["doc_id", "version_id"]).when_not_matched_insert_all().execute(data)
        )
        if not result.num_inserted_rows:
            return False
        others = [r for r in self._claim_rows(doc_id, version_id) if r.get("writer") != claim.writer]
        if others:
            before = self.db.open_table("versions")
            before.checkout(result.version - 1)
            earlier = {r.get("writer") for r in self._claim_rows(doc_id, version_id, before) if claim_alive(r)}
            if earlier & {r.get("writer") for r in others} or any(r["status"] == "ready" for r in others):
                logger.info("claim race on %s@%s lost; waiting for the winner", doc_id, version_id)
                retry_conflicts(lambda: self.versions.delete(claim.mine))
                return False
        return True

    def _claim_for(self, doc_id: str, version_id: str) -> Claim:
        claim = self._claims.get((doc_id, version_id))
        if claim is None:
            raise ClaimLost(f"{doc_id}@{version_id} is not claimed by this writer (call begin_version first)")
        now = time.time()
        if now - claim.heartbeat > LEASE.total_seconds() / 4:
            retry_conflicts(lambda: self.versions.update(where=claim.mine, values={"heartbeat": now}))
            claim.heartbeat = now
        return claim

    def _tagged(self, table: Any, name: str, data: pa.Table) -> pa.Table:
        """``data`` with its ``writer`` column set from the claims on its (doc, version)s, cast to
        ``table``'s schema; counts the rows per claim for the commit-time check."""
        keys = list(zip(data.column("doc_id").to_pylist(), data.column("version_id").to_pylist(), strict=True))
        claims = {k: self._claim_for(*k) for k in set(keys)}
        for k in keys:
            claims[k].counts[name] = claims[k].counts.get(name, 0) + 1
        writers = pa.array([claims[k].writer for k in keys], pa.string())
        if "writer" in data.schema.names:
            data = data.set_column(data.schema.get_field_index("writer"), WRITER_FIELD, writers)
        else:
            data = data.append_column(WRITER_FIELD, writers)
        return data.select(table.schema.names).cast(table.schema)

    # --------------------------------------------------------------- writes
    def add_regions(self, regions: Sequence[Region]) -> None:
        if not regions:
            return
        with self._write_lock:
            from folio.ingest.tables import REGIONS, RegionRow, rows_table

            data = rows_table(REGIONS, [RegionRow.from_region(r) for r in regions])
            tagged = self._tagged(self.regions, "regions", data)
            retry_conflicts(lambda: self.regions.add(tagged))
            if not self.local:
                for doc_id, version_id in {(r.doc_id, r.version_id) for r in regions}:
                    upload_staged(self, doc_id, version_id)

    def add_chunks(self, regions: Sequence[Region], vectors: np.ndarray) -> None:
        """Searchable small units with their text vectors (row i of ``vectors`` belongs to ``regions[i]``)."""
        if not regions:
            return
        if vectors.shape != (len(regions), TEXT_DIM):
            raise ValueError(f"expected vectors of shape ({len(regions)}, {TEXT_DIM}), got {vectors.shape}")
        from folio.ingest.tables import CHUNKS_SCHEMA

        table = pa.table(
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
        with self._write_lock:
            tagged = self._tagged(self.chunks, "chunks", table)
            retry_conflicts(lambda: self.chunks.add(tagged))
            self._fts_dirty = True

    def add(self, spec: TableSpec, rows: Sequence[LanceModel] | pa.Table) -> None:
        """Append rows of claimed versions to the version-scoped table ``spec`` describes, creating
        the table from its row model when absent: how other layers write their tables (figure and
        page vectors, summaries). The store sets each row's ``writer`` from its claim."""
        from folio.ingest.tables import rows_table

        self.add_rows(spec.name, spec.schema, rows if isinstance(rows, pa.Table) else rows_table(spec, rows))

    def add_rows(self, table_name: str, schema: pa.Schema, rows: pa.Table | list[dict[str, Any]]) -> None:
        """Append to a version-scoped table given by name and Arrow schema (``add`` takes a ``TableSpec``).

        The store adds its ``writer`` column to that schema."""
        if "writer" not in schema.names:
            schema = schema.append(WRITER_FIELD)
        with self._write_lock:
            table = self._table(table_name, schema)
            if "writer" not in table.schema.names:
                retry_conflicts(lambda: table.add_columns([WRITER_FIELD]))
            if isinstance(rows, pa.Table):
                data = rows
            else:
                data = pa.Table.from_pylist([{**r, "writer": ""} for r in rows], schema=schema)
            if data.num_rows:
                tagged = self._tagged(table, table_name, data)
                retry_conflicts(lambda: table.add(tagged))

    def commit_version(
        self,
        doc_id: str,
        version_id: str,
        *,
        pages: int,
        regions: int,
        report: dict[str, Any],
        created_at: float | None = None,
    ) -> None:
        """Make this writer's pending version visible, in one LanceDB commit, and refresh the full-text index.

        ``created_at`` (default: now) orders a document's versions; a version parsed again keeps its own.

        Only the caller's own claim is flipped (the update is conditional on its writer id), and the
        row is read back afterwards: ``ClaimLost`` if the claim was taken over or deleted meanwhile,
        or if rows this writer wrote are gone.
        """
        with self._write_lock:
            claim = self._claim_for(doc_id, version_id)
            # Two writers racing to put one doc_id in two collections: neither commits.
            others = [r for r in self._doc_rows(doc_id) if r.get("writer") != claim.writer]
            self.check_collection_free(doc_id, claim.collection, others)
            for name, n in claim.counts.items():
                t = self.table(name)
                have = t.count_rows(claim.mine) if t is not None else 0
                if have != n:
                    raise ClaimLost(f"{doc_id}@{version_id}: {name} has {have} rows of this writer, wrote {n}")
            for t in self.version_tables():
                # Rows a dead or superseded writer left behind in this version never become visible.
                foreign = f"{claim.key} AND (writer IS NULL OR writer != {_sql_str(claim.writer)})"
                if t.count_rows(foreign):
                    retry_conflicts(partial(t.delete, foreign))
            self.ensure_fts()
            values = {
                "status": "ready",
                "pages": pages,
                "regions": regions,
                "report": json.dumps(report, ensure_ascii=False),
                "created_at": time.time() if created_at is None else created_at,
                "counts": json.dumps(claim.counts, sort_keys=True),
            }
            retry_conflicts(lambda: self.versions.update(where=f"{claim.mine} AND status = 'pending'", values=values))
            rows = self._claim_rows(doc_id, version_id)
            ready = [r for r in rows if r["status"] == "ready"]
            if [r.get("writer") for r in ready] != [claim.writer]:
                raise ClaimLost(f"{doc_id}@{version_id} was taken over by another writer before it committed")
            del self._claims[(doc_id, version_id)]
            LIVE_WRITERS.discard(claim.writer)
            self._commits += 1
            if self.compact_every and self._commits % self.compact_every == 0:
                self.maintain()

    def maintain(self) -> None:
        """Periodic compaction in a writer; a failure is logged, never fails the commit that triggered it."""
        try:
            compact(self)
        except (OSError, RuntimeError, ValueError) as exc:
            logger.warning("compaction of %s failed: %s", self.uri, exc)

    def ensure_fts(self) -> None:
        """(Re)build the native full-text index over chunk text when rows were added since the last build."""
        from lancedb.index import FTS

        with self._write_lock:
            if not self._fts_dirty and self.has_fts():
                return
            if self.chunks.count_rows() == 0:
                return
            retry_conflicts(lambda: self.chunks.create_index(FTS_COLUMN, config=FTS(with_position=True), replace=True))
            self._fts_dirty = False

    def has_fts(self) -> bool:
        """Whether the chunks table has its full-text index (False also when the listing fails)."""
        try:
            return any(FTS_COLUMN in idx.columns for idx in self.chunks.list_indices())
        except Exception:  # noqa: BLE001 - an index listing failure only means "rebuild"
            return False

    def abort_version(self, doc_id: str, version_id: str) -> None:
        """Undo a failed ingest: this writer's rows and claim go; nothing of any other writer is touched."""
        with self._write_lock:
            claim = self._claims.pop((doc_id, version_id), None)
            if claim is None:
                return
            LIVE_WRITERS.discard(claim.writer)
            self._remove_claim(doc_id, version_id, claim.writer)
            if not self.local:
                discard_staged(self, doc_id, version_id)

    def _remove_claim(self, doc_id: str, version_id: str, writer: str) -> None:
        """Remove one (dead or failed) writer's pending version: its rows, then its assets when no
        other claim or ready version shares them, then its versions row (which frees the version)."""
        key = f"doc_id = {_sql_str(doc_id)} AND version_id = {_sql_str(version_id)}"
        mine = f"{key} AND " + (f"writer = {_sql_str(writer)}" if writer else "(writer IS NULL OR writer = '')")
        logger.warning("removing incomplete version %s@%s (writer %s)", doc_id, version_id, writer or "?")
        with self._write_lock:
            for t in self.version_tables():
                if "writer" in t.schema.names:
                    retry_conflicts(partial(t.delete, mine))
                else:
                    retry_conflicts(partial(t.delete, key))
            self._fts_dirty = True
            others = [r for r in self._claim_rows(doc_id, version_id) if (r.get("writer") or "") != writer]
            if self.local and not others:
                shutil.rmtree(self.assets_root / f"{doc_id}@{version_id}", ignore_errors=True)
            where = mine if "writer" in self.versions.schema.names else key
            retry_conflicts(lambda: self.versions.delete(f"{where} AND status = 'pending'"))
            self._forget(doc_id, version_id)

    def delete_version(self, doc_id: str, version_id: str) -> None:
        self.get_version(doc_id, version_id)  # raises when absent
        with self._write_lock:
            key = f"doc_id = {_sql_str(doc_id)} AND version_id = {_sql_str(version_id)}"
            retry_conflicts(lambda: self.versions.delete(key))
            self._purge(doc_id, version_id)

    def delete_document(self, doc_id: str) -> list[str]:
        versions = [v.version_id for v in self.list_versions(doc_id, include_pending=True)]
        if not versions:
            raise DocumentNotFound(f"no such document: {doc_id}")
        with self._write_lock:
            retry_conflicts(lambda: self.versions.delete(f"doc_id = {_sql_str(doc_id)}"))
            for v in versions:
                self._purge(doc_id, v)
        return versions

    def _purge(self, doc_id: str, version_id: str) -> None:
        """Remove every row and asset of a version whose versions rows are already gone."""
        key = f"doc_id = {_sql_str(doc_id)} AND version_id = {_sql_str(version_id)}"
        for t in self.version_tables():
            retry_conflicts(partial(t.delete, key))
        self._fts_dirty = True
        if self.local:
            shutil.rmtree(self.assets_root / f"{doc_id}@{version_id}", ignore_errors=True)
        self._forget(doc_id, version_id)
        self._commits += 1
        if self.compact_every and self._commits % self.compact_every == 0:
            self.maintain()

    def _forget(self, doc_id: str, version_id: str) -> None:
        with self._cache_lock:
            self._index_cache.pop(version_id + "|" + doc_id, None)

    def recover(self) -> list[tuple[str, str]]:
        """Crash cleanup (writers and ``folio check --repair`` only): remove pending versions whose
        writer is dead, rows that belong to no versions row (or to another writer than the version's),
        and asset folders of no version.

        Rows and asset folders are listed *before* the versions table is read: a writer adds its
        claim before its first row, so anything listed belongs to a claim the later read sees.
        """
        removed: list[tuple[str, str]] = []
        with self._write_lock:
            self._ensure_claim_columns()
            tables = self.version_tables()
            present = {
                id(t): t.search().select(["doc_id", "version_id", "writer"]).limit(None).to_arrow().to_pylist()
                for t in tables
            }
            asset_dirs = list(self.assets_root.iterdir()) if self.local and self.assets_root.exists() else []
            removed += self._remove_dead_claims()
            rows = self._claim_rows_all()
            known = {(r["doc_id"], r["version_id"], r.get("writer") or "") for r in rows}
            for t in tables:
                keys = {(p["doc_id"], p["version_id"], p.get("writer") or "") for p in present[id(t)]}
                for doc, ver, writer in keys - known:
                    where = f"doc_id = {_sql_str(doc)} AND version_id = {_sql_str(ver)} AND " + (
                        f"writer = {_sql_str(writer)}" if writer else "(writer IS NULL OR writer = '')"
                    )
                    logger.warning("removing orphan rows of %s@%s (writer %s)", doc, ver, writer or "?")
                    retry_conflicts(partial(t.delete, where))
                    removed.append((doc, ver))
            names = {f"{r['doc_id']}@{r['version_id']}" for r in rows}
            for child in asset_dirs:
                if child.name not in names:
                    shutil.rmtree(child, ignore_errors=True)
            if removed:
                self._fts_dirty = True
                self.ensure_fts()
        return removed

    def _claim_rows_all(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.versions.search().limit(None).to_arrow().to_pylist()
        return rows

    # ---------------------------------------------------------------- reads
    def region_index(self, doc_id: str, version_id: str) -> RegionIndex:
        """All regions of one ready version, indexed in memory (versions are immutable) and kept in an
        LRU cache of the ``region_cache_size`` most recently used versions."""
        key = version_id + "|" + doc_id
        with self._cache_lock:
            hit = self._index_cache.get(key)
            if hit is not None:
                self._index_cache.move_to_end(key)
        if hit is not None:
            return hit
        rows = (
            self.regions.search()
            .where(f"doc_id = {_sql_str(doc_id)} AND version_id = {_sql_str(version_id)}")
            .limit(None)
            .to_arrow()
            .to_pylist()
        )
        from folio.ingest.tables import row_to_region

        index = RegionIndex(row_to_region(r) for r in rows)
        with self._cache_lock:
            self._index_cache[key] = index
            self._index_cache.move_to_end(key)
            while len(self._index_cache) > max(self.region_cache_size, 0):
                self._index_cache.popitem(last=False)
        return index

    def get_region(self, region_id: str) -> Region:
        rows = self.regions.search().where(f"region_id = {_sql_str(region_id)}").limit(1).to_arrow().to_pylist()
        if not rows:
            raise RegionNotFound(f"no such region: {region_id}")
        from folio.ingest.tables import row_to_region

        region = row_to_region(rows[0])
        if not self.has_ready(region.doc_id, region.version_id):
            raise RegionNotFound(f"no such region: {region_id}")
        return region

    def read_asset(self, relative: str) -> bytes:
        """The bytes of a stored image named in a region's meta (``RegionNotFound`` when absent)."""
        if self.local:
            try:
                return self.asset_path(relative).read_bytes()
            except OSError as e:
                raise RegionNotFound(f"no such asset: {relative}") from e
        data = read_asset(self, relative)
        if data is None:
            raise RegionNotFound(f"no such asset: {relative}")
        return data

    def asset_path(self, relative: str) -> Path:
        """Resolve an asset path stored in a region's meta, refusing anything outside the data dir."""
        root = Path(self.uri).resolve()
        path = (root / relative).resolve()
        if root not in path.parents:
            raise RegionNotFound(f"no such asset: {relative}")
        return path
