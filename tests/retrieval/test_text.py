"""Text retrieval: version isolation, filters, punctuation safety, request validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from folio.kernel.errors import DocumentNotFound, InvalidRequest, VersionNotFound
from folio.kernel.model import BBox, Locator, Region, region_id_for
from folio.retrieval.query import SearchQuery
from tests.retrieval.conftest import DOC

V1_ONLY = "incidents reported outside business hours are acknowledged by the next business day"


def test_default_search_never_returns_old_version_text(retriever: Any, versions: dict[str, str]) -> None:
    for strategy in ("hybrid", "bm25", "dense", "summary"):
        hits = retriever.search(SearchQuery(V1_ONLY, k=30, strategy=strategy))
        assert hits, strategy
        assert {h.version_id for h in hits} == {versions["v2"]}, strategy


def test_explicit_old_version_is_searched(retriever: Any, versions: dict[str, str]) -> None:
    hits = retriever.search(SearchQuery(V1_ONLY, versions={DOC: versions["v1"]}, k=5, strategy="hybrid"))
    assert {h.version_id for h in hits} == {versions["v1"]}
    texts = retriever.texts_for(hits)
    assert "outside business hours" in texts[hits[0].region_id]
    src = retriever.source_for(hits)
    assert src.get(hits[0].region_id) is not None
    assert src.get(hits[0].region_id).version_id == versions["v1"]


def test_doc_and_version_errors(retriever: Any, versions: dict[str, str]) -> None:
    with pytest.raises(DocumentNotFound):
        retriever.search(SearchQuery("anything", doc_ids=["no-such-doc"]))
    with pytest.raises(VersionNotFound):
        retriever.search(SearchQuery("anything", versions={DOC: "0000000000000000"}))
    with pytest.raises(InvalidRequest):
        retriever.search(SearchQuery("anything", doc_ids=["other"], versions={DOC: versions["v1"]}))


@pytest.mark.parametrize(
    "options",
    [
        {"strategy": "magic"},
        {"k": 0},
        {"k": 100000},
        {"quotas": {"figure": 99}, "k": 10},
        {"quotas": {"figure": -1}},
        {"kinds": ["chapter"]},
        {"pages": [0]},
        {"rerank": True},  # no reranker configured
    ],
)
def test_bad_options_are_invalid_requests(retriever: Any, options: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequest):
        retriever.search(SearchQuery("response targets", **options))


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced quote',
        "C++ (foo AND",
        "title:foo OR -bar",
        "30% ~2 ^3 *",
        "))) ((( ",
        "日本語のテキスト",
        "'; DROP TABLE",
    ],
)
def test_punctuation_never_breaks_bm25(retriever: Any, query: str) -> None:
    hits = retriever.search(SearchQuery(query, k=10, strategy="bm25"))
    assert isinstance(hits, list)
    hits = retriever.search(SearchQuery(query, k=10))
    assert isinstance(hits, list)


def test_blank_query_rejected(retriever: Any) -> None:
    with pytest.raises(InvalidRequest):
        retriever.search(SearchQuery("   "))


def _region(key: tuple[str, str, int, str, int], text: str, seq: int) -> Region:
    """A region of ``text`` whose id is made of ``key``: (doc, version, page, kind, ordinal)."""
    doc, ver, page, kind, n = key
    loc = Locator(page=page, bbox=BBox(x0=10, y0=10 * n, x1=200, y1=10 * n + 8), page_width=600, page_height=800)
    return Region(
        region_id=region_id_for(*key),  # type: ignore[arg-type]
        doc_id=doc,
        version_id=ver,
        kind=kind,  # type: ignore[arg-type]
        text=text,
        locators=(loc,),
        seq=seq,
    )


@pytest.fixture(scope="module")
def hand_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Regions written by hand: two docs, several pages, sentences and a table."""
    from folio.ingest.embed import default_text_encoder
    from folio.ingest.storage.store import Store

    store = Store(tmp_path_factory.mktemp("hand"))
    enc = default_text_encoder()
    docs = {
        "manual": [
            (1, "sentence", "The pump must be primed before first use."),
            (2, "sentence", "Replace the pump filter every six months."),
            (3, "table", "| Part | Interval |\n| pump filter | 6 months |\n| valve | 12 months |"),
            (4, "sentence", "Wiring diagrams are in the appendix."),
        ],
        "brochure": [(1, "sentence", "Our pump is the quietest on the market.")],
    }
    for doc, items in docs.items():
        ver = f"{doc[:4]}000000000001"[:16]
        store.begin_version(doc, ver, f"{doc}.pdf", 1, "1")
        regions = [_region((doc, ver, p, k, i + 1), t, i) for i, (p, k, t) in enumerate(items)]
        store.add_regions(regions)
        store.add_chunks(regions, enc.encode([r.text for r in regions]))
        store.commit_version(doc, ver, pages=4, regions=len(regions), report={})
    return store


