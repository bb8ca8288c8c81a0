"""Issue 45, item 4: a table of contents page is not evidence unless the question asks about the layout.

A 10-K's contents page (``Item 1A. Risk Factors. 5``, one entry a line, no dot leaders) ranked second for "What
are the main risk factors related to supply chain?" and took 549 of 2,000 tokens while the risk factor went as
one sentence. Its hits now get the fate ``navigation``; a question about sections or pages still gets it."""

from __future__ import annotations

from folio.assembly import assemble
from folio.assembly.navigation import asks_for_layout, is_caution, is_contents_page, page_kind
from folio.assembly.options import AssemblyOptions
from folio.kernel.index import RegionIndex
from folio.kernel.model import Region
from tests.assembly.builders import find, hit, make_doc

ENTRIES = ["Item 1. Business. 1", "Item 1A. Risk Factors. 5", "Item 1B. Unresolved Staff Comments. 19",
           "Item 2. Properties. 19", "Item 3. Legal Proceedings. 19", "PART II 19",
           "Item 6. Selected Financial Data. 21", "Item 7. Management's Discussion and Analysis. 22",
           "Overview 22", "Liquidity and Capital Resources 33", "Item 8. Financial Statements. 42",
           "Note 1. Basis of Presentation 50"]  # fmt: skip


def _filing() -> list[Region]:
    filler = [[f"Routine disclosure sentence number {k} about the company's reporting."] for k in range(34)]
    return make_doc("filing", [
        ("Table of Contents", [[e] for e in ENTRIES] + filler),
        ("Item 1A. Risk Factors", [["Disruptions of our supply chain could harm our results: a supplier that "
                                    "fails to deliver raw materials stops production at our plants."]]),
    ])  # fmt: skip


def test_a_contents_page_is_left_out_unless_the_question_asks_for_the_layout() -> None:
    regs = _filing()
    toc, risk = find(regs, "Item 1A. Risk Factors. 5"), find(regs, "supply chain could harm")
    assert toc.first_page != risk.first_page
    hits = [hit(toc, 0.9, 1), hit(risk, 0.8, 2)]
    pkg = assemble("What are the main risk factors related to supply chain?", hits, RegionIndex(regs),
                   AssemblyOptions(budget=2000, whole_documents=False))
    fates = {m.region_id: m.fate for m in pkg.manifest}
    assert fates[toc.region_id] == "navigation"
    assert [it.pages for it in pkg.items] == [[risk.first_page]]
    assert not any("Unresolved Staff Comments" in it.text for it in pkg.items)

    asked = assemble("Which section covers the risk factors?", hits, RegionIndex(regs),
                     AssemblyOptions(budget=2000, whole_documents=False))
    assert toc.first_page in {p for it in asked.items for p in it.pages}


def test_contents_pages_are_told_from_statements_and_indexes() -> None:
    assert is_contents_page("Table of Contents\n" + "\n".join(ENTRIES))
    assert is_contents_page("CONTENTS\n" + "\n".join(f"{t} {'.' * 12} {p}" for t, p in
                                                     [("Introduction", "iii"), ("Scope", 1), ("Safety", 3),
                                                      ("Setup", 7), ("Operation", 12), ("Care", 20),
                                                      ("Faults", 24), ("Parts", 31), ("Index", 40)]))
    index = ["ITEM 8. FINANCIAL STATEMENTS", "INDEX TO CONSOLIDATED FINANCIAL STATEMENTS", "Page No.",
             "Consolidated Balance Sheets …", "Consolidated Statements of Income … Consolidated Statements of Cash "
             "Flows … Notes to Consolidated Financial Statements …", "Report of the Independent Accounting Firm …",
             "All schedules have been omitted.", *"59 60 61 62 63 64 104".split()]
    assert is_contents_page("\n".join(index))  # the page numbers as a column of their own
    leaders = ["TABLE OF CONTENTS", "PART I", "Item 1. Business …", "Item 1A. Risk Factors … Item 1B. Unresolved "
               "Staff Comments … Item 2. Properties … Item 3. Legal Proceedings …", "PART II",
               "Item 5. Market for Common Equity … Item 6. Selected Financial Data … Item 7. MD&A … Item 7A. Market "
               "Risk … Item 8. Financial Statements … Item 9. Changes in Accountants … Item 9A. Controls …",
               "PART III", "Item 10. Directors … Item 11. Executive Compensation … Item 12. Ownership …",
               "PART IV", "Item 15. Exhibits … Signatures …"]
    assert is_contents_page("\n".join(leaders))  # page numbers not in the text layer at all
    quote = "He said: wait … then … and … again …"
    assert not is_contents_page("\n".join([quote, "A plain line.", "Another plain line.", quote]))
    assert not is_contents_page("\n".join(["Steps …", "Wait …", "Check …", *"3 1 2 5 4 6".split()]))  # not forward
    statement = "\n".join(f"{label} {a:,} {b:,} {c:,}" for label, a, b, c in
                          [("Net sales", 26004, 26268, 26076), ("Cost of products sold", 17830, 17347, 17043),
                           ("Gross profit", 8174, 8921, 9033), ("SG&A", 3178, 3190, 2927),
                           ("Operating income", 4996, 5731, 6106), ("Interest expense", 1361, 1284, 1234),
                           ("Other expense", 952, 168, 627), ("Net income", 1935, 10192, 11009),
                           ("Depreciation", 994, 983, 1031)])  # fmt: skip
    assert not is_contents_page(statement)
    index = "\n".join(f"{w}, {p}" for w, p in [("anchor", 40), ("bolt", 12), ("cable", 3), ("drain", 31),
                                                 ("engine", 7), ("fuse", 22), ("gasket", 5), ("hose", 18),
                                                 ("inlet", 2), ("jack", 29)])  # fmt: skip
    assert not is_contents_page(index)  # alphabetical: the page numbers jump back and forth
    assert not is_contents_page("\n".join(f"item-{k} | {k}" for k in range(40)))  # a table numbering its rows
    as_table = ["Index to Financial Statements", "Page", *(f"{k}. | Note on {w} | {p}" for k, (w, p) in enumerate(
        [("policies", 75), ("restructuring", 81), ("investments", 84), ("acquisitions", 86), ("revenue", 89),
         ("inventories", 91), ("leases", 92), ("income taxes", 93), ("property", 97), ("goodwill", 97)], 1))]
    assert is_contents_page("\n".join(as_table))  # a contents page the parser read as a table
    prose = "The plan covers 12 sites.\nEach site reports every 3 months.\nAudits follow in 2020."
    assert not is_contents_page(prose)


