"""Fixtures of the reliability tests: one clean single-writer ingest to compare against."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.reliability.helpers import DOC, SAMPLE, counts


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Row counts of one clean ingest of the sample PDF (what every concurrent or killed run must end with)."""
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    data = tmp_path_factory.mktemp("reference")
    rep = ingest_path(Store(data), SAMPLE, doc_id=DOC, ocr=False)
    assert rep.status == "created"
    out = counts(Path(data))
    assert out["regions"] == out["regions_unique"] > 0 and out["chunks"] == out["chunks_unique"] > 0
    return out
