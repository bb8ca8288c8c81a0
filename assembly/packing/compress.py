"""Extractive compression of evidence that ranks below what fits whole (``AssemblyOptions.compress``).

Greedy packing sends a candidate whole, or as a smaller rung of its fallback ladder, or not at all.
With ``compress="extractive"`` a candidate still left ``excluded_budget`` after packing gets one more
chance, in priority order: a *compressed* body made of

- its trigger sentences (the pieces of its text that contain a hit), then the pieces sharing most
  words with the question, in document order, joined by `` … ``, up to a per-item cap of
  ``ITEM_SHARE`` of the evidence room (at least ``ITEM_FLOOR`` tokens); and
- a ``Key terms:`` line: numbers and identifiers (``3.14``, ``RC4``, ``$1,110``) from the pieces that
  share a word with the question but did not make it in, at most ``MAX_TERMS``.

The block keeps the candidate's citation id and region (``context_id``), so a citation of it still
resolves to the region, page and box; the item's ``expansion`` is ``compressed`` and
``fallback_from`` names what did not fit, and its manifest entry says ``compressed`` the same way.
Images are never sent compressed: a figure or page image goes as the compressed text it carries.

``compress_share`` holds that share of the room back from whole items so the compressed tail has
room at all (greedy packing otherwise fills the budget), but never so much that the top candidate
no longer fits whole; whatever the tail leaves unused goes to whole candidates that fit it, in
priority order. Pure: no I/O, and the cost of a compressed block
is counted exactly like any other block, so the budget guarantee is unchanged. Greedy packing only
(monotone packing promises that a bigger budget never drops an item; a tail fitted into leftover
room cannot promise that).

With ``compress="llm"`` a ``Compressor`` (``(question, text, max_tokens) -> text``, passed to
``assemble``; the API builds it from the configured endpoint, this package makes no network calls)
writes the compressed body instead, from the candidate's whole text, within the same per-item cap.
Its reply is recounted with folio's tokenizer and cut at a word boundary to fit (the endpoint's
tokenizer is not folio's), so the budget guarantee holds as above. The block keeps the candidate's
regions (the model compressed all of them), id and ``expansion: "compressed"``. A call that raises
(timeout, upstream error) or returns nothing sends that candidate extractive and adds a note; after a
timeout the model is not asked again for this package.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from folio.assembly.options import AssemblyOptions
from folio.assembly.packing.candidates import Fitting, reopen
from folio.assembly.packing.fallback import carried
from folio.assembly.render import Body
from folio.assembly.words import content_words, coverage_of
from folio.kernel.model import Region

ITEM_SHARE = 0.1
ITEM_FLOOR = 48
MAX_TERMS = 8
LLM_FLOOR = 16  # fewer text tokens than this: not worth a model call
MAX_NOTE = 200
JOIN = " … "
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[A-Z0-9•‘“-])")
_TERM = re.compile(r"[-+$€£]?\d[\d.,:/%-]*\d%?|[-+$€£]?\d%?|\b[A-Za-z]*[A-Z][A-Za-z]*\d[\w.-]*|\b[A-Z]{2,}[\w-]*")


Compressor = Callable[[str, str, int], str]
"""``compressor(question, text, max_tokens)``: the compressed ``text`` (``compress="llm"``); may raise."""


def reserve(o: AssemblyOptions, room: int, cands: Sequence[Any] = ()) -> int:
    """Tokens held back from whole items for the compressed tail (0 when compression is off), never
    so many that the top candidate no longer fits whole (the best evidence is not cut for the tail)."""
    if o.compress == "off" or o.packing != "greedy" or room <= 0:
        return 0
    held = int(o.compress_share * room)
    if cands:
        held = min(held, max(0, room - cands[0].cost))
    return held


@dataclass(frozen=True)
class Tail:
    """What the compressed tail is asked for: the question, the evidence room (each item's cap is a share of
    it), the ``compressor`` of ``compress="llm"`` (None: extractive) and the ``notes`` it adds what went
    wrong to."""

    query: str
    room: int
    compressor: Compressor | None = None
    notes: list[str] = field(default_factory=list)


def compress_rest(cands: Sequence[Any], slack: int, fit: Fitting, tail: Tail) -> int:
    """Give each ``excluded_budget`` candidate, in priority order, its compressed body when it fits
    ``slack``; then fill what is left with whole candidates that fit. Returns the new slack.

    ``cands`` are ``packing.candidates.Cand`` values in priority order (this reads ``unit``, ``body``,
    ``cost``, ``status`` and ``image_tokens``, and on success sets what a fallback rung sets: ``body``,
    ``open``, the token counts, ``rung="compressed"``, ``fallback_from``, ``carried``, ``status``).
    A candidate's ``unit.triggers`` index ``fit.regions``, the hit regions; a new body's open line is
    ``packing.candidates.reopen``'s. With a ``compressor`` (``compress="llm"``) the model writes each body;
    what went wrong is added to ``tail.notes``.
    """
    regions, close_tokens = fit.regions, fit.close_tokens
    cap = max(ITEM_FLOOR, int(ITEM_SHARE * tail.room))
    model = _Model(tail.compressor, tail.notes, tail.query) if tail.compressor is not None else None
    sent = {r.region_id for c in cands if c.status in ("included", "truncated") for r in c.body.regions}
    for c in cands:
        if c.status != "excluded_budget":
            continue
        if slack < close_tokens + ITEM_FLOOR // 2:
            break
        trig = sorted(c.unit.triggers)
        trigger_regions = [regions[i] for i in trig if i in regions]
        fitted = None
        if model is not None and not sent & {r.region_id for r in c.body.regions}:
            fitted = _fit_llm(c, model, min(cap, slack), slack, fit)
        keep: frozenset[int] | None = None
        if fitted is None:
            fitted = _fit_extractive(c, trigger_regions, min(cap, slack), slack, fit)
            if fitted is None or sent & {r.region_id for r in fitted[0].regions}:
                continue  # no region twice: another packed block already carries one of these
            keep = frozenset(i for i in trig if i in regions and _carries(regions[i], fitted[0]))
            if not keep:
                continue  # a compressed block that carries none of its hits is not their evidence
        body, opener, tt, total = fitted
        u = c.unit
        c.fallback_from = "+".join(sorted(u.expansions)) if not (u.kind == "span" and u.full) else "parent_section"
        c.full_cost = c.cost
        c.body, c.open, c.text_tokens, c.wrapper_tokens, c.cost = body, opener, tt, total - tt, total
        c.image_url, c.image_tokens = None, 0
        c.rung = "compressed"
        c.carried = None if keep is None or keep == frozenset(trig) else keep
        c.status = "included"
        sent.update(r.region_id for r in body.regions)
        slack -= total
    for c in cands:  # the tail's unused room: whole candidates, in priority order
        if c.status == "excluded_budget" and c.cost <= slack and not c.image_tokens:
            c.status = "included"
            slack -= c.cost
    return slack


_Fit = tuple[Body, str, int, int]  # body, open line, text tokens, total tokens


def _fit_extractive(c: Any, trigger_regions: Sequence[Region], cap: int, slack: int, fit: Fitting) -> _Fit | None:
    """The extractive body of ``c`` within ``cap`` text tokens whose block fits ``slack``."""
    qw, count, close_tokens = fit.ex.query_words, fit.count, fit.close_tokens
    body = compressed_body(c.unit, c.body, qw, trigger_regions, count, cap)
    if body is None:
        return None
    opener = reopen(c, body)
    tt = count(body.text)
    total = tt + count(opener) + close_tokens
    if total > slack:
        body = compressed_body(c.unit, c.body, qw, trigger_regions, count, cap - (total - slack))
        if body is None:
            return None
        opener = reopen(c, body)
        tt = count(body.text)
        total = tt + count(opener) + close_tokens
        if total > slack:
            return None
    return body, opener, tt, total


class _Model:
    """``compress="llm"``: the compressor, the notes of what went wrong, the question, and whether to ask
    again."""

    def __init__(self, fn: Compressor, notes: list[str], query: str) -> None:
        self.fn, self.notes, self.query, self.stopped = fn, notes, query, False

    def ask(self, cid: str, text: str, max_tokens: int) -> str | None:
        if self.stopped:
            return None
        why = ""
        try:
            out = self.fn(self.query, text, max_tokens)
            if not isinstance(out, str) or not out.strip():
                why = "the model returned no text"
        except Exception as e:  # the compressor is the caller's: whatever it raises, this item goes extractive
            why = f"{type(e).__name__}: {str(e)[:MAX_NOTE]}"
            if isinstance(e, TimeoutError):
                self.stopped = True
                why += "; the model is not asked again for this package"
        if why:
            self.notes.append(f"LLM compression of {cid} failed ({why}); sent extractive compression instead")
            return None
        return out.strip()


def _fit_llm(c: Any, model: _Model, cap: int, slack: int, fit: Fitting) -> _Fit | None:
    """The model's compression of ``c``'s whole text, recounted and cut to fit ``cap`` and ``slack``."""
    count, close_tokens = fit.count, fit.close_tokens
    b = c.body
    opener = reopen(c, Body("", b.regions, b.context, b.context_id))  # same regions, same open line
    wrap = count(opener) + close_tokens
    limit = min(cap, slack - wrap)
    source = b.text
    if getattr(c.unit, "image", False):  # an image goes as the text it carries
        source = "\n\n".join(r.text for r in (*c.unit.regions, *c.unit.absorbed) if r.text.strip())
    if limit < LLM_FLOOR or not source.strip():
        return None
    text = model.ask(c.cid, source, limit)
    if text is None:
        return None
    text = fit_tokens(text, limit, count)
    if not text:
        return None
    tt = count(text)
    return Body(text, b.regions, b.context, b.context_id), opener, tt, tt + wrap


def fit_tokens(text: str, limit: int, count: Callable[[str], int]) -> str:
    """``text`` when it counts at most ``limit`` tokens, else its longest prefix ending at a word
    boundary that fits with an `` …`` mark (empty when not even one word does).

    >>> fit_tokens("one two three four", 3, lambda s: len(s.split()))
    'one two …'
    """
    if count(text) <= limit:
        return text
    cuts = [m.start() for m in re.finditer(r"\s+", text)]
    lo, hi, best = 0, len(cuts) - 1, ""
    while lo <= hi:
        mid = (lo + hi) // 2
        cand = text[:cuts[mid]].rstrip() + " …"
        if count(cand) <= limit:
            best, lo = cand, mid + 1
        else:
            hi = mid - 1
    return best


def compressed_body(unit: Any, body: Body, query_words: frozenset[str], triggers: Sequence[Region],  # noqa: PLR0913
                    count: Callable[[str], int], cap: int) -> Body | None:
    """The extractive compression of ``body`` within ``cap`` tokens, or None when nothing fits or
    nothing in it shares a word with the question or carries a hit.

    >>> from folio.assembly.render import Body
    >>> from folio.assembly.words import content_words
    >>> b = Body("Intro text here. The P1 target is 30 minutes. Unrelated 42 words. P1 code is X9.", (), None, "r")
    >>> compressed_body(None, b, content_words("P1 target"), [], lambda s: len(s.split()), 12).text
    'The P1 target is 30 minutes. … P1 code is X9.'
    """
    pieces = _pieces(unit, body)
    if not pieces or cap <= 0:
        return None
    scored = _scored(pieces, query_words, triggers)
    if not scored:
        return None
    chosen, used = _chosen(pieces, scored, count, cap)
    if not chosen:
        return None
    text = JOIN.join(pieces[k][0] for k in chosen)
    terms = _key_terms(pieces, scored, chosen, set(_TERM.findall(text)))
    if terms:
        line = "\nKey terms: " + "; ".join(terms[:MAX_TERMS])
        if used + count(line) <= cap:
            text += line
    picked = [pieces[k][1] for k in chosen if pieces[k][1] is not None]
    regions = tuple(dict.fromkeys(picked)) if picked else body.regions
    return Body(text, tuple(r for r in regions if r is not None), body.context, body.context_id)


_Piece = tuple[str, Region | None]


def _scored(pieces: Sequence[_Piece], query_words: frozenset[str],
            triggers: Sequence[Region]) -> list[tuple[float, int]]:
    """``(score, index)`` of the pieces that carry a hit (2 points) or share words with the question (their
    coverage of its words), best first, ties in text order; the other pieces are left out."""
    trig_texts = [_norm(r.text) for r in triggers if r.text.strip()]
    trig_ids = {r.region_id for r in triggers}
    scored: list[tuple[float, int]] = []
    for k, (text, region) in enumerate(pieces):
        words = content_words(text)
        overlap = coverage_of(query_words, words)
        is_trigger = (region is not None and region.region_id in trig_ids) or any(
            t and (t in _norm(text) or (len(_norm(text)) > 20 and _norm(text) in t)) for t in trig_texts)
        if not is_trigger and overlap == 0:
            continue
        scored.append(((2.0 if is_trigger else 0.0) + overlap, k))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return scored


def _chosen(pieces: Sequence[_Piece], scored: Sequence[tuple[float, int]], count: Callable[[str], int],
            cap: int) -> tuple[list[int], int]:
    """The pieces taken best first while they fit ``cap`` (joined by ``JOIN``), in text order, and their tokens."""
    chosen: list[int] = []
    used = 0
    sep = count(JOIN)
    for _, k in scored:
        n = count(pieces[k][0]) + (sep if chosen else 0)
        if used + n > cap:
            continue
        chosen.append(k)
        used += n
    chosen.sort()
    return chosen, used


def _key_terms(pieces: Sequence[_Piece], scored: Sequence[tuple[float, int]], chosen: Sequence[int],
               shown: set[str]) -> list[str]:
    """Numbers and identifiers of the scored pieces left out, best piece first, not already ``shown``."""
    terms: list[str] = []
    for _, k in scored:
        if k in chosen:
            continue
        for t in _TERM.findall(pieces[k][0]):
            t = t.strip(".,:;-")
            if t and t not in shown and t not in terms:
                terms.append(t)
        if len(terms) >= MAX_TERMS:
            break
    return terms


def _pieces(unit: Any, body: Body) -> list[tuple[str, Region | None]]:
    """The candidate's text as (piece, region) pairs: its sentences when the body is made of sentence
    regions, else its text split at sentence ends and line breaks (table rows, list items)."""
    regions = body.regions
    if regions and all(r.kind == "sentence" for r in regions):
        return [(r.text.strip(), r) for r in regions if r.text.strip()]
    text = body.text
    if unit is not None and getattr(unit, "image", False):  # an image goes as the text it carries
        text = "\n\n".join(r.text for r in (*unit.regions, *unit.absorbed) if r.text.strip())
    out: list[tuple[str, Region | None]] = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        if sum(ln.startswith("|") for ln in lines) * 2 >= len(lines):  # a table: one piece per row
            out.extend((ln, None) for ln in lines if not set(ln) <= set("|-: "))
            continue
        joined = " ".join(lines)  # PDF text breaks lines inside sentences
        out.extend((p.strip(), None) for p in _SENTENCE_END.split(joined) if len(p.strip()) > 1)
    return out


def _carries(trigger: Region, body: Body) -> bool:
    if carried(trigger, body):
        return True
    t = _norm(trigger.text)
    if t and t in _norm(body.text):
        return True
    return coverage_of(content_words(trigger.text), content_words(body.text)) >= 0.5


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()
