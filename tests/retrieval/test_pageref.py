"""Page references in the question ("page 2", "pp. 3-4") become a retrieval signal resolved through the
PDF's printed page labels, and the package records what was understood."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from folio.kernel.pageref import PageRef, parse_page_refs, resolve
from folio.retrieval.query import SearchQuery

TOPICS = ["boiler pressure", "valve torque", "pump flow", "filter cleaning", "fan speed", "belt tension"]


def _labelled_pdf() -> bytes:
    """Six pages: two front-matter pages (i, ii), then printed pages 1-4 on physical pages 3-6."""
    doc = pymupdf.open()
    for n, topic in enumerate(TOPICS, start=1):
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(60, 100, 535, 300),
                            f"This page covers {topic}. The {topic} must be checked every {n * 7} days "
                            f"by the operator on duty.", fontsize=11)
    doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
                         {"startpage": 2, "prefix": "", "style": "D", "firstpagenum": 1}])
    return bytes(doc.tobytes())


def test_parse_and_resolve() -> None:
    refs = parse_page_refs("Which figure is on page 2, and what do pp. 3-4 say?")
    assert [(r.first, r.last) for r in refs] == [(2, 2), (3, 4)]
    labels = ["i", "ii", "1", "2", "3", "4"]
    assert resolve(refs[:1], labels, 6) == [4, 2]  # printed page 2 first, then physical page 2
    assert resolve([PageRef("page 40", 40, 40)], labels, 6) == []
    assert parse_page_refs("pages 1-400 of the manual") == []  # a span, not a reference


@pytest.fixture(scope="module")
def labelled_store(tmp_path_factory: pytest.TempPathFactory) -> object:
    from folio.ingest.pipeline import ingest_bytes
    from folio.ingest.storage.store import Store

    store = Store(Path(tmp_path_factory.mktemp("pageref")))
    ingest_bytes(store, _labelled_pdf(), filename="labelled.pdf", doc_id="labelled", ocr=False)
    return store


def test_named_page_is_retrieved_and_recorded(labelled_store: object) -> None:
    from folio.api.service.context import version_filenames
    from folio.assembly import assemble
    from folio.assembly.options import AssemblyOptions
    from folio.retrieval.search import Retriever

    retriever = Retriever(labelled_store)  # type: ignore[arg-type]
    query = "What does page 2 say about checks?"
    hits = retriever.search(SearchQuery(query, doc_ids=["labelled"], k=10))
    ref_hits = [h for h in hits if any(s.retriever == "pageref" for s in h.sources)]
    assert ref_hits, "the named page must be among the hits"
    assert list(ref_hits[0].pages) == [4]  # printed "2" is the fourth physical page
    pkg = assemble(query, hits, retriever.source_for(hits), AssemblyOptions(budget=600),
                   filenames=version_filenames(labelled_store))  # type: ignore[arg-type]
    assert pkg.retrieval.page_refs and pkg.retrieval.page_refs[0].numbers == [2]
    assert pkg.retrieval.page_refs[0].pages == [2, 4]  # printed "2" (physical 4) and physical page 2
    assert any(4 in it.pages for it in pkg.items)
    assert "valve torque" in " ".join(it.text for it in pkg.items)

    # without a page reference the pageref list is not used
    plain = retriever.search(SearchQuery("What are the checks?", doc_ids=["labelled"], k=10))
    assert not any(s.retriever == "pageref" for h in plain for s in h.sources)


def test_pages_named_by_position() -> None:
    refs = parse_page_refs("What is on the title page, the second slide and the last page?")
    assert [(r.first, r.position) for r in refs] == [(1, "start"), (2, "start"), (1, "end")]
    labels = ["i", "ii", "1", "2", "3", "4"]
    # physical pages, whatever the labels say: the cover is page 1 (labelled "i"), the last is page 6
    assert resolve(refs, labels, 6) == [1, 2, 6]
    mixed = parse_page_refs("Was steht auf der letzten Seite? 首页的结论是什么？")
    assert [r.position for r in mixed] == ["end", "start"]
    # words that only look like positions are not references
    assert parse_page_refs("Does the warranty cover the first year of service?") == []


def test_last_page_is_retrieved_and_recorded(labelled_store: object) -> None:
    from folio.api.service.context import version_filenames
    from folio.assembly import assemble
    from folio.assembly.options import AssemblyOptions
    from folio.retrieval.search import Retriever

    retriever = Retriever(labelled_store)  # type: ignore[arg-type]
    query = "What does the last page say about checks?"
    hits = retriever.search(SearchQuery(query, doc_ids=["labelled"], k=10))
    ref_hits = [h for h in hits if any(s.retriever == "pageref" for s in h.sources)]
    assert ref_hits and list(ref_hits[0].pages) == [6]
    pkg = assemble(query, hits, retriever.source_for(hits), AssemblyOptions(budget=600),
                   filenames=version_filenames(labelled_store))  # type: ignore[arg-type]
    assert [(r.numbers, r.pages) for r in pkg.retrieval.page_refs] == [([], [6])]
    assert "belt tension" in " ".join(it.text for it in pkg.items)


def test_an_exact_page_reference_counts_double(labelled_store: object) -> None:
    """A reference that resolves to one page per named number (here "page 5": no printed "5", one
    physical page 5) weighs EXACT_REF_BOOST in fusion; "page 2" (printed 2 = physical 4, and physical 2)
    keeps the plain weight."""
    from folio.retrieval.channels.pageref import EXACT_REF_BOOST
    from folio.retrieval.search import Retriever

    retriever = Retriever(labelled_store)  # type: ignore[arg-type]

    def pageref_weight(query: str) -> tuple[list[int], float]:
        hits = retriever.search(SearchQuery(query, doc_ids=["labelled"], k=10))
        named = next(h for h in hits if any(s.retriever == "pageref" and s.rank == 1 for s in h.sources))
        weight = {"pagelex": retriever.channels["pagelex"].weight}  # the other lists weigh 1
        others = sum(weight.get(s.retriever, 1.0) / (retriever.rrf_k + s.rank) for s in named.sources
                     if s.retriever != "pageref")
        return list(named.pages), (named.score - others) * (retriever.rrf_k + 1)

    pages, weight = pageref_weight("What does page 5 say?")
    assert pages == [5] and abs(weight - EXACT_REF_BOOST) < 1e-6
    pages, weight = pageref_weight("What does page 2 say?")
    assert pages == [4] and abs(weight - 1.0) < 1e-6
