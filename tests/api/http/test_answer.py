"""``POST /v1/answer`` and ``folio ask`` against a loopback stand-in for an OpenAI-compatible server
(``tests/api/llm_standin.py``): folio's real HTTP client, streaming, structured answers, malformed
replies (no JSON, wrong ids, code fences, truncated streams, timeouts), the refuse branch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from tests.api.conftest import assert_error, make_settings
from tests.api.llm_standin import Reply, StandInLLM

Q = "How fast must a priority-one incident be acknowledged?"
DOC = ["support-policy"]


@pytest.fixture(autouse=True)
def _fresh(llm: StandInLLM) -> None:
    llm.replies.clear()
    llm.requests.clear()


def _first_id(ac: TestClient) -> str:
    """The first citation id of the package these tests' questions get (assembly is deterministic)."""
    pkg = ac.post("/v1/context", json={"query": Q, "doc_ids": DOC, "budget": 800}).json()
    return str(pkg["items"][0]["citation_id"])


def _ask(ac: TestClient, **body: Any) -> Any:
    return ac.post("/v1/answer", json={"query": Q, "doc_ids": DOC, "budget": 800, **body})


def _events(resp: Any) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in resp.text.split("\n\n"):
        lines = block.strip().splitlines()
        if not lines:
            continue
        event = next(ln[7:] for ln in lines if ln.startswith("event: "))
        data = json.loads("".join(ln[6:] for ln in lines if ln.startswith("data: ")))
        out.append((event, data))
    return out


def test_not_configured_is_503_with_how_to(client: TestClient) -> None:
    err = assert_error(client.post("/v1/answer", json={"query": Q}), 503, "llm_not_configured")
    assert "FOLIO_LLM_BASE_URL" in err["message"] and "FOLIO_LLM_MODEL" in err["message"]


def test_answer_sends_the_package_messages_and_checks_citations(ac: TestClient, llm: StandInLLM) -> None:
    s1 = _first_id(ac)
    llm.replies.append(Reply(f"A priority-one incident must be acknowledged within 30 minutes [{s1}]. "
                             "On holidays it is eight hours [S9]. The moon is made of cheese."))
    r = _ask(ac)
    assert r.status_code == 200, r.text
    body = r.json()
    pkg = body["package"]
    sent = llm.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["auth"] == "Bearer sk-test"
    assert sent["body"]["model"] == "stand-in" and sent["body"]["max_tokens"] == 1024
    assert sent["body"]["messages"] == pkg["prompt"]["messages"]  # the package's own messages, as they are
    assert body["answer"].startswith("A priority-one incident")
    assert body["check"]["kept_ids"] == [s1] and body["check"]["invented_ids"] == ["S9"]
    assert body["check"]["uncited_sentences"][-1] == "The moon is made of cheese."
    assert body["faithful"] is False and body["refused"] is False
    (cit,) = body["citations"]
    item = next(it for it in pkg["items"] if it["citation_id"] == s1)
    assert cit["region_id"] == item["region_id"] and cit["pages"] == item["pages"]
    assert cit["locators"][0]["page"] >= 1 and len(cit["locators"][0]["bbox"]) == 4
    assert cit["viewer_url"].startswith("/viewer?region=support-policy@")
    u = body["usage"]
    assert u["prompt_tokens"] == pkg["budget"]["used"] <= 800 and u["schema_tokens"] == 0
    assert u["completion_tokens"] == len(llm_words(body["answer"])) and u["endpoint_prompt_tokens"] == 123
    assert body["model"] == "stand-in" and body["finish_reason"] == "stop"


def llm_words(text: str) -> list[str]:
    return text.split()


def test_refuse_branch_does_not_call_the_model(ac: TestClient, llm: StandInLLM) -> None:
    r = _ask(ac, min_relevance=1.0)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["refused"] is True and body["answer"] == "Insufficient evidence."
    assert body["usage"]["prompt_tokens"] == 0 and body["usage"]["completion_tokens"] is None
    assert body["check"]["insufficient_evidence"] is True and body["citations"] == []
    assert llm.requests == []