def test_filters_doc_pages_kinds(hand_store: Any) -> None:
    from folio.retrieval.search import Retriever

    r = Retriever(hand_store)
    all_hits = r.search(SearchQuery("pump filter", k=10))
    assert {h.doc_id for h in all_hits} == {"manual", "brochure"}
    only = r.search(SearchQuery("pump filter", doc_ids=["brochure"], k=10))
    assert {h.doc_id for h in only} == {"brochure"}
    paged = r.search(SearchQuery("pump filter", doc_ids=["manual"], pages=[2, 3], k=10))
    assert paged and {p for h in paged for p in h.pages} <= {2, 3}
    tables = r.search(SearchQuery("pump filter interval", kinds=["table"], k=10))
    assert [h.kind for h in tables] == ["table"] and tables[0].modality == "table"
    assert r.search(SearchQuery("pump", pages=[99], k=10)) == []
    top = r.search(SearchQuery("replace the pump filter every six months", doc_ids=["manual"], k=3, strategy="bm25"))
    assert top[0].pages == (2,) and top[0].sources[0].retriever == "bm25"
    dense = r.search(SearchQuery("how often should the filter be changed", doc_ids=["manual"], k=3, strategy="dense"))
    assert dense[0].sources[0].retriever == "dense" and dense[0].pages in {(2,), (3,)}


def test_hybrid_fuses_both_text_retrievers(hand_store: Any) -> None:
    from folio.retrieval.search import Retriever

    res = Retriever(hand_store).search_detailed(SearchQuery("replace the pump filter", k=5))
    assert res.retrievers == ["bm25", "dense"]
    assert {s.retriever for s in res.hits[0].sources} == {"bm25", "dense"}


def test_pending_version_is_invisible(private_data: Path, versions: dict[str, str]) -> None:
    from folio.ingest.storage.store import Store
    from folio.retrieval.search import Retriever

    store = Store(private_data, recover=False)
    store.begin_version("draft", "dddddddddddddddd", "draft.pdf", 1, "1")
    reg = _region(("draft", "dddddddddddddddd", 1, "sentence", 1), "escalation path secret draft", 0)
    store.add_regions([reg])
    from folio.ingest.embed import default_text_encoder

    store.add_chunks([reg], default_text_encoder().encode([reg.text]))
    store.ensure_fts()
    hits = Retriever(store).search(SearchQuery("escalation path secret draft", k=20))
    assert hits and all(h.doc_id != "draft" for h in hits)
    with pytest.raises(DocumentNotFound):
        Retriever(store).search(SearchQuery("x", doc_ids=["draft"]))


def test_scalar_indexes_do_not_change_results(hand_store: Any) -> None:
    from folio.retrieval.search import Retriever
    from folio.retrieval.text import ensure_scalar_indexes

    before = Retriever(hand_store).search(SearchQuery("pump filter", doc_ids=["manual"], k=5))
    assert sorted(ensure_scalar_indexes(hand_store)) == ["doc_id", "version_id"]
    assert ensure_scalar_indexes(hand_store) == []
    r = Retriever(hand_store)
    after = r.search(SearchQuery("pump filter", doc_ids=["manual"], k=5))
    assert [h.region_id for h in after] == [h.region_id for h in before]
    r.refresh()
    again = r.search(SearchQuery("pump filter", doc_ids=["manual"], k=5))
    assert [h.region_id for h in again] == [h.region_id for h in before]


