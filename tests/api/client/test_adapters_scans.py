"""A scanned page reaches text pipelines (issue 23, item 3). By default a scan that text retrievers
found goes as its OCR text. With ``scanned_pages="image"`` it is packed as a page image; the item also
carries the page's OCR text as ``alt_text`` (outside the prompt and the budget), the LangChain ``Document``
gets it as ``page_content``, and LlamaIndex gets an ``ImageNode`` with that text and the image's URL.
Real OCR (tesseract) of the sample scan, the released frameworks, LanceDB on disk, a live server on
loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

import folio
from folio.local import LocalFolio
from tests.api.conftest import live_server, make_settings

pytestmark = pytest.mark.slow

QUESTION = "How many tracks does the LinnSequencer record, and how many MIDI channels?"
OCR_WORDS = ("LinnSequencer", "polyphonic", "MIDI channels")


@pytest.fixture(scope="module")
def scan_data(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    data = tmp_path_factory.mktemp("scan-data")
    store = Store(data)
    ingest_path(store, samples / "linnsequencer-brochure-scan.pdf", ocr=True)
    ingest_path(store, samples / "support-policy-v1.pdf")
    return data


def _scan_item(pkg: folio.models.ContextPackage) -> folio.models.ContextItem:
    found = [i for i in pkg.items if i.doc_id.startswith("linnsequencer") and i.image_url]
    assert found, [(i.doc_id, i.expansion, i.image_url) for i in pkg.items]
    return found[0]


def test_image_item_carries_its_ocr_text_outside_the_budget(scan_data: Path) -> None:
    pkg = LocalFolio(scan_data).context(QUESTION, budget=3000, scanned_pages="image")
    item = _scan_item(pkg)
    assert item.expansion.startswith("page_image") and item.modality == "page"
    assert item.alt_text and all(w in item.alt_text for w in OCR_WORDS), item.alt_text
    assert not item.text.strip()  # the packed text is what the prompt carries: here only the image
    prompt = "\n".join(
        str(part.get("text", "")) if isinstance(part, dict) else str(part)
        for m in pkg.prompt.messages
        for part in (m["content"] if isinstance(m["content"], list) else [m["content"]])
    )
    assert "polyphonic" not in prompt  # alt_text is not sent, so it is not counted in budget.used
    assert pkg.budget.used <= 3000
    assert all(i.alt_text is None for i in pkg.items if not i.image_url)


def test_langchain_documents_get_the_scans_text(scan_data: Path) -> None:
    from folio.adapters.langchain import FolioRetriever

    docs = FolioRetriever.from_source(str(scan_data), budget=3000, scanned_pages="image").invoke(QUESTION)
    scans = [d for d in docs if d.metadata["doc_id"].startswith("linnsequencer")]
    assert scans and all(d.page_content.strip() for d in docs)
    assert all(w in scans[0].page_content for w in OCR_WORDS) and scans[0].metadata["image_url"]


def test_llamaindex_gets_an_image_node_with_text_and_url(scan_data: Path) -> None:
    from llama_index.core.schema import ImageNode, MetadataMode, TextNode

    from folio.adapters.llamaindex import FolioRetriever

    with live_server(make_settings(scan_data)) as base, folio.Client(base) as client:
        nodes = FolioRetriever(client, budget=3000, scanned_pages="image").retrieve(QUESTION)
        scans = [n.node for n in nodes if n.node.metadata["doc_id"].startswith("linnsequencer")]
        assert scans and isinstance(scans[0], ImageNode)
        assert all(w in scans[0].get_content() for w in OCR_WORDS)
        assert "citation_id" in scans[0].get_content(metadata_mode=MetadataMode.LLM)
        assert scans[0].image_url and scans[0].image_url.startswith(base) and scans[0].image_mimetype == "image/png"
        assert httpx.get(scans[0].image_url).content.startswith(b"\x89PNG")
        texts = [n.node for n in nodes if not n.node.metadata["image_url"]]
        assert all(type(n) is TextNode and n.get_content() for n in texts)


def test_by_default_a_scan_found_by_text_goes_as_its_ocr_text(scan_data: Path) -> None:
    pkg = LocalFolio(scan_data).context(QUESTION, budget=3000)
    scans = [i for i in pkg.items if i.doc_id.startswith("linnsequencer")]
    assert scans and all(i.image_url is None and i.alt_text is None for i in scans)
    assert all(w in scans[0].text for w in OCR_WORDS)


POLICY_QUESTION = "How fast must a priority-one incident be acknowledged?"


def test_the_adapters_carry_each_items_lines(scan_data: Path) -> None:
    """Issue 34, item 5: LlamaIndex and LangChain metadata carried the page box and no ``lines`` (they were only in
    ``retriever.last_package``); now each node and document has its item's lines, as REST gives them."""
    from folio.adapters.langchain import FolioRetriever as LangChainRetriever
    from folio.adapters.llamaindex import FolioRetriever as LlamaIndexRetriever

    chain = LangChainRetriever.from_source(str(scan_data), budget=1500)
    docs = chain.invoke(POLICY_QUESTION)
    assert chain.last_package is not None
    want = {i.citation_id: [ln.model_dump(mode="json") for ln in i.lines or []] for i in chain.last_package.items}
    assert any(want.values())
    assert {d.metadata["citation_id"]: d.metadata["lines"] for d in docs} == want
    index = LlamaIndexRetriever(LocalFolio(scan_data), budget=1500)
    nodes = index.retrieve(POLICY_QUESTION)
    assert {n.node.metadata["citation_id"]: n.node.metadata["lines"] for n in nodes} == want
    line = next(ln for lines in want.values() for ln in lines)
    assert set(line) == {"page", "bbox", "region_id"} and set(line["bbox"]) == {"x0", "y0", "x1", "y1"}


def test_mcp_get_context_takes_scanned_pages(scan_data: Path) -> None:
    """Issue 34, item 5: MCP ``get_context`` had no ``scanned_pages``, so a scan reached an agent only as OCR text.
    With ``"image"`` the scan is an image block, its citation says so and carries the OCR text as ``alt_text``."""
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def both(url: str) -> tuple[Any, Any]:
        transport = streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=240))
        async with Client(transport, read_timeout_seconds=240) as client:
            args = {"query": QUESTION, "budget": 3000}
            return (await client.call_tool("get_context", args),
                    await client.call_tool("get_context", {**args, "scanned_pages": "image"}))

    with live_server(make_settings(scan_data)) as base:
        as_text, as_image = asyncio.run(both(f"{base}/mcp"))
    assert not as_text.is_error and not as_image.is_error, (as_text.content, as_image.content)
    scans = [c for c in as_image.structured_content["citations"].values() if c["doc_id"].startswith("linnsequencer")]
    assert scans and scans[0]["image_url"] and all(w in scans[0]["alt_text"] for w in OCR_WORDS), scans
    assert any(c.type == "image" for c in as_image.content)
    text_scans = [c for c in as_text.structured_content["citations"].values()
                  if c["doc_id"].startswith("linnsequencer")]
    assert text_scans and all(c["image_url"] is None for c in text_scans)
