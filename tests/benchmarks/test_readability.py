"""The readability measures of the quality evaluation (issue 45, item 6): statements as rows with unit and period or
with figures one per line, tokens on contents pages, answers cut from a packed gold page. Handmade texts only;
nothing from ../shared."""

from __future__ import annotations

import doctest
import json
from typing import Any

from benchmarks.quality import peer_runs as P
from benchmarks.quality import readability as RD
from benchmarks.quality import records as RC
from benchmarks.quality import report as R
from folio.kernel.tokens import get_tokenizer

ROWS = [
    ("Cash and cash equivalents", "$ 6,006", "$ 8,555"),
    ("Trade receivables", "1,200", "1,100"),
    ("Inventories", "3,000", "2,900"),
    ("Other current assets", "(370)", "450"),
    ("Total current assets", "9,836", "13,005"),
    ("Property, plant and equipment, net", "5,400", "5,300"),
    ("Goodwill", "12,000", "12,100"),
    ("Assets held for sale — discontinued operations", "7,329", "—"),
    ("Total assets", "34,565", "30,405"),
]


def as_rows(unit: str = "(In millions)") -> str:
    head = ["The Kraft Company", "CONSOLIDATED BALANCE SHEETS", unit, "December 31, 2017 2016"]
    return "\n".join(head + [f"{label} {a} {b}" for label, a, b in ROWS])


def one_per_line() -> str:
    """The issue's balance sheet as a text layer gives it: a label, then each figure and its sign on a line."""
    head = ["CONSOLIDATED BALANCE SHEETS", "December 31,", "2017", "2016", "(In millions)"]
    return "\n".join(head + [x for label, a, b in ROWS for x in (label, *a.split(), *b.split())])


def test_doctests_pass() -> None:
    result = doctest.testmod(RD)
    assert result.attempted >= 4 and result.failed == 0


def test_a_statement_as_rows_with_unit_and_period_counts_as_rows() -> None:
    got = RD.read_statement(as_rows())
    assert got is not None and got.figures >= RD.MIN_FIGURES
    assert got.rows == got.lines and got.unit and got.period
    assert got.as_rows and not got.one_per_line
    markdown = "| CONSOLIDATED BALANCE SHEETS (in millions) | 2017 | 2016 |\n|---|---:|---:|\n" + "\n".join(
        f"| {label} | {a} | {b} |" for label, a, b in ROWS
    )
    assert RD.read_statement(markdown).as_rows  # type: ignore[union-attr]  # folio's table rows read the same


def test_rows_without_a_unit_or_a_period_do_not_count_as_rows() -> None:
    """The issue's page 54: "(in millions)" and the period dates dropped as a repeated header."""
    bare = "CONSOLIDATED STATEMENTS OF CASH FLOWS\n" + "\n".join(
        f"{label} {a} {b}".replace("$", "") for label, a, b in ROWS
    )
    got = RD.read_statement(bare)
    assert got is not None and got.rows == got.lines
    assert not got.unit and not got.period and not got.as_rows
    assert not RD.read_statement(bare + "\nFor the years ended 2019 and 2018").as_rows  # type: ignore[union-attr]
    assert RD.read_statement(bare + "\n(in thousands) 2019 2018").as_rows  # type: ignore[union-attr]


def test_a_statement_with_figures_one_per_line_counts_as_such() -> None:
    got = RD.read_statement(one_per_line())
    assert got is not None and got.unit and got.period
    assert got.one_per_line and not got.as_rows
    assert got.bare >= 0.25 * got.lines and got.rows < 0.9 * got.lines


def test_what_is_not_a_statement_item() -> None:
    assert RD.read_statement(as_rows().replace("CONSOLIDATED BALANCE SHEETS", "Selected data")) is None  # no title
    assert RD.read_statement("\n".join(as_rows().splitlines()[:6])) is None  # under 15 figures
    prose = "\n".join(["Note 4. Leases"] * 9 + ["These are the consolidated statements of cash flows."])
    assert RD.read_statement(prose + "\n" + as_rows().split("\n", 2)[2]) is None  # title not at the head, in prose
    listing = "\n".join(
        ["Index to financial statements", "Consolidated Balance Sheets", "45", "Consolidated Statements of Income",
         "46", "Consolidated Statements of Cash Flows", "47"] + [f"{label} {a} {b}" for label, a, b in ROWS]
    )  # fmt: skip
    assert RD.read_statement(listing) is None  # three titles together: a list of statements, not one


