"""Selection: which hits become units, and which candidates are offered the budget (``SelectionOptions``).

Before expansion, each hit in priority order is kept or given its fate (``expand_hits``): the whole list is
``below_threshold`` when retrieval is too weak to answer from (``min_relevance``) or the question is off-topic
(``assembly.relevance``); a hit is a ``duplicate`` of an earlier hit on the same region, a ``weak_document``
when its document is left out, ``below_threshold`` under ``score_threshold``, a ``missing_region``,
``navigation`` when it lies on a table of contents page, a signature page or an exhibit index, or is the
forward-looking-statements caution, and the question does not ask about that (``assembly.navigation``), or
``no_content``. After candidates are made, ``max_items`` and ``modality_slots``
cap the list (``apply_caps``), before the budget, so that a bigger budget never drops an item.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from folio.assembly.expansion.expander import Expander
from folio.assembly.expansion.units import Unit
from folio.assembly.navigation import asks_for, why_left_out
from folio.assembly.options import AssemblyOptions
from folio.assembly.packing.candidates import Cand
from folio.assembly.relevance import Focus
from folio.kernel.hit import Hit
from folio.kernel.model import Region


@dataclass
class Found:
    """The hits in priority order (``shits``) and what became of each before packing: its unit
    (``unit_of``; ``units`` in order) or its fate (``fate``: duplicate, below threshold, ...)."""

    shits: list[Hit]
    units: list[Unit] = field(default_factory=list)
    unit_of: dict[int, Unit] = field(default_factory=dict)
    regions: dict[int, Region] = field(default_factory=dict)
    fate: dict[int, tuple[str, str]] = field(default_factory=dict)


def expand_hits(shits: Sequence[Hit], expander: Expander, options: AssemblyOptions, judged: Focus, query: str) -> Found:
    """One unit per usable hit, in priority order; every other hit gets its fate (``judged``: the documents
    left out and the off-topic verdict, ``assembly.relevance``). Regions are read from the expander's source."""
    found = Found(shits=list(shits))
    fate = found.fate
    seen: dict[str, int] = {}
    top = shits[0].score if shits else 0.0
    weak = _weak_retrieval(shits, options) or judged.off_topic
    for i, h in enumerate(shits):
        if weak:
            fate[i] = ("below_threshold", weak)
            continue
        if h.region_id in seen:
            fate[i] = ("duplicate", f"same region as the hit ranked {shits[seen[h.region_id]].rank}")
            continue
        seen[h.region_id] = i
        left_out = judged.left_out(h)
        if left_out:
            fate[i] = ("weak_document", left_out)
            continue
        if _below(h.score, top, options):
            fate[i] = ("below_threshold", f"score {h.score:.4g} below threshold")
            continue
        r = expander.source.get(h.region_id)
        if r is None:
            fate[i] = ("missing_region", "region not found in the source (deleted version?)")
            continue
        kind = expander.structure.navigation_kind(r)
        if kind is not None and not asks_for(kind, query):
            fate[i] = ("navigation", why_left_out(kind))
            continue
        found.regions[i] = r
        u = expander.expand(i, h, r)
        if u is None:
            fate[i] = ("no_content", "no text and images are off")
            continue
        found.units.append(u)
        found.unit_of[i] = u
    return found


def _below(score: float, top: float, o: AssemblyOptions) -> bool:
    t = o.score_threshold
    if t is None:
        return False
    if o.threshold_mode == "absolute":
        return score < t
    return top > 0 and score < t * top


def _weak_retrieval(hits: Sequence[Hit], o: AssemblyOptions) -> str:
    """A reason when retrieval is too weak to answer from, else ``""``.

    Fused RRF scores are rank-based and say nothing about absolute relevance, so the guard reads
    the dense retriever's cosine similarity; it only judges when some hit has one.
    """
    if o.min_relevance is None:
        return ""
    dense = [s.score for h in hits for s in h.sources if s.retriever == "dense"]
    if not dense or max(dense) >= o.min_relevance:
        return ""
    return f"weak retrieval: best semantic similarity {max(dense):.2f} < min_relevance {o.min_relevance}"


def apply_caps(cands: Sequence[Cand], options: AssemblyOptions) -> list[Cand]:
    """The candidates left after ``max_items`` and ``modality_slots`` (applied before the budget, so a
    bigger budget never drops an item); the others get their status."""
    slots = dict(options.modality_slots or {})
    used_slots: dict[str, int] = {}
    packable: list[Cand] = []
    for c in cands:
        m = c.unit.modality
        if options.max_items is not None and len(packable) >= options.max_items:
            c.status = "excluded_max_items"
            continue
        if m in slots and used_slots.get(m, 0) >= slots[m]:
            c.status = "excluded_slot"
            continue
        used_slots[m] = used_slots.get(m, 0) + 1
        packable.append(c)
    return packable
