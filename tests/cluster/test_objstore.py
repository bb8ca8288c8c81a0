"""Object-store settings and the local staging of images (``ingest/storage/objstore.py``); no servers needed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from folio.ingest.storage.objstore import STAGING_PREFIX, is_local, storage_options, sweep_staging
from folio.settings import StorageSettings


def test_storage_options_from_the_settings() -> None:
    env = {
        "AWS_ENDPOINT_URL": "https://s3.example",
        "AWS_ACCESS_KEY_ID": "k",
        "AWS_SECRET_ACCESS_KEY": "s",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "FOLIO_STORAGE_OPTIONS": '{"timeout": "60s", "aws_region": "eu-central-1"}',
    }
    assert storage_options("s3://b/p", StorageSettings.from_env(env)) == {
        "aws_endpoint": "https://s3.example",
        "aws_access_key_id": "k",
        "aws_secret_access_key": "s",
        "aws_region": "eu-central-1",  # FOLIO_STORAGE_OPTIONS wins
        "timeout": "60s",
    }
    assert storage_options("gs://b/p", StorageSettings.from_env({"FOLIO_STORAGE_OPTIONS": '{"a": 1}'})) == {"a": "1"}
    assert storage_options("./data", StorageSettings.from_env(env)) == {}
    with pytest.raises(ValueError):
        storage_options("s3://b", StorageSettings.from_env({"FOLIO_STORAGE_OPTIONS": "[1]"}))
    assert is_local("./data") and is_local("file:///x") and not is_local("s3://b/p")


def test_sweep_staging_removes_only_dead_writers_folders(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    (tmp_path / f"{STAGING_PREFIX}{dead_pid}-abc" / "assets" / "d@v").mkdir(parents=True)
    (tmp_path / f"{STAGING_PREFIX}{dead_pid}-abc" / "assets" / "d@v" / "page-1.png").write_bytes(b"png")
    (tmp_path / f"{STAGING_PREFIX}{os.getpid()}-def" / "assets").mkdir(parents=True)
    assert sweep_staging(str(tmp_path)) == [f"{STAGING_PREFIX}{dead_pid}-abc"]
    assert [p.name for p in tmp_path.iterdir()] == [f"{STAGING_PREFIX}{os.getpid()}-def"]