CONTENTS_SPLIT = """Table of Contents
PART I
Item 1.
Business
3
Item 1A.
Risk Factors
13
Item 1B.
Unresolved Staff Comments
27
Item 2.
Properties
27
Item 3.
Legal Proceedings
28
PART II
Item 5.
Market for Registrant's Common Equity
30
Item 7.
Management's Discussion and Analysis
33
Item 8.
Financial Statements and Supplementary Data
52
Item 9A.
Controls and Procedures
104
"""


def test_a_contents_page_is_recognised_and_an_ordinary_page_with_numbers_is_not() -> None:
    leaders = "\n".join(f"Chapter {i} Setting up the unit ........ {4 * i + 1}" for i in range(1, 11))
    assert RD.is_contents_page(CONTENTS_SPLIT)  # label and page number on lines of their own
    assert RD.is_contents_page(leaders)  # not headed, but mostly entries, ascending
    index = "Index\n" + "\n".join(
        f"{w}, {n}, {n + 40}" for w, n in zip("ABCDEFGHIJ", [30, 4, 77, 12, 9, 50, 3, 21, 64, 18], strict=True)
    )
    assert RD.is_contents_page(index)  # an index: its numbers need not ascend
    ordinary = (
        "Risk Factors\nOur revenue grew 12 percent in 2019 to 3,552 million.\nWe employ 38 people in 4 countries\n"
        "and serve 150 customers.\nSee Note 7 on page 45.\nStores opened 12\nStores closed 30\nNew markets 45"
    )
    assert not RD.is_contents_page(ordinary)
    statement = "Table of Contents\n" + "\n".join(
        f"{label}\n{n}\n{m}" for label, n, m in zip("ABCDEFGHIJKL", [93, 12, 501, 7, 88, 310, 41, 2, 95, 60, 18, 4],
                                                    [101, 9, 480, 8, 90, 290, 40, 3, 99, 66, 20, 5], strict=True)
    )  # fmt: skip
    assert not RD.is_contents_page(statement)  # small figures under a running "Table of Contents" link: not ascending
    assert RD.contents_pages([ordinary, CONTENTS_SPLIT, statement]) == [2]
    under_index = statement.replace("Table of Contents", "Index")  # filings head every page "Index" as a link
    assert not RD.is_contents_page(under_index)


def test_contents_layouts_of_real_filings() -> None:
    """A column of page numbers after leader-dotted labels (Adobe's 10-K), and "ITEM 9" lines between the entries
    (3M's), are contents; a fair-value table with figures one per line under a "Table of Contents" link is not."""
    labels = ["Business", "Risk Factors", "Unresolved Staff Comments", "Properties", "Legal Proceedings",
              "Mine Safety Disclosures", "Selected Financial Data", "Management's Discussion and Analysis",
              "Financial Statements and Supplementary Data"]  # fmt: skip
    pages = [3, 18, 30, 30, 32, 32, 34, 35, 55]
    column = (
        "TABLE OF CONTENTS\nPage No.\n"
        + "\n".join(f"Item {i}.\n{label}" + "." * 40 for i, label in enumerate(labels, 1))
        + "\n"
        + "\n".join(map(str, pages))
    )
    assert RD.is_contents_page(column)
    interleaved = "Table of Contents\nBeginning\nPage\n" + "\n".join(
        f"{label}\n{p}\nITEM {i + 9}" for i, (label, p) in enumerate(zip(labels, pages, strict=True))
    )
    assert RD.is_contents_page(interleaved)
    fair_value = "Table of Contents\nLevel 1\nLevel 2\nLevel 3\n" + "\n".join(
        f"{v}\n{v}" for v in (10, 1, 40, 127, 19, 22, 31)
    )
    assert not RD.is_contents_page(fair_value)


