"""What the door (``api.application.Folio``) and its service room ask of a store: a ``StoreReader``
(``ingest/storage/interface.py``) that also deletes, compacts after writing, says where its PNGs lie and how
a Ray task reaches it. ``folio.ingest.storage.store.Store`` is one; the door opens it and every other room of the api
sees only the door.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from folio.ingest.storage.interface import StoreReader


class ServiceStore(StoreReader, Protocol):
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
