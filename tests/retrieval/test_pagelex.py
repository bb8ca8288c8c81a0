"""The whole-page lexical channel (``retrieval.channels.pagelex``): BM25 over page text, fused as one more list."""

from __future__ import annotations

from typing import Any

from folio.assembly.expansion.expander import visual_hit
from folio.kernel.scope import Scope
from folio.retrieval.channels.pagelex import PageLexicon
from folio.retrieval.channels.pagewords import page_terms, page_tokens
from folio.retrieval.query import SearchQuery
from folio.retrieval.search import text_retrievers


def test_a_page_with_the_questions_words_spread_over_it_outranks_a_page_repeating_one() -> None:
    lex = PageLexicon.build(
        ["d@v:p1:page1", "d@v:p2:page1", "d@v:p3:page1"],
        [1, 2, 3],
        ["pump pump pump pump pump overview", "Filter interval\nthe pump filter is changed at each interval",
         "wiring diagram"],
    )
    scores = lex.scores(page_tokens("What is the pump filter interval?"))
    assert scores[1] > scores[0] > 0 and scores[2] == 0


def test_singular_and_plural_words_match_across_query_and_page() -> None:
    # a question about "the fixed asset turnover" reaches the balance sheet, which only says "assets"
    texts = ["CONSOLIDATED BALANCE SHEETS\nTotal current assets 7,292\nIntangible assets, net 531\nTotal assets 19,845",
             "Our business\nWe sell games and services to players", "Risk factors\nMarkets and companies change"]
    lex = PageLexicon.build(["d@v:p1:page1", "d@v:p2:page1", "d@v:p3:page1"], [1, 2, 3], texts)
    assert int(lex.scores(page_terms("fixed asset turnover")).argmax()) == 0
    assert lex.scores(page_terms("which company"))[2] > 0  # "companies" folds to "company"
    assert "assets" in page_tokens(texts[0]) and "assets" not in page_terms(texts[0])  # the peer's tokens stay


def test_pages_are_ranked_in_scope_and_sent_as_text(retriever: Any, versions: dict[str, str]) -> None:
    res = retriever.search_detailed(SearchQuery("priority one incident acknowledged", doc_ids=["support-policy"], k=20))
    assert "pagelex" in res.retrievers
    found = [h for h in res.hits if any(s.retriever == "pagelex" for s in h.sources)]
    assert found and all(h.kind == "page" and h.version_id == versions["v2"] for h in found)
    # a page that only the page-text list found is text evidence, not an image
    lexical = found[0].model_copy(update={"sources": tuple(s for s in found[0].sources if s.retriever == "pagelex")})
    assert lexical.sources and not visual_hit(lexical, text_retrievers())  # pagelex is a text channel
    pagelex = retriever.channels["pagelex"].pagelex
    versions = res.scope.versions
    assert pagelex.search("priority one incident", Scope(versions, pages=frozenset({99})), 10, versions) == []
    assert pagelex.search("priority one incident", Scope(versions, kinds=frozenset({"sentence"})), 10, versions) == []

def test_the_channel_can_be_turned_off(visual_store: Any) -> None:
    from folio.retrieval.search import Retriever

    res = Retriever(visual_store, page_lex_weight=0).search_detailed(SearchQuery("priority one incident", k=10))
    assert "pagelex" not in res.retrievers
