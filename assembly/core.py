"""``assemble``: hits -> expand -> dedupe/merge -> prioritise -> pack -> order -> cite -> package.

The steps, each in its own room:

* the prompt without evidence and the evidence room it leaves, and the expansion caps that follow the
  room (``assembly.room``);
* which hits become units (``assembly.selection``), each expanded to its unit of evidence
  (``assembly.expansion``); whole short documents (``assembly.wholedoc``) and the cross-document verdict
  (``assembly.relevance``) before that;
* dedupe and merge (``assembly.dedupe``), priority order (``assembly.priority``), candidates with their
  citation ids and the ``max_items``/``modality_slots`` caps (``assembly.packing.candidates``,
  ``assembly.selection``);
* packing (``assembly.packing``: greedy with fallbacks, breadth or monotone; nested budgets; structural
  truncation and the compressed tail into what is left);
* order (``assembly.order``), the prompt and its exact count (``assembly.prompt``), and the package's items
  and record of the hits (``assembly.items``, ``assembly.manifest``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from folio.assembly.budget import describe_formula, get_counter
from folio.assembly.dedupe import dedupe
from folio.assembly.expansion.expander import Caps, Expander, RequestFacts
from folio.assembly.items import breakdown, context_item, lines_of
from folio.assembly.manifest import manifest, refusal_reason, retrieval_info
from folio.assembly.options import AssemblyOptions
from folio.assembly.order import order_items
from folio.assembly.package import BudgetInfo, ContextPackage, PromptOut
from folio.assembly.packing.breadth import pack_breadth
from folio.assembly.packing.candidates import Cand, Fitting, make_candidates
from folio.assembly.packing.compress import Compressor, Tail, compress_rest
from folio.assembly.packing.compress import reserve as compress_reserve
from folio.assembly.packing.greedy import pack_greedy
from folio.assembly.packing.leftover import truncate_rest
from folio.assembly.packing.monotone import pack_monotone
from folio.assembly.packing.nesting import (
    added_by_documents,
    nest_order,
    nested_carries_more,
    nests,
    page_costs,
    priority_keeps,
    text_pages,
)
from folio.assembly.priority import by_priority, prioritise
from folio.assembly.prompt import Block, build_prompt, count_prompt
from folio.assembly.relevance import NO_FOCUS, Focus, focus
from folio.assembly.room import Frame, frame_of, page_cap, parent_cap, window_tokens
from folio.assembly.selection import Found, apply_caps, expand_hits
from folio.assembly.wholedoc import after_every_hit, whole_documents
from folio.assembly.words import content_words
from folio.kernel.errors import InvalidRequest
from folio.kernel.hit import Hit
from folio.kernel.index import RegionSource

log = logging.getLogger(__name__)


def assemble(  # noqa: PLR0913
    query: str,
    hits: Sequence[Hit],
    source: RegionSource,
    options: AssemblyOptions,
    *,
    filenames: Mapping[str, str] | None = None,
    retrieval_notes: Sequence[str] = (),
    compressor: Compressor | None = None,
) -> ContextPackage:
    """Build the context package for ``query`` from ranked ``hits``; see the package docstring.

    ``retrieval_notes`` (``SearchResult.notes``) are passed through to ``retrieval.notes``, followed by
    what compression did not do as asked. ``compressor`` writes the compressed bodies of
    ``compress="llm"`` (``assembly.packing.compress.Compressor``); that option without one is
    ``InvalidRequest``."""
    if options.compress == "llm" and compressor is None:
        raise InvalidRequest("compress='llm' needs an LLM compressor (the server's configured LLM endpoint: "
                             "FOLIO_LLM_BASE_URL and FOLIO_LLM_MODEL); use compress='extractive' without one")
    counter = get_counter(options.tokenizer)
    count = counter.memo()
    names = dict(filenames or {})
    notes = list(retrieval_notes)
    judged = focus(query, by_priority(hits), source) if options.document_focus == "auto" else NO_FOCUS
    job = _Job(query, hits, source, names, count, counter.name, judged)
    plan = _plan(job, options, compressor, notes)
    frame, found, packable = plan.frame, plan.found, plan.packable
    shits = found.shits
    packed = order_items(
        [c for c in packable if c.status in ("included", "truncated")],
        group=lambda c: (c.unit.doc_id, c.unit.version_id, c.unit.section_key or c.body.context_id),
        score=lambda c: c.unit.score,
        position=_position,
        how=options.order,
    )
    prompt, used, packed, reason = _render(job, options, plan, packed)
    entries, excluded = manifest(shits, found.fate, found.unit_of, plan.cands, found.regions)
    return ContextPackage(
        query=query,
        budget=BudgetInfo(limit=frame.limit, used=used, tokenizer=counter.name,
                          breakdown=breakdown(packed, frame, used),
                          image_formula=describe_formula(options.image_tokens)),
        items=[context_item(c, names, shits, lines_of(c, found.regions, source, query)) for c in packed],
        excluded=excluded,
        manifest=entries,
        retrieval=retrieval_info(query, shits, packed, source, notes),
        prompt=prompt,
        refused=not packed,
        refusal_reason=reason,
        strategy=options.strategy,
        order=options.order,
    )


@dataclass(frozen=True)
class _Job:
    """What every packing of one request shares, at any budget: the question, the hits, their source, the
    file names by version, the token counter and its tokenizer's name, and the cross-document verdict on the
    hits (``assembly.relevance``)."""

    query: str
    hits: Sequence[Hit]
    source: RegionSource
    names: Mapping[str, str]
    count: Callable[[str], int]
    tokenizer: str
    judged: Focus


@dataclass
class _Plan:
    """One packing of the hits at one budget: the frame, what expansion found, the candidates and the
    packable ones with their statuses set."""

    frame: Frame
    found: Found
    cands: list[Cand]
    packable: list[Cand]


def _plan(job: _Job, options: AssemblyOptions, compressor: Compressor | None, notes: list[str]) -> _Plan:
    """Expand, dedupe, prioritise and pack ``job``'s hits at ``options``' budget; with ``nested`` budgets, the
    pages covered at half the budget stay covered: packed in priority order with room kept for them, or with
    them first, whichever keeps more of them, when that is more than plain greedy keeps
    (``assembly.packing.nesting``). ``job.judged`` is the cross-document verdict on the hits
    (``assembly.relevance``), the same at every budget."""
    hits, count = job.hits, job.count
    frame = frame_of(job.query, options, count)
    shits, expander = _expander(job, hits, options, frame)
    if options.whole_documents and options.packing == "greedy" and not job.judged.off_topic:
        kept = [h for h in hits if h.doc_id not in job.judged.weak_docs]  # a weak document is not made whole
        more = after_every_hit(whole_documents(kept, job.source, frame.room, count,
                                               lambda p: expander.structure.sent_page(p).text), len(kept), hits)
        if len(more) > len(kept):
            shits, expander = _expander(job, [*hits, *more[len(kept):]], options, frame)
    found = expand_hits(shits, expander, options, job.judged, job.query)
    fit = Fitting(options, expander, found.shits, found.regions, count, frame.close_tokens)
    tail = Tail(job.query, frame.room, compressor if options.compress == "llm" else None, notes)
    survivors, bodies = prioritise(dedupe(found.units), options)
    cands = make_candidates(survivors, bodies, fit, job.names)
    packable = apply_caps(cands, options)
    _pack(packable, fit, tail)
    plan = _Plan(frame, found, cands, packable)
    if nests(options, frame.room):
        half = options.model_copy(update={"budget": options.limit // 2, "context_window": None})
        below = _plan(job, half, None, [])
        must = page_costs([c for c in below.packable if not added_by_documents(c, below.found.shits)])
        if not set(must) <= text_pages(packable):
            ranked = make_candidates(survivors, bodies, fit, job.names)
            in_rank = apply_caps(ranked, options)  # priority order, room kept for the carried pages
            keeps, hard = priority_keeps(in_rank, must)
            _pack(in_rank, fit, tail, keeps, hard)
            if set(must) <= text_pages(in_rank):  # all carried: no other order keeps more
                return _Plan(frame, found, ranked, in_rank)
            again = make_candidates(survivors, bodies, fit, job.names)
            first = apply_caps(again, options)
            order, keeps = nest_order(first, must)  # the carried pages first
            _pack(order, fit, tail, keeps)
            held = {way: len(must.keys() & text_pages(cs)) for way, cs in
                    (("rank", in_rank), ("nest", order), ("plain", packable))}
            if held["rank"] >= held["nest"] and held["rank"] > held["plain"]:
                plan = _Plan(frame, found, ranked, in_rank)
            elif nested_carries_more(must.keys(), text_pages(order), text_pages(packable)):
                plan = _Plan(frame, found, again, first)
    return plan


def _expander(job: _Job, hits: Sequence[Hit], options: AssemblyOptions, frame: Frame) -> tuple[list[Hit], Expander]:
    """``hits`` in priority order and the expander for them at this frame's room."""
    shits = by_priority(hits)
    caps = Caps(parent_cap(options, frame.room), page_cap(options, frame.room), window_tokens(options, frame.room))
    hit_ids = frozenset(h.region_id for h in hits)
    facts = RequestFacts(job.tokenizer, content_words(job.query), hit_ids, _page_hits(shits))
    expander = Expander(job.source, options, job.count, caps, facts)
    return shits, expander


