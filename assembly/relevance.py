"""Relevance across documents: on a hit list drawn from several documents (an unscoped question over a mixed
store), which documents are worth packing, and whether any document supports the question at all.

Fused RRF scores are rank-based: every question gets a first-ranked hit, however unrelated, and the budget is
then filled with whatever ranks next, from any document. Two raw scores do say something across documents,
because each retriever scores every document of one question on one scale:

* the lexical (BM25) score of a document's best hit, against the best document's;
* the dense (cosine) similarity of a document's best hit, against the best document's.

**The document gate** keeps the first-ranked hit's document and every document whose best BM25 score is at
least ``DOC_LEX_SHARE`` of the best, or whose best cosine is within ``DOC_DENSE_MARGIN`` of the best, or that a
page or label reference in the question points at. The hits of the other documents are not packed (their fate
is ``weak_document``). A document without either score (image-only hits) is kept: it cannot be judged.

**The off-topic check** refuses the question when no hit reaches ``OFF_TOPIC_DENSE`` cosine *and* no page among
the first ``COVER_HITS`` hits holds ``OFF_TOPIC_COVER`` of the question's content words. Both signals are weak
alone (measured: on-topic and off-topic questions overlap on either); together they separate them.

Both apply only when the hits come from two documents or more, so a question scoped to one document (or a
store of one) is judged by ``min_relevance`` alone, as before. Thresholds were measured on the three evaluation
stores with 40 general-knowledge questions (``benchmarks/results/README.md``, issue 23).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from folio.assembly.words import content_words
from folio.kernel.hit import Hit
from folio.kernel.index import RegionSource

DOC_LEX_SHARE = 0.7
DOC_DENSE_MARGIN = 0.05
OFF_TOPIC_DENSE = 0.45
OFF_TOPIC_COVER = 0.5
COVER_HITS = 20
REF_RETRIEVERS = frozenset({"pageref", "labelref"})


@dataclass(frozen=True)
class Focus:
    """What the cross-document judgement decided: the documents left out (doc id -> why), and a reason to
    refuse the whole question (``""``: none)."""

    weak_docs: dict[str, str]
    off_topic: str = ""


NO_FOCUS = Focus({})


def _best(hits: Sequence[Hit], retriever: str) -> dict[str, float]:
    best: dict[str, float] = {}
    for h in hits:
        for s in h.sources:
            if s.retriever == retriever:
                best[h.doc_id] = max(best.get(h.doc_id, s.score), s.score)
    return best


def focus(query: str, hits: Sequence[Hit], source: RegionSource) -> Focus:
    """Judge ``hits`` (in priority order) across their documents; see the module docstring."""
    docs = {h.doc_id for h in hits}
    if len(docs) < 2:
        return NO_FOCUS
    referred = {h.doc_id for h in hits if any(s.retriever in REF_RETRIEVERS for s in h.sources)}
    lex, dense = _best(hits, "bm25"), _best(hits, "dense")
    if not referred and dense:
        reason = _off_topic(query, hits, source, max(dense.values()))
        if reason:
            return Focus({}, reason)
    return Focus(_weak_docs(hits[0].doc_id, docs, referred, lex, dense))


def _weak_docs(top: str, docs: set[str], referred: set[str], lex: dict[str, float],
               dense: dict[str, float]) -> dict[str, str]:
    top_lex, top_dense = max(lex.values(), default=0.0), max(dense.values(), default=0.0)
    weak: dict[str, str] = {}
    for d in sorted(docs - referred - {top}):
        if not ((top_lex > 0 and d in lex) or d in dense):
            continue  # no score to compare (image-only evidence, or no lexical score above zero)
        lx, dn = lex.get(d, 0.0), dense.get(d, 0.0)
        if (top_lex > 0 and lx >= DOC_LEX_SHARE * top_lex) or (dense and dn >= top_dense - DOC_DENSE_MARGIN):
            continue
        weak[d] = (f"weaker document: best lexical score {lx:.3g} < {DOC_LEX_SHARE} x {top_lex:.3g} and best "
                   f"semantic similarity {dn:.2f} < {top_dense:.2f} - {DOC_DENSE_MARGIN}")
    return weak


def _off_topic(query: str, hits: Sequence[Hit], source: RegionSource, top_dense: float) -> str:
    if top_dense >= OFF_TOPIC_DENSE:
        return ""
    words = content_words(query)
    cover = _page_cover(words, hits[:COVER_HITS], source) if words else 0.0
    if cover >= OFF_TOPIC_COVER:
        return ""
    return (f"off-topic: no document supports the question (best semantic similarity {top_dense:.2f} < "
            f"{OFF_TOPIC_DENSE}, and no page holds {OFF_TOPIC_COVER:.0%} of its words: at most {cover:.0%})")


def _page_cover(words: frozenset[str], hits: Sequence[Hit], source: RegionSource) -> float:
    """The largest share of ``words`` found on one page, reading the hits' own region texts."""
    pages: dict[tuple[str, int], set[str]] = defaultdict(set)
    for h in hits:
        r = source.get(h.region_id)
        if r is not None and r.text:
            pages[(h.version_id, h.pages[0] if h.pages else 0)] |= content_words(r.text) & words
    return max((len(w) / len(words) for w in pages.values()), default=0.0)
