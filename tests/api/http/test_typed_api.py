"""Issue 13, API side: retrieval notes reach the caller, one bbox shape, closed value sets are 422s."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from tests.api.conftest import make_settings
from tests.retrieval.test_rerank import FakeOpenAI

QUESTION = "How fast must a priority-one incident be acknowledged?"


def test_a_rerank_that_fell_back_says_so(data_copy: Path) -> None:
    """``rerank: true`` with an LLM that answers nonsense keeps the fused order, and now says so
    (the reranker's notes were dropped by ``Retriever.search``)."""
    with FakeOpenAI() as llm:
        settings = make_settings(data_copy, llm_base_url=llm.url, llm_model="tiny")
        with TestClient(create_app(settings)) as c:
            for _ in range(2):
                llm.replies.append((200, "I would rather not rank these."))
            plain = c.post("/v1/context", json={"query": QUESTION, "budget": 800}).json()
            assert plain["retrieval"]["notes"] == []
            pkg = c.post("/v1/context", json={"query": QUESTION, "budget": 800, "rerank": True}).json()
            notes = pkg["retrieval"]["notes"]
            assert notes and "order" in " ".join(notes).lower(), notes
            assert [h["region_id"] for h in pkg["retrieval"]["hits"]] == [
                h["region_id"] for h in plain["retrieval"]["hits"]
            ]
            found = c.post("/v1/search", json={"query": QUESTION, "rerank": True}).json()
            assert found["notes"] and found["count"] == len(found["data"])
        assert len(llm.requests) == 2  # both reranks asked the LLM


BOX = {"x0", "y0", "x1", "y1"}


def test_one_bbox_shape_in_context_and_regions(client: TestClient) -> None:
    """``/v1/context`` returned ``[x0, y0, x1, y1]`` lists and ``/v1/regions`` ``{x0, y0, x1, y1}``
    objects; both now return the one ``BBox`` object, and the OpenAPI schema says so."""
    pkg = client.post("/v1/context", json={"query": QUESTION, "budget": 800}).json()
    item = pkg["items"][0]
    regions = [client.get(f"/v1/regions/{rid}").json() for rid in item["region_ids"]]
    for loc in item["locators"] + [loc for r in regions for loc in r["locators"]]:
        assert set(loc["bbox"]) == BOX
        assert all(set(b) == BOX for b in loc["line_boxes"] or [])
    # an item's box on a page is the union of its regions' boxes there, read from the same shape
    page = item["locators"][0]["page"]
    boxes = [loc["bbox"] for r in regions for loc in r["locators"] if loc["page"] == page]
    union = {"x0": min(b["x0"] for b in boxes), "y0": min(b["y0"] for b in boxes),
             "x1": max(b["x1"] for b in boxes), "y1": max(b["y1"] for b in boxes)}
    assert item["locators"][0]["bbox"] == union

    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert schemas["BBox"]["x-coord-origin"] == "TOPLEFT" and set(schemas["BBox"]["properties"]) == BOX
    assert "top-left" in schemas["BBox"]["description"]
    for name in ("LocatorOut", "RegionLocatorOut"):
        assert schemas[name]["properties"]["bbox"] == {"$ref": "#/components/schemas/BBox"}
    assert "BBoxOut" not in schemas

    # a package saved with the old list shape still verifies
    old = {**pkg, "items": [{**i, "locators": [
        {**loc, "bbox": [loc["bbox"][k] for k in ("x0", "y0", "x1", "y1")]} for loc in i["locators"]
    ]} for i in pkg["items"]]}
    resp = client.post("/v1/verify", json={"answer": f"It is 15 minutes [{item['citation_id']}].", "package": old})
    assert resp.status_code == 200, resp.text
    assert resp.json()["kept_ids"] == [item["citation_id"]]


def test_closed_value_sets_are_422(client: TestClient) -> None:
    for body in (
        {"query": QUESTION, "strategy": "bogus"},
        {"query": QUESTION, "retrieval_strategy": "fuzzy"},
        {"query": QUESTION, "order": "random"},
        {"query": QUESTION, "kinds": ["sentense"]},
        {"query": QUESTION, "quotas": {"video": 1}},
        {"query": QUESTION, "modality_slots": {"video": 1}},
    ):
        resp = client.post("/v1/context", json=body)
        assert resp.status_code == 422, (body, resp.text)
        assert resp.json()["error"]["code"] == "validation_error"
    resp = client.post("/v1/search", json={"query": QUESTION, "strategy": "fuzzy"})
    assert resp.status_code == 422
