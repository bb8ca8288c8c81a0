"""The framework adapters carry folio's contract (issue 23, item 5), against the released
llama-index-core and langchain-core and a live folio server on loopback: a retriever built from a URL,
its options checked when it is built, the last package exposed, prompts and engines/chains that carry
the citation contract, and the citation check in each framework's style.

The chat model is a deterministic stand-in (no model runs here): it reads the prompt it is given,
requires folio's contract in it, and cites the block that holds the answer (or an invented id)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import folio
from folio import errors
from tests.api.conftest import live_server, make_settings

pytestmark = pytest.mark.slow

QUESTION = "How fast must a priority-one incident be acknowledged?"
OPTIONS: dict[str, Any] = {"budget": 900, "doc_ids": ["support-policy"]}


def stand_in_answer(prompt: str, invent: bool = False) -> str:
    """What a model following the contract would write: the answer, citing the block that has it."""
    from folio.adapters import CITATION_CONTRACT

    assert CITATION_CONTRACT in prompt, prompt[:500]
    blocks = re.split(r"\n(?=\[[A-Z]\d+\] )", prompt)
    cid = next(re.match(r"\[([A-Z]\d+)\]", b).group(1) for b in blocks if re.match(r"\[[A-Z]\d+\] ", b)  # type: ignore[union-attr]
               and "30 minutes" in b)
    return f"A priority-one incident is acknowledged within 30 minutes [{'S99' if invent else cid}]."


@pytest.fixture(scope="module")
def url(api_master: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import shutil

    data = tmp_path_factory.mktemp("adapters") / "data"
    shutil.copytree(api_master, data)
    with live_server(make_settings(data)) as base:
        yield base


def test_contract_is_folios() -> None:
    from folio.adapters import CITATION_CONTRACT as carried
    from folio.assembly.prompt import CITATION_CONTRACT

    assert carried == CITATION_CONTRACT


def test_retrievers_are_checked_when_built(url: str) -> None:
    from folio.adapters import langchain as lc
    from folio.adapters import llamaindex as li

    built = lc.FolioRetriever(source=url, options=OPTIONS)  # a URL, not only from_source
    assert isinstance(built.source, folio.Client) and built.source.base_url == url
    with pytest.raises(TypeError, match="options="):
        lc.FolioRetriever(source=url, budget=900)
    with pytest.raises(errors.InvalidRequest, match="budgte"):
        lc.FolioRetriever(source=url, options={"budgte": 900})
    with pytest.raises(errors.InvalidRequest, match="budgte"):
        lc.FolioRetriever.from_source(url, budgte=900)
    with pytest.raises(errors.InvalidRequest, match="strategy"):
        li.FolioRetriever(url, strategy="everything")
    docs = built.invoke(QUESTION)
    pkg = built.last_package
    assert pkg is not None and [d.metadata["citation_id"] for d in docs] == [i.citation_id for i in pkg.items]
    assert 0 < pkg.budget.used <= 900 and pkg.manifest


def test_langchain_chain_prompt_and_check(url: str) -> None:
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import RunnableLambda

    from folio.adapters.langchain import (
        FolioRetriever,
        citation_chain,
        citation_check,
        citation_prompt,
        format_documents,
    )

    seen: list[Any] = []

    def model(messages: list[tuple[str, str]]) -> AIMessage:  # the stand-in chat model
        seen.append(messages)
        return AIMessage(stand_in_answer("\n".join(text for _, text in messages)))

    retriever = FolioRetriever(source=url, options=OPTIONS)
    out = citation_chain(retriever, RunnableLambda(model)).invoke(QUESTION)
    assert out["check"].ok and out["check"].kept_ids and "30 minutes" in out["answer"]
    assert [d.metadata["citation_id"] for d in out["documents"]] == [i.citation_id for i in out["package"].items]
    assert seen[0][0] == ("system", out["package"].prompt.messages[0]["content"])  # the package's own prompt

    both = asyncio.run(citation_chain(retriever, RunnableLambda(model)).abatch([QUESTION, QUESTION]))
    assert all(o["check"].ok for o in both)

    invented = stand_in_answer("\n".join(t for _, t in seen[0]), invent=True)
    report = citation_check(retriever.source).invoke({"answer": invented, "package": out["package"]})
    assert not report.ok and report.invented_ids == ["S99"]

    docs = retriever.invoke(QUESTION)
    messages = citation_prompt().invoke({"context": format_documents(docs), "question": QUESTION}).to_messages()
    prompt = "\n".join(str(m.content) for m in messages)
    check = citation_check(retriever.source)
    own = check.invoke({"answer": stand_in_answer(prompt), "package": retriever.last_package})
    assert own.ok  # the contract and the ids reach a chain built from citation_prompt + format_documents
    assert all(f"[{d.metadata['citation_id']}] {d.metadata['filename']} p." in prompt for d in docs)


def test_llamaindex_query_engine_template_and_evaluator(url: str) -> None:
    from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
    from llama_index.core.llms import CustomLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from folio.adapters.llamaindex import CitationEvaluator, FolioQueryEngine, FolioRetriever, citation_qa_template

    class StandIn(CustomLLM):  # the stand-in model, as a LlamaIndex LLM
        invent: bool = False

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(is_chat_model=False)

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            # LlamaIndex's own synthesis shows a node's id as "citation_id: S1" (citation_qa_template says so)
            blocks = re.sub(r"citation_id: ([A-Z]\d+)", r"\n[\1] ", prompt)
            return CompletionResponse(text=stand_in_answer(blocks, self.invent))

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            yield self.complete(prompt)

    retriever = FolioRetriever(url, **OPTIONS)
    response = FolioQueryEngine(retriever=retriever, llm=StandIn()).query(QUESTION)
    report = response.metadata["citation_check"]
    assert report.ok and "30 minutes" in str(response)
    package = response.metadata["package"]
    assert [n.node.metadata["citation_id"] for n in response.source_nodes] == [i.citation_id for i in package.items]
    assert package.budget.used <= 900

    evaluator = CitationEvaluator(retriever.source)
    assert evaluator.evaluate_response(query=QUESTION, response=response).passing is True
    bad = FolioQueryEngine(retriever=retriever, llm=StandIn(invent=True)).query(QUESTION)
    verdict = evaluator.evaluate_response(query=QUESTION, response=bad)
    assert verdict.passing is False and "invented ids S99" in (verdict.feedback or "")
    assert retriever.last_package is not None and retriever.last_package.query == QUESTION

    # The contract as LlamaIndex's own QA template, in its own engine (compact synthesis over the nodes)
    engine = RetrieverQueryEngine.from_args(retriever, llm=StandIn(), text_qa_template=citation_qa_template())
    own = engine.query(QUESTION)
    assert evaluator.evaluate(response=str(own), package=retriever.last_package).passing is True
