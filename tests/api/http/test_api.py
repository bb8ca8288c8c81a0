"""The REST contract on real PDFs, a real LanceDB store and the real tokenizer (read-only client)."""

from __future__ import annotations

import io

from fastapi.testclient import TestClient

from tests.api.conftest import assert_error

QUESTION = "How fast must a priority-one incident be acknowledged?"


def test_health_reports_counts_and_retrievers(client: TestClient) -> None:
    body = client.get("/v1/health").json()
    assert body["status"] == "ok"
    assert body["counts"]["documents"] == 2 and body["counts"]["versions"] == 3
    assert body["retrieval"]["bm25"]["enabled"] and body["retrieval"]["dense"]["enabled"]
    # No CLIP weights here: it is off, and health says why and how to turn it on.
    clip = body["retrieval"]["clip"]
    assert clip["enabled"] is False and clip["reason"] and clip["enable"]
    assert body["auth"] is False


def test_health_reports_where_the_encoders_run(client: TestClient) -> None:
    """Issue 47: the device each MiniLM encoder runs on (``FOLIO_EMBED_DEVICE``, default ``auto``), settled by the
    warm-up query at startup: the CPU here, a GPU where the runtime sees one (then the fp32 graph for documents)."""
    devices = client.get("/v1/health").json()["retrieval"]["dense"]["devices"]
    assert devices["query"]["backend"] == "onnx" and devices["query"]["device"] in ("cpu", "cuda")
    document = devices["document"]
    assert document["device"] == devices["query"]["device"]  # one runtime (ONNX Runtime), one device
    assert document["backend"] == ("onnx" if document["device"] == "cuda" else "onnx-int8")


def test_list_documents_is_latest_version_of_each(client: TestClient) -> None:
    body = client.get("/v1/documents").json()
    assert body["count"] == len(body["data"]) == 2
    docs = {d["doc_id"]: d for d in body["data"]}
    policy = docs["support-policy"]
    assert policy["filename"] == "support-policy-v2.pdf" and policy["versions"] == 2 and policy["latest"]
    assert docs["register"]["pages"] == 3
    for d in body["data"]:
        assert {"doc_id", "filename", "version_id", "pages"} <= set(d)


def test_document_detail_lists_versions(client: TestClient) -> None:
    body = client.get("/v1/documents/support-policy").json()
    assert [v["filename"] for v in body["versions"]] == ["support-policy-v2.pdf", "support-policy-v1.pdf"]
    assert body["version_id"] == body["versions"][0]["version_id"]
    assert body["report"]["regions_by_kind"]["sentence"] > 0


def test_pages_and_page_image_match_page_size(client: TestClient) -> None:
    from PIL import Image

    doc = client.get("/v1/documents/register").json()
    pages = client.get(f"/v1/documents/register/versions/{doc['version_id']}/pages").json()
    assert pages["count"] == 3 and [p["page"] for p in pages["data"]] == [1, 2, 3]
    p2 = pages["data"][1]
    resp = client.get(p2["image_url"])
    assert resp.status_code == 200 and resp.headers["content-type"] == "image/png"
    img = Image.open(io.BytesIO(resp.content))
    # The render keeps the page's aspect ratio, so bbox * (shown width / page width) lands right.
    assert abs(img.width / img.height - p2["width"] / p2["height"]) < 0.01


def test_context_package_contract(client: TestClient) -> None:
    resp = client.post("/v1/context", json={"query": QUESTION, "budget": 700, "doc_ids": ["support-policy"]})
    assert resp.status_code == 200, resp.text
    pkg = resp.json()
    assert pkg["budget"]["limit"] == 700 and 0 < pkg["budget"]["used"] <= 700
    assert pkg["budget"]["tokenizer"] == "cl100k_base"
    assert pkg["items"] and not pkg["refused"]
    latest = client.get("/v1/documents/support-policy").json()["version_id"]
    for n, item in enumerate(pkg["items"], 1):
        assert item["citation_id"].endswith(str(n)) or item["citation_id"]
        assert item["version_id"] == latest and item["filename"] == "support-policy-v2.pdf"
        for key in (
            "region_id",
            "doc_id",
            "modality",
            "expansion",
            "trigger_ids",
            "pages",
            "locators",
            "text",
            "tokens",
        ):
            assert key in item
        assert item["locators"] and all(set(loc["bbox"]) == {"x0", "y0", "x1", "y1"} for loc in item["locators"])
    assert "30 minutes" in " ".join(i["text"] for i in pkg["items"])
    hits = pkg["retrieval"]["hits"]
    assert [h["rank"] for h in hits] == sorted(h["rank"] for h in hits)
    assert {"region_id", "pages", "score", "retriever", "rank"} <= set(hits[0])
    assert pkg["prompt"]["messages"][0]["role"] in ("system", "user")
    # Every cited region resolves through the regions endpoint.
    region = client.get(f"/v1/regions/{pkg['items'][0]['region_id']}").json()
    assert region["doc_id"] == "support-policy" and region["version_id"] == latest


