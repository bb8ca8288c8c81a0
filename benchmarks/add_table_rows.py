"""Add the table row units (``folio.ingest.row_units``) to an existing store without re-ingesting.

For measuring: the row chunks are made by the ingest path's own ``row_unit_chunks`` from the stored
table regions, appended to ``chunks`` with each version's writer tag, and the full-text index is
rebuilt. Run it on a COPY of an evaluation store, never on the original::

    cp -r /work/data/eval/mmlb/folio /work/data/eval-rows/mmlb/folio
    python benchmarks/add_table_rows.py /work/data/eval-rows/mmlb/folio

A version that already has row units (more chunks of one table region than one) is skipped.
"""

from __future__ import annotations

import argparse
import sys
import time

import pyarrow as pa

from folio.ingest.embed import default_text_encoder
from folio.ingest.pipeline import row_unit_chunks
from folio.ingest.storage.chunks import chunk_rows
from folio.ingest.storage.sql import SEARCH_KINDS, WRITER_FIELD
from folio.ingest.storage.store import Store


def _sql(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def add_rows(store: Store, doc_id: str, version_id: str) -> int:
    """Append one version's row units to ``chunks``; how many (0 when it has them already or has no long table)."""
    where = f"doc_id = {_sql(doc_id)} AND version_id = {_sql(version_id)}"
    have = store.chunks.search().where(where).select(["region_id", "writer"]).limit(10**7).to_arrow()
    ids = have.column("region_id").to_pylist()
    if len(ids) != len(set(ids)):
        return 0
    regions = store.region_index(doc_id, version_id).regions()
    searchable = [r for r in regions if r.kind in SEARCH_KINDS and r.text.strip()]
    rows, vectors = row_unit_chunks(searchable, default_text_encoder())
    if not rows:
        return 0
    data = chunk_rows(rows, vectors)
    writer = have.column("writer")[0].as_py()
    data = data.append_column(WRITER_FIELD, pa.array([writer] * data.num_rows, pa.string()))
    store.chunks.add(data.select(store.chunks.schema.names).cast(store.chunks.schema))
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="the store folder (a copy)")
    args = ap.parse_args(argv)
    store = Store(args.data)
    total = 0
    for v in store.latest_versions():
        t = time.perf_counter()
        n = add_rows(store, v.doc_id, v.version_id)
        total += n
        print(f"{v.doc_id}: {n} row units ({time.perf_counter() - t:.1f}s)", flush=True)
    store.reindex()  # the full-text indexes over the new rows too
    print(f"total {total} row units; chunks now {store.chunks.count_rows()} rows", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