def test_an_off_topic_question_over_the_store_is_refused_without_the_model(ac: TestClient, llm: StandInLLM) -> None:
    """Unscoped over the two documents (issue 23): refused as off-topic, the reason in the structured check."""
    r = ac.post("/v1/answer", json={"query": "What is the capital of France?", "budget": 800,
                                    "response_format": "json", "min_relevance": None})  # not the cosine floor
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["refused"] is True and body["answer"] == "Insufficient evidence." and llm.requests == []
    assert body["structured"]["errors"][0].startswith("refused (off-topic: no document supports the question")
    scoped = ac.post("/v1/answer", json={"query": "What is the capital of France?", "budget": 800,
                                         "doc_ids": DOC, "min_relevance": None})
    assert scoped.status_code == 200 and scoped.json()["refused"] is False  # one document: not judged this way


def test_structured_default_schema_fenced_reply_with_an_invented_id(ac: TestClient, llm: StandInLLM) -> None:
    s1 = _first_id(ac)
    value = {"answer": f"Within 30 minutes [{s1}].", "citations": [s1, "S7"], "insufficient": False}
    llm.replies.append(Reply("```json\n" + json.dumps(value) + "\n```"))
    r = _ask(ac, response_format="json")
    assert r.status_code == 200, r.text
    body = r.json()
    s = body["structured"]
    assert s["schema_name"] == "folio" and s["fenced"] is True
    assert s["json_valid"] is True and s["schema_valid"] is True  # valid JSON, valid schema ...
    assert s["invented_ids"] == ["S7"] and s["faithful"] is False  # ... but it cites an id never packed
    assert body["faithful"] is False and body["answer"] == f"Within 30 minutes [{s1}]."
    assert [c["citation_id"] for c in body["citations"]] == [s1]
    # the schema is counted inside the budget: package limit + schema tokens = the request's budget
    u, pkg = body["usage"], body["package"]
    assert u["schema_tokens"] > 50 and pkg["budget"]["limit"] == 800 - u["schema_tokens"]
    assert u["prompt_tokens"] == pkg["budget"]["used"] + u["schema_tokens"] <= 800
    sent = llm.requests[0]["body"]
    assert sent["response_format"]["type"] == "json_schema"
    assert "ANSWER FORMAT" in sent["messages"][-1]["content"][-1]["text"]


def test_structured_custom_schema_invalid_and_not_json(ac: TestClient, llm: StandInLLM) -> None:
    schema = {"type": "object", "properties": {"minutes": {"type": "integer"}, "source": {"type": "string"}},
              "required": ["minutes", "source"]}
    llm.replies.append(Reply('{"minutes": "thirty", "source": "[X1]"}'))
    body = _ask(ac, json_schema=schema, enforce_schema=False).json()
    s = body["structured"]
    assert s["schema_name"] == "custom" and s["json_valid"] is True and s["schema_valid"] is False
    assert any(e.startswith("minutes:") for e in s["errors"]) and s["cited_ids"] == ["X1"]
    assert "response_format" not in llm.requests[0]["body"]

    llm.replies.append(Reply("Thirty minutes, I believe."))
    s = _ask(ac, response_format="json").json()["structured"]
    assert s["json_valid"] is False and s["schema_valid"] is False and "the reply is not JSON" in s["errors"]


@pytest.mark.parametrize(
    ("reply", "status", "code"),
    [
        (Reply(status=500, raw='{"error": "model crashed"}'), 502, "llm_upstream_error"),
        (Reply(raw="<html>bad gateway</html>"), 502, "llm_upstream_error"),  # 200 but not JSON
        (Reply(raw='{"choices": []}'), 502, "llm_upstream_error"),  # JSON without a message
        (Reply("late", delay=2.5), 504, "llm_timeout"),
    ],
)
def test_upstream_failures_in_the_one_error_shape(ac: TestClient, llm: StandInLLM, reply: Reply, status: int,
                                                  code: str) -> None:
    llm.replies.append(reply)
    err = assert_error(_ask(ac, timeout_s=1), status, code)
    assert llm.url not in err["message"] and "127.0.0.1" not in err["message"]


