"""Financial metrics named in a question reach the statement lines they are read from (``routing.glossary``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.retrieval.query import SearchQuery
from folio.retrieval.routing.glossary import GLOSSARY, expand, statements_for
from tests.retrieval.textpdf import text_pdf

# The cash flow statement never says "capital expenditure"; the narrative pages say "capital" and
# "expenditure" in other senses, so the question's own words point away from the statement.
PAGES = [
    "Our capital allocation strategy returns capital to shareholders. Research expenditure grew with the "
    "amount of new products; the amount we spend on research is a priority.",
    "Consolidated Statement of Cash Flows (Millions) 2018 2017\n"
    "Net cash provided by operating activities 6,439 6,240\n"
    "Purchases of property, plant and equipment (1,577) (1,373)\n"
    "Net cash used in investing activities (222) (3,086)",
    "Risk factors. Markets change and our amount of business may vary from year to year.",
]
QUESTION = "What is the FY2018 capital expenditure amount?"



def test_names_match_whole_words_and_abbreviations_only_in_capitals() -> None:
    assert "purchases of property plant and equipment" in expand(QUESTION)
    assert expand("what was CAPEX in 2020?") == expand("capital expenditures in 2020")
    assert expand("the 3 year average of capex") == expand("CapEx") != ""  # capex is no other word
    assert "inventories" in expand("What is the inventory turnover ratio?")
    assert expand("What is ROA?") and expand("the roa of the river") == ""  # capitals only
    assert expand("Discuss the capital structure") == ""  # "capital" alone names no metric
    assert expand("net margin, and the NET MARGIN again") == "net income net sales revenue"  # once each


def test_a_ratio_reads_its_denominator_from_the_statement_that_prints_it() -> None:
    assert statements_for("the 3 year average of capex to revenue ratio") == ("cash", "income")
    assert statements_for("what is R&D to asset ratio in FY 2019?") == ("income", "balance")
    assert statements_for("wages expense as a percent of net sales") == ("income",)
    assert statements_for("the FY2015 operating cash flow ratio") == ("cash", "balance")  # over current liabilities
    assert statements_for("What are the sources of revenue?") == ()  # only a ratio's "to" / "percent of" names it
    assert statements_for("Who sold assets to the company?") == ()


def test_every_entry_is_reachable_and_expands_to_words() -> None:
    for entry in GLOSSARY:
        for name in (*entry.names, *entry.abbrevs):
            assert entry.items in expand(f"What is the {name} for 2022?"), name
        assert entry.items.strip() and not any(ch.isdigit() for ch in entry.items)


@pytest.mark.parametrize("glossary", [True, False])
def test_the_statement_page_is_found_only_through_its_line_items(tmp_path: Path, glossary: bool) -> None:
    from folio.ingest.pipeline import ingest_bytes
    from folio.ingest.storage.store import Store
    from folio.retrieval.search import Retriever, RetrieverConfig

    store = Store(tmp_path / "data")
    ingest_bytes(store, text_pdf(PAGES), filename="filing.pdf", doc_id="filing")
    retriever = Retriever(store, config=RetrieverConfig(glossary=glossary))
    res = retriever.search_detailed(SearchQuery(QUESTION, doc_ids=["filing"], k=20))
    lexical = [h.pages[0] for h in res.hits
               if any(s.retriever in ("pagelex", "bm25") for s in h.sources)]
    if glossary:
        assert lexical and lexical[0] == 2  # the statement first among the lexical lists' hits
    else:
        assert 2 not in lexical[:1]


# A filing in miniature: a discussion page that names both statements in sentences, a contents page that
# lists them, then the two statements the fixed asset turnover is computed from.
FILING = [
    "Management's discussion. Revenue grew as our balance sheet strengthened; the statements of operations "
    "and the balance sheets that follow show the fixed assets we added and the revenue they earned this year.",
    "Index to financial statements\nConsolidated Statements of Operations 2\nConsolidated Balance Sheets 3",
    "ACME Corp\nConsolidated Statements of Operations\n(In millions)\n\nNet revenues 6,489 7,500\n"
    "Cost of revenues 2,094 2,517\nOperating income 1,607 1,988\nNet income 1,503 1,813",
    "ACME Corp\nConsolidated Balance Sheets\n(In millions)\n\nCash 5,794 4,225\n"
    "Property and equipment, net 253 282\nTotal assets 19,845 17,890",
]


def test_statement_pages_are_found_by_their_titles_not_by_mentions() -> None:
    from folio.retrieval.channels.statement import statement_scores

    assert statement_scores(FILING[0]) == {}  # sentences that name statements are not their headings
    contents, income, balance = (statement_scores(t) for t in FILING[1:])
    assert set(contents) == {"income", "balance"} and set(income) == {"income"} and set(balance) == {"balance"}
    assert income["income"] > contents["income"] and balance["balance"] > contents["balance"]  # title, figures
    assert statements_for("What is the FY2019 fixed asset turnover ratio?") == ("income", "balance")
    assert statements_for("Who are the company's main customers?") == ()


def test_a_ratio_question_gets_both_statements_it_is_computed_from(tmp_path: Path) -> None:
    from folio.ingest.pipeline import ingest_bytes
    from folio.ingest.storage.store import Store
    from folio.retrieval.search import Retriever, RetrieverConfig

    store = Store(tmp_path / "data")
    ingest_bytes(store, text_pdf(FILING), filename="filing.pdf", doc_id="filing")
    question = "What is the FY2019 fixed asset turnover ratio?"
    res = Retriever(store).search_detailed(SearchQuery(question, doc_ids=["filing"], k=20))
    listed = [h.pages[0] for h in res.hits if any(s.retriever == "statement" for s in h.sources)]
    assert "statement" in res.retrievers and set(listed[:2]) == {3, 4}  # both statements before the contents
    assert sorted(listed) == [3, 4]  # one page per statement: the contents page that lists both is not listed
    top_pages = list(dict.fromkeys(h.pages[0] for h in res.hits))[:3]
    assert {3, 4} <= set(top_pages)
    off_retriever = Retriever(store, config=RetrieverConfig(glossary=False))
    off = off_retriever.search_detailed(SearchQuery(question, doc_ids=["filing"], k=20))
    assert "statement" not in off.retrievers
