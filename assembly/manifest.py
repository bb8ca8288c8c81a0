"""The package's record of the hits: what became of each (``manifest``), the ones not packed (``excluded``),
the retrieval summary (``retrieval``: hits, coverage before and after packing, page references understood,
notes) and, when nothing is packed, why (``refusal_reason``).

Every hit has one manifest entry: its fate before packing (``assembly.selection``), or its candidate's
status; a hit merged into another's candidate is ``merged_into:<id>``, a hit whose evidence a fallback rung
no longer carries is ``excluded_budget`` with the reason, so nothing is changed silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import TypeAdapter

from folio.assembly.expansion.units import Unit
from folio.assembly.package import Coverage, ExcludedEntry, ManifestEntry, PageRefOut, RetrievalHitOut, RetrievalInfo
from folio.assembly.packing.candidates import Cand
from folio.kernel.hit import Hit
from folio.kernel.index import RegionSource
from folio.kernel.model import Region
from folio.kernel.pageref import parse_page_refs

_MANIFEST = TypeAdapter(list[ManifestEntry])
_EXCLUDED = TypeAdapter(list[ExcludedEntry])
_HITS_OUT = TypeAdapter(list[RetrievalHitOut])


def manifest(shits: Sequence[Hit], fate: Mapping[int, tuple[str, str]], unit_of: Mapping[int, Unit],
             cands: Sequence[Cand], regions: Mapping[int, Region]) -> tuple[list[ManifestEntry], list[ExcludedEntry]]:
    """One manifest entry per hit, and an exclusion entry for each hit that is not packed. What the hits of one
    candidate share is worked out once per candidate, and each list is validated in one call."""
    by_unit = {id(c.unit): c for c in cands}
    shared: dict[int, tuple[Cand, str, list[int], int]] = {}
    manifest: list[dict[str, Any]] = []
    excluded: list[dict[str, Any]] = []
    for i, h in enumerate(shits):
        pages = list(h.pages) or (regions[i].pages if i in regions else [])
        cid = ctx = exp = fb = None
        covers: list[int] = []
        tokens = 0
        if i in fate:
            f, why = fate[i]
        else:
            root = unit_of[i].root()
            one = shared.get(id(root))
            if one is None:
                one = shared[id(root)] = _candidate_share(root, by_unit[id(root)])
            c, exp, covers, first = one
            cid, ctx, fb = c.cid, c.body.context_id, c.fallback_from
            f, tokens, why = _fate_of(i, c, root, first)
        manifest.append({"region_id": h.region_id, "rank": h.rank, "score": h.score, "pages": pages, "fate": f,
                         "tokens": tokens, "reason": why, "citation_id": cid, "context_id": ctx, "expansion": exp,
                         "covers": covers, "fallback_from": fb})
        if f not in ("included", "truncated"):
            excluded.append({"region_id": h.region_id, "pages": pages, "reason": f, "tokens": tokens, "detail": why})
    return _MANIFEST.validate_python(manifest), _EXCLUDED.validate_python(excluded)


def _candidate_share(root: Unit, c: Cand) -> tuple[Cand, str, list[int], int]:
    """What every hit of candidate ``c`` (unit ``root``) shows: the candidate, its expansion, the sub-questions
    it covers, and the hit it answers for (the first it carries)."""
    exp = "+".join(sorted(root.expansions)) if c.rung is None else c.rung
    return c, exp, list(root.covers), min(c.carried if c.carried else root.triggers)


def _fate_of(i: int, c: Cand, root: Unit, first: int) -> tuple[str, int, str]:
    """Fate, tokens and reason of hit ``i`` of candidate ``c``, whose own hit is ``first``."""
    if c.status == "duplicate":
        return "duplicate", 0, f"its text ({c.rung or 'as packed'}) is already in {c.duplicate_of}"
    if c.carried is not None and i not in c.carried:
        return "excluded_budget", 0, (f"{c.cid} did not fit whole and was replaced by a smaller source region "
                                      f"({c.rung}) that does not carry this hit")
    if first == i and c.rung is not None:
        return c.status, c.cost, (f"replaced by a smaller source region: {c.rung} instead of {c.fallback_from} "
                                  f"({c.full_cost} tokens did not fit)")
    if first == i:
        why = {
            "included": "packed in full",
            "truncated": f"cut at structural boundaries to fit ({c.cost} tokens)",
            "excluded_budget": f"{c.cost} tokens did not fit the remaining budget",
            "excluded_slot": f"modality slot for {root.modality} full",
            "excluded_max_items": "max_items reached",
        }.get(c.status, c.status)
        return c.status, c.cost, why
    return f"merged_into:{c.cid}", 0, f"covered by {c.cid} ({c.body.context_id}), which is {c.status}"


def retrieval_info(query: str, shits: Sequence[Hit], packed: Sequence[Cand], source: RegionSource,
                   notes: list[str]) -> RetrievalInfo:
    """``ContextPackage.retrieval``: the hits in priority order, the pages, documents and hits covered before
    and after packing (a hit counts after packing when a packed item carries it), the page references."""
    return RetrievalInfo(
        hits=_HITS_OUT.validate_python([{"region_id": h.region_id, "pages": list(h.pages), "score": h.score,
                                         "retriever": h.retriever, "rank": h.rank} for h in shits]),
        coverage_before=_coverage(shits, range(len(shits))),
        coverage_after=_coverage(shits, [i for c in packed for i in c.unit.triggers
                                         if c.carried is None or i in c.carried]),
        page_refs=_page_refs(query, shits, source),
        notes=notes,
    )


def _page_refs(query: str, shits: Sequence[Hit], source: RegionSource) -> list[PageRefOut]:
    """What each page reference in the question was understood as: the pages the ``pageref`` retriever
    hit whose printed label or physical number is one the reference names."""
    refs = parse_page_refs(query)
    if not refs:
        return []
    named = [(p, source.get(h.region_id)) for h in shits if h.kind == "page"
             and any(s.retriever == "pageref" for s in h.sources) for p in h.pages]
    out = []
    for ref in refs:
        nums = {str(n) for n in ref.numbers}
        if ref.position == "start":
            pages = sorted({p for p, _ in named if p in ref.numbers})
        elif ref.position == "end":  # the last page is the highest page any reference can name
            pages = [max(p for p, _ in named)] if named else []
        else:
            pages = sorted({p for p, r in named if str(p) in nums or (r is not None and r.meta_get("label") in nums)})
        out.append(PageRefOut(text=ref.text, numbers=list(ref.numbers) if ref.position == "printed" else [],
                              pages=pages))
    return out


def _coverage(shits: Sequence[Hit], idx: Sequence[int] | range) -> Coverage:
    sel = sorted(set(idx))
    pages = {(shits[i].version_id, p) for i in sel for p in shits[i].pages}
    docs = {shits[i].doc_id for i in sel}
    return Coverage(pages=len(pages), docs=len(docs), hits=len(sel))


def refusal_reason(hits: Sequence[Hit], fate: Mapping[int, tuple[str, str]], cands: Sequence[Cand],
                   room: int) -> str:
    """Why nothing was packed, the first that applies: no hits, weak retrieval or off-topic, no usable
    evidence, no room for evidence, or nothing that fits."""
    if not hits:
        return "no hits: retrieval found no evidence"
    if all(f == "below_threshold" for f, _ in fate.values()) and len(fate) == len(hits):
        first = next(iter(fate.values()))[1]
        if first.startswith(("weak retrieval", "off-topic")):
            return first
        return "weak retrieval: every hit is below the score threshold"
    if not cands:
        return "no usable evidence: every hit was a duplicate, missing or empty"
    if room <= 0:
        return f"no room for evidence: the fixed prompt leaves {room} tokens"
    return "no evidence fits the budget"
