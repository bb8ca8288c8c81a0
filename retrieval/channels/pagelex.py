"""Whole-page lexical ranking: Okapi BM25 over each page's full text, as one more ranked list for fusion.

The text retrievers rank small units (sentences, paragraphs, table parts) one at a time, and LanceDB's
full-text index scores them against collection statistics dominated by those small units. A page that
holds an answer usually holds several of the question's words spread over its lines, none of which
wins alone: whole-page BM25 is the ranking that finds it (the ``bm25-pages`` peer in
``benchmarks/quality/peers.py``, which this mirrors: k1 = 1.5, b = 0.75, idf ``log(1 + (N - n + 0.5) / (n + 0.5))``
over the pages of one version, lower-cased word tokens, CJK runs as character bigrams), except that
plural endings are folded (``channels.pagewords.fold_plural``: Harman's S-stemmer), so "asset" finds a page of "assets".

Statistics are per version (one document's pages), built once from the version's page regions and kept
in an LRU; a scope of several versions merges their lists by score. A scope of more than ``MAX_VERSIONS``
versions is searched in the versions the text channels found (``channels.base.versions_to_search``), which
bounds the work a broad question can cause by what it found, not by the size of the store.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from folio.ingest.storage.interface import StoreReader
from folio.kernel.scope import Scope
from folio.retrieval.cache.version_cache import VersionCache
from folio.retrieval.channels.base import ChannelQuery, ChannelSpec, Ranking, register, versions_to_search
from folio.retrieval.channels.pagewords import page_terms, version_pages
from folio.retrieval.text import Candidate

# Weight in fusion of the whole-page BM25 list; 0 turns the channel off. Measured with
# benchmarks/eval_quality.py on all of mmlb (README, "Quality"): against no channel, 0.5 changed answers by
# +5.9/-2.0/0 (half A) and +4.7/+4.8/+2.4 (half B) at 1k/2k/4k, but cost wide answers at 1k/2k (-4.5/-2.3);
# 0.25 still lost 3.4 on wide at 1k and gained less on mmlb; 1.0 and 1.5 lost half-B answers at 1k.
PAGE_LEX_WEIGHT = 0.5
K1 = 1.5
B = 0.75
MAX_VERSIONS = 64  # versions of one scope ranked by page text
CACHE_VERSIONS = 256  # page lexicons kept


@dataclass(frozen=True)
class PageLexicon:
    """BM25 statistics of one version's pages: postings per term (page positions, term counts)."""

    region_ids: tuple[str, ...]
    pages: tuple[int, ...]
    norms: np.ndarray  # k1 * (1 - b + b * len / avg_len) per page
    postings: dict[str, tuple[np.ndarray, np.ndarray]]
    idf: dict[str, float]

    @classmethod
    def build(cls, region_ids: Sequence[str], pages: Sequence[int], texts: Sequence[str]) -> PageLexicon:
        tfs = [Counter(page_terms(t)) for t in texts]
        lens = np.array([sum(c.values()) for c in tfs], dtype=np.float64)
        avg = float(lens.mean()) if len(lens) and lens.mean() > 0 else 1.0
        where: dict[str, list[tuple[int, int]]] = {}
        for i, c in enumerate(tfs):
            for term, n in c.items():
                where.setdefault(term, []).append((i, n))
        n_pages = len(texts)
        postings = {t: (np.array([i for i, _ in ps], dtype=np.int64), np.array([n for _, n in ps], dtype=np.float64))
                    for t, ps in where.items()}
        idf = {t: math.log(1 + (n_pages - len(ps) + 0.5) / (len(ps) + 0.5)) for t, ps in where.items()}
        return cls(tuple(region_ids), tuple(pages), K1 * (1 - B + B * lens / avg), postings, idf)

    def scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every page for the distinct ``terms``."""
        out = np.zeros(len(self.region_ids))
        for term in dict.fromkeys(terms):
            post = self.postings.get(term)
            if post is None:
                continue
            idx, tf = post
            out[idx] += self.idf[term] * tf * (K1 + 1) / (tf + self.norms[idx])
        return out


class PageLexRetriever:
    """Ranks the pages of a scope by BM25 over their whole text (see the module docstring)."""

    def __init__(self, store: StoreReader) -> None:
        self.store = store
        self.lexicons: VersionCache[PageLexicon] = VersionCache(store, CACHE_VERSIONS)

    def clear(self) -> None:
        """Forget the cached page lexicons (``Retriever.refresh``)."""
        self.lexicons.clear()

    def lexicon(self, doc_id: str, version_id: str) -> PageLexicon:
        """The version's page lexicon, built once per version stamp."""
        return self.lexicons.get(doc_id, version_id, lambda: self._build(doc_id, version_id))

    def _build(self, doc_id: str, version_id: str) -> PageLexicon:
        pages = version_pages(self.store, doc_id, version_id)
        return PageLexicon.build([p[0] for p in pages], [p[1] for p in pages], [p[2] for p in pages])

    def search(self, query: str, scope: Scope, limit: int, versions: Sequence[tuple[str, str]]) -> list[Candidate]:
        """Pages of ``scope`` with any of the query's words, best first (at most ``limit``), in ``versions`` of it
        (``channels.base.versions_to_search``)."""
        terms = page_terms(query)
        if not terms or scope.empty or limit <= 0 or (scope.kinds is not None and "page" not in scope.kinds):
            return []
        out: list[Candidate] = []
        for doc_id, version_id in versions:
            lex = self.lexicon(doc_id, version_id)
            scores = lex.scores(terms)
            for i in np.flatnonzero(scores > 0):
                if scope.accepts(doc_id, version_id, lex.pages[i], "page"):
                    out.append(Candidate(lex.region_ids[i], doc_id, version_id, "page", lex.pages[i],
                                         float(scores[i])))
        out.sort(key=lambda c: (-c.score, c.region_id))
        return out[:limit]


# ----------------------------------------------------------------------------- the channel
@dataclass
class PageLexChannel:
    """Okapi BM25 over each page's whole text (``PageLexRetriever``); adds a list only when it found a page."""

    pagelex: PageLexRetriever
    weight: float
    name: str = "pagelex"
    table: str = "regions"

    def search(self, query: ChannelQuery) -> Ranking | None:
        if self.weight <= 0:
            return None
        found = self.pagelex.search(query.lexical, query.scope, query.limit,
                                    versions_to_search(query, MAX_VERSIONS))
        return Ranking(found) if found else None

    def clear(self) -> None:
        self.pagelex.clear()

    def status(self) -> dict[str, Any] | None:
        return None


register(ChannelSpec("pagelex", lambda c: PageLexChannel(PageLexRetriever(c.store), c.options["page_lex_weight"]),
                     {"page_lex_weight": PAGE_LEX_WEIGHT}, text=True))
