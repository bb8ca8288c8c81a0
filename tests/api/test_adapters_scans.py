"""A scanned page reaches text pipelines (issue 23, item 3). By default a scan that text retrievers
found goes as its OCR text. With ``scanned_pages="image"`` it is packed as a page image; the item also
carries the page's OCR text as ``alt_text`` (outside the prompt and the budget), the LangChain ``Document``
gets it as ``page_content``, and LlamaIndex gets an ``ImageNode`` with that text and the image's URL.
Real OCR (tesseract) of the sample scan, the released frameworks, LanceDB on disk, a live server on
loopback."""

from __future__ import annotations

from pathlib import Path

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
    from folio.ingest.store import Store

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
