"""The store's SQL and the names it uses, with no LanceDB: collections, SQL literals and filters, column names,
searchable kinds.

Shared by the store's parts and its maintenance: every SQL string folio sends to LanceDB is built from these
(retrieval hands the store a ``Scope``, and the store turns it into a filter with ``scope_filter``). The tables'
row models and their schemas are in ``schema.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from typing import Any

import pyarrow as pa

from folio.kernel.errors import InvalidRequest
from folio.kernel.metadata import FilterLeaf, MetaValue, is_number
from folio.kernel.model import CHILD_KINDS
from folio.kernel.scope import Scope

SEARCH_KINDS: tuple[str, ...] = (*CHILD_KINDS, "page")

COLLECTION_COLUMN = "collection"
DEFAULT_COLLECTION = "default"
_COLLECTION_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")  # doc ids' pattern; \Z: no trailing newline
WRITER_FIELD = pa.field("writer", pa.string())
FTS_COLUMN = "fts"
# A collection's full-text table (``ingest.storage.chunks``): its chunks' ``fts`` text, indexed on its own.
FTS_TABLE_PREFIX = "chunks_text-"
# Width of the stored text vectors: the text encoder's (all-MiniLM-L6-v2, ``folio.ingest.embed``). Defined here,
# with the storage names, so that the schema does not import the embedder (and through it the OCR lanes).
TEXT_DIM = 384


def check_collection(name: str) -> str:
    """A collection name has the doc id pattern: 1-128 letters, digits, ``.``, ``_``, ``-``."""
    if not _COLLECTION_RE.match(name):
        raise InvalidRequest(
            f"invalid collection {name[:140]!r}: use 1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def fts_table(collection: str) -> str:
    """The name of ``collection``'s full-text table (a collection name is a valid table name's tail).

    >>> fts_table("default")
    'chunks_text-default'
    """
    return FTS_TABLE_PREFIX + check_collection(collection)


def row_collection(row: dict[str, Any]) -> str:
    """The collection of a versions row; rows written before collections existed are ``default``."""
    return str(row.get(COLLECTION_COLUMN) or DEFAULT_COLLECTION)


def sql_str(value: str) -> str:
    """A SQL string literal (single quotes doubled).

    >>> sql_str("O'Brien")
    "'O''Brien'"
    """
    return "'" + value.replace("'", "''") + "'"


_sql_str = sql_str  # the store's spelling


def sql_in(column: str, values: Iterable[str]) -> str:
    """A safe ``column IN (...)`` filter (single quotes doubled)."""
    vals = sorted(set(values))
    if not vals:
        return "false"
    return f"{column} IN ({', '.join(sql_str(v) for v in vals)})"


def versions_filter(keys: Iterable[tuple[str, str]]) -> str:
    """The rows of these (doc_id, version_id) pairs, for a version-scoped table (a superset when two
    documents share a version id: callers that need exact pairs check them on the rows).

    >>> versions_filter([("a", "v1")])
    "version_id IN ('v1') AND doc_id IN ('a')"
    """
    keys = list(keys)
    return f"{sql_in('version_id', (v for _, v in keys))} AND {sql_in('doc_id', (d for d, _ in keys))}"


def writers_filter(writers: Iterable[str]) -> str:
    """The rows these writers wrote: a version's visible rows are its ready row's writer's (a version whose
    rows are being replaced has a second writer's rows too). ``""`` stands for rows written before rows
    had writers.

    >>> writers_filter(["w2", "w1"])
    "writer IN ('w1', 'w2')"
    >>> writers_filter(["", "w1"])
    "(writer IN ('w1') OR writer IS NULL OR writer = '')"
    """
    named = set(writers)
    if "" not in named:
        return sql_in("writer", named)
    return f"({sql_in('writer', named - {''})} OR writer IS NULL OR writer = '')"


def scope_filter(scope: Scope, *, page_column: str = "page", kind_column: str | None = "kind") -> str:
    """SQL prefilter for a version-scoped table. ``version_id`` goes first: it is the selective,
    indexed column; ``doc_id`` is added because one file ingested under two doc ids shares a hash.

    >>> scope_filter(Scope((("a", "v1"),), pages=frozenset({2, 1}), kinds=frozenset({"page"})))
    "version_id IN ('v1') AND doc_id IN ('a') AND page IN (1, 2) AND kind IN ('page')"
    """
    parts = [
        sql_in("version_id", (v for _, v in scope.versions)),
        sql_in("doc_id", (d for d, _ in scope.versions)),
    ]
    if scope.pages is not None:
        parts.append(
            f"{page_column} IN ({', '.join(str(p) for p in sorted(scope.pages))})" if scope.pages else "false"
        )
    if scope.kinds is not None and kind_column:
        parts.append(sql_in(kind_column, scope.kinds))
    return " AND ".join(parts)


# ------------------------------------------------------------------------- metadata filters
# The ``metadata`` table's typed value columns (``folio.ingest.storage.metadata``): a value lands in the column of
# its type, the others stay null, so a leaf compares only values of its own type (``folio.kernel.metadata``).
_SQL_OPS = {"eq": "=", "ne": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def value_column(value: MetaValue) -> str:
    """The column a metadata value is stored in (and compared in)."""
    if isinstance(value, bool):
        return "bool_value"
    if is_number(value):
        return "num_value"
    if isinstance(value, date):
        return "date_value"
    return "str_value"


def sql_value(value: MetaValue) -> str:
    """A metadata value as a SQL literal: strings through ``sql_str`` (quotes doubled), dates as their ISO text
    (stored as such: ISO dates order as text), numbers as floats, booleans as ``true``/``false``.

    >>> sql_value("x' OR '1'='1"), sql_value(2020), sql_value(date(2024, 1, 31)), sql_value(True)
    ("'x'' OR ''1''=''1'", '2020.0', "'2024-01-31'", 'true')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(float(value))
    if isinstance(value, date):
        return sql_str(value.isoformat())
    return sql_str(value)


def metadata_where(leaf: FilterLeaf) -> str:
    """The filter on the ``metadata`` table's rows where ``leaf`` holds. The field is compared as a value
    (``key = '...'``), never used as a column name; every literal goes through ``sql_value``.

    >>> metadata_where(FilterLeaf(field="year", op="gte", value=2020))
    "key = 'year' AND num_value >= 2020.0"
    >>> metadata_where(FilterLeaf(field="form", op="in", value=["10-K", 3]))
    "key = 'form' AND (num_value IN (3.0) OR str_value IN ('10-K'))"
    """
    values = leaf.values()
    key = f"key = {sql_str(leaf.field)}"
    if leaf.op == "between":
        low, high = values
        column = value_column(low)
        return f"{key} AND {column} >= {sql_value(low)} AND {column} <= {sql_value(high)}"
    if leaf.op == "in":
        by_column: dict[str, list[str]] = {}
        for v in values:
            by_column.setdefault(value_column(v), []).append(sql_value(v))
        tests = [f"{c} IN ({', '.join(dict.fromkeys(vs))})" for c, vs in sorted(by_column.items())]
        return f"{key} AND " + (tests[0] if len(tests) == 1 else f"({' OR '.join(tests)})")
    (value,) = values
    return f"{key} AND {value_column(value)} {_SQL_OPS[leaf.op]} {sql_value(value)}"
