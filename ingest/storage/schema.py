"""The stored shapes: table row models, the ``TableSpec`` protocol, region <-> row.

Every LanceDB table's schema is derived from a row model (LanceDB's ``LanceModel``, with ``Vector`` /
``MultiVector`` for embeddings) by ``arrow_schema``; nothing writes an Arrow schema by hand. Tables
scoped to a document version (every table but ``versions``) derive from ``VersionScopedRow``, which
holds the version-key columns (``region_id``, ``doc_id``, ``version_id``, ``kind``, ``page``) and the
``writer`` column the store fills from its claim once, for all of them. A layer that owns a table
(retrieval's figure and page vectors, section summaries) describes it by a ``TableSpec`` and hands it
to ``Store.add_rows``; the store needs no list of other layers' tables (``Store.version_tables``).

On-disk compatibility: the derived schemas are column for column those of the hand-written ones they
replace (names, Arrow types, all nullable), so data dirs written by an older folio open unchanged.
A region's locators, heading path and payload stay JSON strings in their columns (rewriting the
column types of existing tables would need a migration); they are decoded by pydantic into typed
values in one place, ``RegionRow.to_region``, which also migrates the flat ``meta`` of rows
written before parser v4 (``ingest.model.payload_from_meta``).

Importing this module imports LanceDB (about a second): the facade (``store.py``) imports it lazily, so that
the store stays cheap to import (the CLI's startup reads ``default_data_dir`` from it). Collections and SQL
literals, which need no LanceDB, are in ``sql.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any

import pyarrow as pa
from pydantic import TypeAdapter, create_model

from folio.ingest.storage.lance_import import LanceModel, MultiVector, Vector, pydantic_to_schema
from folio.ingest.storage.sql import TEXT_DIM
from folio.kernel.model import Locator, Region, RegionPayload, payload_from_meta


@dataclass(frozen=True)
class ArrowType:
    """Field metadata: store this column as ``type`` (LanceModel maps every ``int`` to int64)."""

    type: pa.DataType


Int32 = Annotated[int, ArrowType(pa.int32())]


def arrow_schema(model: type[LanceModel]) -> pa.Schema:
    """The Arrow schema of a row model: LanceDB's derivation, ``ArrowType`` overrides applied, and
    every column nullable, as in every table written so far (so old and new tables take the same data).

    >>> arrow_schema(ChunkRow).field("vector").type
    FixedSizeListType(fixed_size_list<item: float>[384])
    >>> arrow_schema(RegionRow).field("page").type
    DataType(int32)
    """
    schema = pydantic_to_schema(model)
    fields = []
    for f in schema:
        info = model.model_fields[f.name]
        override = next((m.type for m in info.metadata if isinstance(m, ArrowType)), None)
        fields.append(pa.field(f.name, override or f.type, nullable=True))
    return pa.schema(fields)


@dataclass(frozen=True)
class TableSpec:
    """One LanceDB table: its name, its row model and the columns that key a row's version.

    Version-scoped tables (``key`` = doc_id, version_id) are deleted, recovered and committed per
    version by the store, whatever layer owns them."""

    name: str
    model: type[LanceModel]
    key: tuple[str, ...] = ("doc_id", "version_id")

    @property
    def schema(self) -> pa.Schema:
        return arrow_schema(self.model)


class VersionRow(LanceModel):
    """A row of ``versions``: one document version, its status and the claim of its writer."""

    doc_id: str
    version_id: str
    filename: str
    pages: Int32
    size_bytes: int
    parser_version: str
    created_at: float  # unix seconds
    regions: Int32
    status: str  # pending | ready
    writer_pid: int
    report: str  # JSON of the IngestReport
    # The claim (``ingest/storage/store.py`` docstring). Older data dirs get these columns from their first writer.
    writer: str | None = None
    writer_host: str | None = None
    writer_start: int | None = None
    heartbeat: float | None = None
    # Rows written per table ({"regions": n, "chunks": m, ...}), checked by ``folio check``.
    counts: str | None = None
    # The document's collection (store docstring); older data dirs get it from their first writer.
    collection: str | None = None
    # On a ready row that replaced another writer's rows (a re-parse): that writer, until its rows are removed
    # (``recovery.retire``); ``heartbeat`` is then when the swap happened. None: nothing left to remove.
    retiring: str | None = None


class VersionScopedRow(LanceModel):
    """The columns every version-scoped table starts with: which region of which version, and the
    ``writer`` whose claim wrote the row (set by the store, ``Catalogue.tagged``)."""

    region_id: str
    doc_id: str
    version_id: str
    kind: str
    page: Int32
    writer: str | None = None


_LOCATORS: TypeAdapter[tuple[Locator, ...]] = TypeAdapter(tuple[Locator, ...])
_HEADING_PATH: TypeAdapter[tuple[str, ...]] = TypeAdapter(tuple[str, ...])
_PAYLOAD: TypeAdapter[RegionPayload | None] = TypeAdapter(RegionPayload | None)


class RegionRow(VersionScopedRow):
    """A row of ``regions``: every region of every version, without vectors.

    ``locators``, ``heading_path`` and ``meta`` (the payload) are JSON strings (module docstring)."""

    text: str
    locators: str
    parent_id: str | None = None
    section_id: str | None = None
    heading_path: str
    level: Int32
    seq: Int32
    tokens: Int32
    meta: str  # the payload as JSON; rows before parser v4: flat string pairs ({"image": "...", ...})

    @classmethod
    def from_region(cls, r: Region) -> RegionRow:
        return cls(
            region_id=r.region_id,
            doc_id=r.doc_id,
            version_id=r.version_id,
            kind=r.kind,
            page=r.first_page,
            text=r.text,
            locators=_LOCATORS.dump_json(r.locators).decode(),
            parent_id=r.parent_id,
            section_id=r.section_id,
            heading_path=json.dumps(list(r.heading_path), ensure_ascii=False),
            level=r.level,
            seq=r.seq,
            tokens=r.tokens,
            meta="{}" if r.payload is None else r.payload.model_dump_json(),
        )

    def to_region(self) -> Region:
        return Region(
            region_id=self.region_id,
            doc_id=self.doc_id,
            version_id=self.version_id,
            kind=self.kind,  # a str: Region validates it against RegionKind
            text=self.text or "",
            locators=_LOCATORS.validate_json(self.locators),
            parent_id=self.parent_id,
            section_id=self.section_id,
            heading_path=_HEADING_PATH.validate_json(self.heading_path or "[]"),
            level=self.level or 0,
            seq=self.seq or 0,
            tokens=self.tokens or 0,
            payload=_payload(self.kind, self.meta),
        )


def _payload(kind: str, meta: str | None) -> RegionPayload | None:
    """The stored payload; the flat meta of a row written before parser v4 migrated into one."""
    raw = json.loads(meta or "{}")
    if isinstance(raw, dict) and "kind" in raw:  # no flat meta key was ever called "kind"
        return _PAYLOAD.validate_python(raw)
    return payload_from_meta(kind, raw)


class ChunkRow(VersionScopedRow):
    """A row of ``chunks``: a searchable small unit with its MiniLM vector."""

    text: str
    vector: Vector(TEXT_DIM)  # type: ignore[valid-type]
    # What the full-text index reads: the text with CJK runs as bigrams (ingest/textnorm.py).
    fts: str


class ChunkTextRow(VersionScopedRow):
    """A row of a collection's full-text table (``folio.ingest.storage.sql.fts_table``): a chunk's ``fts`` text,
    so that BM25 counts only that collection's words (``folio.ingest.storage.chunks``)."""

    fts: str


