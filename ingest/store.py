"""folio's storage: one LanceDB database in one data directory (or object-store URI).

Tables (every row of every version-scoped table carries ``doc_id`` and ``version_id``):

- ``versions``: one row per document version; ``status`` is ``pending`` while it is being written
  and ``ready`` once complete. **Only ready versions are visible**: every read filters by them.
- ``regions``: every region of every version, no vectors (sections, paragraphs, pages, ...).
- ``chunks``: the small searchable units (sentences, tables, figures, page texts) with their MiniLM
  vectors and LanceDB's native full-text index on ``text``. Images never enter these scans.
- ``figures`` / ``pages`` (created by the retrieval layer's encoders when CLIP / ColPali are on):
  CLIP image vectors of figure crops; ColPali page multivectors.

Rendered page images and figure crops are PNG files under ``<data>/assets/<doc_id>@<version_id>/``.

Atomicity: an ingest first adds a ``pending`` versions row (with the writer's pid), then writes
regions, chunks, vectors and assets, then flips the row to ``ready`` in one LanceDB commit. A
process killed midway leaves only rows of a pending version, which no query sees; ``Store.open``
removes pending versions whose writer is gone (``recover``). Deleting flips visibility first too:
the versions row goes, then the rows and assets behind it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ingest.embed import TEXT_DIM
from ingest.errors import DocumentNotFound, RegionNotFound, VersionNotFound
from ingest.index import RegionIndex
from ingest.model import CHILD_KINDS, BBox, DocumentVersion, Locator, Region
from ingest.textnorm import fts_text

logger = logging.getLogger(__name__)

SEARCH_KINDS: tuple[str, ...] = (*CHILD_KINDS, "page")

VERSIONS_SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.string()),
        pa.field("version_id", pa.string()),
        pa.field("filename", pa.string()),
        pa.field("pages", pa.int32()),
        pa.field("size_bytes", pa.int64()),
        pa.field("parser_version", pa.string()),
        pa.field("created_at", pa.float64()),
        pa.field("regions", pa.int32()),
        pa.field("status", pa.string()),
        pa.field("writer_pid", pa.int64()),
        pa.field("report", pa.string()),
    ]
)

REGIONS_SCHEMA = pa.schema(
    [
        pa.field("region_id", pa.string()),
        pa.field("doc_id", pa.string()),
        pa.field("version_id", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("text", pa.string()),
        pa.field("page", pa.int32()),
        pa.field("locators", pa.string()),
        pa.field("parent_id", pa.string()),
        pa.field("section_id", pa.string()),
        pa.field("heading_path", pa.string()),
        pa.field("level", pa.int32()),
        pa.field("seq", pa.int32()),
        pa.field("tokens", pa.int32()),
        pa.field("meta", pa.string()),
    ]
)

CHUNKS_SCHEMA = pa.schema(
    [
        pa.field("region_id", pa.string()),
        pa.field("doc_id", pa.string()),
        pa.field("version_id", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("page", pa.int32()),
        pa.field("text", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), TEXT_DIM)),
        # What the full-text index reads: the text with CJK runs as bigrams (ingest/textnorm.py).
        pa.field("fts", pa.string()),
    ]
)
FTS_COLUMN = "fts"


def default_data_dir() -> str:
    """``$FOLIO_DATA``, else ``$XDG_DATA_HOME/folio``, else ``~/.local/share/folio``."""
    if os.environ.get("FOLIO_DATA"):
        return os.environ["FOLIO_DATA"]
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "folio")


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    """A safe ``column IN (...)`` filter (single quotes doubled)."""
    vals = sorted(set(values))
    if not vals:
        return "false"
    return f"{column} IN ({', '.join(_sql_str(v) for v in vals)})"


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def region_to_row(r: Region) -> dict[str, Any]:
    return {
        "region_id": r.region_id,
        "doc_id": r.doc_id,
        "version_id": r.version_id,
        "kind": r.kind,
        "text": r.text,
        "page": r.first_page,
        "locators": json.dumps([loc.model_dump(mode="json") for loc in r.locators], separators=(",", ":")),
        "parent_id": r.parent_id,
        "section_id": r.section_id,
        "heading_path": json.dumps(list(r.heading_path), ensure_ascii=False),
        "level": r.level,
        "seq": r.seq,
        "tokens": r.tokens,
        "meta": json.dumps(dict(r.meta), ensure_ascii=False),
    }


def _locator(d: dict[str, Any]) -> Locator:
    return Locator(
        page=d["page"],
        bbox=BBox(**d["bbox"]),
        page_width=d["page_width"],
        page_height=d["page_height"],
        line_boxes=tuple(BBox(**b) for b in d.get("line_boxes") or ()),
        char_start=d.get("char_start"),
        char_end=d.get("char_end"),
    )


def row_to_region(row: dict[str, Any]) -> Region:
    return Region(
        region_id=row["region_id"],
        doc_id=row["doc_id"],
        version_id=row["version_id"],
        kind=row["kind"],
        text=row["text"] or "",
        locators=tuple(_locator(d) for d in json.loads(row["locators"])),
        parent_id=row["parent_id"],
        section_id=row["section_id"],
        heading_path=tuple(json.loads(row["heading_path"] or "[]")),
        level=row["level"] or 0,
        seq=row["seq"] or 0,
        tokens=row["tokens"] or 0,
        meta=tuple(json.loads(row["meta"] or "{}").items()),
    )


class Store:
    """The LanceDB-backed store. Thread-safe for one writer and many readers in a process."""

    def __init__(self, uri: str | os.PathLike[str] | None = None, *, recover: bool = True) -> None:
        import lancedb

        self.uri = str(uri or default_data_dir())
        self.local = "://" not in self.uri
        if self.local:
            Path(self.uri).mkdir(parents=True, exist_ok=True)
        # Strong consistency: every read sees the latest commit, also another process's (CLI ingest
        # while the server runs). The check is one manifest lookup per read.
        self.db = lancedb.connect(
            os.path.join(self.uri, "lancedb") if self.local else self.uri,
            read_consistency_interval=timedelta(0),
        )
        self._tables: dict[str, Any] = {}
        self.assets_root = Path(self.uri) / "assets"
        self._write_lock = threading.RLock()
        self._index_cache: dict[str, RegionIndex] = {}
        self._versions_cache: tuple[int, list[dict[str, Any]]] | None = None
        self._cache_lock = threading.Lock()
        self.versions = self._table("versions", VERSIONS_SCHEMA)
        self.regions = self._table("regions", REGIONS_SCHEMA)
        self.chunks = self._table("chunks", CHUNKS_SCHEMA)
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

    def version_tables(self) -> list[Any]:
        out = []
        for name in ("regions", "chunks", "figures", "pages", "summaries"):
            t = self.table(name)
            if t is not None:
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
    def _version_rows(
        self, *, doc_id: str | None = None, version_id: str | None = None, status: str | None = None
    ) -> list[dict[str, Any]]:
        """Rows of the (small) versions table, cached per LanceDB table version.

        Every query resolves its scope through here, so re-reading the table each time (~5 ms)
        would dominate warm query latency; checking the table version costs ~0.3 ms and still
        sees commits made by other processes (strong read consistency).
        """
        current = self.versions.version
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

    def list_versions(self, doc_id: str | None = None, *, include_pending: bool = False) -> list[DocumentVersion]:
        """Ready versions (newest first within a document); ``latest`` marks each document's newest."""
        rows = self._version_rows(doc_id=doc_id, status=None if include_pending else "ready")
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

    # --------------------------------------------------------------- writes
    def begin_version(self, doc_id: str, version_id: str, filename: str, size_bytes: int, parser_version: str) -> None:
        """Mark a version as being written. Any leftover rows of an earlier failed attempt are removed."""
        with self._write_lock:
            self._purge(doc_id, version_id)
            self.versions.add(
                pa.Table.from_pylist(
                    [
                        {
                            "doc_id": doc_id,
                            "version_id": version_id,
                            "filename": filename,
                            "pages": 0,
                            "size_bytes": size_bytes,
                            "parser_version": parser_version,
                            "created_at": time.time(),
                            "regions": 0,
                            "status": "pending",
                            "writer_pid": os.getpid(),
                            "report": "{}",
                        }
                    ],
                    schema=VERSIONS_SCHEMA,
                )
            )

    def add_regions(self, regions: Sequence[Region]) -> None:
        if not regions:
            return
        with self._write_lock:
            self.regions.add(pa.Table.from_pylist([region_to_row(r) for r in regions], schema=REGIONS_SCHEMA))

    def add_chunks(self, regions: Sequence[Region], vectors: np.ndarray) -> None:
        """Searchable small units with their text vectors (row i of ``vectors`` belongs to ``regions[i]``)."""
        if not regions:
            return
        if vectors.shape != (len(regions), TEXT_DIM):
            raise ValueError(f"expected vectors of shape ({len(regions)}, {TEXT_DIM}), got {vectors.shape}")
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
        )
        with self._write_lock:
            self.chunks.add(table)
            self._fts_dirty = True

    def add_rows(self, table_name: str, schema: pa.Schema, rows: pa.Table | list[dict[str, Any]]) -> None:
        """Append to a version-scoped table owned by another layer (figure or page vectors, summaries)."""
        with self._write_lock:
            table = self._table(table_name, schema)
            data = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(rows, schema=schema)
            if data.num_rows:
                table.add(data)

    def commit_version(self, doc_id: str, version_id: str, *, pages: int, regions: int, report: dict[str, Any]) -> None:
        """Make a pending version visible, in one LanceDB commit, and refresh the full-text index."""
        with self._write_lock:
            self.ensure_fts()
            self.versions.update(
                where=f"doc_id = {_sql_str(doc_id)} AND version_id = {_sql_str(version_id)} AND status = 'pending'",
                values={
                    "status": "ready",
                    "pages": pages,
                    "regions": regions,
                    "report": json.dumps(report, ensure_ascii=False),
                    "created_at": time.time(),
                },
            )

    def ensure_fts(self) -> None:
        """(Re)build the native full-text index over chunk text when rows were added since the last build."""
        from lancedb.index import FTS

        with self._write_lock:
            if not self._fts_dirty and self._has_fts():
                return
            if self.chunks.count_rows() == 0:
                return
            self.chunks.create_index(FTS_COLUMN, config=FTS(with_position=True), replace=True)
            self._fts_dirty = False

    def _has_fts(self) -> bool:
        try:
            return any(FTS_COLUMN in idx.columns for idx in self.chunks.list_indices())
        except Exception:  # noqa: BLE001 - an index listing failure only means "rebuild"
            return False

    def abort_version(self, doc_id: str, version_id: str) -> None:
        """Undo a failed ingest: nothing of this version stays, nothing else is touched."""
        with self._write_lock:
            self._purge(doc_id, version_id, only_pending=True)

    def delete_version(self, doc_id: str, version_id: str) -> None:
        self.get_version(doc_id, version_id)  # raises when absent
        with self._write_lock:
            self.versions.delete(f"doc_id = {_sql_str(doc_id)} AND version_id = {_sql_str(version_id)}")
            self._purge(doc_id, version_id)

    def delete_document(self, doc_id: str) -> list[str]:
        versions = [v.version_id for v in self.list_versions(doc_id, include_pending=True)]
        if not versions:
            raise DocumentNotFound(f"no such document: {doc_id}")
        with self._write_lock:
            self.versions.delete(f"doc_id = {_sql_str(doc_id)}")
            for v in versions:
                self._purge(doc_id, v)
        return versions

    def _purge(self, doc_id: str, version_id: str, *, only_pending: bool = False) -> None:
        key = f"doc_id = {_sql_str(doc_id)} AND version_id = {_sql_str(version_id)}"
        self.versions.delete(f"{key} AND status = 'pending'")
        if only_pending and self.has_ready(doc_id, version_id):
            return
        for t in self.version_tables():
            t.delete(key)
        self._fts_dirty = True
        if self.local:
            shutil.rmtree(self.assets_root / f"{doc_id}@{version_id}", ignore_errors=True)
        with self._cache_lock:
            self._index_cache.pop(version_id + "|" + doc_id, None)

    def recover(self) -> list[tuple[str, str]]:
        """Remove pending versions whose writer process is gone, and orphan rows of no version."""
        removed: list[tuple[str, str]] = []
        with self._write_lock:
            for r in self._version_rows(status="pending"):
                if not _pid_alive(int(r["writer_pid"] or 0)) or r["writer_pid"] == os.getpid():
                    logger.warning("removing incomplete version %s@%s", r["doc_id"], r["version_id"])
                    self._purge(r["doc_id"], r["version_id"])
                    removed.append((r["doc_id"], r["version_id"]))
            known = {(r["doc_id"], r["version_id"]) for r in self._version_rows()}
            for t in self.version_tables():
                present = t.search().select(["doc_id", "version_id"]).limit(None).to_arrow().to_pylist()
                for key in {(p["doc_id"], p["version_id"]) for p in present} - known:
                    t.delete(f"doc_id = {_sql_str(key[0])} AND version_id = {_sql_str(key[1])}")
                    removed.append(key)
            if self.local and self.assets_root.exists():
                names = {f"{d}@{v}" for d, v in known}
                for child in self.assets_root.iterdir():
                    if child.name not in names:
                        shutil.rmtree(child, ignore_errors=True)
            if removed:
                self._fts_dirty = True
                self.ensure_fts()
        return removed

    # ---------------------------------------------------------------- reads
    def region_index(self, doc_id: str, version_id: str) -> RegionIndex:
        """All regions of one ready version, indexed in memory and cached (versions are immutable)."""
        key = version_id + "|" + doc_id
        with self._cache_lock:
            hit = self._index_cache.get(key)
        if hit is not None:
            return hit
        rows = (
            self.regions.search()
            .where(f"doc_id = {_sql_str(doc_id)} AND version_id = {_sql_str(version_id)}")
            .limit(None)
            .to_arrow()
            .to_pylist()
        )
        index = RegionIndex(row_to_region(r) for r in rows)
        with self._cache_lock:
            self._index_cache[key] = index
        return index

    def get_region(self, region_id: str) -> Region:
        rows = self.regions.search().where(f"region_id = {_sql_str(region_id)}").limit(1).to_arrow().to_pylist()
        if not rows:
            raise RegionNotFound(f"no such region: {region_id}")
        region = row_to_region(rows[0])
        if not self.has_ready(region.doc_id, region.version_id):
            raise RegionNotFound(f"no such region: {region_id}")
        return region

    def asset_path(self, relative: str) -> Path:
        """Resolve an asset path stored in a region's meta, refusing anything outside the data dir."""
        root = Path(self.uri).resolve()
        path = (root / relative).resolve()
        if root not in path.parents:
            raise RegionNotFound(f"no such asset: {relative}")
        return path
