"""A store on object storage (``s3://bucket/prefix``, ``gs://``, ``az://``): connection settings and images.

**Settings.** LanceDB's object-store options come from the usual AWS variables
(``AWS_ENDPOINT_URL`` or ``AWS_ENDPOINT_URL_S3``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``, ``AWS_REGION`` or ``AWS_DEFAULT_REGION``; an ``http://`` endpoint also sets
``allow_http``), then ``FOLIO_STORAGE_OPTIONS`` (a JSON object of LanceDB storage options, e.g.
``{"aws_endpoint": "http://minio:9000", "allow_http": "true"}``) on top. Other schemes take their
options from ``FOLIO_STORAGE_OPTIONS`` and from what LanceDB itself reads from the environment.

**Images.** A local store keeps page renders and figure crops as PNG files under ``<data>/assets``.
A remote store keeps them *in LanceDB*, in the version-scoped ``assets`` table (one row per PNG:
``doc_id``, ``version_id``, ``path``, ``data``, ``writer``), so nothing is left on local disk and
an image is written, counted, committed, cleaned up after a crash and deleted exactly like every
other row of its version (``ingest/storage/store.py``: claims). The parser still writes PNGs to a local
staging folder (it runs in a child process); the store uploads them with the version's regions and
removes the folder. Why a table and not plain objects under the prefix: one storage client and one
set of credentials; no second, non-transactional cleanup path (orphan objects after a killed
writer); delete and crash cleanup already cover it. Measured in ``benchmarks/bench_cluster.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from folio.ingest.storage.claims import _pid_alive
from folio.settings import StorageSettings

# Staging folders are ``<tmp>/folio-staging-<pid>-<random>/assets``: the pid tells a dead writer's.
STAGING_PREFIX = "folio-staging-"
ASSETS_TABLE = "assets"  # its row model is ``ingest.storage.schema.AssetRow``


class AssetStore(Protocol):
    """What the image functions below need of a store (``folio.ingest.storage.store.Store`` is one): the folder the
    parser stages PNGs in, and its tables. A protocol, so that this module does not import the store, which
    calls it."""

    assets_root: Path

    def table(self, name: str, schema: pa.Schema | None = None) -> Any | None: ...

    def add_rows(self, table_name: str, schema: pa.Schema, rows: pa.Table | list[dict[str, Any]]) -> None: ...


def is_local(uri: str) -> bool:
    """A path (or ``file://``) rather than an object-store URI."""
    return "://" not in uri or uri.startswith("file://")


def storage_options(uri: str, storage: StorageSettings) -> dict[str, str]:
    """LanceDB ``storage_options`` for ``uri`` from the storage settings handed in (module docstring).

    >>> storage_options("s3://b/p", StorageSettings.from_env({"AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
    ...                                                       "AWS_REGION": "x"}))
    {'aws_endpoint': 'http://127.0.0.1:9000', 'allow_http': 'true', 'aws_region': 'x'}
    >>> storage_options("/data", StorageSettings.from_env({"AWS_REGION": "x"}))
    {}
    """
    if is_local(uri):
        return {}
    out: dict[str, str] = {}
    if uri.startswith(("s3://", "s3+ddb://")):
        endpoint = storage.aws_endpoint_url_s3 or storage.aws_endpoint_url or storage.aws_endpoint
        if endpoint:
            out["aws_endpoint"] = endpoint
            if endpoint.startswith("http://"):
                out["allow_http"] = "true"
        for key, value in (
            ("aws_access_key_id", storage.aws_access_key_id),
            ("aws_secret_access_key", storage.aws_secret_access_key),
            ("aws_session_token", storage.aws_session_token),
        ):
            if value:
                out[key] = value
        region = storage.aws_region or storage.aws_default_region
        if region:
            out["aws_region"] = region
    out.update(storage.storage_options)
    return out


def upload_staged(store: AssetStore, doc_id: str, version_id: str) -> int:
    """Move the PNGs the parser staged for one claimed version into the ``assets`` table (as that
    version's rows, under its writer) and remove them from local disk. Returns the number of images."""
    # function-level: LanceDB (through tables) loads when an image is uploaded, not when the store imports this
    from folio.ingest.storage.schema import ASSETS

    folder = Path(store.assets_root) / f"{doc_id}@{version_id}"
    if not folder.is_dir():
        return 0
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    prefix = f"{Path(store.assets_root).name}/"
    # Batches of about 64 MB: one LanceDB commit each, bounded memory.
    batch: list[dict[str, Any]] = []
    size = 0
    for p in files:
        data = p.read_bytes()
        rel = prefix + p.relative_to(store.assets_root).as_posix()
        batch.append({"doc_id": doc_id, "version_id": version_id, "path": rel, "data": data})
        size += len(data)
        if size > 64 * 1024 * 1024:
            store.add_rows(ASSETS.name, ASSETS.schema, pa.Table.from_pylist(batch, schema=ASSETS.schema))
            batch, size = [], 0
    if batch:
        store.add_rows(ASSETS.name, ASSETS.schema, pa.Table.from_pylist(batch, schema=ASSETS.schema))
    discard_staged(store, doc_id, version_id)
    return len(files)


def sweep_staging(tmp: str | None = None) -> list[str]:
    """Remove the staging folders of processes of this machine that are gone (a writer killed
    between parse and upload leaves its PNGs there); returns what was removed."""
    import tempfile

    removed = []
    for folder in Path(tmp or tempfile.gettempdir()).glob(STAGING_PREFIX + "*"):
        pid = folder.name.removeprefix(STAGING_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
    return removed


def discard_staged(store: AssetStore, doc_id: str, version_id: str) -> None:
    """Remove one version's staged PNGs, and the staging folder once it is empty."""
    root = Path(store.assets_root)
    shutil.rmtree(root / f"{doc_id}@{version_id}", ignore_errors=True)
    for folder in (root, root.parent):
        try:
            folder.rmdir()
        except OSError:  # absent, or another version of this store is staged there
            pass


def read_asset(store: AssetStore, relative: str) -> bytes | None:
    """The bytes of one stored image (any version state: callers resolve visibility through the
    region that names it), or None."""
    table = store.table(ASSETS_TABLE)
    if table is None:
        return None
    quoted = "'" + relative.replace("'", "''") + "'"
    rows = table.search().where(f"path = {quoted}").select(["data"]).limit(1).to_arrow()
    if not rows.num_rows:
        return None
    data: bytes = rows.column("data")[0].as_py()
    return data
