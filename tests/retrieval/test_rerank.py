"""The LLM reranker against a loopback server that speaks the OpenAI chat API, malformed replies included."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from folio.api.service.llm import ChatClient
from folio.kernel.hit import Hit, Source
from folio.retrieval.query import SearchQuery
from folio.retrieval.ranking.rerank import LLMReranker, parse_ranked_ids


class FakeOpenAI:
    """A real HTTP server on 127.0.0.1 whose chat completions return queued replies."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, str]] = []
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                status, content = outer.replies.pop(0) if outer.replies else (200, "")
                payload = (
                    json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})
                    if status == 200
                    else content
                ).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def _hits(n: int) -> list[Hit]:
    return [
        Hit(
            region_id=f"d@v:p1:sentence{i}",
            doc_id="d",
            version_id="v",
            kind="sentence",
            modality="text",
            pages=(1,),
            score=1.0 / i,
            rank=i,
            sources=(Source(retriever="bm25", rank=i, score=10.0 - i),),
        )
        for i in range(1, n + 1)
    ]


TEXTS = {f"d@v:p1:sentence{i}": f"text {i}" for i in range(1, 6)}


def _rerank(server: FakeOpenAI, reply: str, status: int = 200) -> Any:
    server.replies.append((status, reply))
    rr = LLMReranker(ChatClient(server.url, "tiny", api_key="k"))
    return rr.rerank("q", _hits(4), TEXTS)


def _order(res: Any) -> list[int]:
    return [int(h.region_id.rsplit("sentence", 1)[1]) for h in res.hits]


def test_good_reply_reorders_and_records_source(llm: FakeOpenAI) -> None:
    res = _rerank(llm, '{"ranked_ids": ["c3", "c1", "c4", "c2"]}')
    assert res.applied and not res.notes
    assert _order(res) == [3, 1, 4, 2]
    assert [h.rank for h in res.hits] == [1, 2, 3, 4]
    assert res.hits[0].sources[-1].retriever == "rerank:llm" and res.hits[0].sources[0].rank == 3
    assert [h.score for h in res.hits] == sorted((h.score for h in res.hits), reverse=True)
    req = llm.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer k"
    user = json.loads(req["body"]["messages"][1]["content"])
    assert [c["id"] for c in user["candidates"]] == ["c1", "c2", "c3", "c4"] and user["candidates"][0][
        "text"
    ] == "text 1"


def test_code_fence_and_prose(llm: FakeOpenAI) -> None:
    res = _rerank(llm, 'Here you go:\n```json\n{"ranked_ids": ["c2", "c1", "c3", "c4"]}\n```\nHope it helps')
    assert res.applied and _order(res) == [2, 1, 3, 4]


def test_unknown_and_missing_ids(llm: FakeOpenAI) -> None:
    res = _rerank(llm, '{"ranked_ids": ["c9", "c4", "bogus", "c4"]}')
    assert res.applied
    assert _order(res) == [4, 1, 2, 3]
    assert any("unknown ids" in n for n in res.notes) and any("missing" in n for n in res.notes)


def test_plain_list_of_numbers(llm: FakeOpenAI) -> None:
    res = _rerank(llm, "[2, 4, 1, 3]")
    assert _order(res) == [2, 4, 1, 3]


@pytest.mark.parametrize("reply", ["I cannot rank these.", "{not json", '{"answer": 42}', '["c7"]', ""])
def test_unusable_reply_keeps_original_order(llm: FakeOpenAI, reply: str) -> None:
    res = _rerank(llm, reply)
    assert not res.applied and res.notes
    assert _order(res) == [1, 2, 3, 4]
    assert res.hits == _hits(4)


def test_http_error_keeps_original_order(llm: FakeOpenAI) -> None:
    res = _rerank(llm, '{"error": "overloaded"}', status=500)
    assert not res.applied and "failed" in res.notes[0]
    assert _order(res) == [1, 2, 3, 4]


def test_unreachable_endpoint_keeps_original_order() -> None:
    rr = LLMReranker(ChatClient("http://127.0.0.1:9/v1", "tiny", timeout=2))
    res = rr.rerank("q", _hits(3), TEXTS)
    assert not res.applied and [h.rank for h in res.hits] == [1, 2, 3]


def test_parse_ranked_ids_shapes() -> None:
    assert parse_ranked_ids('{"ranked_candidate_ids": [1, 2]}') == ["c1", "c2"]
    assert parse_ranked_ids('noise ["c2"] more') == ["c2"]
    assert parse_ranked_ids("nothing here") is None


def test_retriever_rerank_end_to_end(llm: FakeOpenAI, visual_store: Any) -> None:
    from folio.retrieval.search import Retriever

    r = Retriever(visual_store, llm=ChatClient(llm.url, "tiny"))
    base = r.search(SearchQuery("response targets", k=4, strategy="bm25"))
    assert len(base) >= 2
    llm.replies.append((200, json.dumps({"ranked_ids": [f"c{i}" for i in range(len(base), 0, -1)]})))
    res = r.search_detailed(SearchQuery("response targets", k=4, strategy="bm25", rerank=True))
    assert [h.region_id for h in res.hits] == [h.region_id for h in reversed(base)]
    assert "rerank:llm" in res.retrievers
    prompt = json.loads(llm.requests[-1]["body"]["messages"][1]["content"])
    assert "response" in prompt["candidates"][-1]["text"].lower() or prompt["candidates"][-1]["text"]
    assert r.status()["rerank"]["enabled"]
