"""``assemble``: hits -> expand -> dedupe/merge -> prioritise -> pack -> order -> cite -> package.

Everything before packing is budget-independent except three documented caps that scale with the
evidence room (``room``: the limit minus system text, question and template), so a unit larger than
the budget falls back to a smaller one instead of being skipped outright:

* the parent cap (``parent_cap``): ``min(parent_max_tokens, room)``; with ``strategy="auto"`` also at
  most ``max(PARENT_FLOOR, room // 3)``, so one parent cannot take most of a small budget;
* the page cap (``page_cap``, auto): ``max(PARENT_FLOOR, page_max_share * room)``, the largest page sent
  whole as text; with ``page_units`` a text, table or text-found figure hit is sent as its page when the
  page fits (the page is the unit people cite, and the answer is usually elsewhere on the page than the
  sentence that matched), else as its section or window;
* the window size (``window_tokens``, auto): ``max(WINDOW_FLOOR, window_share * room)`` tokens of
  sentences around the hit, so dense tabular text and long prose get about the same context.

The caps follow the room only in greedy packing. Monotone and breadth packing promise that a larger budget
never drops an item (never covers fewer pages), which needs the same candidates at every budget, so there the
caps do not follow the room. Breadth packing's are ``parent_max_tokens``, ``page_max_tokens`` and
``excerpt_tokens``; monotone packing's are the floors above (what the caps are at a small budget): a parent
of at most ``min(parent_max_tokens, PARENT_FLOOR)`` in auto (``parent_max_tokens`` otherwise), a page of at
most ``PARENT_FLOOR`` and windows of ``WINDOW_FLOOR`` tokens (sentence counts with ``window_share=None``).
Small units suit the entry-budget rule, where a large top candidate holds back every later one (measured on
the sample PDFs at budgets 1k/2k/4k: 16/36/80 pages covered, against 6/17/38 with breadth's caps and
13/19/31 when the caps followed the room).

Packing (greedy, the default) walks each candidate's fallback ladder (``assembly.fallback``) when
its full form does not fit, and caps image parts at ``max_image_share`` of the room.

A candidate's smaller representations (fallback rungs, structural truncation, growth) are
``assembly.candidates``; breadth packing (``packing="breadth"``) is ``assembly.breadth``.

Citation ids are given to every surviving candidate in priority order (``S``/``T``/``F``/``P``
numbered per type, or ``S`` only), before packing. A candidate therefore keeps its id at every
budget; ids of candidates that were not packed are simply absent from the prompt.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from pydantic import TypeAdapter

from folio.assembly.breadth import pack_breadth
from folio.assembly.budget import describe_formula, get_counter, image_pixels, image_token_cost
from folio.assembly.candidates import (
    FLOOR_SLACK,
    Cand,
    carried_pages,
    drop_repeats,
    fallback,
    reopen,
    section_of,
    truncate,
)
from folio.assembly.compress import Compressor, compress_rest
from folio.assembly.compress import reserve as compress_reserve
from folio.assembly.dedupe import dedupe
from folio.assembly.expand import Expander, Unit
from folio.assembly.lines import Sent, item_lines
from folio.assembly.nesting import added_by_documents, nest_order, nested_carries_more, nests, page_costs, text_pages
from folio.assembly.order import order_items
from folio.assembly.pack import coverage_order, mmr_order, pack_monotone
from folio.assembly.prompt import (
    CONTEXT_HEADER,
    Block,
    block_close,
    block_open,
    build_prompt,
    count_prompt,
    message_overhead,
    question_part,
    system_text,
)
from folio.assembly.relevance import NO_FOCUS, Focus, focus
from folio.assembly.render import Body, body_of, locators_of
from folio.assembly.types import (
    AssemblyOptions,
    Breakdown,
    BudgetInfo,
    ContextItem,
    ContextPackage,
    Coverage,
    ExcludedEntry,
    LineOut,
    ManifestEntry,
    PageRefOut,
    PromptOut,
    RetrievalHitOut,
    RetrievalInfo,
)
from folio.assembly.wholedoc import whole_documents
from folio.assembly.words import content_words, coverage_of
from folio.kernel.errors import InvalidRequest
from folio.kernel.hit import Hit
from folio.kernel.index import RegionSource
from folio.kernel.model import Region
from folio.kernel.pageref import parse_page_refs

log = logging.getLogger(__name__)

SUBQ_COVER_MIN = 0.5
PARENT_FLOOR = 256
WINDOW_FLOOR = 96
_PREFIX = {"text": "S", "table": "T", "figure": "F", "page": "P"}


_ROLES = ("user", "system")  # openai: system + user messages; anthropic: system string + user


@dataclass(frozen=True)
class _Frame:
    """The prompt without evidence: its parts' token counts and the room they leave (``room``)."""

    limit: int
    sys_tokens: int
    q_tokens: int
    overhead: int
    close_tokens: int  # one block's closing line
    room: int


