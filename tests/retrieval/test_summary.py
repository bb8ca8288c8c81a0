"""Summary-to-detail routing: summaries stored at ingest, routing restricts the children searched."""

from __future__ import annotations

from typing import Any

from folio.retrieval.query import SearchQuery
from tests.retrieval.conftest import DOC


def test_summaries_table_written_at_ingest(visual_store: Any, versions: dict[str, str]) -> None:
    t = visual_store.table("summaries")
    assert t is not None
    rows = t.search().where(f"version_id = '{versions['v2']}'").limit(None).to_arrow().to_pylist()
    sections = [r for r in visual_store.region_index(DOC, versions["v2"]).regions() if r.kind == "section"]
    assert {r["region_id"] for r in rows} <= {s.region_id for s in sections}
    by_id = {r["region_id"]: r for r in rows}
    targets = next(s for s in sections if s.heading_path[-1:] == ("2.1 Response targets",))
    text = by_id[targets.region_id]["text"]
    assert text.startswith("2 Priority-one incidents > 2.1 Response targets")
    assert "acknowledge" in text and "Key terms:" in text
    assert len(rows[0]["vector"]) == 384
    fts = t.search("escalation", query_type="fts").limit(3).to_arrow().to_pylist()
    assert fts and "Escalation" in fts[0]["text"]


def test_summary_strategy_routes_to_sections(retriever: Any, versions: dict[str, str]) -> None:
    retriever.route_sections = 1
    try:
        res = retriever.search_detailed(SearchQuery(
            "who is the escalation path after a missed target", k=20, strategy="summary"
        ))
    finally:
        retriever.route_sections = 8
    text_hits = [
        h for h in res.hits if h.kind in ("sentence", "table", "figure") and "summary" in h.retriever
    ]
    assert text_hits
    src = retriever.source_for(res.hits)
    sections = {src.get(h.region_id).section_id for h in text_hits}
    assert len(sections) == 1
    section = src.get(sections.pop())
    assert section.heading_path == ("3 Escalation",)
    # Without routing, sentences of other sections are found too.
    plain = retriever.search(SearchQuery("who is the escalation path after a missed target", k=20, strategy="hybrid"))
    assert {src.get(h.region_id).section_id for h in plain if h.kind == "sentence"} - {section.region_id}


def test_lazy_summaries_for_versions_ingested_without_indexer(hand_store_for_summary: Any) -> None:
    from folio.retrieval.search import Retriever

    hits = Retriever(hand_store_for_summary).search(SearchQuery("pump", k=5, strategy="summary"))
    assert hits  # no sections there: falls back to searching all text, with a note
    res = Retriever(hand_store_for_summary).search_detailed(SearchQuery("pump", k=5, strategy="summary"))
    assert res.notes and "no section summaries" in res.notes[0]