def test_questions_that_ask_for_contents() -> None:
    assert RD.asks_for_contents("What does the table of contents list under Part II?")
    assert RD.asks_for_contents("On which page number does the risk section start?")
    assert RD.asks_for_contents("Which terms does the index list under B?")
    assert not RD.asks_for_contents("What are the main risk factors related to supply chain?")


Q = {"id": "f7", "doc": "d.pdf", "question": "What was total revenue in FY2019?", "answer": "3,552",
     "gold_pages": [5], "lang": "en"}  # fmt: skip
INFO = {"eligible": True, "rare_exact": True, "exact_pages": [5], "rare_keys": ["3,552"], "gold_valid": True,
        "ref_eligible": True, "ref_specific": True, "contents_pages": [2]}  # fmt: skip


def folio_pkg(*items: dict[str, Any]) -> dict[str, Any]:
    full = [{"image_tokens": 0, "locators": [], "section": None, **it} for it in items]
    return {"retrieval": {"hits": []}, "items": full, "budget": {"used": 900, "breakdown": {}}}


def test_an_answer_cut_from_a_packed_gold_page_and_one_that_is_not_cut() -> None:
    excerpt = {"pages": [5], "text": "Net revenues were strong.", "tokens": 6}
    cut = RC.folio_record(Q, INFO, ("folio-auto", 1000), (folio_pkg(excerpt), 0.01))
    assert cut["covered_gold"] == [5] and cut["answer_exact_rare"] == 0.0 and cut["answer_cut"] == 1.0
    kept_pkg = folio_pkg({**excerpt, "text": "Total revenue 3,552"})
    kept = RC.folio_record(Q, INFO, ("folio-auto", 1000), (kept_pkg, 0.01))
    assert kept["answer_cut"] == 0.0
    missed = RC.folio_record(Q, INFO, ("folio-auto", 1000), (folio_pkg({**excerpt, "pages": [9]}), 0.01))
    assert missed["answer_cut"] == 0.0  # the gold page was not packed: a miss, not a cut
    elsewhere = {**INFO, "exact_pages": [8]}  # the answer is not in the gold page's text layer: nothing to cut
    assert RC.folio_record(Q, elsewhere, ("folio-auto", 1000), (folio_pkg(excerpt), 0.01))["answer_cut"] == 0.0
    general = {**INFO, "rare_exact": False}
    assert RC.folio_record(Q, general, ("folio-auto", 1000), (folio_pkg(excerpt), 0.01))["answer_cut"] is None
    assert RC.failed_record(Q, INFO, "folio-auto", 1000)["answer_cut"] == 0.0


def test_folio_records_count_statement_items_and_contents_tokens() -> None:
    items = (
        {"pages": [5], "text": as_rows(), "tokens": 200},
        {"pages": [6], "text": one_per_line(), "tokens": 260},
        {"pages": [2], "text": CONTENTS_SPLIT, "tokens": 120},  # the contents page
        {"pages": [2, 3], "text": "Risk Factors", "tokens": 40, "section": "Item 1A"},  # half on it
    )
    r = RC.folio_record(Q, INFO, ("folio-auto", 4000), (folio_pkg(*items), 0.01))
    assert (r["statement_items"], r["statement_rows"], r["statement_one_per_line"]) == (2, 1, 1)
    assert r["contents_tokens"] == 140 and not r["asks_contents"]
    asks = {**Q, "question": "What does the table of contents list?"}
    r = RC.folio_record(asks, INFO, ("folio-auto", 4000), (folio_pkg(*items), 0.01))
    assert r["asks_contents"] and r["contents_tokens"] is None
    untitled = as_rows().split("\n", 2)[2]
    titled = {"pages": [5], "text": untitled, "tokens": 200, "section": "Consolidated Balance Sheets"}
    assert RC.folio_record(Q, INFO, ("folio-auto", 4000), (folio_pkg(titled), 0.01))["statement_rows"] == 1  # block tag