def _page_hits(shits: Sequence[Hit]) -> dict[tuple[str, int], int]:
    """How many hits fall on each (version, page): a page many hits point at gets a larger excerpt."""
    out: dict[tuple[str, int], int] = {}
    for h in shits:
        if len(h.pages) == 1:
            key = (h.version_id, h.pages[0])
            out[key] = out.get(key, 0) + 1
    return out


def _pack(packable: Sequence[Cand], fit: Fitting, tail: Tail, keeps: Sequence[int] | None = None,
          hard: Collection[int] = ()) -> None:
    """Set each candidate's status in the evidence room (``tail.room``): greedy (with fallbacks and the
    compressed tail) or monotone packing, then structural truncation into what is left when asked.
    ``keeps``: greedy, the tokens to leave free after each candidate (``packing.nesting``)."""
    o, room = fit.o, tail.room
    if o.packing == "greedy":
        held = compress_reserve(o, room, packable)  # room for the compressed tail (packing.compress)
        slack = held + pack_greedy(packable, room - held, fit, keeps, hard)
    elif o.packing == "breadth":
        slack = pack_breadth(packable, room, fit)
    else:
        costs = [c.cost for c in packable]
        fits = pack_monotone(costs, room) if room > 0 else [False] * len(costs)
        slack = room
        for c, ok in zip(packable, fits, strict=True):
            if ok:
                c.status = "included"
                slack -= c.cost
    if o.structural_truncation and room > 0:
        slack = truncate_rest(packable, slack, fit)
    if o.compress != "off" and o.packing == "greedy" and room > 0:
        compress_rest(packable, slack, fit, tail)


