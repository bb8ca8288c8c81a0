"""The document's own names in a question scoped to it, and a dense query without them.

A question asked of one document often names it: "Has PepsiCo reported any materially important ongoing legal
battles?", "Which segment has dragged down 3M's overall growth?". Inside that document the name tells no page from
another, but in the question's MiniLM vector it weighs as much as the words that do: the dense list's top 12 for
the PepsiCo question were all lines that name PepsiCo (exhibit lists, by-laws, a signature page), and its legal
proceedings page was not among the first 100. A word names the document when the question writes it as a name (a
capital not at the start of a sentence, or a digit before letters: "3M") and each of its terms (``pagelex.page_terms``)
is on the document's first page (the cover names the issuer, the author, the product) and on at least
``SCOPE_NAME_SHARE`` of its pages.

The dense channel (``channels.dense.TextDenseChannel``) then ranks the chunks for the question as asked and for
the question without those words, and merges the two lists by reciprocal rank (``merge_ranked``): a page that
either finds near the top stays near the top, so a question about the name itself ("What degree does LEBOUR
have?", the author on the cover) keeps the pages the full question finds. Only for a scope of one version: across
documents the names are what tells them apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from folio.ingest.storage.interface import StoreReader
from folio.retrieval.cache.version_cache import VersionCache
from folio.retrieval.channels.pagewords import page_terms
from folio.retrieval.text import Candidate

# Share of a version's pages that a name's terms must each be on. Measured on finance (44 filings), mmlb, wide and
# the manuals (benchmarks/results/README.md, "The document's own name"): 0.4 catches issuers named on 43-94% of
# a filing's pages (Boeing 43%, 3M 49%, PepsiCo 67%, MGM 80%); 0.6 missed Boeing and 3M and gained less.
SCOPE_NAME_SHARE = 0.4
MIN_NAME_PAGES = 3  # ... and on at least this many pages: in a document of two pages every cover word would pass
CACHE_VERSIONS = 256  # versions whose name terms are kept
_TOKEN = re.compile(r"\S+")
_EDGE = "?!.,;:()[]{}\"'“”‘’"
_POSSESSIVE = re.compile(r"['’]s$", re.I)


def name_terms(page_texts: Sequence[str], share: float = SCOPE_NAME_SHARE) -> frozenset[str]:
    """The terms of the first page that are also on at least ``share`` of the pages and on ``MIN_NAME_PAGES``
    pages at least (``page_texts`` in page order).

    >>> sorted(name_terms(["ACME Corp annual report", "ACME sales grew", "Costs of ACME", "Notes"]))
    ['acme']
    >>> sorted(name_terms(["ACME Corp annual report", "ACME sales grew"]))
    []
    """
    if not page_texts:
        return frozenset()
    first = set(page_terms(page_texts[0]))
    counts = dict.fromkeys(first, 0)
    for text in page_texts:
        for term in first.intersection(page_terms(text)):
            counts[term] += 1
    need = max(share * len(page_texts), MIN_NAME_PAGES)
    return frozenset(t for t, n in counts.items() if n >= need)


def scope_names(question: str, names: frozenset[str]) -> list[str]:
    """The words of ``question`` that name the document: written as a name (a capital not at the start of a
    sentence, or a digit before letters) and made only of ``names`` terms (``name_terms``).

    >>> scope_names("Which segment has dragged down 3M's overall growth in 2022?", frozenset({"3m", "2022"}))
    ["3M's"]
    >>> scope_names("ACME sales. Acme costs and Acme's margin?", frozenset({"acme"}))
    ["Acme's"]
    """
    out: list[str] = []
    words = _TOKEN.findall(question)
    for i, word in enumerate(words):
        core = _POSSESSIVE.sub("", word.strip(_EDGE))
        if not core:
            continue
        start = i == 0 or words[i - 1].endswith(("?", "!", ".", ":"))
        named = (core[0].isupper() and not start) or (core[0].isdigit() and any(c.isalpha() for c in core))
        terms = page_terms(core)
        if named and terms and all(t in names for t in terms):
            out.append(word)
    return out


def without_words(question: str, words: Sequence[str]) -> str:
    """``question`` with each of ``words`` (whole tokens, as ``scope_names`` returns them) left out.

    >>> without_words("Has ACME reported any legal battles?", ["ACME"])
    'Has reported any legal battles?'
    """
    drop = set(words)
    return " ".join(w for w in _TOKEN.findall(question) if w not in drop)


def merge_ranked(first: Sequence[Candidate], second: Sequence[Candidate], k: int, limit: int) -> list[Candidate]:
    """Two rankings of the same units merged by reciprocal rank (``sum 1 / (k + rank)``; ties: ``first``'s
    order, then ``second``'s), at most ``limit``."""
    score: dict[str, float] = {}
    seen: dict[str, Candidate] = {}
    for ranking in (first, second):
        for rank, c in enumerate(ranking, start=1):
            score[c.region_id] = score.get(c.region_id, 0.0) + 1.0 / (k + rank)
            seen.setdefault(c.region_id, c)
    order = sorted(seen, key=lambda rid: -score[rid])  # stable: first's order, then second's, on ties
    return [seen[rid] for rid in order[:limit]]


class ScopeNames:
    """Each version's name terms (``name_terms`` of its page regions), kept per version stamp."""

    def __init__(self, store: StoreReader, share: float = SCOPE_NAME_SHARE) -> None:
        self.store = store
        self.share = share
        self.found: VersionCache[frozenset[str]] = VersionCache(store, CACHE_VERSIONS)

    def clear(self) -> None:
        self.found.clear()

    def terms(self, doc_id: str, version_id: str) -> frozenset[str]:
        return self.found.get(doc_id, version_id, lambda: self._build(doc_id, version_id))

    def _build(self, doc_id: str, version_id: str) -> frozenset[str]:
        pages = sorted(self.store.region_index(doc_id, version_id).of_kind(doc_id, version_id, "page"),
                       key=lambda r: r.first_page)
        return name_terms([p.text for p in pages], self.share)
