"""Retrievers for LlamaIndex and LangChain over folio's context packages.

``folio.adapters.llamaindex.FolioRetriever`` (``pip install 'folio-context[llamaindex]'``) returns one
``NodeWithScore`` per packed item, ``folio.adapters.langchain.FolioRetriever``
(``pip install 'folio-context[langchain]'``) one ``Document``. Both carry the same metadata
(``item_metadata``): citation id, region id, document, version, file, pages, bbox and locators, the
lines that made the item relevant, modality, expansion, tokens, the image URL and text of an image item.
The text is the packed text (the section, window, table or page that went into the package), in the
package's order, under its budget; an item sent as an image (a scanned
page, a figure) carries the image's text instead (``item_text``: its OCR), so a text-only pipeline
does not get an empty document, and LlamaIndex gets an ``ImageNode`` with the image's URL too.

Either talks to a folio server (a ``folio.Client`` / ``folio.AsyncClient``, or a URL) or runs
in-process (a ``folio.local.LocalFolio``, or a data directory).
"""

from __future__ import annotations

import asyncio
import inspect
import os
from pathlib import Path
from typing import Any, Protocol

from folio import models


class ContextSource(Protocol):
    """Anything with folio's ``context`` call: ``folio.Client`` or ``folio.local.LocalFolio``."""

    def context(self, query: str, **options: Any) -> models.ContextPackage: ...


# folio's citation contract (``assembly.prompt.CITATION_CONTRACT``, which a test keeps equal), for
# prompts written in a framework's own template language.
CITATION_CONTRACT = """\
Answer only from the CONTEXT blocks; each starts with its id, e.g. [S1] (T: table, F: figure, P: page).
Cite every factual sentence with the id(s) supporting it, e.g. "The limit is 5 A [S2]." Never invent ids.
No outside knowledge; an image supports only what it shows.
If CONTEXT is insufficient, reply "Insufficient evidence." and ask one clarifying question."""


def fetch_package(
    source: ContextSource, query: str, options: dict[str, Any], calls: tuple[str, str]
) -> models.ContextPackage:
    """``source.context(query, **options)`` from synchronous code; an async source is a ``TypeError`` naming
    the framework's ``(sync, async)`` calls."""
    if inspect.iscoroutinefunction(source.context):
        raise TypeError(f"an AsyncClient retrieves with {calls[1]}(); use folio.Client for {calls[0]}()")
    return source.context(query, **options)


async def afetch_package(source: ContextSource, query: str, options: dict[str, Any]) -> models.ContextPackage:
    """``source.context(query, **options)`` from async code: awaited for an async source, else in a thread."""
    if inspect.iscoroutinefunction(source.context):
        package: models.ContextPackage = await source.context(query, **options)
        return package
    return await asyncio.to_thread(source.context, query, **options)


def check_options(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` as given when each is a ``POST /v1/context`` field of the right type; else
    ``folio.errors.InvalidRequest`` naming the culprit (so a retriever fails when it is built, not at
    its first query)."""
    from folio.client.calls import request_body  # function-level: httpx loads only when a retriever is built

    request_body(models.ContextRequest, "options check", options)
    return options


def prompt_messages(package: models.ContextPackage) -> list[tuple[str, str]]:
    """The package's own prompt (the contract, the budgeted blocks, the question) as ``(role, text)``
    chat messages for a framework's LLM. An image part becomes its item's text (``alt_text``) when the
    package has it, else a note with its URL: these messages are text only."""
    alt = {item.image_url: item.alt_text for item in package.items if item.image_url}
    out: list[tuple[str, str]] = []
    if package.prompt.system:
        out.append(("system", package.prompt.system))
    for message in package.prompt.messages:
        content = message["content"]
        parts: list[dict[str, Any]] = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts = []
        for part in parts:
            if part.get("type") == "text":
                texts.append(str(part["text"]))
                continue
            where: dict[str, Any] = part.get("image_url") or part.get("source") or {}
            url = str(where.get("url"))
            texts.append(f"(image: {alt.get(url) or url})")
        out.append((str(message["role"]), "".join(texts)))
    return out


def verify(source: Any, answer: str, package: models.ContextPackage) -> models.VerifyReport:
    """folio's citation check of ``answer`` against ``package``: by the server for a ``folio.Client``,
    in-process for a ``LocalFolio``."""
    report: models.VerifyReport = source.verify(answer, package=package)
    return report


async def averify(source: Any, answer: str, package: models.ContextPackage) -> models.VerifyReport:
    import asyncio
    import inspect

    if inspect.iscoroutinefunction(source.verify):
        report: models.VerifyReport = await source.verify(answer, package=package)
        return report
    return await asyncio.to_thread(verify, source, answer, package)


def check_summary(report: models.VerifyReport) -> str:
    """One line for a report: ok, or what failed."""
    if report.ok:
        return "citations ok: " + (", ".join(report.kept_ids) or "none")
    problems = []
    if report.invented_ids:
        problems.append("invented ids " + ", ".join(report.invented_ids))
    if report.uncited_sentences:
        problems.append(f"{len(report.uncited_sentences)} uncited sentence(s)")
    return "citation check failed: " + ("; ".join(problems) or "see the report")


def resolve_source(source: Any) -> Any:
    """A client or ``LocalFolio`` as given; a URL becomes a ``folio.Client``; a path, a ``LocalFolio``."""
    if hasattr(source, "context"):
        return source
    if isinstance(source, str) and source.startswith(("http://", "https://")):
        # function-level: each source kind loads only its own side
        from folio.client import Client

        return Client(source)
    if isinstance(source, str | os.PathLike):
        # function-level: the in-process service (torch, LanceDB) only for a path
        from folio.local import LocalFolio

        return LocalFolio(Path(source))
    raise TypeError(f"expected a folio.Client, AsyncClient, LocalFolio, URL or data directory, got {source!r}")


def item_metadata(item: models.ContextItem, base_url: str | None = None) -> dict[str, Any]:
    """The metadata both adapters attach to a packed item, as ``POST /v1/context`` gives the item. ``bbox`` is
    the first locator's box (PDF points, origin top-left of the page; a page item's is the whole page) and
    ``locators`` has every page's box; ``lines`` are the line boxes of what made the item relevant
    (``{page, bbox, region_id}``: what to highlight, since a page item's box is the whole page). ``image_url``
    is set when the item went to the model as an image (a figure, a page image, a scan with
    ``scanned_pages="image"``), and ``alt_text`` is then the image's text (a scan's OCR)."""
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
        "lines": [line.model_dump(mode="json") for line in item.lines or []],
        "image_url": image_url,
        "alt_text": item.alt_text,
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