def test_streamed_answer_ends_with_the_check(ac: TestClient, llm: StandInLLM) -> None:
    s1 = _first_id(ac)
    text = f"Within 30 minutes [{s1}]. Holidays take longer [S9]."
    llm.replies.append(Reply(text))
    with ac.stream("POST", "/v1/answer", json={"query": Q, "doc_ids": DOC, "budget": 800, "stream": True}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        r.read()
    events = _events(r)
    assert events[0][0] == "package" and events[0][1]["package"]["items"]
    deltas = [d["text"] for e, d in events if e == "delta"]
    assert len(deltas) > 3 and "".join(deltas) == text
    last, done = events[-1]
    assert last == "done" and done["answer"] == text and "package" not in done
    assert done["check"]["kept_ids"] == [s1] and done["check"]["invented_ids"] == ["S9"]
    assert done["usage"]["completion_tokens"] == len(text.split(" "))
    assert llm.requests[0]["body"]["stream"] is True


def test_truncated_stream_is_an_error_event(ac: TestClient, llm: StandInLLM) -> None:
    llm.replies.append(Reply("Within 30 minutes [S1]. And more words follow here.", truncate=True))
    with ac.stream("POST", "/v1/answer", json={"query": Q, "doc_ids": DOC, "stream": True}) as r:
        r.read()
    events = _events(r)
    assert [e for e, _ in events][0] == "package" and events[-1][0] == "error"
    err = events[-1][1]
    assert err["error"]["code"] == "llm_upstream_error" and err["status"] == 502
    assert "ended before the reply was complete" in err["error"]["message"]


def test_stream_stall_times_out(ac: TestClient, llm: StandInLLM) -> None:
    llm.replies.append(Reply("slow", delay=2.5))
    with ac.stream("POST", "/v1/answer", json={"query": Q, "doc_ids": DOC, "stream": True, "timeout_s": 1}) as r:
        r.read()
    events = _events(r)
    assert events[-1][0] == "error" and events[-1][1]["error"]["code"] == "llm_timeout"


def test_streamed_refusal_does_not_call_the_model(ac: TestClient, llm: StandInLLM) -> None:
    with ac.stream("POST", "/v1/answer",
                   json={"query": Q, "doc_ids": DOC, "stream": True, "min_relevance": 1.0}) as r:
        r.read()
    events = _events(r)
    assert [e for e, _ in events] == ["package", "delta", "done"]
    assert events[-1][1]["answer"] == "Insufficient evidence." and events[-1][1]["refused"] is True
    assert llm.requests == []


@pytest.mark.parametrize(
    "extra",
    [
        {"max_tokens": 10**6},
        {"max_tokens": 0},
        {"temperature": 5},
        {"timeout_s": 0},
        {"timeout_s": 10**4},
        {"json_schema": {"type": "object", "description": "x" * 30_000}},
        {"json_schema": {"type": 12}},
        {"prompt_format": "anthropic"},
        {"response_format": "xml"},
        {"budget": 10**9},
        {"unknown_field": 1},
    ],
)
def test_request_fields_are_bounded(ac: TestClient, llm: StandInLLM, extra: dict[str, Any]) -> None:
    assert_error(_ask(ac, **extra), 422, "validation_error")
    assert llm.requests == []


def test_schema_larger_than_the_budget_is_422(ac: TestClient) -> None:
    err = assert_error(_ask(ac, response_format="json", budget=50), 422, "invalid_request")
    assert "schema" in err["message"]


def test_unknown_document_is_404_before_the_model(ac: TestClient, llm: StandInLLM) -> None:
    assert_error(ac.post("/v1/answer", json={"query": Q, "doc_ids": ["nope"]}), 404, "document_not_found")
    assert llm.requests == []


def test_in_process_answer_function(answer_data: Path, llm: StandInLLM) -> None:
    """``api.service.answer.answer`` is the whole endpoint in-process (the CLI and the MCP server call it)."""
    from folio.api.service.answer import answer
    from folio.api.service.answer_schemas import AnswerRequest
    from folio.ingest.storage.store import Store
    from folio.retrieval.search import Retriever

    settings = make_settings(answer_data, llm_base_url=llm.url, llm_model="stand-in")
    store = Store(str(answer_data))
    retriever = Retriever(store)
    req = AnswerRequest(query=Q, doc_ids=DOC, budget=800)
    from folio.api.service.context import build_context

    s1 = build_context(store, retriever, req, settings).items[0].citation_id
    llm.replies.append(Reply(f"Within 30 minutes [{s1}]."))
    res = answer(store, retriever, req, settings)
    assert res.check.kept_ids == [s1] and res.faithful and res.citations[0].citation_id == s1


def test_images_are_inlined_as_data_urls(answer_data: Path) -> None:
    from folio.api.service.answer import _inline_images
    from folio.assembly.package import ContextPackage
    from folio.ingest.storage.store import Store

    store = Store(str(answer_data))
    fig = next(r for v in store.list_versions() if v.doc_id == "support-policy" and v.latest
               for r in store.region_index(v.doc_id, v.version_id).regions() if r.kind == "figure")
    url = f"/v1/regions/{fig.region_id}/image"
    item = {"citation_id": "F1", "region_id": fig.region_id, "region_ids": [fig.region_id], "doc_id": fig.doc_id,
            "version_id": fig.version_id, "filename": "x.pdf", "modality": "figure", "expansion": "figure",
            "trigger_ids": [], "pages": [1], "locators": [], "text": "", "tokens": 10, "status": "included",
            "image_url": url, "score": 1.0}
    pkg = ContextPackage.model_validate({
        "query": "q", "budget": {"limit": 10, "used": 5, "tokenizer": "cl100k_base", "breakdown": {},
                                 "image_formula": "x"},
        "items": [item], "excluded": [], "manifest": [], "strategy": "auto", "order": "edges", "refused": False,
        "retrieval": {"hits": [], "coverage_before": {"pages": 0, "docs": 0, "hits": 0},
                      "coverage_after": {"pages": 0, "docs": 0, "hits": 0}},
        "prompt": {"format": "openai", "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": [{"type": "text", "text": "CONTEXT"},
                                         {"type": "image_url", "image_url": {"url": url, "detail": "high"}}]}]},
    })
    warnings: list[str] = []
    msgs = _inline_images(pkg, store, None, warnings)
    part = msgs[1]["content"][1]
    assert part["image_url"]["url"].startswith("data:image/png;base64,iVBOR") and part["image_url"]["detail"] == "high"
    assert pkg.prompt.messages[1]["content"][1]["image_url"]["url"] == url and warnings == []


