"""The store's SQL and the names it uses, with no LanceDB: collections, SQL literals and filters, column names,
searchable kinds.

Shared by the store's parts and its maintenance: every SQL string folio sends to LanceDB is built from these
(retrieval hands the store a ``Scope``, and the store turns it into a filter with ``scope_filter``). The tables'
row models and their schemas are in ``schema.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from folio.kernel.errors import InvalidRequest
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