def test_questions_about_the_layout_are_told_apart() -> None:
    assert asks_for_layout("On which page does the MD&A start?")
    assert asks_for_layout("How many chapters does the report have?")
    assert asks_for_layout("Auf welcher Seite beginnt laut Inhaltsverzeichnis der Abschnitt 4.3?")
    assert asks_for_layout("目次の第3章は何ページから始まりますか")
    assert not asks_for_layout("What are the main risk factors related to supply chain?")
    assert not asks_for_layout("What was total revenue in FY2019?")


SIGNERS = ["SIGNATURES", "Pursuant to the requirements of the Exchange Act, this report has been signed.",
           "/s/ Ann Lee", "Chief Executive Officer and Director", "/s/ Bo Ng", "Chief Financial Officer",
           "/s/ Cy Fox", "Director", "/s/ Di Ray", "Director"]  # fmt: skip
EXHIBITS = ["EXHIBIT INDEX", *(f"10.{k}* Supply agreement number {k}, incorporated by reference to the Form 8-K"
                               for k in range(1, 10))]  # fmt: skip
CAUTION = ("This report contains forward-looking statements about our supply chain and results. Actual results may "
           "differ materially, and readers should not place undue reliance on them.")


def _boilerplate_filing() -> list[Region]:
    """A signature page, an exhibit index, and a page with the caution and a risk factor (each list long enough
    to fill its page)."""
    more_signers = [f"/s/ Director {chr(65 + k % 26)}{chr(97 + k // 26)}" for k in range(34)]
    more_exhibits = [f"10.{k}* Supply agreement number {k}, incorporated by reference" for k in range(10, 44)]
    return make_doc("bp", [
        ("Signatures", [SIGNERS + more_signers]),
        ("Exhibits", [EXHIBITS + more_exhibits]),
        ("Forward-Looking Statements", [[CAUTION]]),
        ("Item 1A. Risk Factors", [["Disruptions of our supply chain could harm our results: a supplier that "
                                    "fails to deliver raw materials stops production at our plants."]]),
    ])  # fmt: skip


def test_signatures_exhibit_indexes_and_the_caution_stay_out_unless_asked() -> None:
    regs = _boilerplate_filing()
    signed, listed = find(regs, "/s/ Bo Ng"), find(regs, "Supply agreement number 3")
    caution, risk = find(regs, "forward-looking statements about"), find(regs, "supply chain could harm")
    assert len({signed.first_page, listed.first_page, risk.first_page}) == 3
    hits = [hit(signed, 0.95, 1), hit(listed, 0.93, 2), hit(caution, 0.92, 3), hit(risk, 0.8, 4)]
    opts = AssemblyOptions(budget=2000, whole_documents=False)
    pkg = assemble("What are the main risks related to the supply chain?", hits, RegionIndex(regs), opts)
    fates = {m.region_id: (m.fate, m.reason) for m in pkg.manifest}
    assert fates[signed.region_id][0] == fates[listed.region_id][0] == fates[caution.region_id][0] == "navigation"
    assert "signature page" in fates[signed.region_id][1] and "exhibit index" in fates[listed.region_id][1]
    assert "forward-looking" in fates[caution.region_id][1]
    assert {p for it in pkg.items for p in it.pages} == {risk.first_page}  # (sent whole, the page keeps the caution)

    who = assemble("Who signed the report as Chief Financial Officer?", hits, RegionIndex(regs), opts)
    assert any("/s/ Bo Ng" in it.text for it in who.items)
    exhibit = assemble("Which exhibit is the supply agreement?", hits, RegionIndex(regs), opts)
    assert any("Supply agreement number 3" in it.text for it in exhibit.items)
    asked = assemble("What does the forward-looking statements caution say?", hits, RegionIndex(regs), opts)
    assert {m.region_id: m.fate for m in asked.manifest}[caution.region_id] != "navigation"


def test_boilerplate_pages_are_told_from_evidence() -> None:
    assert page_kind("\n".join(SIGNERS)) == "signatures"
    assert page_kind("\n".join(EXHIBITS)) == "exhibits"
    numbered = ["Steps", *(f"1.{k} Open valve {k} and wait for the pressure to settle" for k in range(1, 10))]
    assert page_kind("\n".join(numbered)) is None  # numbered steps: no exhibit named
    assert is_caution(CAUTION) and not is_caution("We make forward-looking statements about demand in our outlook.")
