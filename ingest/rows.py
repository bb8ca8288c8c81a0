"""Storage names that need no LanceDB: collections, SQL literals, column names, searchable kinds.

Shared by the store (``ingest/store.py``), its maintenance (``ingest/maintenance.py``) and the
retrievers. The table row models and their schemas are in ``ingest/tables.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from folio.kernel.errors import InvalidRequest
from folio.kernel.model import CHILD_KINDS

SEARCH_KINDS: tuple[str, ...] = (*CHILD_KINDS, "page")

COLLECTION_COLUMN = "collection"
DEFAULT_COLLECTION = "default"
_COLLECTION_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")  # doc ids' pattern; \Z: no trailing newline
WRITER_FIELD = pa.field("writer", pa.string())
FTS_COLUMN = "fts"
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
