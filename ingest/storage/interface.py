"""What retrieval and the application ask of a store: ``StoreReader`` (reads, scans, searches),
``StoreWriter`` (what an ingest-side indexer writes through) and ``ServiceStore`` (what the api's door,
``api.application.Folio``, and its service room ask besides reading).

``folio.ingest.storage.store.Store`` implements all three. Every scan and search takes plain values (a ``Scope``,
version keys, column names) and the store builds its own filters: code outside the store never writes a
query string nor touches a LanceDB table (tests/test_layers.py checks retrieval).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa

from folio.kernel.index import RegionIndex
from folio.kernel.model import DocumentVersion, Region
from folio.kernel.scope import Scope

if TYPE_CHECKING:
    from lancedb.pydantic import LanceModel

    from folio.ingest.storage.schema import TableSpec


class StoreReader(Protocol):
    """A store as its readers see it: ready versions, their regions and images, and the scans and
    searches of the version-scoped tables."""

    uri: str

    # the catalogue
    def versions_version(self) -> int: ...

    def pinned_versions(self) -> AbstractContextManager[int]: ...

    def list_versions(
        self, doc_id: str | None = None, *, include_pending: bool = False, collections: Collection[str] | None = None
    ) -> list[DocumentVersion]: ...

    def latest_versions(self, doc_ids: Sequence[str] | None = None) -> list[DocumentVersion]: ...

    def get_version(self, doc_id: str, version_id: str | None = None) -> DocumentVersion: ...

    def version_report(self, doc_id: str, version_id: str) -> dict[str, Any]: ...

    def has_ready(self, doc_id: str, version_id: str) -> bool: ...

    def version_stamp(self, doc_id: str, version_id: str) -> str: ...

    def collections(self) -> dict[str, str]: ...

    def collection_of(self, doc_id: str) -> str | None: ...

    # regions and images
    def region_index(self, doc_id: str, version_id: str) -> RegionIndex: ...

    def get_region(self, region_id: str) -> Region: ...

    def read_asset(self, relative: str) -> bytes: ...

    # scans and searches
    def has_table(self, table: str) -> bool: ...

    def scan_versions(self, table: str, keys: Iterable[tuple[str, str]], columns: Sequence[str]) -> pa.Table | None: ...

    def vector_dim(self, table: str, column: str = "vector") -> int | None: ...

    def fts(self, query: str, scope: Scope, limit: int) -> list[dict[str, Any]]: ...

    def vector_search(self, vector: np.ndarray, scope: Scope, limit: int) -> list[dict[str, Any]]: ...

    def has_fts(self) -> bool: ...

    def has_vector_index(self) -> bool: ...


class StoreWriter(StoreReader, Protocol):
    """A store as an ingest-side indexer sees it: it also appends rows of claimed versions to a table
    it describes by a ``TableSpec``, and asks for a full-text index on one of its columns."""

    def add(self, spec: TableSpec, rows: Sequence[LanceModel] | pa.Table) -> None: ...

    def index_text(self, table: str, column: str = "text") -> None: ...


class ServiceStore(StoreReader, Protocol):
    """A store as the api's door and its service room see it: a ``StoreReader`` that also deletes, compacts
    after writing, says where its PNGs lie and how a Ray task reaches it. The door opens the concrete
    ``Store``; every other room of the api sees only the door."""

    local: bool
    """A store on this machine's disk (its PNGs are files), not an object store."""
    storage_options: dict[str, str]
    """LanceDB's object-store options, which a Ray task needs to open the same store."""

    def asset_path(self, relative: str) -> Path: ...

    def check_collection_free(self, doc_id: str, collection: str, rows: list[dict[str, Any]] | None = None) -> None:
        ...

    def delete_document(self, doc_id: str) -> list[str]: ...

    def delete_version(self, doc_id: str, version_id: str) -> None: ...

    def maintain(self) -> None: ...
