"""A LlamaIndex retriever over folio (``pip install 'folio[llamaindex]'``).

>>> from folio.adapters.llamaindex import FolioRetriever
>>> retriever = FolioRetriever("http://127.0.0.1:8000", budget=1500)          # doctest: +SKIP
>>> for hit in retriever.retrieve("How fast must a P1 incident be acknowledged?"):  # doctest: +SKIP
...     print(hit.node.metadata["citation_id"], hit.node.metadata["pages"], hit.score)

One ``NodeWithScore`` per packed item, in the package's order: a ``TextNode`` whose text is the
packed text, or for an item sent as an image (a scanned page, a figure) an ``ImageNode`` whose text
is the image's text (its OCR) and whose ``image_url`` is the PNG on the server. The node's id is the
region id, its score the item's retrieval score, and its metadata
``folio.adapters.item_metadata`` (citation id, region id, pages, bbox, version ...). The LLM sees the
citation id, file and pages with the text (``metadata_mode=LLM``); the rest is for code.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import ImageNode, NodeWithScore, QueryBundle, TextNode

from folio import models
from folio.adapters import LLM_METADATA, item_metadata, item_text, resolve_source


class FolioRetriever(BaseRetriever):
    """``source``: a ``folio.Client`` or ``AsyncClient``, a ``folio.local.LocalFolio``, a server URL
    or a data directory. ``options`` are ``POST /v1/context`` fields (``budget``, ``doc_ids``,
    ``strategy``, ``include_images`` ...), sent with every query."""

    def __init__(self, source: Any, **options: Any) -> None:
        super().__init__()
        self.source = resolve_source(source)
        self.options = options

    def _nodes(self, package: models.ContextPackage) -> list[NodeWithScore]:
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

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if inspect.iscoroutinefunction(self.source.context):
            raise TypeError("an AsyncClient retrieves with aretrieve(); use folio.Client for retrieve()")
        return self._nodes(self.source.context(query_bundle.query_str, **self.options))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if inspect.iscoroutinefunction(self.source.context):
            package = await self.source.context(query_bundle.query_str, **self.options)
        else:
            package = await asyncio.to_thread(self.source.context, query_bundle.query_str, **self.options)
        return self._nodes(package)
