"""Shared fixtures. Expensive things (MiniLM, an ingested store) are built once per session."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import tests.switches  # noqa: F401  # first: the suite's own switches leave the environment before folio reads it

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from folio.ingest.torchfix import ensure_torchvision  # noqa: E402

ensure_torchvision()

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_pdfs"


@pytest.fixture(scope="session")
def samples() -> Path:
    return SAMPLES


@pytest.fixture(scope="session")
def _ingested_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with the small sample PDFs ingested once (v1 and v2 of the policy under one doc id)."""
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    data = tmp_path_factory.mktemp("folio-data")
    store = Store(data)
    ingest_path(store, SAMPLES / "support-policy-v1.pdf", doc_id="support-policy")
    ingest_path(store, SAMPLES / "support-policy-v2.pdf", doc_id="support-policy")
    ingest_path(store, SAMPLES / "R-data-import-export.pdf", ocr=False)
    ingest_path(store, SAMPLES / "linnsequencer-brochure-scan.pdf")
    return data


@pytest.fixture()
def ingested_data(_ingested_master: Path, tmp_path: Path) -> Iterator[Path]:
    """A private copy of the ingested data dir (tests may write to it)."""
    dst = tmp_path / "data"
    shutil.copytree(_ingested_master, dst)
    yield dst


@pytest.fixture(scope="session")
def ingested_readonly(_ingested_master: Path) -> Path:
    """The shared ingested data dir; do not write to it."""
    return _ingested_master
