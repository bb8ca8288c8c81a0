"""Priority order: which candidate is offered the budget first.

Priority (budget-independent): score descending, then hit rank, then input order (``by_priority``).
Optional re-orderings of the units that survive dedupe, still budget-independent (``prioritise``):
sub-question coverage (candidates that cover a not-yet-covered sub-question move to the front, in
priority order) and MMR (``lambda * score - (1 - lambda) * max Jaccard similarity`` to the candidates
already placed). ``max_items`` and ``modality_slots`` then cap the list (``assembly.selection``).
"""

from __future__ import annotations

from collections.abc import Sequence

from folio.assembly.expansion.units import Unit
from folio.assembly.options import AssemblyOptions
from folio.assembly.render import Body, body_of
from folio.assembly.words import content_words, coverage_of, jaccard
from folio.kernel.hit import Hit

SUBQ_COVER_MIN = 0.5


def by_priority(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` in priority order: score, then rank, then input order."""
    return [hits[i] for i in sorted(range(len(hits)), key=lambda i: (-hits[i].score, hits[i].rank, i))]


def prioritise(survivors: list[Unit], options: AssemblyOptions) -> tuple[list[Unit], list[Body]]:
    """The survivors with their bodies, reordered for sub-question coverage and MMR when asked."""
    bodies = [body_of(u) for u in survivors]
    subq = [content_words(q) for q in options.sub_questions]
    if subq:
        for u, b in zip(survivors, bodies, strict=True):
            w = content_words(b.text)
            u.covers = [k for k, q in enumerate(subq) if coverage_of(q, w) >= SUBQ_COVER_MIN]
        perm = coverage_order([u.covers for u in survivors])
        survivors, bodies = [survivors[k] for k in perm], [bodies[k] for k in perm]
    if options.mmr_lambda is not None and len(survivors) > 1:
        perm = mmr_order([u.score for u in survivors], [content_words(b.text) for b in bodies],
                         options.mmr_lambda)
        survivors, bodies = [survivors[k] for k in perm], [bodies[k] for k in perm]
    return survivors, bodies


def mmr_order(scores: Sequence[float], words: Sequence[frozenset[str]], lam: float) -> list[int]:
    """Maximal marginal relevance over candidates already in priority order; returns indices."""
    n = len(scores)
    if n == 0:
        return []
    hi, lo = max(scores), min(scores)
    norm = [(s - lo) / (hi - lo) if hi > lo else 1.0 for s in scores]
    left = list(range(n))
    chosen: list[int] = []
    max_sim = [0.0] * n
    while left:
        best = max(left, key=lambda i: (lam * norm[i] - (1 - lam) * max_sim[i], -i))
        chosen.append(best)
        left.remove(best)
        for i in left:
            s = jaccard(words[i], words[best])
            if s > max_sim[i]:
                max_sim[i] = s
    return chosen


def coverage_order(covers: Sequence[Sequence[int]]) -> list[int]:
    """Candidates covering a still-uncovered sub-question first (priority order kept), then the rest."""
    covered: set[int] = set()
    front, rest = [], []
    for i, c in enumerate(covers):
        if set(c) - covered:
            front.append(i)
            covered |= set(c)
        else:
            rest.append(i)
    return front + rest
