"""Table schemas derived from row models, and tables of other layers registered by a ``TableSpec``."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from folio.ingest.storage.schema import (
    ASSETS,
    CHUNKS,
    REGIONS,
    VERSIONS,
    Int32,
    TableSpec,
    VersionScopedRow,
    arrow_schema,
    vector_row,
)
from folio.ingest.storage.store import Store

S, I32, I64, F64 = pa.string(), pa.int32(), pa.int64(), pa.float64()

# The hand-written schemas of folio before issue 13 (data dirs on disk have these columns, plus ``writer``), and the
# columns added since, which the first writer adds to an older table (``versions.retiring``: issue 44, item 9).
WRITTEN_BEFORE = {
    "versions": {"doc_id": S, "version_id": S, "filename": S, "pages": I32, "size_bytes": I64, "parser_version": S,
                 "created_at": F64, "regions": I32, "status": S, "writer_pid": I64, "report": S, "writer": S,
                 "writer_host": S, "writer_start": I64, "heartbeat": F64, "counts": S, "collection": S,
                 "retiring": S},
    "regions": {"region_id": S, "doc_id": S, "version_id": S, "kind": S, "text": S, "page": I32, "locators": S,
                "parent_id": S, "section_id": S, "heading_path": S, "level": I32, "seq": I32, "tokens": I32,
                "meta": S, "writer": S},
    "chunks": {"region_id": S, "doc_id": S, "version_id": S, "kind": S, "page": I32, "text": S,
               "vector": pa.list_(pa.float32(), 384), "fts": S, "writer": S},
    # remote stores' images (issue 10), hand-written in ingest/storage/objstore.py until its row model
    "assets": {"doc_id": S, "version_id": S, "path": S, "data": pa.large_binary(), "writer": S},
}


def test_derived_schemas_are_column_compatible_with_existing_data() -> None:
    for spec in (VERSIONS, REGIONS, CHUNKS, ASSETS):
        schema = spec.schema
        assert {f.name: f.type for f in schema} == WRITTEN_BEFORE[spec.name], spec.name
        assert all(f.nullable for f in schema)


def test_vector_row_models_per_dimension() -> None:
    from folio.retrieval.channels.clip import figures_spec
    from folio.retrieval.channels.colpali import pages_spec
    from folio.retrieval.routing.summary import SUMMARIES

    assert figures_spec(512).schema.field("vector").type == pa.list_(pa.float32(), 512)
    assert pages_spec(128).schema.field("vectors").type == pa.list_(pa.list_(pa.float32(), 128))
    assert pages_spec(128).schema.field("n_vectors").type == I32
    assert SUMMARIES.schema.field("vector").type == pa.list_(pa.float32(), 384)
    assert figures_spec(512).model is figures_spec(512).model  # one model class per dimension


class NoteRow(VersionScopedRow):
    """A table a layer outside ``ingest`` might own."""

    note: str
    weight: Int32


def test_a_table_registered_by_spec_is_written_typed_and_deleted_with_its_version(tmp_path: Path) -> None:
    spec = TableSpec("notes", vector_row("NoteRow", 3, NoteRow))
    assert arrow_schema(spec.model).field("weight").type == I32
    store = Store(tmp_path / "data")
    assert store.begin_version("d", "v1", "d.pdf", 1, "4")
    rows = [spec.model(region_id=f"d@v1:p1:sentence{i}", doc_id="d", version_id="v1", kind="sentence", page=1,
                       note=f"n{i}", weight=i, vector=[0.0, 1.0, float(i)]) for i in range(3)]
    store.add(spec, rows)
    store.commit_version("d", "v1", pages=1, regions=0, report={})

    # Another process (a new Store that never saw the spec) finds the table and its rows ...
    other = Store(tmp_path / "data")
    assert "notes" in [t.name for t in other.version_tables()]
    table = other.table("notes")
    assert table is not None
    back = [spec.model.model_validate(r) for r in table.search().limit(None).to_arrow().to_pylist()]
    assert sorted((r.note, r.weight) for r in back) == [("n0", 0), ("n1", 1), ("n2", 2)]  # type: ignore[attr-defined]
    assert {r.writer for r in back} != {None}  # tagged with the claim's writer
    # ... and deleting the version deletes them, with no list of table names anywhere.
    other.delete_version("d", "v1")
    assert table.count_rows() == 0
