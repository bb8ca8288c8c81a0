"""Retrievers for LlamaIndex and LangChain over folio's context packages.

``folio.adapters.llamaindex.FolioRetriever`` (``pip install 'folio[llamaindex]'``) returns one
``NodeWithScore`` per packed item, ``folio.adapters.langchain.FolioRetriever``
(``pip install 'folio[langchain]'``) one ``Document``. Both carry the same metadata
(``item_metadata``): citation id, region id, document, version, file, pages, bbox and locators,
modality, expansion, tokens. The text is the packed text (the section, window, table or page that
went into the package), in the package's order, under its budget; an item sent as an image (a scanned
page, a figure) carries the image's text instead (``item_text``: its OCR), so a text-only pipeline
does not get an empty document, and LlamaIndex gets an ``ImageNode`` with the image's URL too.

Either talks to a folio server (a ``folio.Client`` / ``folio.AsyncClient``, or a URL) or runs
in-process (a ``folio.local.LocalFolio``, or a data directory).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

from folio import models


class ContextSource(Protocol):
    """Anything with folio's ``context`` call: ``folio.Client`` or ``folio.local.LocalFolio``."""

    def context(self, query: str, **options: Any) -> models.ContextPackage: ...


def resolve_source(source: Any) -> Any:
    """A client or ``LocalFolio`` as given; a URL becomes a ``folio.Client``; a path, a ``LocalFolio``."""
    if hasattr(source, "context"):
        return source
    if isinstance(source, str) and source.startswith(("http://", "https://")):
        from folio.client import Client

        return Client(source)
    if isinstance(source, str | os.PathLike):
        from folio.local import LocalFolio

        return LocalFolio(Path(source))
    raise TypeError(f"expected a folio.Client, AsyncClient, LocalFolio, URL or data directory, got {source!r}")


def item_metadata(item: models.ContextItem, base_url: str | None = None) -> dict[str, Any]:
    """The metadata both adapters attach to a packed item. ``bbox`` is the first locator's box
    (PDF points, origin top-left of the page); ``locators`` has every page's box."""
    locators = [loc.model_dump(mode="json") for loc in item.locators]
    image_url = item.image_url
    if image_url and base_url and image_url.startswith("/"):
        image_url = base_url.rstrip("/") + image_url
    return {
        "citation_id": item.citation_id,
        "region_id": item.region_id,
        "region_ids": list(item.region_ids),
        "doc_id": item.doc_id,
        "version_id": item.version_id,
        "filename": item.filename,
        "pages": list(item.pages),
        "bbox": locators[0]["bbox"] if locators else None,
        "locators": locators,
        "modality": item.modality,
        "expansion": item.expansion,
        "section": item.section,
        "tokens": item.tokens,
        "status": item.status,
        "image_url": image_url,
    }


def item_text(item: models.ContextItem) -> str:
    """The text a text pipeline gets for a packed item: its packed text, except for an item sent as an
    image (a page image, a figure), whose text is what the image shows (``alt_text``: a scanned page's
    OCR, a figure's text) when there is any. ``tokens`` still counts what the package sent."""
    if item.image_url and item.alt_text:
        return item.alt_text
    return item.text


# Shown to the LLM with a node's text (the rest is for code): what it needs to cite.
LLM_METADATA = ("citation_id", "filename", "pages")