def _render(job: _Job, options: AssemblyOptions, plan: _Plan,
            packed: list[Cand]) -> tuple[PromptOut, int, list[Cand], str | None]:
    """The prompt of the packed items and its exact token count, and why the package is refused when nothing
    is packed; refuses (no evidence) when the prompt would exceed the limit, and sends nothing when even the
    prompt without evidence does not fit."""
    query, count, frame = job.query, job.count, plan.frame
    reason = refusal_reason(job.hits, plan.found.fate, plan.cands, frame.room) if not packed else None
    limit = frame.limit
    blocks = [Block(c.open, c.body.text, c.image_url) for c in packed]
    prompt = build_prompt(options, query, blocks, not packed)
    used = count_prompt(prompt, count, sum(c.image_tokens for c in packed))
    if used > limit:
        if packed:  # cannot happen: costs are exact; kept as a hard guard
            log.error("assembled prompt %d > limit %d; refusing", used, limit)
            packed, reason = [], "internal accounting error"
            for c in plan.cands:
                if c.status in ("included", "truncated"):
                    c.status = "excluded_budget"
            prompt = build_prompt(options, query, [], True)
            used = count_prompt(prompt, count, 0)
        if used > limit:
            reason = (f"the prompt without evidence (system text, question, template) needs {used} tokens; "
                      f"the limit is {limit}")
            prompt = prompt.model_copy(update={"messages": [], "system": None})
            used = 0
    return prompt, used, packed, reason


def _position(c: Cand) -> tuple[float, ...]:
    """Where ``c`` sits in its document, for ``order_items``: page, top of its first box, start of its unit."""
    r = c.body.regions[0] if c.body.regions else None
    if r is None or not r.locators:
        return (0.0, 0.0, float(c.unit.lo))
    return (float(r.first_page), r.locators[0].bbox.y0, float(c.unit.lo))