def test_peer_records_read_their_units_and_count_contents_tokens_with_the_tokenizer() -> None:
    tok = get_tokenizer("cl100k_base")
    units = [[[5], one_per_line()], [[2], CONTENTS_SPLIT], [[7], "Net revenues grew"]]
    pkg = {"text": P.peer_head(Q["question"]) + "\n\n".join(t for _, t in units), "tokens": 900, "item_pages":
           [p for p, _ in units], "units": units, "ranked_pages": [[5]], "latency_s": 0.0, "natural_tokens": 900,
           "k": 64}  # fmt: skip
    counted = P.with_unit_tokens(pkg, INFO["contents_pages"], tok)
    assert counted["unit_tokens"] == [None, tok.count(CONTENTS_SPLIT), None] and "unit_tokens" not in pkg
    r = P.peer_record(Q, INFO, "bm25-pages", 4000, counted)
    assert (r["statement_items"], r["statement_rows"], r["statement_one_per_line"]) == (1, 0, 1)
    assert r["contents_tokens"] == tok.count(CONTENTS_SPLIT)
    assert r["answer_cut"] == 1.0  # gold page 5 sent without its "3,552" (the figures went one per line)
    old = {k: v for k, v in pkg.items() if k != "units"}  # cached before units were kept
    r = P.peer_record(Q, INFO, "bm25-pages", 4000, old)
    assert r["statement_items"] is None and r["contents_tokens"] is None


def test_the_readability_table_and_summary_list_cut_questions_by_id_only() -> None:
    def rec(qid: str, budget: int, cut: float | None, stmt: tuple[int, int, int], toc: int | None) -> dict[str, Any]:
        return {"system": "folio-auto", "budget": budget, "id": qid, "answer_cut": cut, "statement_items": stmt[0],
                "statement_rows": stmt[1], "statement_one_per_line": stmt[2], "contents_tokens": toc}  # fmt: skip

    recs = [rec("m1", 2000, 1.0, (2, 1, 1), 549), rec("m2", 2000, 0.0, (2, 2, 0), 0), rec("m3", 2000, None, (0, 0, 0),
            None), rec("m1", 4000, 0.0, (0, 0, 0), 0)]  # fmt: skip
    table = RD.readability_table(recs, ["folio-auto"], [2000, 4000])
    assert "as rows with unit and period %" in table[0]
    assert table[2] == "| folio-auto | 2000 | 4 | 75.0 | 25.0 | 549 (1) | 1 (2) |"
    assert table[3] == "| folio-auto | 4000 | 0 | – | – | 0 (0) | 0 (1) |"
    summary = RD.readability_summary([("mmlb-A", recs)], ["folio-auto"], [2000, 4000])
    assert summary["mmlb-A"]["folio-auto@2000"]["answer_cut_ids"] == ["m1"]
    assert "3,552" not in json.dumps(summary)
    full = [{**r, "gold_valid": False, "tokens": 1, "over": 0.0, "latency_s": 0.0, "doc_type": "x"} for r in recs]
    head = R.render_headline([("mmlb-A", full)], ["folio-auto"], [2000])
    assert "### mmlb-A: Readability" in head and "| folio-auto | 2000 | 4 | 75.0 | 25.0 | 549 (1) | 1 (2) |" in head


def test_the_per_question_table_marks_an_answer_cut() -> None:
    base = {"system": "folio-auto", "budget": 2000, "recall@10": 1.0, "coverage": 1.0, "answer_exact": 0.0,
            "evidence_kind": "table", "lang": "en", "in_text_layer": "True", "gold": "5", "tokens": 900, "over": 0.0,
            "latency_s": 0.1}  # fmt: skip
    recs = [{**base, "id": "f7", "answer_cut": 1.0}, {**base, "id": "f8", "answer_cut": 0.0}]
    summary = R.summarize(recs, ["folio-auto"], [2000])
    md = R.render_markdown(R.SetReport(summary, recs, ["folio-auto"], [], [2000], "cmd", 2))
    assert "| f7 | table | en | 5 | 100 / 100 / 0 (cut) |" in md
    assert "| f8 | table | en | 5 | 100 / 100 / 0 |" in md
