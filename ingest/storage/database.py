"""The LanceDB connection and its tables: open or create by name, list them, scan version-scoped ones.

Every table is opened once per store and kept (``Database.table``). A table that exists keeps its own
schema, so data written by an older folio opens and can be migrated. Version-scoped tables (every
table but ``versions`` that has the ``doc_id`` and ``version_id`` columns) are found in the database,
not from a list of names, so a process that never imported the layer owning a table (``folio check``,
a delete) still cleans, checks and deletes its rows.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from folio.ingest.storage.claims import retry_conflicts
from folio.ingest.storage.sql import WRITER_FIELD, versions_filter, writers_filter

if TYPE_CHECKING:
    from folio.ingest.storage.indexes import IndexOptions

# Rows with their ``writer`` set from the claims on their versions, cast to a table's schema
# (``Catalogue.tagged(table, table_name, rows)``).
Tagger = Callable[[Any, str, pa.Table], pa.Table]


class Database:
    """One LanceDB database (a folder, or an object-store URI) and its open tables."""

    def __init__(self, uri: str, *, local: bool, storage_options: dict[str, str]) -> None:
        # function-level: LanceDB loads when a store opens, not when the store module is imported
        from folio.ingest.storage.lance_import import import_lancedb

        lancedb = import_lancedb()

        # Strong consistency: every read sees the latest commit, also another process's (CLI ingest
        # while the server runs, other API replicas, Ray workers). The check is one manifest lookup
        # per read (a LIST request on an object store).
        self.db = lancedb.connect(
            os.path.join(uri, "lancedb") if local else uri,
            read_consistency_interval=timedelta(0),
            storage_options=storage_options or None,
        )
        self.tables: dict[str, Any] = {}
        # One writer thread at a time in this process (readers take no lock).
        self.write_lock = threading.RLock()

    def open(self, name: str, schema: pa.Schema) -> Any:
        """Open ``name``, creating it with ``schema`` when absent (an existing table keeps its own
        schema, so data written by an older folio opens and can be migrated)."""
        if name not in self.tables:
            try:
                self.tables[name] = self.db.open_table(name)
            except (ValueError, FileNotFoundError):
                self.tables[name] = self.db.create_table(name, schema=schema, exist_ok=True)
        return self.tables[name]

    def table(self, name: str, schema: pa.Schema | None = None) -> Any | None:
        """Open a version-scoped table by name (creating it when a schema is given); None when absent."""
        if schema is not None:
            return self.open(name, schema)
        if name in self.tables:
            return self.tables[name]
        try:
            self.tables[name] = self.db.open_table(name)
        except (ValueError, FileNotFoundError):
            return None
        return self.tables[name]

    def append(self, name: str, schema: pa.Schema, rows: pa.Table | list[dict[str, Any]], tagged: Tagger) -> None:
        """Append to a version-scoped table given by name and Arrow schema, creating it when absent; the
        rows get the ``writer`` column (added to the schema, and to a table of an older folio) from ``tagged``."""
        if "writer" not in schema.names:
            schema = schema.append(WRITER_FIELD)
        with self.write_lock:
            table = self.open(name, schema)
            if "writer" not in table.schema.names:
                retry_conflicts(lambda: table.add_columns([WRITER_FIELD]))
            if isinstance(rows, pa.Table):
                data = rows
            else:
                data = pa.Table.from_pylist([{**r, "writer": ""} for r in rows], schema=schema)
            if data.num_rows:
                tagged_rows = tagged(table, name, data)
                retry_conflicts(lambda: table.add(tagged_rows))

    def checkout(self, name: str, version: int) -> Any:
        """A fresh handle on table ``name`` as it was at LanceDB ``version`` (the shared handle stays on the latest)."""
        old = self.db.open_table(name)
        old.checkout(version)
        return old

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
        """Every version-scoped table in the database (module docstring)."""
        out = []
        for name in self.table_names():
            if name == "versions":
                continue
            t = self.table(name)
            if t is not None and {"doc_id", "version_id"} <= set(t.schema.names):
                out.append(t)
        return out

    def scan_versions(
        self, name: str, keys: Iterable[tuple[str, str]], columns: Sequence[str], writers: Collection[str]
    ) -> pa.Table | None:
        """The ``columns`` (those the table has) of every row of these versions that ``writers`` wrote (their
        ready rows' writers; a table without writers: every row), in one scan; None when the table does not
        exist. The result keeps the table's column types, also when empty."""
        table = self.table(name)
        if table is None:
            return None
        have = set(table.schema.names)
        where = versions_filter(keys) + (f" AND {writers_filter(writers)}" if "writer" in have else "")
        data: pa.Table = table.search().where(where).select([c for c in columns if c in have]).limit(None).to_arrow()
        return data

    def vector_dim(self, name: str, column: str = "vector") -> int | None:
        """The width of a fixed-size vector column, None when the table does not exist."""
        table = self.table(name)
        if table is None:
            return None
        size: int = table.schema.field(column).type.list_size
        return size

    def index_text(self, name: str, column: str = "text", options: IndexOptions | None = None) -> None:
        """Build a full-text index (without positions) on ``column`` of table ``name`` when it exists and has
        none, or again when its new rows call for it (``folio.ingest.storage.indexes.ensure_fts``)."""
        table = self.table(name)
        if table is None:
            return
        from folio.ingest.storage.indexes import ensure_fts  # function-level: indexes import the claims' retries

        with self.write_lock:
            ensure_fts(table, column, with_position=False, options=options)
