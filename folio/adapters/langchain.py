"""LangChain over folio (``pip install 'folio-context[langchain]'``): a retriever, folio's citation contract as
a prompt, a cited-answer chain and a citation check, as Runnables.

>>> from folio.adapters.langchain import FolioRetriever, citation_chain
>>> retriever = FolioRetriever(source="http://127.0.0.1:8000", options={"budget": 1500})  # doctest: +SKIP
>>> for doc in retriever.invoke("How fast must a P1 incident be acknowledged?"):  # doctest: +SKIP
...     print(doc.metadata["citation_id"], doc.metadata["pages"], doc.page_content[:60])
>>> out = citation_chain(retriever, llm).invoke("How fast must a P1 incident be acknowledged?")  # doctest: +SKIP
>>> out["answer"], out["check"].ok                                                 # doctest: +SKIP

One ``Document`` per packed item, in the package's order: ``page_content`` is the packed text (for
an image item, the image's text: a scanned page's OCR), ``id`` the region id, and ``metadata`` is
``folio.adapters.item_metadata`` (citation id, region id, pages, bbox, version ...) plus the item's
``score``. ``retriever.last_package`` is the whole package of the latest query (budget, manifest,
exclusions, the rendered prompt). ``citation_chain`` sends the package's own prompt (the contract and
the blocks, exactly as budgeted) to a chat model and checks the answer's citations;
``citation_prompt``/``format_documents`` carry the contract into a chain of your own, and
``citation_check`` is the check as a Runnable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import ConfigDict, Field, PrivateAttr

from folio import models
from folio.adapters import (
    CITATION_CONTRACT,
    afetch_package,
    averify,
    check_options,
    fetch_package,
    item_metadata,
    item_text,
    prompt_messages,
    resolve_source,
    verify,
)


class FolioRetriever(BaseRetriever):
    """``source``: a ``folio.Client`` or ``AsyncClient``, a ``folio.local.LocalFolio``, a server URL
    or a data directory. ``options`` are ``POST /v1/context`` fields (``budget``, ``doc_ids``,
    ``strategy`` ...), sent with every query and checked here: a misspelt one raises
    ``folio.errors.InvalidRequest``, an unknown argument ``TypeError``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    source: Any
    options: dict[str, Any] = Field(default_factory=dict)
    _last_package: models.ContextPackage | None = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        unknown = sorted(set(data) - set(type(self).model_fields))
        if unknown:
            raise TypeError(
                f"FolioRetriever got unknown argument(s) {', '.join(unknown)}: context options go in "
                "options={...}, e.g. FolioRetriever(source=url, options={'budget': 1500}), or use "
                "FolioRetriever.from_source(url, budget=1500)"
            )
        if "source" in data:
            data["source"] = resolve_source(data["source"])
        check_options(dict(data.get("options") or {}))
        super().__init__(**data)

    @classmethod
    def from_source(cls, source: Any, **options: Any) -> FolioRetriever:
        return cls(source=source, options=options)

    @property
    def last_package(self) -> models.ContextPackage | None:
        """The package of the latest query (with concurrent queries: the last to finish), to check an
        answer against without retrieving again."""
        return self._last_package

    def _documents(self, package: models.ContextPackage) -> list[Document]:
        self._last_package = package
        base_url = getattr(self.source, "base_url", None)
        return [
            Document(
                id=item.region_id,
                page_content=item_text(item),
                metadata={**item_metadata(item, base_url), "score": item.score},
            )
            for item in package.items
        ]

    def package(self, query: str) -> models.ContextPackage:
        """The package for ``query`` (what ``invoke`` turns into documents)."""
        return fetch_package(self.source, query, self.options, ("invoke", "ainvoke"))

    async def apackage(self, query: str) -> models.ContextPackage:
        return await afetch_package(self.source, query, self.options)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return self._documents(self.package(query))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        return self._documents(await self.apackage(query))


def citation_prompt() -> ChatPromptTemplate:
    """folio's citation contract as a chat prompt over ``{context}`` (``format_documents``) and
    ``{question}``: for chains that build their own prompt."""
    return ChatPromptTemplate.from_messages(
        [("system", CITATION_CONTRACT), ("human", "CONTEXT\n{context}\nQUESTION\n{question}")]
    )


def format_documents(docs: Sequence[Document]) -> str:
    """Documents as folio's compact blocks: ``[S1] file.pdf p.3`` (``| section``), the text, a blank line."""
    blocks = []
    for doc in docs:
        meta = doc.metadata
        pages = ",".join(str(p) for p in meta.get("pages") or [])
        head = f"[{meta.get('citation_id')}] {meta.get('filename')} p.{pages}"
        if meta.get("section"):
            head += f" | {meta['section']}"
        blocks.append(f"{head}\n{doc.page_content}\n")
    return "\n".join(blocks)


def citation_check(source: Any) -> Runnable[dict[str, Any], models.VerifyReport]:
    """folio's citation check as a Runnable: ``{"answer": str, "package": ContextPackage}`` → the
    ``VerifyReport`` (``ok``, ``kept_ids``, ``invented_ids``, ``uncited_sentences``). ``source`` is
    the retriever's (a client checks on the server, ``LocalFolio`` here)."""
    checker = resolve_source(source)

    def check(inputs: dict[str, Any]) -> models.VerifyReport:
        return verify(checker, str(inputs["answer"]), inputs["package"])

    async def acheck(inputs: dict[str, Any]) -> models.VerifyReport:
        return await averify(checker, str(inputs["answer"]), inputs["package"])

    return RunnableLambda(check, afunc=acheck, name="folio_citation_check")


def citation_chain(retriever: FolioRetriever, llm: Runnable[Any, Any]) -> Runnable[str, dict[str, Any]]:
    """question → ``{"answer", "check", "package", "documents"}``: folio packs the evidence, the chat
    model answers from the package's own prompt (contract and blocks as budgeted), and the answer's
    citations are checked (``check.ok``). Concurrent calls are independent (no shared state)."""
    answer = llm | StrOutputParser()
    check = citation_check(retriever.source)

    def run(question: str) -> dict[str, Any]:
        package = retriever.package(question)
        text = answer.invoke(prompt_messages(package))
        documents = retriever._documents(package)
        return {"answer": text, "check": check.invoke({"answer": text, "package": package}),
                "package": package, "documents": documents}

    async def arun(question: str) -> dict[str, Any]:
        package = await retriever.apackage(question)
        text = await answer.ainvoke(prompt_messages(package))
        documents = retriever._documents(package)
        return {"answer": text, "check": await check.ainvoke({"answer": text, "package": package}),
                "package": package, "documents": documents}

    return RunnableLambda(run, afunc=arun, name="folio_citation_chain")
