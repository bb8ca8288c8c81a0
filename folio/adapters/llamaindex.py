"""LlamaIndex over folio (``pip install 'folio-context[llamaindex]'``): a retriever, folio's citation contract
as a QA template, a query engine that answers under it, and the citation check as an evaluator.

>>> from folio.adapters.llamaindex import FolioQueryEngine, FolioRetriever
>>> retriever = FolioRetriever("http://127.0.0.1:8000", budget=1500)          # doctest: +SKIP
>>> for hit in retriever.retrieve("How fast must a P1 incident be acknowledged?"):  # doctest: +SKIP
...     print(hit.node.metadata["citation_id"], hit.node.metadata["pages"], hit.score)
>>> response = FolioQueryEngine(retriever=retriever, llm=llm).query("...")     # doctest: +SKIP
>>> response.metadata["citation_check"].ok                                      # doctest: +SKIP

One ``NodeWithScore`` per packed item, in the package's order: a ``TextNode`` whose text is the
packed text, or for an item sent as an image (a scanned page, a figure) an ``ImageNode`` whose text
is the image's text (its OCR) and whose ``image_url`` is the PNG on the server. The node's id is the
region id, its score the item's retrieval score, and its metadata ``folio.adapters.item_metadata``
(citation id, region id, pages, bbox, version ...). The LLM sees the citation id, file and pages with
the text (``metadata_mode=LLM``); the rest is for code. ``retriever.last_package`` is the whole package
of the latest query (budget, manifest, exclusions, the rendered prompt).

LlamaIndex's default QA prompt tells the model never to reference the context; folio's answers cite
it. ``FolioQueryEngine`` sends the package's own prompt (the contract and the blocks, exactly as
budgeted) to the LLM and puts the check in ``response.metadata["citation_check"]``;
``citation_qa_template()`` is the contract for a ``RetrieverQueryEngine`` of your own, and
``CitationEvaluator`` the check as an evaluator.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.response.schema import Response
from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.llms import LLM, ChatMessage
from llama_index.core.prompts import PromptTemplate
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import ImageNode, NodeWithScore, QueryBundle, TextNode

from folio import models
from folio.adapters import (
    CITATION_CONTRACT,
    LLM_METADATA,
    afetch_package,
    averify,
    check_options,
    check_summary,
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
    ``strategy``, ``include_images`` ...), sent with every query; a misspelt or mistyped one raises
    ``folio.errors.InvalidRequest`` here."""

    def __init__(self, source: Any, **options: Any) -> None:
        super().__init__()
        self.options = check_options(options)
        self.source = resolve_source(source)
        self._last_package: models.ContextPackage | None = None

    @property
    def last_package(self) -> models.ContextPackage | None:
        """The package of the latest query (with concurrent queries: the last to finish)."""
        return self._last_package

    def nodes(self, package: models.ContextPackage) -> list[NodeWithScore]:
        self._last_package = package
        base_url = getattr(self.source, "base_url", None)
        nodes = []
        for item in package.items:
            metadata = item_metadata(item, base_url)
            fields: dict[str, Any] = {
                "id_": item.region_id,
                "text": item_text(item),
                "metadata": metadata,
                "excluded_llm_metadata_keys": [k for k in metadata if k not in LLM_METADATA],
                "excluded_embed_metadata_keys": list(metadata),
            }
            url = metadata["image_url"]
            if item.image_url:  # a page image or figure: its text for text pipelines, its PNG for multimodal ones
                absolute = url if isinstance(url, str) and url.startswith(("http://", "https://")) else None
                node: TextNode = ImageNode(**fields, image_url=absolute, image_mimetype="image/png")
            else:
                node = TextNode(**fields)
            nodes.append(NodeWithScore(node=node, score=item.score))
        return nodes

    def package(self, query: str) -> models.ContextPackage:
        return fetch_package(self.source, query, self.options, ("retrieve", "aretrieve"))

    async def apackage(self, query: str) -> models.ContextPackage:
        return await afetch_package(self.source, query, self.options)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.nodes(self.package(query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.nodes(await self.apackage(query_bundle.query_str))


def citation_qa_template() -> PromptTemplate:
    """folio's citation contract as a ``text_qa_template`` (``{context_str}``, ``{query_str}``), for
    ``RetrieverQueryEngine.from_args(retriever, text_qa_template=citation_qa_template())``. Nodes show
    their id as ``citation_id: S1``; the model cites it as ``[S1]``."""
    return PromptTemplate(
        CITATION_CONTRACT
        + "\nEach block below starts with its citation_id; cite it in square brackets, e.g. [S1].\n"
        + "CONTEXT\n{context_str}\nQUESTION\n{query_str}\n"
    )


def _chat(package: models.ContextPackage) -> list[ChatMessage]:
    return [ChatMessage(role=role, content=text) for role, text in prompt_messages(package)]


class FolioQueryEngine(CustomQueryEngine):
    """Retrieve with folio, answer from the package's own prompt with ``llm``, check the citations.
    ``response.metadata``: ``citation_check`` (``folio.models.VerifyReport``) and ``package``."""

    retriever: FolioRetriever
    llm: LLM

    def custom_query(self, query_str: str) -> Response:
        package = self.retriever.package(query_str)
        answer = str(self.llm.chat(_chat(package)).message.content or "")
        report = verify(self.retriever.source, answer, package)
        return self._response(answer, package, report)

    async def acustom_query(self, query_str: str) -> Response:
        package = await self.retriever.apackage(query_str)
        answer = str((await self.llm.achat(_chat(package))).message.content or "")
        report = await averify(self.retriever.source, answer, package)
        return self._response(answer, package, report)

    def _response(self, answer: str, package: models.ContextPackage, report: models.VerifyReport) -> Response:
        return Response(
            response=answer,
            source_nodes=self.retriever.nodes(package),
            metadata={"citation_check": report, "package": package},
        )


class CitationEvaluator(BaseEvaluator):
    """folio's citation check as a LlamaIndex evaluator: ``passing`` when every cited id was packed and
    every factual sentence cites one. Give the package (``package=``), or evaluate a
    ``FolioQueryEngine`` response (``evaluate_response``), which carries it."""

    def __init__(self, source: Any) -> None:
        self.source = resolve_source(source)

    def _get_prompts(self) -> dict[str, Any]:
        return {}

    def _update_prompts(self, prompts_dict: dict[str, Any]) -> None:
        pass

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Any = None,
        package: models.ContextPackage | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        if response is None or package is None:
            raise ValueError("CitationEvaluator needs the response text and the package it was answered from")
        report = await averify(self.source, response, package)
        return EvaluationResult(
            query=query, response=response, passing=report.ok, score=1.0 if report.ok else 0.0,
            feedback=check_summary(report),
        )

    def evaluate_response(
        self, query: str | None = None, response: Response | None = None, **kwargs: Any
    ) -> EvaluationResult:
        return super().evaluate_response(query, response, **_with_package(response, kwargs))

    async def aevaluate_response(
        self, query: str | None = None, response: Response | None = None, **kwargs: Any
    ) -> EvaluationResult:
        return await super().aevaluate_response(query, response, **_with_package(response, kwargs))


def _with_package(response: Response | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with ``package`` taken from a ``FolioQueryEngine`` response when not given."""
    if kwargs.get("package") is None and response is not None and response.metadata:
        kwargs = {**kwargs, "package": response.metadata.get("package")}
    return kwargs