def test_bm25_finds_japanese_words_inside_unspaced_text(tmp_path: Any) -> None:
    """CJK runs are indexed as bigrams, so a word in the middle of a Japanese sentence is found."""
    from folio.ingest.embed import default_text_encoder
    from folio.ingest.storage.store import Store
    from folio.retrieval.search import Retriever

    store = Store(tmp_path / "ja")
    ver = "ja00000000000001"
    texts = [
        "採点パラメータの設定では最大点を指定します。",
        "用紙の印刷は別の章で説明します。",
        "The scanner settings are described in chapter 4.",
    ]
    regions = [_region(("manual-ja", ver, i + 1, "sentence", 1), t, i) for i, t in enumerate(texts)]
    store.begin_version("manual-ja", ver, "manual-ja.pdf", 1, "1")
    store.add_regions(regions)
    store.add_chunks(regions, default_text_encoder().encode(texts))
    store.commit_version("manual-ja", ver, pages=3, regions=3, report={})
    hits = Retriever(store).search(SearchQuery("最大点はどう設定しますか", strategy="bm25", k=5))
    assert hits and hits[0].region_id == regions[0].region_id
    top = Retriever(store).search(SearchQuery("scanner settings", strategy="bm25", k=5))[0]
    assert top.region_id == regions[2].region_id


def test_old_data_dirs_get_the_fts_column(tmp_path: Any) -> None:
    """A chunks table written before the ``fts`` column existed is migrated on open and still searchable."""
    import lancedb
    import numpy as np
    import pyarrow as pa

    from folio.ingest.storage.schema import CHUNKS_SCHEMA
    from folio.ingest.storage.store import Store
    from folio.retrieval.search import Retriever

    store = Store(tmp_path / "old")
    ver = "old0000000000001"
    region = _region(("old", ver, 1, "sentence", 1), "Replace the pump filter every six months.", 0)
    store.begin_version("old", ver, "old.pdf", 1, "1")
    store.add_regions([region])
    store.commit_version("old", ver, pages=1, regions=1, report={})
    # Rewrite chunks with the pre-migration schema (no fts column).
    legacy = pa.schema([f for f in CHUNKS_SCHEMA if f.name != "fts"])
    db = lancedb.connect(str(tmp_path / "old" / "lancedb"))
    db.drop_table("chunks")
    vec = pa.FixedSizeListArray.from_arrays(pa.array(np.ones(384, dtype=np.float32) / np.sqrt(384.0)), 384)
    db.create_table(
        "chunks",
        data=pa.table(
            {
                "region_id": [region.region_id],
                "doc_id": ["old"],
                "version_id": [ver],
                "kind": ["sentence"],
                "page": pa.array([1], pa.int32()),
                "text": [region.text],
                "vector": vec,
            },
            schema=legacy,
        ),
    )
    reopened = Store(tmp_path / "old")
    assert "fts" in reopened.chunks.schema.names
    hits = Retriever(reopened).search(SearchQuery("pump filter", strategy="bm25", k=3))
    assert [h.region_id for h in hits] == [region.region_id]


def test_full_text_query_matches_standard_abbreviations(tmp_path: Path) -> None:
    """ "catalog number" finds "Cat. No." and "Abbildung" finds "Abb.": the full-text query carries
    the abbreviations both ways (retrieval.text.fts_query)."""
    import pymupdf

    from folio.ingest.pipeline import ingest_bytes
    from folio.ingest.storage.store import Store
    from folio.retrieval.search import Retriever

    doc = pymupdf.open()
    lines = ["Cat. No. 28171E", "Abb. 2 zeigt den Kleeblattknoten.", "The pump housing is cast iron.",
             "Valves are checked every week by the operator."]
    for text in lines:
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(60, 100, 535, 300), text, fontsize=11)
    store = Store(tmp_path / "data")
    ingest_bytes(store, bytes(doc.tobytes()), filename="abbr.pdf", doc_id="abbr", ocr=False)
    retriever = Retriever(store)
    top = retriever.search(SearchQuery("Which catalog number is given?", doc_ids=["abbr"], k=3, strategy="bm25"))
    assert top and list(top[0].pages) == [1]
    fig = retriever.search(SearchQuery("Was steht in der Abbildung?", doc_ids=["abbr"], k=3, strategy="bm25"))
    assert fig and list(fig[0].pages) == [2]
