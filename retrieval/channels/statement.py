"""Statement pages: where a filing prints the statements a question's metrics are read from, found by their titles.

A ratio such as the fixed asset turnover needs two statements (revenue from the income statement,
property, plant and equipment from the balance sheet). Whole-page BM25 ranks the page that holds most of the
question's words, often a discussion page or one of the two statements; the other statement, a page of
figures under a title, is rarely near the top of any list. So the statements a question needs
(``retrieval.routing.glossary.statements_for``: named, or implied by a metric) are one more ranked list for fusion: the
pages of the scope headed by that statement's title ("Consolidated Statements of Operations", "Balance
Sheets", "Statement of Cash Flows"), at most ``PER_STATEMENT`` a statement and version, interleaved across
statements so that each gets its page near the top.

A page is headed by a statement when a short line (at most ``HEADING_WORDS`` words, not ending a sentence)
matches its title: in the
page's first block (``pagelex.page_title``) it scores 2, elsewhere 1 (a statement printed below a paragraph, as
in an earnings release), plus the share of the page's words that are figures, so that the statement itself
outranks a contents page listing it. The titles are the standard US GAAP and IFRS ones, in English.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from folio.ingest.storage.interface import StoreReader
from folio.kernel.scope import Scope
from folio.retrieval.cache.version_cache import VersionCache
from folio.retrieval.channels.base import ChannelQuery, ChannelSpec, Ranking, register, versions_to_search
from folio.retrieval.channels.pagewords import page_title, version_pages
from folio.retrieval.text import Candidate

STATEMENT_TITLES: dict[str, re.Pattern[str]] = {
    "balance": re.compile(r"\bbalance\s+sheets?\b|\bstatements?\s+of\s+financial\s+(?:position|condition)\b", re.I),
    "income": re.compile(r"\bstatements?\s+of\s+(?:consolidated\s+)?(?:income|operations|earnings|profit\s+or\s+loss)\b"
                         r"|\bincome\s+statements?\b", re.I),
    "cash": re.compile(r"\bstatements?\s+of\s+(?:consolidated\s+)?cash\s+flows?\b|\bcash\s+flows?\s+statements?\b",
                       re.I),
}
# Weight in fusion of the statement list. Measured on finance (31 questions of 14 filings, both halves), against
# no list: 1.0 gave coverage +20 / +6 / +6 at 1k / 2k / 4k, 2.0 +21 / +12 / +8; 3.0 lost half B at 2k against 2.0.
STATEMENT_WEIGHT = 2.0
HEADING_WORDS = 12  # a line of at most this many words can be a statement's heading
# Pages of one statement and version in the list. 1 (the page that reads most like the statement): finance B
# coverage +3.9 / +2.2 / +1.1 at 1k / 2k / 4k, A +1.3 / 0 / 0 against 3, mmlb unchanged, wide one page more and
# one answer fewer at 2k: a statement's second and third pages (changes in equity after the balance sheet) took
# the places of pages that the other channels ranked first.
PER_STATEMENT = 1
MAX_VERSIONS = 50  # versions of a scope searched for statement pages
CACHE_VERSIONS = 256  # versions whose statement pages are kept
_FIGURE = re.compile(r"^\(?\$?[\d,.]+\)?%?$")


def statement_scores(text: str) -> dict[str, float]:
    """How strongly the page reads as each statement it is headed by (absent: not headed by it).

    >>> statement_scores("ACME Corp\\nConsolidated Balance Sheets\\n\\nAssets 1,200 1,100\\nTotal 3,400 3,000")
    {'balance': 2.3636}
    >>> statement_scores("Our balance sheet remains strong, as the balance sheets show.")
    {}
    """
    words = text.split()
    figures = sum(1 for w in words if _FIGURE.match(w)) / max(len(words), 1)
    title = {ln.strip() for ln in page_title(text).splitlines()}
    out: dict[str, float] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or len(line.split()) > HEADING_WORDS or line.endswith("."):  # a sentence, not a heading
            continue
        for name, pattern in STATEMENT_TITLES.items():
            if pattern.search(line):
                out[name] = max(out.get(name, 0.0), (2.0 if line in title else 1.0) + figures)
    return {k: round(v, 4) for k, v in out.items()}


class StatementPages:
    """The statement pages of each version (``statement_scores`` of its page regions), kept per version stamp."""

    def __init__(self, store: StoreReader) -> None:
        self.store = store
        self.found: VersionCache[dict[str, list[Candidate]]] = VersionCache(store, CACHE_VERSIONS)

    def clear(self) -> None:
        self.found.clear()

    def pages(self, doc_id: str, version_id: str) -> dict[str, list[Candidate]]:
        """Statement -> its pages in this version, strongest first."""
        return self.found.get(doc_id, version_id, lambda: self._find(doc_id, version_id))

    def _find(self, doc_id: str, version_id: str) -> dict[str, list[Candidate]]:
        found: dict[str, list[Candidate]] = {}
        for region_id, page, text in version_pages(self.store, doc_id, version_id):
            for name, score in statement_scores(text).items():
                found.setdefault(name, []).append(Candidate(region_id, doc_id, version_id, "page", page, score))
        for cands in found.values():
            cands.sort(key=lambda c: (-c.score, c.page))
        return found

    def search(
        self, statements: Sequence[str], scope: Scope, limit: int, versions: Sequence[tuple[str, str]]
    ) -> list[Candidate]:
        """The pages of ``scope`` headed by each of ``statements``, the best of each statement first, then the
        second of each, and so on (at most ``limit``), in ``versions`` of it (``channels.base.versions_to_search``:
        a wide scope is searched in the versions the text channels found)."""
        if not statements or scope.empty or (scope.kinds is not None and "page" not in scope.kinds):
            return []
        per: list[list[Candidate]] = []
        for doc_id, version_id in versions:
            found = self.pages(doc_id, version_id)
            for name in statements:
                cands = [c for c in found.get(name, []) if scope.accepts(doc_id, version_id, c.page, "page")]
                per.append(cands[:PER_STATEMENT])
        out = [lst[i] for i in range(PER_STATEMENT) for lst in per if i < len(lst)]
        return list({c.region_id: c for c in out}.values())[:limit]


# ----------------------------------------------------------------------------- the channel
@dataclass
class StatementChannel:
    """The pages headed by the statements the question needs (``StatementPages``); no list when it needs none."""

    statements: StatementPages
    weight: float = STATEMENT_WEIGHT
    name: str = "statement"
    table: str = "regions"

    def search(self, query: ChannelQuery) -> Ranking | None:
        if self.weight <= 0 or not query.statements:
            return None
        found = self.statements.search(query.statements, query.scope, query.limit,
                                       versions_to_search(query, MAX_VERSIONS))
        return Ranking(found) if found else None

    def clear(self) -> None:
        self.statements.clear()

    def status(self) -> dict[str, Any] | None:
        return None


register(ChannelSpec("statement", lambda c: StatementChannel(StatementPages(c.store), c.options["statement_weight"]),
                     {"statement_weight": STATEMENT_WEIGHT}, text=True))
