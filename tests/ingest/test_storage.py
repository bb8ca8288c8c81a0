"""The store's parts behind its facade (``ingest/storage``): assets chosen once, and the scans and searches
retrieval asks for, which take a ``Scope`` and build their own filters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from folio.ingest.storage.assets import LocalAssets, ObjectStoreAssets, assets_for
from folio.kernel.errors import RegionNotFound
from folio.kernel.model import BBox, Locator, Region
from folio.kernel.scope import Scope

VER = {"manual": "manu000000000001", "brochure": "broc000000000001"}


def _region(doc: str, page: int, kind: str, seq: int, text: str) -> Region:
    loc = Locator(page=page, bbox=BBox(x0=0, y0=0, x1=10, y1=10), page_width=100, page_height=100)
    return Region(region_id=f"{doc}@{VER[doc]}:p{page}:{kind}{seq}", doc_id=doc, version_id=VER[doc], kind=kind,
                  text=text, locators=(loc,), seq=seq)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from folio.ingest.storage.store import Store

    s = Store(tmp_path_factory.mktemp("parts"))
    docs = {
        "manual": [(1, "sentence", "The pump must be primed."), (2, "table", "| pump filter | 6 months |"),
                   (3, "sentence", "Replace the pump filter yearly.")],
        "brochure": [(1, "sentence", "Our pump is quiet.")],
    }
    for doc, items in docs.items():
        regions = [_region(doc, p, k, i, t) for i, (p, k, t) in enumerate(items)]
        s.begin_version(doc, VER[doc], f"{doc}.pdf", 1, "1")
        s.add_regions(regions)
        vectors = np.eye(len(regions), 384, dtype=np.float32)  # one axis per region: exact nearest neighbours
        s.add_chunks(regions, vectors)
        s.commit_version(doc, VER[doc], pages=3, regions=len(regions), report={})
    return s


def test_a_local_store_keeps_images_as_files_an_object_store_as_rows(store: Any) -> None:
    assert isinstance(store.assets, LocalAssets) and store.assets_root == Path(store.uri) / "assets"
    with pytest.raises(RegionNotFound):
        store.read_asset("../../etc/passwd")
    remote = assets_for("s3://bucket/prefix", local=False)
    assert isinstance(remote, ObjectStoreAssets) and remote.root.name == "assets"
    assert remote.folders() == []  # its images are rows of the assets table: nothing on disk to clean up


def test_scan_versions_reads_only_the_keys_and_columns_asked_for(store: Any) -> None:
    assert store.scan_versions("figures", [("manual", VER["manual"])], ["region_id"]) is None
    assert not store.has_table("figures") and store.has_table("chunks")
    data = store.scan_versions("chunks", [("brochure", VER["brochure"])], ["region_id", "page", "nope"])
    assert data.schema.names == ["region_id", "page"] and data.column("region_id").to_pylist() == [
        f"brochure@{VER['brochure']}:p1:sentence0"
    ]
    empty = store.scan_versions("chunks", [("ghost", "0000000000000000")], ["vector"])
    assert empty.num_rows == 0 and empty.schema.field("vector").type.list_size == 384 == store.vector_dim("chunks")


def test_full_text_and_vector_search_keep_to_the_scope(store: Any) -> None:
    both = Scope(tuple(sorted((d, v) for d, v in VER.items())))
    assert {r["doc_id"] for r in store.fts("pump", both, 10)} == {"manual", "brochure"}
    manual = Scope((("manual", VER["manual"]),), pages=frozenset({2, 3}))
    assert sorted(r["page"] for r in store.fts("pump", manual, 10)) == [2, 3]
    tables = Scope((("manual", VER["manual"]),), kinds=frozenset({"table"}))
    assert [r["kind"] for r in store.fts("pump", tables, 10)] == ["table"]
    near = store.vector_search(np.eye(1, 384, 2, dtype=np.float32)[0], manual, 1)
    assert [(r["page"], round(1.0 - r["_distance"], 3)) for r in near] == [(3, 1.0)]
    assert store.vector_search(np.eye(1, 384, 0, dtype=np.float32)[0], Scope(()), 5) == []
