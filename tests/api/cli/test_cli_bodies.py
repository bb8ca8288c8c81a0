"""The request bodies ``folio context``, ``folio search`` and ``folio ask`` send (issue 46): each flag's ``dest`` is
the request field it sets (``api.cli.common.request_fields``), so no command copies the fields by hand; the
bodies are the ones the commands sent when they did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from folio.api.cli import answer, build_parser, query
from folio.api.cli.common import Remote

Q = "How fast must a priority-one incident be acknowledged?"
REMOTE = Remote("http://127.0.0.1:9", None)


def _sent(monkeypatch: pytest.MonkeyPatch, *argv: str) -> dict[str, Any]:
    """The body ``folio argv`` sends to a server (the sending stubbed: nothing is sent)."""
    sent: list[dict[str, Any]] = []

    def post_json(remote: Remote, path: str, body: dict[str, Any]) -> dict[str, Any]:
        sent.append(body)
        return {"data": [], "count": 0, "notes": []}

    def remote_answer(remote: Remote, body: dict[str, Any], streamed: bool) -> None:
        sent.append(body)

    monkeypatch.setattr(query, "remote_server", lambda args: REMOTE)
    monkeypatch.setattr(answer, "remote_server", lambda args: REMOTE)
    monkeypatch.setattr(query, "post_json", post_json)
    monkeypatch.setattr(answer, "_remote_answer", remote_answer)
    args = build_parser().parse_args(list(argv))
    args.func(args)
    (body,) = sent
    return body


def test_context_sends_the_flags_it_was_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(query, "format_package", lambda *a, **k: "")
    assert _sent(monkeypatch, "context", Q) == {"query": Q, "k": 50}
    assert _sent(monkeypatch, "context", Q, "--budget", "0", "--doc", "a", "--doc", "b", "--strategy", "page",
                 "--retrieval", "bm25", "--tokenizer", "o200k_base", "-k", "7") == {
        "query": Q, "k": 7, "budget": 0, "doc_ids": ["a", "b"], "strategy": "page", "retrieval_strategy": "bm25",
        "tokenizer": "o200k_base"}
    assert _sent(monkeypatch, "context", Q, "--tokenizer", "") == {"query": Q, "k": 50}


def test_search_sends_its_retrieval_strategy_as_strategy(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _sent(monkeypatch, "search", Q) == {"query": Q, "k": 10}
    assert _sent(monkeypatch, "search", Q, "--doc", "a", "--retrieval", "dense", "-k", "3") == {
        "query": Q, "k": 3, "doc_ids": ["a"], "strategy": "dense"}


def _client_body(options: dict[str, Any]) -> Any:
    """What ``folio.Client.answer_stream(**options)`` puts on the wire."""
    from folio.client.calls import Calls

    rest = dict(options)
    return Calls.answer(rest.pop("query"), rest, stream=True).json


@pytest.mark.parametrize(
    ("argv", "before"),
    [
        ((), {}),
        (("--budget", "700", "--doc", "support-policy", "--strategy", "window", "-k", "5", "--max-tokens", "64",
          "--timeout", "2.5", "--structured"),
         {"budget": 700, "doc_ids": ["support-policy"], "strategy": "window", "k": 5, "max_tokens": 64,
          "timeout_s": 2.5, "response_format": "json"}),
        (("--budget", "0", "--strategy", ""), {}),  # as before: 0 and "" take the server's defaults
    ],
)
def test_ask_sends_the_body_it_built_by_hand(
    monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...], before: dict[str, Any]
) -> None:
    """The body the hand-built request gave the client, now dumped from ``AnswerRequest``: the same on the wire."""
    hand = {"query": Q, "k": 50, "max_tokens": 1024, "timeout_s": 60.0, **before}
    body = _sent(monkeypatch, "ask", Q, *argv)
    assert json.dumps(_client_body(body)) == json.dumps(_client_body(hand))


def test_ask_sends_a_json_schema(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    body = _sent(monkeypatch, "ask", Q, "--schema", str(tmp_path / "s.json"))
    hand = {"query": Q, "k": 50, "max_tokens": 1024, "timeout_s": 60.0, "json_schema": schema}
    assert json.dumps(_client_body(body)) == json.dumps(_client_body(hand))


def test_the_flags_name_fields_of_the_request_models() -> None:
    from folio.api.schemas import ContextRequest, SearchRequest
    from folio.api.service.answer_schemas import AnswerRequest

    assert set(query.CONTEXT_FIELDS) <= set(ContextRequest.model_fields)
    assert set(query.SEARCH_FIELDS) <= set(SearchRequest.model_fields)
    assert set(answer.ASK_FIELDS) <= set(AnswerRequest.model_fields)