@cache
def vector_row(name: str, dim: int, base: type[VersionScopedRow], *, multi: bool = False) -> type[LanceModel]:
    """A row model ``base`` + a ``vector`` (or ``vectors``, ``multi``) column of ``dim`` floats, for
    tables whose vector size depends on the model that fills them (CLIP, ColPali)."""
    column = ("vectors", (MultiVector(dim), ...)) if multi else ("vector", (Vector(dim), ...))
    model: type[LanceModel] = create_model(f"{name}{dim}", __base__=base, **{column[0]: column[1]})  # type: ignore[call-overload]
    return model


class AssetRow(LanceModel):
    """A row of ``assets``: one PNG (page render or figure crop) of a version on a remote store
    (``ingest/storage/objstore.py``). ``path`` is what regions name in their image payload."""

    doc_id: str
    version_id: str
    path: str  # ``assets/<doc>@<version>/page-1.png``
    data: Annotated[bytes, ArrowType(pa.large_binary())]
    writer: str | None = None


VERSIONS = TableSpec("versions", VersionRow)
REGIONS = TableSpec("regions", RegionRow)
CHUNKS = TableSpec("chunks", ChunkRow)
CHUNK_TEXT_SCHEMA = arrow_schema(ChunkTextRow)  # every collection's full-text table (named by rows.fts_table)
ASSETS = TableSpec("assets", AssetRow)

VERSIONS_SCHEMA = VERSIONS.schema
# The versions columns a writer adds to a table written by an older folio (``Catalogue.ensure_claim_columns``).
CLAIM_FIELDS: tuple[pa.Field, ...] = tuple(
    VERSIONS_SCHEMA.field(n) for n in ("writer", "writer_host", "writer_start", "heartbeat", "counts", "retiring")
)
# Version-scoped tables without their ``writer`` column (the store tags rows with it: ``Catalogue.tagged``).
REGIONS_SCHEMA = REGIONS.schema.remove(REGIONS.schema.get_field_index("writer"))
CHUNKS_SCHEMA = CHUNKS.schema.remove(CHUNKS.schema.get_field_index("writer"))
def region_to_row(r: Region) -> dict[str, Any]:
    """A region as a ``regions`` row (without ``writer``: the store tags it)."""
    return RegionRow.from_region(r).model_dump(exclude={"writer"})


def row_to_region(row: dict[str, Any]) -> Region:
    """A ``regions`` row read back (any parser version) as a typed region."""
    return RegionRow.model_validate(row).to_region()


def rows_table(spec: TableSpec, rows: Sequence[LanceModel]) -> pa.Table:
    """Row models as an Arrow table of ``spec``'s schema."""
    return pa.Table.from_pylist([r.model_dump() for r in rows], schema=spec.schema)
