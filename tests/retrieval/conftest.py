"""Retrieval fixtures: tiny random visual models (built once) and a store ingested with every indexer."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES
from tests.retrieval.tiny_models import build_tiny_clip, build_tiny_colmodernvbert

DOC = "support-policy"


@pytest.fixture(scope="session")
def tiny_model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny-models")
    return {
        "clip": build_tiny_clip(root / "clip"),
        "colpali": build_tiny_colmodernvbert(root / "colmodernvbert"),
    }


@pytest.fixture(scope="session")
def visual_settings(tiny_model_dirs: dict[str, Path]) -> Any:
    from folio.settings import Settings

    return Settings(
        data="/nonexistent",
        clip_model=f"local-dir:{tiny_model_dirs['clip']}",
        colpali_model=str(tiny_model_dirs["colpali"]),
        colpali_pool_factor=2,
    )


@pytest.fixture(scope="session")
def _visual_master(tmp_path_factory: pytest.TempPathFactory, visual_settings: Any) -> dict[str, Any]:
    """support-policy v1 then v2 (same doc id), ingested with summaries, CLIP and ColPali indexers."""
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store
    from folio.retrieval.visual import indexers_from_settings

    data = tmp_path_factory.mktemp("retrieval-data")
    store = Store(data)
    indexers = indexers_from_settings(visual_settings)
    v1 = ingest_path(store, SAMPLES / "support-policy-v1.pdf", doc_id=DOC, indexers=indexers)
    v2 = ingest_path(store, SAMPLES / "support-policy-v2.pdf", doc_id=DOC, indexers=indexers)
    return {"data": data, "v1": v1.version_id, "v2": v2.version_id, "indexers": [i.name for i in indexers]}


@pytest.fixture(scope="session")
def visual_store(_visual_master: dict[str, Any]) -> Any:
    """The shared ingested store (read-only by convention)."""
    from folio.ingest.storage.store import Store

    return Store(_visual_master["data"])


@pytest.fixture(scope="session")
def versions(_visual_master: dict[str, Any]) -> dict[str, str]:
    return {"v1": _visual_master["v1"], "v2": _visual_master["v2"]}


@pytest.fixture(scope="session")
def retriever(visual_store: Any, visual_settings: Any) -> Any:
    from folio.retrieval.search import Retriever

    return Retriever.from_settings(visual_store, visual_settings)


@pytest.fixture()
def private_data(_visual_master: dict[str, Any], tmp_path: Path) -> Iterator[Path]:
    dst = tmp_path / "data"
    shutil.copytree(_visual_master["data"], dst)
    yield dst


@pytest.fixture(scope="session")
def hand_store_for_summary(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One hand-written version without sections (nothing to summarise)."""
    from folio.ingest.embed import default_text_encoder
    from folio.ingest.storage.store import Store
    from folio.kernel.model import BBox, Locator, Region

    store = Store(tmp_path_factory.mktemp("nosections"))
    loc = Locator(page=1, bbox=BBox(x0=0, y0=0, x1=10, y1=10), page_width=100, page_height=100)
    reg = Region(
        region_id="flat@0000000000000001:p1:sentence1",
        doc_id="flat",
        version_id="0000000000000001",
        kind="sentence",
        text="The pump hums.",
        locators=(loc,),
    )
    store.begin_version("flat", "0000000000000001", "flat.pdf", 1, "1")
    store.add_regions([reg])
    store.add_chunks([reg], default_text_encoder().encode([reg.text]))
    store.commit_version("flat", "0000000000000001", pages=1, regions=1, report={})
    return store