def test_folio_ask_streams_then_prints_the_check(answer_data: Path, llm: StandInLLM, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from folio.api.cli import main

    monkeypatch.setenv("FOLIO_LLM_BASE_URL", llm.url)
    monkeypatch.setenv("FOLIO_LLM_MODEL", "stand-in")
    llm.replies.append(Reply("Within 30 minutes [S9]."))
    # An invented id fails the check: exit 1, as `folio verify` (issue 23)
    assert main(["ask", Q, "--doc", "support-policy", "--budget", "800", "--data", str(answer_data)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("Within 30 minutes [S9].") and "check: NOT ok" in out and "invented S9" in out
    assert "(folio, cl100k_base" in out and "(endpoint)" in out
    assert llm.requests[-1]["body"]["stream"] is True

    llm.replies.append(Reply('{"answer": "Within 30 minutes.", "citations": [], "insufficient": false}'))
    code = main(["ask", Q, "--doc", "support-policy", "--structured", "--json", "--data", str(answer_data)])
    body = json.loads(capsys.readouterr().out)
    assert body["structured"]["schema_valid"] is True and body["package"]["items"]
    assert code == (0 if body["check"]["ok"] else 1)


def test_folio_ask_without_an_llm_says_how_to_enable(answer_data: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from folio.api.cli import main

    monkeypatch.delenv("FOLIO_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("FOLIO_LLM_MODEL", raising=False)
    assert main(["ask", Q, "--data", str(answer_data)]) == 1
    assert "FOLIO_LLM_BASE_URL" in capsys.readouterr().err


def test_answers_stay_inside_the_keys_collections(answer_data: Path, llm: StandInLLM, tmp_path: Path) -> None:
    from folio.api.keys import KeyRecord, hash_secret, write_keys

    keys = tmp_path / "keys.json"
    write_keys(keys, [KeyRecord(id="other", sha256=hash_secret("folio_test_other"), collections=("other",),
                                access="read"),
                      KeyRecord(id="mine", sha256=hash_secret("folio_test_mine"), collections=("default",),
                                access="read")])
    settings = make_settings(answer_data, llm_base_url=llm.url, llm_model="stand-in", keys_file=str(keys))
    with TestClient(create_app(settings)) as c:
        assert_error(c.post("/v1/answer", json={"query": Q}), 401, "unauthorized")
        other = {"X-API-Key": "folio_test_other"}
        assert_error(c.post("/v1/answer", json={"query": Q, "doc_ids": DOC}, headers=other), 404,
                     "document_not_found")
        body = c.post("/v1/answer", json={"query": Q}, headers=other).json()
        assert body["refused"] is True and body["package"]["items"] == [] and llm.requests == []
        llm.replies.append(Reply("Within 30 minutes."))
        mine = c.post("/v1/answer", json={"query": Q, "doc_ids": DOC}, headers={"X-API-Key": "folio_test_mine"})
        assert mine.status_code == 200 and mine.json()["package"]["items"] and len(llm.requests) == 1
