"""Query expansion for financial metrics: a question names a concept, the statements print line items.

"What is the inventory turnover?" is answered from cost of sales (income statement) and inventories
(balance sheet); "capital expenditure" is printed as "purchases of property, plant and equipment" in the
cash flow statement; a "quick ratio" needs current assets, inventories and current liabilities. None of
those line items is in the question, so neither BM25 nor the page lexicon can find the statement page by
the question's words alone.

``GLOSSARY`` is a small table of standard metrics and statement names with the line items their textbook
definitions use (the accounting definitions, as in any corporate-finance text: never tuned to a question
or to a company's wording). ``expand`` returns the line items of every entry whose name occurs in the
question; the lexical channels (chunk BM25 and whole-page BM25) search the question followed by them
(``retrieval.channels.base.ChannelQuery.lexical``), the dense channel the question alone. Names match as whole
words, case-insensitively; abbreviations only in capitals (``ROA``, ``EPS``), so that ordinary words never
trigger an entry. Questions that name no entry search exactly as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Entry:
    """One concept: the names it is asked by (``names`` case-insensitive, ``abbrevs`` exact capitals)
    and the line items its definition reads from the statements."""

    names: tuple[str, ...]
    items: str
    abbrevs: tuple[str, ...] = ()
    statements: tuple[str, ...] = ()  # the statements the items are printed in (``retrieval.channels.statement``)


# Statement names: the titles filings print and the totals every such statement has.
_BALANCE = "consolidated balance sheets total assets total liabilities total current assets total current liabilities"
_INCOME = "consolidated statements of income operations earnings net sales revenue net income"
_CASH = "consolidated statements of cash flows net cash provided by operating activities investing financing"

BAL, INC, CSH = "balance", "income", "cash"  # the statements (``retrieval.channels.statement.STATEMENT_TITLES``)
GLOSSARY: tuple[Entry, ...] = (
    # the statements
    Entry(("balance sheet", "balance sheets", "statement of financial position"), _BALANCE, statements=(BAL,)),
    Entry(("income statement", "income statements", "statement of income", "statement of operations",
           "statement of earnings", "profit and loss"), _INCOME, ("P&L",), (INC,)),
    Entry(("cash flow statement", "cash flow statements", "statement of cash flows", "cash flows statement"), _CASH,
          statements=(CSH,)),
    # line items asked by another name
    Entry(("capital expenditure", "capital expenditures", "capital spending", "capex"),  # "capex": no other word
          "purchases of property plant and equipment additions to property", statements=(CSH,)),
    Entry(("property plant and equipment", "fixed assets"), "property plant and equipment net",
          ("PP&E", "PPE", "PPNE"), (BAL,)),
    Entry(("cost of goods sold",), "cost of sales cost of revenue", ("COGS",), (INC,)),
    Entry(("selling general and administrative",), "selling general and administrative expenses", ("SG&A", "SGA"),
          (INC,)),
    Entry(("research and development",), "research and development expense", ("R&D",), (INC,)),
    Entry(("depreciation and amortization",), "depreciation and amortization", ("D&A",), (CSH,)),
    Entry(("earnings per share",), "earnings per share basic diluted net income", ("EPS",), (INC,)),
    Entry(("operating cash flow", "cash from operations", "cash flow from operations",
           "cash from operating activities"), "net cash provided by operating activities", ("CFO",), (CSH,)),
    Entry(("operating cash flow ratio", "cash flow ratio"),
          "net cash provided by operating activities total current liabilities", statements=(CSH, BAL)),
    Entry(("free cash flow", "free cash flows"),
          "net cash provided by operating activities purchases of property plant and equipment", ("FCF",), (CSH,)),
    Entry(("dividend payout ratio", "payout ratio", "dividends paid", "dividend payout"),
          "cash dividends paid net income", statements=(CSH, INC)),
    # ratios and margins: the line items of their definitions
    Entry(("gross margin", "gross profit margin"), "gross profit net sales revenue cost of sales", statements=(INC,)),
    Entry(("operating margin", "operating profit margin", "operating income margin"),
          "operating income net sales revenue", statements=(INC,)),
    Entry(("net margin", "net profit margin", "net income margin", "profit margin"), "net income net sales revenue",
          statements=(INC,)),
    Entry(("ebitda margin",), "operating income depreciation and amortization net sales revenue",
          statements=(INC, CSH)),
    Entry((), "operating income depreciation and amortization", ("EBITDA",), (INC, CSH)),
    Entry(("earnings before interest and taxes",), "operating income", ("EBIT",), (INC,)),
    Entry(("return on assets",), "net income total assets", ("ROA",), (INC, BAL)),
    Entry(("return on equity",), "net income total shareholders equity", ("ROE",), (INC, BAL)),
    Entry(("return on invested capital", "return on capital"),
          "operating income income taxes total debt total equity", ("ROIC", "ROCE"), (INC, BAL)),
    Entry(("fixed asset turnover",), "net sales revenue property plant and equipment net", statements=(INC, BAL)),
    Entry(("asset turnover", "total asset turnover"), "net sales revenue total assets", statements=(INC, BAL)),
    Entry(("inventory turnover", "days inventory outstanding", "days in inventory", "inventory days"),
          "cost of sales inventories", ("DIO",), (INC, BAL)),
    Entry(("days sales outstanding", "receivables turnover", "receivable turnover"),
          "accounts receivable net sales revenue", ("DSO",), (INC, BAL)),
    Entry(("days payable outstanding", "payables turnover", "payable turnover"),
          "accounts payable cost of sales", ("DPO",), (INC, BAL)),
    Entry(("cash conversion cycle",), "inventories accounts receivable accounts payable cost of sales revenue",
          statements=(INC, BAL)),
    Entry(("quick ratio", "acid test"),
          "cash and cash equivalents marketable securities accounts receivable total current liabilities",
          statements=(BAL,)),
    Entry(("current ratio", "working capital"), "total current assets total current liabilities", statements=(BAL,)),
    Entry(("cash ratio",), "cash and cash equivalents total current liabilities", statements=(BAL,)),
    Entry(("debt to equity", "debt to capital", "leverage ratio"),
          "long-term debt short-term borrowings total shareholders equity", statements=(BAL,)),
    Entry(("interest coverage", "times interest earned"), "operating income interest expense", statements=(INC,)),
    # a ratio's denominator named by its line item ("capex to revenue", "wages as a percent of net sales",
    # "R&D to asset ratio"): the statement that prints that line
    Entry(tuple(f"{lead} {line}" for lead in ("to", "percent of", "percentage of")
                for line in ("revenue", "revenues", "sales", "net sales")), "net sales revenue", statements=(INC,)),
    Entry(tuple(f"{lead} {line}" for lead in ("to", "percent of", "percentage of")
                for line in ("asset", "assets", "total assets")), "total assets", statements=(BAL,)),
    Entry(("effective tax rate",), "provision for income taxes income before income taxes", statements=(INC,)),
    Entry(("capital intensity", "capital intensive"),
          "property plant and equipment net total assets net sales revenue purchases of property plant and equipment",
          statements=(BAL, INC, CSH)),
)


def _name_pattern(names: tuple[str, ...], abbrevs: tuple[str, ...]) -> re.Pattern[str]:
    spaced = [r"[\s\-]*".join(re.escape(w) for w in n.split()) for n in names]
    words = rf"(?i:\b(?:{'|'.join(spaced)})\b)" if spaced else ""
    # an abbreviation stands alone: not inside a word and not followed by a letter ("EPS" but not "EPSx")
    caps = rf"(?<![\w&])(?:{'|'.join(re.escape(a) for a in abbrevs)})(?![\w&])" if abbrevs else ""
    return re.compile("|".join(p for p in (words, caps) if p))


_PATTERNS: tuple[tuple[re.Pattern[str], Entry], ...] = tuple((_name_pattern(e.names, e.abbrevs), e) for e in GLOSSARY)


@lru_cache(maxsize=4096)
def _matched(question: str) -> tuple[Entry, ...]:
    """The glossary entries the question names, in glossary order (searched once per question)."""
    return tuple(entry for pattern, entry in _PATTERNS if pattern.search(question))


def expand(question: str) -> str:
    """The line items of every glossary entry the question names, once each, in glossary order ("" if none).

    >>> expand("What is the FY2018 capital expenditure amount for 3M?")
    'purchases of property plant and equipment additions to property'
    >>> expand("What is the quick ratio? Use the balance sheet.")[:40]
    'consolidated balance sheets total assets'
    >>> expand("How many employees does the company have?")
    ''
    >>> expand("What did eps growth look like?")  # abbreviations match in capitals only
    ''
    """
    return " ".join(dict.fromkeys(entry.items for entry in _matched(question)))


def statements_for(question: str) -> tuple[str, ...]:
    """The statements the question names or whose line items its metrics read, in glossary order.

    >>> statements_for("What is the FY2019 fixed asset turnover ratio?")
    ('income', 'balance')
    >>> statements_for("Who are the primary customers?")
    ()
    """
    return tuple(dict.fromkeys(st for entry in _matched(question) for st in entry.statements))
