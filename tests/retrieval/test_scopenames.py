"""The document's own names in a question scoped to it (``channels.scopenames``): which words they are, and that
the dense list ranks the pages the question is about above the pages that only repeat the name."""

from __future__ import annotations

from pathlib import Path

from folio.retrieval.channels.scopenames import merge_ranked, name_terms, scope_names, without_words
from folio.retrieval.query import SearchQuery
from folio.retrieval.text import Candidate
from tests.retrieval.textpdf import text_pdf

# A filing in miniature: the issuer's name on the cover and on most pages (exhibit list, signatures, properties),
# and the one page the question is about, which does not name it.
PAGES = [
    "Zentrix Holdings Inc.\nAnnual Report on Form 10-K\nFiscal year 2022",
    "Zentrix Holdings Inc.\nExhibit 10.1 Amended By-laws of Zentrix Holdings Inc.\nExhibit 10.2 Zentrix Holdings "
    "Inc. Stock Plan\nExhibit 21 Subsidiaries of Zentrix Holdings Inc.",
    "Zentrix Holdings Inc.\nSignatures. Pursuant to the requirements of the Securities Exchange Act, Zentrix "
    "Holdings Inc. has duly caused this report to be signed.",
    "Item 3. Legal Proceedings\nWe are party to a variety of litigation, claims and regulatory proceedings. "
    "Management believes the final outcome will not have a material adverse effect on our financial condition.",
    "Zentrix Holdings Inc.\nItem 2. Properties\nOur principal office and plants are owned or leased.",
]
QUESTION = "Has Zentrix reported any materially important ongoing legal battles?"



def test_a_name_is_on_the_cover_and_on_many_pages() -> None:
    names = name_terms(PAGES)
    assert {"zentrix", "holding", "inc"} <= names  # plurals folded as in the page lexicon
    assert "legal" not in names and "annual" not in names  # not on the cover / on the cover only
    assert scope_names(QUESTION, names) == ["Zentrix"]
    assert without_words(QUESTION, ["Zentrix"]) == "Has reported any materially important ongoing legal battles?"
    # written as a name only: a capital that starts a sentence, or a word in lower case, is not one
    assert scope_names("Zentrix revenue? Holdings grew; what did zentrix earn?", names) == []
    assert scope_names("What are Legal's duties?", names) == []  # on the cover? no: not a name of this document


def test_merging_keeps_what_either_ranking_finds_near_the_top() -> None:
    def cands(ids: str) -> list[Candidate]:
        return [Candidate(f"r{c}", "d", "v", "sentence", 1, 1.0) for c in ids]

    merged = [c.region_id for c in merge_ranked(cands("abc"), cands("dab"), 60, 10)]
    assert merged == ["ra", "rb", "rd", "rc"]  # a and b in both; d first of one list beats c, last of the other
    assert len(merge_ranked(cands("abc"), cands("def"), 60, 2)) == 2


def test_the_page_the_question_is_about_ranks_above_the_pages_that_repeat_the_name(tmp_path: Path) -> None:
    from folio.ingest.pipeline import ingest_bytes
    from folio.ingest.storage.store import Store
    from folio.retrieval.channels.base import ChannelQuery
    from folio.retrieval.search import Retriever

    store = Store(tmp_path / "data")
    ingest_bytes(store, text_pdf(PAGES), filename="zentrix.pdf", doc_id="zentrix")
    ingest_bytes(store, text_pdf(["Other Corp annual report", "Other Corp legal matters"]), filename="other.pdf",
                 doc_id="other")

    def dense_pages(retriever: Retriever, doc_ids: list[str]) -> list[int]:
        scope = retriever.search_detailed(SearchQuery(QUESTION, doc_ids=doc_ids, k=20)).scope
        return [c.page for c in retriever.channels["dense"].search(ChannelQuery(QUESTION, scope, 20)).candidates]

    named, asked = dense_pages(Retriever(store), ["zentrix"]), dense_pages(Retriever(store, scope_names=False),
                                                                          ["zentrix"])
    assert 4 in named[:5] and 4 not in asked[:5]  # the legal proceedings page, behind the name's lines before
    # across two documents the name tells them apart: the question is searched as asked
    both = Retriever(store)
    assert dense_pages(both, ["zentrix", "other"]) == dense_pages(Retriever(store, scope_names=False),
                                                                  ["zentrix", "other"])
