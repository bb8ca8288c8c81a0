"""``compress: "llm"`` through ``POST /v1/context`` against the loopback stand-in for an OpenAI-compatible
server (``tests/api/llm_standin.py``, not a model): folio's real HTTP client writes the compressed
tail, the reply is recounted and cut to the budget, an upstream error goes extractive with a note, and
no endpoint configured is 503 with how to enable one."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from tests.api.conftest import assert_error, make_settings
from tests.api.llm_standin import Reply, StandInLLM

Q = "How fast must a priority-one incident be acknowledged?"
# at this budget and share a span ranked below the page goes in compressed (assembly is deterministic; at 300 the
# page carries its table and nothing is left to compress). The stored page text: sent compact (tables a row a line,
# cells between "|"), this one-page policy costs so little that no budget leaves a tail to compress
BODY = {"query": Q, "doc_ids": ["support-policy"], "budget": 280, "compress_share": 0.3, "page_render": "stored"}


@pytest.fixture(scope="module")
def cc(api_master: Path, tmp_path_factory: pytest.TempPathFactory, llm: StandInLLM) -> Iterator[TestClient]:
    data = tmp_path_factory.mktemp("compress-llm") / "data"
    shutil.copytree(api_master, data)
    with TestClient(create_app(make_settings(data, llm_base_url=llm.url, llm_model="stand-in"))) as c:
        yield c


@pytest.fixture(autouse=True)
def _fresh(llm: StandInLLM) -> None:
    llm.replies.clear()
    llm.requests.clear()


def _compressed(pkg: dict[str, Any]) -> list[dict[str, Any]]:
    return [it for it in pkg["items"] if it["expansion"] == "compressed"]


@pytest.fixture(scope="module")
def extractive(cc: TestClient) -> dict[str, Any]:
    r = cc.post("/v1/context", json={**BODY, "compress": "extractive"})
    assert r.status_code == 200, r.text
    pkg = r.json()
    assert _compressed(pkg), "the test question no longer leaves a compressed tail at this budget"
    return pkg  # type: ignore[no-any-return]


def test_llm_compression_is_the_model_text_cited_and_marked(cc: TestClient, llm: StandInLLM,
                                                            extractive: dict[str, Any]) -> None:
    assert _compressed(extractive)
    reply = "Priority-one incidents: acknowledged within 30 minutes."
    # one reply per call, whatever the order: with the model's short texts more of the tail fits
    llm.replies.extend(Reply(reply) for _ in range(8))
    r = cc.post("/v1/context", json={**BODY, "compress": "llm"})
    assert r.status_code == 200, r.text
    pkg = r.json()
    items = [it for it in _compressed(pkg) if it["text"] == reply]
    assert items and all(it["locators"] for it in items)
    for item in items:
        entry = next(m for m in pkg["manifest"] if m["citation_id"] == item["citation_id"] and m["fate"] == "included")
        assert entry["expansion"] == "compressed"
    # the extractive tail is still cited to the same regions, compressed
    by_cid = {it["citation_id"]: it for it in _compressed(pkg)}
    for first in _compressed(extractive):
        assert by_cid[first["citation_id"]]["region_id"] == first["region_id"]
    sent = llm.requests[0]["body"]
    assert sent["model"] == "stand-in" and 16 <= sent["max_tokens"] <= 300
    assert Q in sent["messages"][-1]["content"]
    assert pkg["budget"]["used"] <= 300 and pkg["retrieval"]["notes"] == []


def test_an_over_long_reply_is_cut_to_the_budget(cc: TestClient, llm: StandInLLM) -> None:
    llm.replies.append(Reply("acknowledged within thirty minutes " * 400))
    pkg = cc.post("/v1/context", json={**BODY, "compress": "llm"}).json()
    (item, *_) = _compressed(pkg)
    assert item["text"].startswith("acknowledged within") and item["text"].endswith(" …")
    assert item["tokens"] < 300 and pkg["budget"]["used"] <= 300


def test_an_upstream_error_goes_extractive_with_a_note(cc: TestClient, llm: StandInLLM,
                                                       extractive: dict[str, Any]) -> None:
    tail = {it["citation_id"]: it for it in _compressed(extractive)}
    llm.replies.extend(Reply(status=500) for _ in range(8))
    pkg = cc.post("/v1/context", json={**BODY, "compress": "llm"}).json()
    items = [it for it in pkg["items"] if it["citation_id"] in tail]
    assert items
    for item in items:  # the extractive body, with a note that says why
        assert item["expansion"] == "compressed" and item["text"] == tail[item["citation_id"]]["text"]
        note = next(n for n in pkg["retrieval"]["notes"] if f"of {item['citation_id']} failed" in n)
        assert "HTTP 500" in note and "extractive" in note
    assert pkg["budget"]["used"] <= 300


def test_answer_with_llm_compression_calls_the_model_twice(cc: TestClient, llm: StandInLLM) -> None:
    llm.replies += [Reply("Acknowledged within 30 minutes."), Reply("Within 30 minutes.")]
    r = cc.post("/v1/answer", json={**BODY, "compress": "llm"})
    assert r.status_code == 200, r.text
    assert len(llm.requests) >= 2 and "Compressed text" in llm.requests[0]["body"]["messages"][-1]["content"]
    assert any(it["text"] == "Acknowledged within 30 minutes." for it in _compressed(r.json()["package"]))


def test_llm_compression_without_an_llm_is_503_with_how_to(client: TestClient) -> None:
    err = assert_error(client.post("/v1/context", json={**BODY, "compress": "llm"}), 503, "llm_not_configured")
    assert "compress='llm'" in str(err["message"]) and "FOLIO_LLM_BASE_URL" in str(err["message"])
