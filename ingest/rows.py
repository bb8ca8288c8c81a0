"""The stored shapes: LanceDB table schemas, region <-> row conversion, collection names and SQL literals.

Pure definitions shared by the store (``ingest/store.py``), its maintenance (``ingest/maintenance.py``)
and the retrievers; ``ingest.store`` re-exports them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from ingest.embed import TEXT_DIM
from ingest.errors import InvalidRequest
from ingest.model import CHILD_KINDS, BBox, Locator, Region

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
        # The claim (module docstring). Older data dirs get these columns from their first writer.
        pa.field("writer", pa.string()),
        pa.field("writer_host", pa.string()),
        pa.field("writer_start", pa.int64()),
        pa.field("heartbeat", pa.float64()),
        # Rows written per table ({"regions": n, "chunks": m, ...}), checked by ``folio check``.
        pa.field("counts", pa.string()),
        # The document's collection (module docstring); older data dirs get it from their first writer.
        pa.field("collection", pa.string()),
    ]
)
CLAIM_FIELDS: tuple[pa.Field, ...] = tuple(
    VERSIONS_SCHEMA.field(n) for n in ("writer", "writer_host", "writer_start", "heartbeat", "counts")
)
COLLECTION_COLUMN = "collection"
DEFAULT_COLLECTION = "default"
_COLLECTION_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")  # doc ids' pattern; \Z: no trailing newline
WRITER_FIELD = pa.field("writer", pa.string())

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
# Version-scoped tables are stored with a ``writer`` column after these fields (``Store._tagged``).
FTS_COLUMN = "fts"


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


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    """A safe ``column IN (...)`` filter (single quotes doubled)."""
    vals = sorted(set(values))
    if not vals:
        return "false"
    return f"{column} IN ({', '.join(_sql_str(v) for v in vals)})"


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