@dataclass
class _Found:
    """The hits in priority order (``shits``) and what became of each before packing: its unit
    (``unit_of``; ``units`` in order) or its fate (``fate``: duplicate, below threshold, ...)."""

    shits: list[Hit]
    units: list[Unit] = field(default_factory=list)
    unit_of: dict[int, Unit] = field(default_factory=dict)
    regions: dict[int, Region] = field(default_factory=dict)
    fate: dict[int, tuple[str, str]] = field(default_factory=dict)


def assemble(
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
    ``compress="llm"`` (``assembly.compress.Compressor``); that option without one is ``InvalidRequest``."""
    if options.compress == "llm" and compressor is None:
        raise InvalidRequest("compress='llm' needs an LLM compressor (the server's configured LLM endpoint: "
                             "FOLIO_LLM_BASE_URL and FOLIO_LLM_MODEL); use compress='extractive' without one")
    counter = get_counter(options.tokenizer)
    count = counter.memo()
    names = dict(filenames or {})
    notes = list(retrieval_notes)
    judged = focus(query, _priority(hits), source) if options.document_focus == "auto" else NO_FOCUS
    plan = _plan(query, hits, source, options, names, count, counter.name, compressor, notes, judged)
    frame, found, cands, packable = plan.frame, plan.found, plan.cands, plan.packable
    shits = found.shits
    packed = order_items(
        [c for c in packable if c.status in ("included", "truncated")],
        group=lambda c: (c.unit.doc_id, c.unit.version_id, c.unit.section_key or c.body.context_id),
        score=lambda c: c.unit.score,
        position=_position,
        how=options.order,
    )
    reason = _refusal_reason(hits, found.fate, cands, frame.room) if not packed else None
    prompt, used, packed, reason = _render(query, options, packed, cands, reason, frame, count)
    manifest, excluded = _manifest(shits, found.fate, found.unit_of, cands, found.regions)
    return ContextPackage(
        query=query,
        budget=BudgetInfo(limit=frame.limit, used=used, tokenizer=counter.name,
                          breakdown=_breakdown(packed, frame, used),
                          image_formula=describe_formula(options.image_tokens)),
        items=[_item(c, names, shits, _lines(c, found, source, query)) for c in packed],
        excluded=excluded,
        manifest=manifest,
        retrieval=RetrievalInfo(
            hits=_HITS_OUT.validate_python([{"region_id": h.region_id, "pages": list(h.pages), "score": h.score,
                                             "retriever": h.retriever, "rank": h.rank} for h in shits]),
            coverage_before=_coverage(shits, range(len(shits))),
            coverage_after=_coverage(shits, [i for c in packed for i in c.unit.triggers
                                             if c.carried is None or i in c.carried]),
            page_refs=_page_refs(query, shits, source),
            notes=notes,
        ),
        prompt=prompt,
        refused=not packed,
        refusal_reason=reason,
        strategy=options.strategy,
        order=options.order,
    )


@dataclass
class _Plan:
    """One packing of the hits at one budget: the frame, what expansion found, the candidates and the
    packable ones with their statuses set."""

    frame: _Frame
    found: _Found
    cands: list[Cand]
    packable: list[Cand]


def _plan(query: str, hits: Sequence[Hit], source: RegionSource, options: AssemblyOptions, names: Mapping[str, str],
          count: Callable[[str], int], tokenizer: str, compressor: Compressor | None, notes: list[str],
          judged: Focus) -> _Plan:
    """Expand, dedupe, prioritise and pack ``hits`` at ``options``' budget; with ``nested`` budgets, the
    pages covered at half the budget stay covered, or as many of them as the nested order carries when that is
    more than plain greedy keeps (``assembly.nesting``). ``judged`` is the cross-document verdict on the hits
    (``assembly.relevance``), the same at every budget."""
    frame = _frame(query, options, count)
    shits, expander = _expander(query, hits, source, options, frame, count, tokenizer)
    if options.whole_documents and options.packing == "greedy" and not judged.off_topic:
        kept = [h for h in hits if h.doc_id not in judged.weak_docs]  # a weak document is not made whole
        more = whole_documents(kept, source, frame.room, count, lambda p: expander.sent_page(p).text)
        if len(more) > len(kept):
            shits, expander = _expander(query, [*hits, *more[len(kept):]], source, options, frame, count, tokenizer)
    found = _expand_hits(shits, source, expander, options, judged)
    survivors, bodies = _prioritise(dedupe(found.units), options)
    cands = _make_cands(survivors, bodies, options, names, count, frame.close_tokens)
    packable = _apply_caps(cands, options)
    _pack(packable, query, options, frame, expander, found, count, compressor, notes)
    plan = _Plan(frame, found, cands, packable)
    if nests(options, frame.room):
        half = options.model_copy(update={"budget": options.limit // 2, "context_window": None})
        below = _plan(query, hits, source, half, names, count, tokenizer, None, [], judged)
        must = page_costs([c for c in below.packable if not added_by_documents(c, below.found.shits)])
        if not set(must) <= text_pages(packable):
            again = _make_cands(survivors, bodies, options, names, count, frame.close_tokens)
            first = _apply_caps(again, options)
            order, keeps = nest_order(first, must)
            _pack(order, query, options, frame, expander, found, count, compressor, notes, keeps)
            if nested_carries_more(must.keys(), text_pages(order), text_pages(packable)):
                plan = _Plan(frame, found, again, first)
    return plan


def _priority(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` in priority order: score, then rank, then input order."""
    return [hits[i] for i in sorted(range(len(hits)), key=lambda i: (-hits[i].score, hits[i].rank, i))]


def _expander(query: str, hits: Sequence[Hit], source: RegionSource, options: AssemblyOptions, frame: _Frame,
              count: Callable[[str], int], tokenizer: str) -> tuple[list[Hit], Expander]:
    """The hits in priority order and the expander for them at this frame's room."""
    shits = _priority(hits)
    expander = Expander(source, options, count, parent_cap(options, frame.room), tokenizer,
                        query_words=content_words(query), hit_ids=frozenset(h.region_id for h in hits),
                        page_cap=page_cap(options, frame.room), window_tokens=window_tokens(options, frame.room),
                        page_hits=_page_hits(shits))
    return shits, expander


def _frame(query: str, options: AssemblyOptions, count: Callable[[str], int]) -> _Frame:
    sys_tokens = count(system_text(options))
    q_tokens = count(question_part(query))
    overhead = message_overhead(count, _ROLES)
    fixed = sys_tokens + q_tokens + count(CONTEXT_HEADER) + overhead
    return _Frame(limit=options.limit, sys_tokens=sys_tokens, q_tokens=q_tokens, overhead=overhead,
                  close_tokens=count(block_close(options.block_format)), room=options.limit - fixed)


def _expand_hits(shits: Sequence[Hit], source: RegionSource, expander: Expander, options: AssemblyOptions,
                 judged: Focus) -> _Found:
    """One unit per usable hit, in priority order; every other hit gets its fate (``judged``: the documents
    left out and the off-topic verdict, ``assembly.relevance``)."""
    found = _Found(shits=list(shits))
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
        r = source.get(h.region_id)
        if r is None:
            fate[i] = ("missing_region", "region not found in the source (deleted version?)")
            continue
        found.regions[i] = r
        u = expander.expand(i, h, r)
        if u is None:
            fate[i] = ("no_content", "no text and images are off")
            continue
        found.units.append(u)
        found.unit_of[i] = u
    return found


def _prioritise(survivors: list[Unit], options: AssemblyOptions) -> tuple[list[Unit], list[Body]]:
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


def _apply_caps(cands: Sequence[Cand], options: AssemblyOptions) -> list[Cand]:
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


def _pack(packable: Sequence[Cand], query: str, o: AssemblyOptions, frame: _Frame, ex: Expander, found: _Found,
          count: Callable[[str], int], compressor: Compressor | None = None, notes: list[str] | None = None,
          keeps: Sequence[int] | None = None) -> None:
    """Set each candidate's status: greedy (with fallbacks and the compressed tail) or monotone packing,
    then structural truncation into what is left when asked. ``keeps``: greedy, the tokens to leave free
    after each candidate (``_nest``)."""
    room, close_tokens, shits = frame.room, frame.close_tokens, found.shits
    if o.packing == "greedy":
        held = compress_reserve(o, room, packable)  # room for the compressed tail (assembly.compress)
        slack = held + _pack_greedy(packable, room - held, o, ex, shits, found.regions, count, close_tokens, keeps)
    elif o.packing == "breadth":
        slack = pack_breadth(packable, room, o, ex, found.regions, count, close_tokens)
    else:
        costs = [c.cost for c in packable]
        fits = pack_monotone(costs, room) if room > 0 else [False] * len(costs)
        slack = room
        for c, ok in zip(packable, fits, strict=True):
            if ok:
                c.status = "included"
                slack -= c.cost
    if o.structural_truncation and room > 0:
        slack = _truncate_rest(packable, slack, o, shits, count, close_tokens, ex.query_words)
    if o.compress != "off" and o.packing == "greedy" and room > 0:
        compress_rest(packable, slack, room, query, shits, found.regions, count, close_tokens, reopen,
                      compressor if o.compress == "llm" else None, notes)


def _truncate_rest(packable: Sequence[Cand], slack: int, o: AssemblyOptions, shits: Sequence[Hit],
                   count: Callable[[str], int], close_tokens: int, query_words: frozenset[str]) -> int:
    """Structural truncation of the candidates left out, into what is left; returns the slack. In greedy and
    breadth packing a truncated text already in a packed item (or holding one) is a duplicate, as in packing
    (``drop_repeats``); monotone packing drops nothing it packed. Breadth packing only truncates a candidate
    into pages its package already covers: the leftover is budget-dependent, and a page it reached at one
    budget could be lost at a larger one, where an earlier candidate of the plan takes that room."""
    dedupe = o.packing != "monotone"
    sent = [(c, " ".join(c.body.text.split())) for c in packable
            if dedupe and c.status in ("included", "truncated") and not c.image_tokens and c.body.text.strip()]
    covered = {vp for c in packable if c.status in ("included", "truncated") for vp in carried_pages(c)}
    for c in packable:
        if o.packing == "breadth" and not carried_pages(c) <= covered:
            continue
        if c.status == "excluded_budget" and slack > 0:
            t = truncate(c, slack, shits, count, close_tokens, query_words)
            if t is not None:
                slack -= t.cost
                if dedupe and not t.image_tokens:
                    slack = drop_repeats(t, sent, slack, keep_pages=o.packing == "breadth")
    return slack


def _render(query: str, options: AssemblyOptions, packed: list[Cand], cands: Sequence[Cand], reason: str | None,
            frame: _Frame, count: Callable[[str], int]) -> tuple[PromptOut, int, list[Cand], str | None]:
    """The prompt of the packed items and its exact token count; refuses (no evidence) when it would
    exceed the limit, and sends nothing when even the prompt without evidence does not fit."""
    limit = frame.limit
    blocks = [Block(c.open, c.body.text, c.image_url) for c in packed]
    prompt = build_prompt(options, query, blocks, not packed)
    used = count_prompt(prompt, count, sum(c.image_tokens for c in packed))
    if used > limit:
        if packed:  # cannot happen: costs are exact; kept as a hard guard
            log.error("assembled prompt %d > limit %d; refusing", used, limit)
            packed, reason = [], "internal accounting error"
            for c in cands:
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


def parent_cap(o: AssemblyOptions, room: int) -> int:
    """The largest parent section (and, in auto, page text) sent whole; see the module docstring."""
    if o.packing == "breadth":  # caps that do not follow the room: the same candidates at every budget
        return o.parent_max_tokens
    if o.packing == "monotone":  # the cap's floor, whatever the room
        return min(o.parent_max_tokens, PARENT_FLOOR) if o.strategy == "auto" else o.parent_max_tokens
    cap = min(o.parent_max_tokens, room)
    if o.strategy == "auto":
        cap = min(cap, max(PARENT_FLOOR, room // 3))
    return max(1, cap)


def page_cap(o: AssemblyOptions, room: int) -> int:
    """The largest page sent whole as text in place of a window (auto with ``page_units``)."""
    if o.packing == "breadth":
        return o.page_max_tokens
    if o.packing == "monotone":
        return PARENT_FLOOR
    return max(1, min(room, max(PARENT_FLOOR, int(o.page_max_share * room))))


def _page_hits(shits: Sequence[Hit]) -> dict[tuple[str, int], int]:
    """How many hits fall on each (version, page): a page many hits point at gets a larger excerpt."""
    out: dict[tuple[str, int], int] = {}
    for h in shits:
        if len(h.pages) == 1:
            key = (h.version_id, h.pages[0])
            out[key] = out.get(key, 0) + 1
    return out


def window_tokens(o: AssemblyOptions, room: int) -> int | None:
    """Auto: the size of a sentence window in tokens (``window_share`` of the room, at least
    ``WINDOW_FLOOR``), or None for windows of ``window_before``/``window_after`` sentences."""
    if o.packing == "breadth":
        return o.excerpt_tokens
    if o.window_share is None:
        return None
    if o.packing == "monotone":
        return WINDOW_FLOOR
    return max(WINDOW_FLOOR, int(o.window_share * room))


def _pack_greedy(packable: Sequence[Cand], room: int, o: AssemblyOptions, ex: Expander, shits: Sequence[Hit],
                 regions: Mapping[int, Region], count: Callable[[str], int], close_tokens: int,
                 keeps: Sequence[int] | None = None) -> int:
    """Greedy in priority order; a candidate that does not fit walks its fallback ladder. ``keeps[k]``: tokens
    that candidate ``k`` must leave free (else ``breadth_reserve``'s). Returns slack."""
    slack = room
    if room <= 0:
        return slack
    img_cap = room if o.max_image_share is None else int(o.max_image_share * room)
    img_used = 0
    sent: list[tuple[Cand, str]] = []  # packed text candidates with their flattened text
    for k, c in enumerate(packable):
        if not o.fallbacks:
            keep = 0
        elif keeps is not None:
            keep = keeps[k]
        else:
            keep = _reserve(packable[k + 1:], o.breadth_reserve, ex.window_tokens) if o.breadth_reserve else 0
        fits = img_used + c.image_tokens <= img_cap
        if c.cost <= slack - keep and fits:
            c.status = "included"
            slack -= c.cost
            img_used += c.image_tokens
        elif keep and slack - keep >= close_tokens + FLOOR_SLACK and _shrink(
                c, slack - keep, ex, shits, regions, count, close_tokens):
            slack -= c.cost
        elif keep and c.cost <= slack and fits:  # nothing smaller fits beside the next candidates
            c.status = "included"
            slack -= c.cost
            img_used += c.image_tokens
        elif not o.fallbacks or slack < close_tokens + FLOOR_SLACK:  # no block fits in less
            continue
        elif _shrink(c, slack, ex, shits, regions, count, close_tokens):
            slack -= c.cost
        else:
            continue
        if not c.image_tokens:
            slack = drop_repeats(c, sent, slack)
    return slack


def _reserve(rest: Sequence[Cand], n: int, window: int | None) -> int:
    """Tokens that the next ``n`` candidates need in their small forms (a window's size, or their cost)."""
    return sum(min(r.cost, (window or 0) + r.wrapper_tokens) for r in rest[:n])


def _shrink(c: Cand, slack: int, ex: Expander, shits: Sequence[Hit], regions: Mapping[int, Region],
            count: Callable[[str], int], close_tokens: int) -> bool:
    """Send ``c`` as its largest smaller form that fits ``slack`` (a table's header and best rows, else the first
    rung of its ladder that fits); False when none does."""
    if c.unit.kind == "table":
        return truncate(c, slack, shits, count, close_tokens, ex.query_words) is not None
    return fallback(c, slack, ex, regions, count, close_tokens)


def _below(score: float, top: float, o: AssemblyOptions) -> bool:
    t = o.score_threshold
    if t is None:
        return False
    if o.threshold_mode == "absolute":
        return score < t
    return top > 0 and score < t * top


def _make_cands(survivors: Sequence[Unit], bodies: Sequence[Body], o: AssemblyOptions,
                names: Mapping[str, str], count: Callable[[str], int], close_tokens: int) -> list[Cand]:
    cnt = count  # Callable[[str], int]
    numbers: dict[str, int] = {}
    out: list[Cand] = []
    if o.block_format == "compact" and len({u.version_id for u in survivors}) == 1:
        names = {}  # one document: its name on every block says nothing; the id resolves it
    for u, b in zip(survivors, bodies, strict=True):
        prefix = _PREFIX[u.modality] if o.citation_style == "typed" else "S"
        numbers[prefix] = numbers.get(prefix, 0) + 1
        cid = f"{prefix}{numbers[prefix]}"
        c = _cand(u, b, cid, o, names, cnt, close_tokens)
        out.append(c)
    return out


def _cand(u: Unit, b: Body, cid: str, o: AssemblyOptions, names: Mapping[str, str],
          count: Callable[[str], int], close_tokens: int) -> Cand:
    cnt = count
    pages = b.pages
    section = section_of(u, b)
    name = names.get(u.version_id, u.doc_id) if names else ""
    opener = block_open(cid, u.modality, name, pages, section, o.block_format)
    url, img = None, 0
    if u.image:
        r = u.regions[0]
        # The one placeholder, replaced literally: the template is the client's, and str.format would
        # let it reach attributes ({region_id.__class__}) or pad to any width ({region_id:>5000000}).
        url = o.image_url_template.replace("{region_id}", quote(r.region_id, safe="@:"))
        img = image_token_cost(*image_pixels(r, o.render_scale), o.image_tokens)
    text_tokens = cnt(b.text)
    wrapper = cnt(opener) + close_tokens
    return Cand(u, b, cid, opener, url, img, text_tokens + wrapper + img, text_tokens, wrapper, source=name,
                fmt=o.block_format)


def _position(c: Cand) -> tuple[float, ...]:
    r = c.body.regions[0] if c.body.regions else None
    if r is None or not r.locators:
        return (0.0, 0.0, float(c.unit.lo))
    return (float(r.first_page), r.locators[0].bbox.y0, float(c.unit.lo))


def _item(c: Cand, names: Mapping[str, str], shits: Sequence[Hit], lines: list[LineOut]) -> ContextItem:
    u, b = c.unit, c.body
    pages = [p for p in b.pages if p]
    expansion = "+".join(sorted(u.expansions)) if not (u.kind == "span" and u.full) else "parent_section"
    if c.rung is not None:
        expansion = c.rung
    if c.status == "truncated":
        expansion += ":truncated"
    item: ContextItem = ContextItem(
        citation_id=c.cid,
        region_id=b.context_id,
        region_ids=[r.region_id for r in b.regions],
        doc_id=u.doc_id,
        version_id=u.version_id,
        filename=names.get(u.version_id, u.doc_id),
        modality=u.modality,
        expansion=expansion,
        trigger_ids=[shits[i].region_id for i in sorted(u.triggers)],
        pages=pages,
        locators=locators_of(b.regions),
        text=b.text,
        tokens=c.cost,
        status="truncated" if c.status == "truncated" else "included",
        image_url=c.image_url,
        image_tokens=c.image_tokens,
        alt_text=_alt_text(c),
        score=u.score,
        section=section_of(u, b),
        fallback_from=c.fallback_from,
        lines=lines,
    )
    return item


def _lines(c: Cand, found: _Found, source: RegionSource, query: str) -> list[LineOut]:
    """``ContextItem.lines``: the line boxes of the hits the item carries (``assembly.lines``)."""
    triggers = [found.regions[i] for i in sorted(c.unit.triggers)
                if i in found.regions and (c.carried is None or i in c.carried)]
    b = c.body
    sent = Sent.of(b.text or (_alt_text(c) or ""), image=c.image_url is not None)
    return item_lines(triggers, [r.region_id for r in b.regions], [p for p in b.pages if p], sent,
                      content_words(query), source)


def _alt_text(c: Cand) -> str | None:
    """What an item's image shows, as text (``ContextItem.alt_text``): the text of the page or figure
    whose pixels are sent; None when no image is sent or the region has no text."""
    if c.image_url is None or not c.unit.regions:
        return None
    return c.unit.regions[0].text.strip() or None


_MANIFEST = TypeAdapter(list[ManifestEntry])
_EXCLUDED = TypeAdapter(list[ExcludedEntry])
_HITS_OUT = TypeAdapter(list[RetrievalHitOut])


def _manifest(shits: Sequence[Hit], fate: Mapping[int, tuple[str, str]], unit_of: Mapping[int, Unit],
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


def _refusal_reason(hits: Sequence[Hit], fate: Mapping[int, tuple[str, str]], cands: Sequence[Cand],
                    room: int) -> str:
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


def _breakdown(packed: Sequence[Cand], frame: _Frame, used: int) -> Breakdown:
    if used == 0:
        return Breakdown()
    text = sum(c.text_tokens for c in packed)
    wrappers = sum(c.wrapper_tokens for c in packed)
    images = sum(c.image_tokens for c in packed)
    sys_t, q_t, overhead = frame.sys_tokens, frame.q_tokens, frame.overhead
    head = used - (sys_t + q_t + overhead + text + wrappers + images)  # context header or refusal note
    return Breakdown(system=sys_t, question=q_t, wrappers=wrappers + head, text=text, images=images,
                     overhead=overhead)
