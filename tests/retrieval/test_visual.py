"""CLIP and ColPali end to end: tiny models through the real loaders, ingest, vectors in LanceDB, search."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from folio.retrieval.query import SearchQuery
from tests.retrieval.conftest import DOC


def test_indexers_from_settings_include_visual_models(_visual_master: dict[str, Any]) -> None:
    assert _visual_master["indexers"] == ["summaries", "clip", "colpali"]


def test_figure_vectors_land_in_lancedb(visual_store: Any, versions: dict[str, str]) -> None:
    figures = visual_store.table("figures")
    assert figures is not None
    rows = figures.search().limit(None).to_arrow().to_pylist()
    regions = visual_store.region_index(DOC, versions["v2"])
    fig_ids = {r.region_id for r in regions.regions() if r.kind == "figure"}
    assert fig_ids, "the sample PDF has a figure"
    stored = {r["region_id"] for r in rows if r["version_id"] == versions["v2"]}
    assert stored == fig_ids
    vec = np.array(rows[0]["vector"], dtype=np.float32)
    assert vec.shape == (32,)
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-4


def test_page_multivectors_land_in_lancedb(visual_store: Any, versions: dict[str, str]) -> None:
    import pyarrow as pa

    pages = visual_store.table("pages")
    assert pages is not None
    vtype = pages.schema.field("vectors").type
    assert pa.types.is_list(vtype) and pa.types.is_fixed_size_list(vtype.value_type)
    assert vtype.value_type.list_size == 128
    rows = pages.search().where(f"version_id = '{versions['v2']}'").limit(None).to_arrow().to_pylist()
    assert [r["page"] for r in rows] == [1]
    assert rows[0]["region_id"].endswith(":p1:page1")
    assert rows[0]["n_vectors"] == len(rows[0]["vectors"]) > 0


def test_hybrid_query_returns_figure_and_page_hits_with_sources(
    retriever: Any, versions: dict[str, str]
) -> None:
    hits = retriever.search(SearchQuery("escalation path diagram", k=20))
    assert hits, "hybrid search found nothing"
    assert all(h.version_id == versions["v2"] for h in hits)
    by_kind = {h.kind: h for h in hits}
    assert "figure" in by_kind and "page" in by_kind
    fig_sources = {s.retriever for s in by_kind["figure"].sources}
    assert "clip" in fig_sources
    assert "colpali" in {s.retriever for s in by_kind["page"].sources}
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False))
    for h in hits:
        for s in h.sources:
            assert s.rank >= 1


def test_colpali_page_score_matches_exact_maxsim(
    retriever: Any, visual_store: Any, versions: dict[str, str]
) -> None:
    from folio.retrieval.channels.colpali import load_page_vectors
    from folio.retrieval.channels.maxsim import maxsim

    model = retriever.channels["colpali"].colpali.model
    loaded = load_page_vectors(visual_store, (DOC, versions["v2"]))
    assert loaded is not None
    rids, pages, mats = loaded
    q = model.encode_query("response targets")
    scope_hits = retriever.channels["colpali"].colpali.search("response targets", _scope(visual_store), 5)
    assert scope_hits[0].score == pytest.approx(float(maxsim(q, mats)[0]), rel=1e-3)


def _scope(store: Any) -> Any:
    from folio.retrieval.scope import resolve_scope

    return resolve_scope(store)


def test_status_reports_models(retriever: Any) -> None:
    st = retriever.status()
    assert st["clip"]["enabled"] and st["colpali"]["enabled"]
    assert st["colpali"]["family"] == "ColModernVBert"
    assert st["rerank"]["enabled"] is False and "FOLIO_LLM_BASE_URL" in st["rerank"]["enable"]


def test_without_weights_visual_retrievers_are_off_with_reason(visual_store: Any, tmp_path: Any) -> None:
    from folio.retrieval.search import Retriever
    from folio.retrieval.visual import indexers_from_settings
    from folio.settings import Settings

    s = Settings(
        data=str(tmp_path), clip_model="ViT-B-32", clip_pretrained=None, colpali_model=str(tmp_path / "none")
    )
    r = Retriever.from_settings(visual_store, s)
    st = r.status()
    assert st["clip"]["enabled"] is False and "refusing random weights" in st["clip"]["reason"]
    assert "FOLIO_CLIP_MODEL" in st["clip"]["enable"]
    assert st["colpali"]["enabled"] is False and "FOLIO_COLPALI_MODEL" in st["colpali"]["enable"]
    assert [i.name for i in indexers_from_settings(s)] == ["summaries"]
    hits = r.search(SearchQuery("escalation", k=10))
    assert hits and all("clip" not in h.retriever and "colpali" not in h.retriever for h in hits)
    st0 = Retriever.from_settings(visual_store, Settings(data=str(tmp_path))).status()
    assert st0["clip"]["reason"] == "FOLIO_CLIP_MODEL is not set"


def test_family_detection() -> None:
    from folio.kernel.errors import ModelUnavailable
    from folio.retrieval.channels.colpali import detect_family

    assert detect_family({"architectures": ["ColQwen2"], "model_type": "qwen2_vl"}) == "ColQwen2"
    assert (
        detect_family({"architectures": ["PaliGemmaForConditionalGeneration"], "model_type": "paligemma"})
        == "ColPali"
    )
    assert detect_family({"model_type": "idefics3"}) == "ColIdefics3"
    with pytest.raises(ModelUnavailable):
        detect_family({"architectures": ["BertModel"], "model_type": "bert"})
