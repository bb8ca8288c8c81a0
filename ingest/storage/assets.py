"""Page renders and figure crops: one ``Assets`` interface, a local and an object-store implementation.

A local store keeps them as PNG files under ``<data>/assets/<doc_id>@<version_id>/`` (``LocalAssets``).
An object store keeps them as rows of the version-scoped ``assets`` table (``ObjectStoreAssets``,
``folio.ingest.storage.objstore``): the parser renders into a local staging folder and the store uploads its
PNGs with the version's regions. The store picks one when it opens (``assets_for``); nothing else asks
which kind it has.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from abc import ABC, abstractmethod
from pathlib import Path

from folio.ingest.storage.objstore import (
    STAGING_PREFIX,
    AssetStore,
    discard_staged,
    read_asset,
    sweep_staging,
    upload_staged,
)
from folio.kernel.errors import RegionNotFound


class Assets(ABC):
    """Where a store's images live. ``root`` is the folder the parser renders a version's images into
    (``<root>/<doc_id>@<version_id>/``); regions name them relative to its parent (``assets/...``)."""

    root: Path
    data_dir: str

    @abstractmethod
    def read(self, store: AssetStore, relative: str) -> bytes:
        """The bytes of a stored image named in a region's payload (``RegionNotFound`` when absent)."""

    def written(self, store: AssetStore, doc_id: str, version_id: str) -> None:  # noqa: B027 - a no-op hook
        """A claimed version's regions were written: what the parser rendered becomes part of the version."""

    def aborted(self, store: AssetStore, doc_id: str, version_id: str) -> None:  # noqa: B027 - a no-op hook
        """A claimed version's ingest failed: drop what was rendered for it and not yet stored."""

    def remove(self, doc_id: str, version_id: str) -> None:  # noqa: B027 - a no-op hook
        """A version's rows are gone: remove its images kept outside the tables."""

    def path(self, relative: str) -> Path:
        """Resolve an asset path stored in a region's meta, refusing anything outside the data dir
        (on an object store a path that does not exist: its images are rows, read with ``read``)."""
        root = Path(self.data_dir).resolve()
        path = (root / relative).resolve()
        if root not in path.parents:
            raise RegionNotFound(f"no such asset: {relative}")
        return path

    def folders(self) -> list[Path]:
        """The per-version folders kept outside the tables (for crash cleanup and ``folio check``)."""
        return []


class LocalAssets(Assets):
    """PNG files under ``<data>/assets``."""

    def __init__(self, data_dir: str) -> None:
        self.data_dir = data_dir
        self.root = Path(data_dir) / "assets"

    def read(self, store: AssetStore, relative: str) -> bytes:
        try:
            return self.path(relative).read_bytes()
        except OSError as e:
            raise RegionNotFound(f"no such asset: {relative}") from e

    def remove(self, doc_id: str, version_id: str) -> None:
        shutil.rmtree(self.root / f"{doc_id}@{version_id}", ignore_errors=True)

    def folders(self) -> list[Path]:
        return list(self.root.iterdir()) if self.root.exists() else []


class ObjectStoreAssets(Assets):
    """Rows of the ``assets`` table, staged on local disk between parse and upload."""

    def __init__(self, data_dir: str) -> None:
        self.data_dir = data_dir
        sweep_staging()  # what killed writers of this machine left in their staging folders
        self.root = Path(tempfile.gettempdir()) / f"{STAGING_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}" / "assets"

    def read(self, store: AssetStore, relative: str) -> bytes:
        data = read_asset(store, relative)
        if data is None:
            raise RegionNotFound(f"no such asset: {relative}")
        return data

    def written(self, store: AssetStore, doc_id: str, version_id: str) -> None:
        upload_staged(store, doc_id, version_id)

    def aborted(self, store: AssetStore, doc_id: str, version_id: str) -> None:
        discard_staged(store, doc_id, version_id)


def assets_for(data_dir: str, *, local: bool) -> LocalAssets | ObjectStoreAssets:
    """The assets implementation of a store at ``data_dir`` (a folder when ``local``, else an object-store URI)."""
    return LocalAssets(data_dir) if local else ObjectStoreAssets(data_dir)
