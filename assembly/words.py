"""Content-word sets for cheap lexical overlap (MMR similarity, sub-question coverage, support)."""

from __future__ import annotations

import re
from functools import lru_cache

from folio.kernel.textnorm import fts_text

_WORD = re.compile(r"[^\W_]+(?:[.,][0-9]+)*", re.UNICODE)
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if in into is
    it its itself may might must no not of on or our shall should so such than that the their them then
    there these they this those to was we were what when where which while who whom why will with would
    you your""".split()
)


@lru_cache(maxsize=65536)
def content_words(text: str) -> frozenset[str]:
    """Lower-cased words and numbers minus stopwords; a CJK run (written without spaces) counts as
    its overlapping character bigrams, as the full-text index sees it (``ingest.textnorm``).

    >>> sorted(content_words("The P1 target is 15 minutes."))
    ['15', 'minutes', 'p1', 'target']
    >>> sorted(content_words("营业收入预测"))
    ['业收', '入预', '收入', '营业', '预测']
    """
    return frozenset(w for w in _WORD.findall(fts_text(text).lower()) if w not in STOPWORDS)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def coverage_of(query_words: frozenset[str], text_words: frozenset[str]) -> float:
    """Fraction of ``query_words`` found in ``text_words`` (0 when the query has none)."""
    if not query_words:
        return 0.0
    return len(query_words & text_words) / len(query_words)