def test_context_accepts_assembly_options_and_old_versions(client: TestClient) -> None:
    v1 = client.get("/v1/documents/support-policy").json()["versions"][1]["version_id"]
    resp = client.post(
        "/v1/context",
        json={
            "query": "When are incidents reported outside business hours acknowledged?",
            "budget": 500,
            "versions": {"support-policy": v1},
            "doc_ids": ["support-policy"],
            "strategy": "raw",
            "order": "relevance",
            "tokenizer": "o200k_base",
        },
    )
    assert resp.status_code == 200, resp.text
    pkg = resp.json()
    assert pkg["budget"]["tokenizer"] == "o200k_base" and pkg["strategy"] == "raw"
    assert pkg["items"] and all(i["version_id"] == v1 for i in pkg["items"])


def test_search_returns_ranked_hits(client: TestClient) -> None:
    body = client.post("/v1/search", json={"query": "acknowledge priority-one incident", "k": 5}).json()
    assert 0 < body["count"] == len(body["data"]) <= 5
    assert [h["rank"] for h in body["data"]] == list(range(1, body["count"] + 1))
    top = body["data"][0]
    assert top["text"] and top["retriever"] and top["sources"]


def test_verify_with_package_and_with_context_request(client: TestClient) -> None:
    pkg = client.post("/v1/context", json={"query": QUESTION, "budget": 700}).json()
    cid = pkg["items"][0]["citation_id"]
    answer = f"The on-call engineer acknowledges within 30 minutes [{cid}]. Updates follow hourly [S99]."
    report = client.post("/v1/verify", json={"answer": answer, "package": pkg}).json()
    assert report["kept_ids"] == [cid] and report["invented_ids"] == ["S99"] and report["ok"] is False
    again = client.post(
        "/v1/verify", json={"answer": answer, "context_request": {"query": QUESTION, "budget": 700}}
    ).json()
    assert again["kept_ids"] == [cid]
    assert_error(client.post("/v1/verify", json={"answer": "x"}), 422, "invalid_request")


def test_region_detail_and_image(client: TestClient) -> None:
    hits = client.post(
        "/v1/search", json={"query": "acknowledgement sent by e-mail", "kinds": ["sentence"]}
    ).json()
    sentence = next(h for h in hits["data"] if h["kind"] == "sentence")
    region = client.get(f"/v1/regions/{sentence['region_id']}").json()
    assert region["kind"] == "sentence" and region["heading_path"]
    loc = region["locators"][0]
    assert loc["line_boxes"] and loc["page_width"] == 595
    assert "top-left" in region["coords"]
    img = client.get(region["image_url"])
    assert img.status_code == 200 and img.content[:8] == b"\x89PNG\r\n\x1a\n"


def test_error_shapes(client: TestClient) -> None:
    assert_error(client.get("/v1/documents/nope"), 404, "document_not_found")
    doc = client.get("/v1/documents/support-policy").json()
    assert_error(
        client.get("/v1/documents/support-policy/versions/0000000000000000"), 404, "version_not_found"
    )
    assert_error(client.get(f"/v1/documents/support-policy/versions/{doc['version_id']}/pages/9/image"), 404)
    assert_error(client.get("/v1/regions/nope@0000000000000000:p1:sentence1"), 404, "region_not_found")
    assert_error(client.get("/v1/regions/not-a-region-id"), 404, "region_not_found")
    assert_error(client.get("/v1/jobs/nope"), 404, "job_not_found")
    assert_error(client.get("/v1/no-such-route"), 404, "not_found")
    assert_error(client.put("/v1/documents"), 405, "method_not_allowed")
    err = assert_error(client.post("/v1/context", json={"budget": 100}), 422, "validation_error")
    assert err["detail"][0]["loc"] == ["body", "query"]
    assert_error(client.post("/v1/context", json={"query": "x", "budget": 0}), 422, "validation_error")
    assert_error(
        client.post("/v1/context", json={"query": "x", "tokenizer": "gpt2"}), 422, "validation_error"
    )
    assert_error(client.post("/v1/context", json={"query": "x", "bogus": 1}), 422, "validation_error")
    assert_error(
        client.post("/v1/context", content=b"{not json", headers={"content-type": "application/json"}), 422
    )
    assert_error(
        client.post("/v1/context", json={"query": "x", "doc_ids": ["nope"]}), 404, "document_not_found"
    )
    assert_error(
        client.post("/v1/search", json={"query": "x", "strategy": "telepathy"}), 422, "validation_error"
    )


def test_viewer_is_served(client: TestClient) -> None:
    page = client.get("/viewer")
    assert page.status_code == 200 and "viewer.js" in page.text
    assert client.get("/static/viewer.js").status_code == 200
    assert client.get("/", follow_redirects=False).headers["location"] == "/viewer"
