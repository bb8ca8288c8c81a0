"""Small documents sent whole: when all the page text of a document the hits come from fits the evidence
room, the pages no hit touches are added after the hits as page hits (retriever ``document``).

Retrieval returns its top hits, and on a short document (a slide deck with a title per slide, a two-page
release) they can miss a page whose only text is the answer while most of the room stays unused; a peer
that packs ranked units until the budget is spent sends the whole document. The added hits rank below
every real hit, in page order, so packing reaches them only with room to spare: they never displace a
hit's evidence, and a larger budget only adds to them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from folio.kernel.hit import Hit, Source
from folio.kernel.index import RegionSource
from folio.kernel.model import Region

DOCUMENT_RETRIEVER = "document"
"""The retriever name of the added page hits (a text retriever, ``expansion.expander.Expander.text_retrievers``:
their pages go as text)."""

MAX_CHARS_PER_TOKEN = 16
"""A document with more page characters than this many per token of room is not counted (cheap guard)."""

SCORE_STEP = 1e-9
"""Each added page scores this much below the one before (the first below the lowest hit)."""


def whole_documents(
    hits: Sequence[Hit],
    source: RegionSource,
    room: int,
    count: Callable[[str], int],
    text: Callable[[Region], str] = lambda p: p.text,
) -> list[Hit]:
    """``hits`` followed by a page hit for each page with text that no hit lies on, for every document (version)
    of the hits whose page text (all pages together, each as ``text`` gives it: as it is sent) costs at most
    ``room`` tokens."""
    out = list(hits)
    if not hits or room <= 0:
        return out
    touched = {(h.version_id, p) for h in hits for p in h.pages}
    score = min(h.score for h in hits)
    rank = max(h.rank for h in hits)
    for doc_id, version_id in dict.fromkeys((h.doc_id, h.version_id) for h in hits):
        pages = [p for p in source.of_kind(doc_id, version_id, "page") if p.text.strip()]
        if sum(len(p.text) for p in pages) > room * MAX_CHARS_PER_TOKEN:
            continue
        if sum(count(text(p)) for p in pages) > room:
            continue
        for p in pages:
            if (version_id, p.first_page) in touched:
                continue
            rank += 1
            score -= SCORE_STEP
            out.append(
                Hit(
                    region_id=p.region_id,
                    doc_id=doc_id,
                    version_id=version_id,
                    kind="page",
                    modality="page",
                    pages=(p.first_page,),
                    score=score,
                    rank=rank,
                    sources=(Source(retriever=DOCUMENT_RETRIEVER, rank=rank, score=0.0),),
                )
            )
    return out


def after_every_hit(more: list[Hit], kept: int, hits: Sequence[Hit]) -> list[Hit]:
    """``more`` (``whole_documents`` of the first ``kept`` of them) with the added hits ranked after every one of
    ``hits``: a weak document's hits are left out of the pages made whole but keep their ranks, and an added page
    ranked after the kept hits only could share a rank with one of them."""
    last = max((h.rank for h in hits), default=0)
    top = max((h.rank for h in more[:kept]), default=0)
    if last <= top:
        return more
    shift = last - top
    return [*more[:kept], *(h.model_copy(update={"rank": h.rank + shift, "sources": tuple(
        s.model_copy(update={"rank": s.rank + shift}) for s in h.sources)}) for h in more[kept:])]
