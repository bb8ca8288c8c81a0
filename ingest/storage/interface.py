"""What retrieval and the application ask of a store: ``StoreReader`` (reads, scans, searches),
``StoreWriter`` (what the ingest pipeline and its indexers write through: claim, write, commit or abort, index)
and ``ServiceStore`` (what the api's door, ``api.application.Folio``, and its service room ask besides: delete,
compact, check). Callers hold these protocols, never the concrete store: no cast down, no private attribute.

``folio.ingest.storage.store.Store`` implements all three. Every scan and search takes plain values (a ``Scope``,
version keys, column names) and the store builds its own filters: code outside the store never writes a
query string nor touches a LanceDB table (tests/test_layers.py checks retrieval).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict, Unpack

import numpy as np
import pyarrow as pa

from folio.kernel.index import RegionIndex
from folio.kernel.metadata import FilterLeaf, MetaValue
from folio.kernel.model import DocumentVersion, Region
from folio.kernel.scope import Scope

if TYPE_CHECKING:
    from lancedb.pydantic import LanceModel

    from folio.ingest.storage.schema import TableSpec


class ClaimOptions(TypedDict, total=False):
    """How a writer claims a version (``StoreWriter.begin_version``): the ``collection`` it goes into (default:
    ``default``), how long to ``wait`` for another live writer of it, and whether it is ``replacing`` a ready
    version's rows (a new parse of the same bytes)."""

    collection: str
    wait: timedelta
    replacing: bool


class VersionCommit(TypedDict):
    """What a commit records of a version (``StoreWriter.commit_version``): its page and region counts, its
    ingest report, and ``created_at`` (default: now; a version parsed again keeps its own)."""

    pages: int
    regions: int
    report: dict[str, Any]
    created_at: NotRequired[float | None]


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

    def vector_search(
        self, vector: np.ndarray, scope: Scope, limit: int, *, exact: bool = False
    ) -> list[dict[str, Any]]: ...

    def has_fts(self) -> bool: ...

    def has_vector_index(self) -> bool: ...

    # user metadata (``ingest.storage.metadata``)
    def metadata_matches(self, leaf: FilterLeaf) -> set[tuple[str, str]]: ...

    def version_metadata(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]: ...


class StoreWriter(StoreReader, Protocol):
    """A store as the ingest pipeline and its indexers see it: a version is claimed (``begin_version``), its
    rows written under the claim (``add_regions``, ``add_chunks``, ``add`` for a table an indexer describes by
    a ``TableSpec``), then made visible (``commit_version``) or removed (``abort_version``); the rows of a
    version parsed again go after its swap (``retire_rows``). ``claimed_writers`` names this store's claims
    (a Ray task reports them, so that a retry takes a dead attempt's claim over); ``index_text`` and
    ``ensure_scalar_indexes`` build indexes."""

    assets_root: Path
    """The folder the parser renders a version's images into (a staging folder on an object store)."""

    def begin_version(
        self, doc_id: str, version_id: str, filename: str, size_bytes: int, parser_version: str,
        **claim: Unpack[ClaimOptions],
    ) -> bool: ...

    def add_regions(self, regions: Sequence[Region]) -> None: ...

    def add_chunks(self, regions: Sequence[Region], vectors: np.ndarray) -> None: ...

    def add(self, spec: TableSpec, rows: Sequence[LanceModel] | pa.Table) -> None: ...

    def add_metadata(self, doc_id: str, version_id: str, metadata: dict[str, MetaValue]) -> None: ...

    def commit_version(self, doc_id: str, version_id: str, **commit: Unpack[VersionCommit]) -> None: ...

    def abort_version(self, doc_id: str, version_id: str) -> None: ...

    def check_collection_free(self, doc_id: str, collection: str, rows: list[dict[str, Any]] | None = None) -> None:
        """``CollectionConflict`` when ``doc_id`` is taken in another collection (the claim checks it too)."""

    def retire_rows(self, doc_id: str, version_id: str, writer: str) -> None: ...

    def claimed_writers(self) -> list[str]: ...

    def index_text(self, table: str, column: str = "text") -> None: ...

    def ensure_scalar_indexes(self) -> list[str]: ...


class ServiceStore(StoreWriter, Protocol):
    """A store as the api's door and its service room see it: a ``StoreWriter`` (the door's ingest) that also
    deletes, compacts, checks its files, says where its PNGs lie and how a Ray task reaches it. The door opens
    the concrete ``Store``; every other room of the api sees only the door."""

    local: bool
    """A store on this machine's disk (its PNGs are files), not an object store."""
    storage_options: dict[str, str]
    """LanceDB's object-store options, which a Ray task needs to open the same store."""

    def asset_path(self, relative: str) -> Path: ...

    def delete_document(self, doc_id: str) -> list[str]: ...

    def delete_version(self, doc_id: str, version_id: str) -> None: ...

    def maintain(self) -> None: ...

    def compact(self, older_than: timedelta = ..., *, reindex: bool = False) -> dict[str, Any]: ...

    def reindex(self) -> list[str]: ...

    def index_status(self) -> list[dict[str, Any]]: ...

    def check(self, *, repair: bool = False) -> dict[str, Any]: ...
