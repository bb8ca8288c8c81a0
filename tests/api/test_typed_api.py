"""Issue 13, API side: retrieval notes reach the caller, one bbox shape, closed value sets are 422s."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from api.app import create_app
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
