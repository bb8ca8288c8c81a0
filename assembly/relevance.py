"""Relevance across documents: on a hit list drawn from several documents (an unscoped question over a mixed
store), which documents are worth packing, and whether any document supports the question at all.

Fused RRF scores are rank-based: every question gets a first-ranked hit, however unrelated, and the budget is
then filled with whatever ranks next, from any document. What does say something across documents:

* the lexical (BM25) score of a document's best hit, against the best document's;
* the dense (cosine) similarity of a document's best hit, against the best document's;
* the question's words on one page: how many of the question's content words the best page of a document holds
  (read from the hits' own region texts). A rare word makes a high BM25 score alone (the R manual's
  "Acknowledgements" page outscored the support policy on "What is the penalty if a P1 acknowledgement is
  late?"), so the scores alone cannot tell one shared word from a match.

**The document gate** keeps the first-ranked hit's document, the one document that a page or label reference
in the question points at (when only one does), and every other document whose best BM25 score is at least
``DOC_LEX_SHARE`` of the best or whose best cosine is the best, unless its match is one shared word: no page of
it holds two of the question's words while another document's page does. The hits of the documents left out
are not packed (their fate is ``weak_document``), except the pages a reference names that a text retriever
found too. A document without either score (image-only hits) is kept: it cannot be judged. A reference that
many documents match ("Table 1", "page 6") points at none of them: each is judged by its scores.

**The off-topic check** refuses the question when no page among the first ``COVER_HITS`` hits holds
``OFF_TOPIC_COVER`` of the question's content words and no hit reaches ``OFF_TOPIC_DENSE`` cosine, or when no
such page holds more than one of its words (of two or more) and no hit reaches ``ONE_WORD_DENSE``. Both signals
are weak alone (measured: on-topic and off-topic questions overlap on either); together they separate them.

Both apply only when the hits come from two documents or more, so a question scoped to one document (or a
store of one) is judged by ``min_relevance`` alone, as before. Thresholds were measured on the three evaluation
stores and the sample store with 40 general-knowledge questions (``benchmarks/results/README.md``, issues 23
and 34).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from folio.assembly.words import content_words
from folio.kernel.hit import Hit
from folio.kernel.index import RegionSource

DOC_LEX_SHARE = 0.9
OFF_TOPIC_DENSE = 0.45
OFF_TOPIC_COVER = 0.5
ONE_WORD_DENSE = 0.55
COVER_HITS = 20
REF_RETRIEVERS = frozenset({"pageref", "labelref"})


@dataclass(frozen=True)
class Focus:
    """What the cross-document judgement decided: the documents left out (doc id -> why), and a reason to
    refuse the whole question (``""``: none)."""

    weak_docs: dict[str, str]
    off_topic: str = ""
    named: frozenset[tuple[str, int]] = frozenset()  # (version, page) of weak documents that stay (``_named``)

    def left_out(self, hit: Hit) -> str:
        """Why ``hit`` is not packed (``""``: it may be): its document is weak, and it is not a page that a
        reference in the question names."""
        why = self.weak_docs.get(hit.doc_id, "")
        if why and hit.pages and (hit.version_id, hit.pages[0]) in self.named and any(
                s.retriever in REF_RETRIEVERS for s in hit.sources):
            return ""
        return why


NO_FOCUS = Focus({})


@dataclass(frozen=True)
class _Words:
    """The question's content words on the hits' pages: the most on one page of each document (``per_doc``)
    and the most on one page among the first ``COVER_HITS`` hits (``first``)."""

    n: int
    per_doc: dict[str, int]
    first: int


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
    words = _words(content_words(query), hits, source)
    if not referred and dense:
        reason = _off_topic(words, max(dense.values()))
        if reason:
            return Focus({}, reason)
    weak = _weak_docs(hits, referred, lex, dense, words)
    return Focus(weak, named=_named(hits, weak.keys()))


def _named(hits: Sequence[Hit], weak: Iterable[str]) -> frozenset[tuple[str, int]]:
    """The pages of ``weak`` documents that a reference in the question names and a text retriever found too."""
    left = set(weak)
    refs, found = set(), set()
    for h in hits:
        if h.doc_id in left and h.pages:
            for s in h.sources:
                if s.retriever in REF_RETRIEVERS:
                    refs.add((h.version_id, h.pages[0]))
                elif s.retriever in ("bm25", "dense"):
                    found.add((h.version_id, h.pages[0]))
    return frozenset(refs & found)


def _weak_docs(hits: Sequence[Hit], referred: set[str], lex: dict[str, float], dense: dict[str, float],
               words: _Words) -> dict[str, str]:
    """The documents of ``hits`` (in priority order) weaker than the first hit's, each with why; ``referred``:
    the documents a reference in the question found, ``lex`` and ``dense`` each document's best scores."""
    top, docs = hits[0].doc_id, {h.doc_id for h in hits}
    top_lex, top_dense = max(lex.values(), default=0.0), max(dense.values(), default=0.0)
    most = max(words.per_doc.values(), default=0)
    weak: dict[str, str] = {}
    kept = referred if len(referred) == 1 else set()  # a reference many documents match ("Table 1") picks none
    for d in sorted(docs - kept - {top}):
        if not ((top_lex > 0 and d in lex) or d in dense or d in referred):
            continue  # no score to compare (image-only evidence, or no lexical score above zero)
        lx, dn, on_page = lex.get(d, 0.0), dense.get(d, 0.0), words.per_doc.get(d, 0)
        if on_page <= 1 < most:
            weak[d] = (f"weaker document: its pages hold at most {on_page} of the question's words, another "
                       f"document's {most}")
        elif not ((top_lex > 0 and lx >= DOC_LEX_SHARE * top_lex) or (dense and dn >= top_dense)):
            weak[d] = (f"weaker document: best lexical score {lx:.3g} < {DOC_LEX_SHARE} x {top_lex:.3g} and best "
                       f"semantic similarity {dn:.2f} < {top_dense:.2f}")
    return weak


def _off_topic(words: _Words, top_dense: float) -> str:
    cover = words.first / words.n if words.n else 0.0
    if top_dense < OFF_TOPIC_DENSE and cover < OFF_TOPIC_COVER:
        return (f"off-topic: no document supports the question (best semantic similarity {top_dense:.2f} < "
                f"{OFF_TOPIC_DENSE}, and no page holds {OFF_TOPIC_COVER:.0%} of its words: at most {cover:.0%})")
    if top_dense < ONE_WORD_DENSE and words.n >= 2 and words.first <= 1:
        return (f"off-topic: no document supports the question (best semantic similarity {top_dense:.2f} < "
                f"{ONE_WORD_DENSE}, and no page holds more than one of its {words.n} words)")
    return ""


def _words(words: frozenset[str], hits: Sequence[Hit], source: RegionSource) -> _Words:
    """Count the question's ``words`` on the hits' pages, reading the hits' own region texts."""
    pages: dict[tuple[str, str, int], set[str]] = defaultdict(set)
    first = 0
    for i, h in enumerate(hits):
        r = source.get(h.region_id) if words else None
        if r is not None and r.text:
            page = pages[(h.doc_id, h.version_id, h.pages[0] if h.pages else 0)]
            page |= content_words(r.text) & words
            if i < COVER_HITS:  # what the first hits alone put on the page
                first = max(first, len(page))
    per_doc: dict[str, int] = {}
    for (doc, _, _), found in pages.items():
        per_doc[doc] = max(per_doc.get(doc, 0), len(found))
    return _Words(len(words), per_doc, first)
