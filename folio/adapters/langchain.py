"""A LangChain retriever over folio (``pip install 'folio[langchain]'``).

>>> from folio.adapters.langchain import FolioRetriever
>>> retriever = FolioRetriever.from_source("http://127.0.0.1:8000", budget=1500)  # doctest: +SKIP
>>> for doc in retriever.invoke("How fast must a P1 incident be acknowledged?"):  # doctest: +SKIP
...     print(doc.metadata["citation_id"], doc.metadata["pages"], doc.page_content[:60])

One ``Document`` per packed item, in the package's order: ``page_content`` is the packed text (for
an image item, the image's text: a scanned page's OCR),
``id`` the region id, and ``metadata`` is ``folio.adapters.item_metadata`` (citation id, region id,
pages, bbox, version ...) plus the item's ``score``.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from folio import models
from folio.adapters import item_metadata, item_text, resolve_source


class FolioRetriever(BaseRetriever):
    """``source``: a ``folio.Client`` or ``AsyncClient``, or a ``folio.local.LocalFolio``
    (``from_source`` also takes a server URL or a data directory). ``options`` are
    ``POST /v1/context`` fields (``budget``, ``doc_ids``, ``strategy`` ...), sent with every query."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    source: Any
    options: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_source(cls, source: Any, **options: Any) -> FolioRetriever:
        return cls(source=resolve_source(source), options=options)

    def _documents(self, package: models.ContextPackage) -> list[Document]:
        base_url = getattr(self.source, "base_url", None)
        return [
            Document(
                id=item.region_id,
                page_content=item_text(item),
                metadata={**item_metadata(item, base_url), "score": item.score},
            )
            for item in package.items
        ]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        if inspect.iscoroutinefunction(self.source.context):
            raise TypeError("an AsyncClient retrieves with ainvoke(); use folio.Client for invoke()")
        return self._documents(self.source.context(query, **self.options))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if inspect.iscoroutinefunction(self.source.context):
            package = await self.source.context(query, **self.options)
        else:
            package = await asyncio.to_thread(self.source.context, query, **self.options)
        return self._documents(package)
