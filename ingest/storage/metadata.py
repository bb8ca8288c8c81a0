"""The ``metadata`` table: a document version's user metadata, one row per key, in typed columns.

A value lands in the column of its type (``str_value``, ``num_value``, ``date_value`` as ISO text, which orders
as dates do, ``bool_value``); the others stay null. So a filter leaf (``folio.kernel.metadata``) is one LanceDB
``where`` over this table (``folio.ingest.storage.sql.metadata_where``) that can only match values of its own
type. The rows are version-scoped and written under the version's claim like its regions and chunks
(``Store.add``), so they become visible with the version, go with it, and are checked by ``folio check``.
A store written before metadata existed has no such table: every version has ``{}`` and matches no leaf.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import TYPE_CHECKING, Any

from folio.ingest.storage.lance_import import LanceModel
from folio.ingest.storage.schema import TableSpec, VersionScopedRow
from folio.ingest.storage.sql import value_column
from folio.kernel.metadata import MetaValue, is_number

if TYPE_CHECKING:
    from folio.ingest.storage.database import Database

_COLUMNS = ("str_value", "num_value", "date_value", "bool_value")


class MetadataRow(VersionScopedRow):
    """One key of one version's metadata (``region_id`` is ``meta:<key>``, ``kind`` ``metadata``, ``page`` 0:
    the version-scoped columns every table starts with)."""

    key: str
    str_value: str | None = None
    num_value: float | None = None
    date_value: str | None = None
    bool_value: bool | None = None


METADATA = TableSpec("metadata", MetadataRow)


def metadata_rows(doc_id: str, version_id: str, meta: dict[str, MetaValue]) -> list[LanceModel]:
    """The rows of one version's (checked) metadata."""
    rows: list[LanceModel] = []
    for key, value in meta.items():
        stored: Any = value.isoformat() if isinstance(value, date) else value
        if is_number(value):
            stored = float(value)
        rows.append(MetadataRow(
            region_id=f"meta:{key}", doc_id=doc_id, version_id=version_id, kind="metadata", page=0, key=key,
            **{value_column(value): stored},
        ))
    return rows


def matching_versions(database: Database, where: str, ready: dict[tuple[str, str], str]) -> set[tuple[str, str]]:
    """The ready versions with a row matching ``where`` (rows of their ready writer only: a pending or
    replaced parse's rows never count). ``ready``: (doc_id, version_id) → the writer of its ready row."""
    table = database.table(METADATA.name)
    if table is None:
        return set()
    rows = table.search().where(where).select(["doc_id", "version_id", "writer"]).limit(None).to_arrow().to_pylist()
    out: set[tuple[str, str]] = set()
    for r in rows:
        k = (r["doc_id"], r["version_id"])
        if k in ready and (r["writer"] or "") == ready[k]:
            out.add(k)
    return out


def read_metadata(database: Database, keys: Iterable[tuple[str, str]], writers: Iterable[str]
                  ) -> dict[tuple[str, str], dict[str, Any]]:
    """The metadata of these versions as JSON values (dates as ``YYYY-MM-DD``); versions without any: absent."""
    keys = list(keys)
    if not keys:
        return {}
    data = database.scan_versions(METADATA.name, keys, ["doc_id", "version_id", "key", *_COLUMNS], set(writers))
    if data is None:
        return {}
    wanted = set(keys)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in data.to_pylist():
        k = (r["doc_id"], r["version_id"])
        if k not in wanted:
            continue
        value = next((r[c] for c in _COLUMNS if r[c] is not None), None)
        if r["num_value"] is not None and float(r["num_value"]).is_integer():
            value = int(r["num_value"])
        out.setdefault(k, {})[r["key"]] = value
    return out
