"""One typed tree of request options: ``RetrievalOptions`` shared by search, context and answer requests (one
name for the retrieval strategy on all three), and ``AssemblyOptions`` composed from its groups with every
field of every group a top-level field of the context request, bounded."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel, ValidationError

from folio.api.schemas import RETRIEVAL_FIELDS, ContextRequest, RetrievalOptions, SearchRequest
from folio.api.service.answer_schemas import AnswerRequest
from folio.assembly.options import AssemblyOptions, BudgetOptions, ExpansionOptions
from tests.api.conftest import assert_error

QUERY = "acknowledge priority-one incident"


# ---------------------------------------------------------------------------------- retrieval options
def test_search_context_and_answer_share_the_retrieval_options() -> None:
    for request in (SearchRequest, ContextRequest, AnswerRequest):
        assert issubclass(request, RetrievalOptions)
        assert RETRIEVAL_FIELDS <= set(request.model_fields), request
    assert "retrieval_strategy" in RETRIEVAL_FIELDS


@pytest.mark.parametrize(
    ("body", "strategy"),
    [
        ({}, "hybrid"),
        ({"strategy": "bm25"}, "bm25"),
        ({"retrieval_strategy": "bm25"}, "bm25"),
        ({"strategy": "dense", "retrieval_strategy": "dense"}, "dense"),
    ],
)
def test_search_takes_retrieval_strategy_as_a_synonym_of_strategy(body: dict[str, Any], strategy: str) -> None:
    req = SearchRequest.model_validate({"query": QUERY, **body})
    assert req.strategy == req.retrieval_strategy == strategy


def test_search_refuses_two_different_strategies() -> None:
    with pytest.raises(ValidationError, match="same field"):
        SearchRequest.model_validate({"query": QUERY, "strategy": "bm25", "retrieval_strategy": "dense"})


def test_search_by_retrieval_strategy_over_rest(client: TestClient) -> None:
    def retrievers(body: dict[str, Any]) -> set[str]:
        resp = client.post("/v1/search", json={"query": QUERY, "k": 5, **body})
        assert resp.status_code == 200, resp.text
        hits = resp.json()["data"]
        assert hits
        return {part for h in hits for part in h["retriever"].split("+")}

    assert retrievers({"retrieval_strategy": "bm25"}) == retrievers({"strategy": "bm25"}) == {"bm25"}
    assert "dense" in retrievers({"retrieval_strategy": "hybrid"})
    assert_error(
        client.post("/v1/search", json={"query": QUERY, "strategy": "bm25", "retrieval_strategy": "dense"}),
        422,
        "validation_error",
    )


def test_context_and_answer_keep_strategy_for_assembly() -> None:
    """On /v1/context and /v1/answer, strategy is the assembly strategy: only /v1/search maps it."""
    for request in (ContextRequest, AnswerRequest):
        req = request.model_validate({"query": QUERY, "strategy": "window", "retrieval_strategy": "bm25"})
        assert (req.strategy, req.retrieval_strategy) == ("window", "bm25")


# ---------------------------------------------------------------------------------- assembly groups
def test_every_option_is_in_exactly_one_group() -> None:
    names = [name for group in AssemblyOptions.GROUPS for name in group.model_fields]
    assert sorted(names) == sorted(AssemblyOptions.model_fields)
    assert len(names) == len(set(names))
    for group in AssemblyOptions.GROUPS:
        assert issubclass(AssemblyOptions, group)


def test_flat_names_keep_working_and_group_validators_still_run() -> None:
    opts = AssemblyOptions(budget=900, window_before=3, packing="breadth", compress="extractive")
    assert (opts.budget, opts.window_before, opts.packing, opts.compress, opts.limit) == (
        900,
        3,
        "breadth",
        "extractive",
        900,
    )
    assert AssemblyOptions(context_window=5000, reserve_output=1000).limit == 4000
    assert BudgetOptions(budget=10).limit == 10
    for bad in (
        {"context_window": 100, "reserve_output": 100},
        {"score_threshold": 2.0},
        {"tokenizer": "no-such-tokenizer"},
        {"modality_slots": {"text": -1}},
        {"image_url_template": "/x"},
        {"window_before": -1},
        {"no_such_option": 1},
    ):
        with pytest.raises(ValidationError):
            AssemblyOptions(**bad)


def _default(info: Any) -> Any:
    return info.default_factory() if info.default_factory is not None else info.default


def test_every_assembly_option_is_a_context_request_field_with_its_default() -> None:
    """A field added to any group is accepted by /v1/context and /v1/answer with the same default (budget and
    tokenizer left unset take the server's)."""
    for name, info in AssemblyOptions.model_fields.items():
        assert name in ContextRequest.model_fields, name
        if name not in ("budget", "tokenizer"):
            assert _default(ContextRequest.model_fields[name]) == _default(info), name
            assert ContextRequest.model_fields[name].description == info.description, name
    assert set(ContextRequest.model_fields) == set(AssemblyOptions.model_fields) | RETRIEVAL_FIELDS


@pytest.mark.parametrize(
    "bad",
    [
        {"window_before": 51},
        {"window_before": -1},
        {"context_window": 10**8},
        {"context_window": 100, "reserve_output": 100},
        {"score_threshold": 2.0},
        {"sub_questions": ["q"] * 17},
        {"modality_slots": {"text": -1}},
        {"tokenizer": "no-such-tokenizer"},
        {"image_tokens": {"divisor": float("inf")}},
    ],
)
def test_context_request_bounds_every_group(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ContextRequest.model_validate({"query": QUERY, **bad})


def test_context_request_groups_are_not_frozen_and_copy_like_before() -> None:
    req = ContextRequest.model_validate({"query": QUERY, "budget": 800, "window_before": 4})
    assert req.model_fields_set == {"query", "budget", "window_before"}
    copy = req.model_copy(update={"budget": 700})
    assert (copy.budget, copy.window_before) == (700, 4)
    assert (
        ExpansionOptions.model_fields["window_before"].metadata
        == AssemblyOptions.model_fields["window_before"].metadata
    )  # the request's upper bound did not leak into the group


def test_config_docs_refuse_an_option_in_no_group() -> None:
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "gen_config_docs.py"
    spec = importlib.util.spec_from_file_location("gen_config_docs", script)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)

    class Loose(AssemblyOptions):
        new_option: bool = False

    assert any("BudgetOptions" in line for line in gen.assembly_groups(AssemblyOptions))
    with pytest.raises(SystemExit, match="new_option"):
        gen.assembly_groups(Loose)
    assert issubclass(Loose, BaseModel)


def test_a_misspelt_field_names_the_nearest_one(client: TestClient) -> None:
    """Issue 34, item 6: ``budgt`` said "Extra inputs are not permitted" without the field meant; nested bodies
    too, and a name near none gets no guess."""

    err = assert_error(client.post("/v1/context", json={"query": "x", "budgt": 500}), 422, "validation_error")
    assert err["message"] == "invalid request: body.budgt: unknown field; did you mean 'budget'?", err
    nested = {"answer": "x [S1].", "context_request": {"query": "x", "retreival_strategy": "bm25"}}
    err = assert_error(client.post("/v1/verify", json=nested), 422, "validation_error")
    assert err["message"].endswith("body.context_request.retreival_strategy: unknown field; did you mean "
                                   "'retrieval_strategy'?"), err
    err = assert_error(client.post("/v1/search", json={"query": "x", "zzzzzz": 1}), 422, "validation_error")
    assert err["message"] == "invalid request: body.zzzzzz: Extra inputs are not permitted", err
