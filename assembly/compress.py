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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assembly.fallback import carried
from assembly.render import Body
from assembly.types import AssemblyOptions
from assembly.words import content_words, coverage_of
from ingest.model import Region

ITEM_SHARE = 0.1
ITEM_FLOOR = 48
MAX_TERMS = 8
JOIN = " … "
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[A-Z0-9•‘“-])")
_TERM = re.compile(r"[-+$€£]?\d[\d.,:/%-]*\d%?|[-+$€£]?\d%?|\b[A-Za-z]*[A-Z][A-Za-z]*\d[\w.-]*|\b[A-Z]{2,}[\w-]*")


def reserve(o: AssemblyOptions, room: int, cands: Sequence[Any] = ()) -> int:
    """Tokens held back from whole items for the compressed tail (0 when compression is off), never
    so many that the top candidate no longer fits whole (the best evidence is not cut for the tail)."""
    if o.compress == "off" or o.packing != "greedy" or room <= 0:
        return 0
    held = int(o.compress_share * room)
    if cands:
        held = min(held, max(0, room - cands[0].cost))
    return held


def compress_rest(cands: Sequence[Any], slack: int, room: int, query: str, hits: Sequence[Any],
                  regions: Mapping[int, Region], count: Callable[[str], int], close_tokens: int,
                  reopen: Callable[[Any, Body], str]) -> int:
    """Give each ``excluded_budget`` candidate, in priority order, its compressed body when it fits
    ``slack``; then fill what is left with whole candidates that fit. Returns the new slack.

    ``cands`` are ``assembly.core._Cand`` values in priority order (this reads ``unit``, ``body``,
    ``cost``, ``status`` and ``image_tokens``, and on success sets what a fallback rung sets: ``body``,
    ``open``, the token counts, ``rung="compressed"``, ``fallback_from``, ``carried``, ``status``).
    ``hits`` are the sorted hits (a candidate's ``unit.triggers`` index them), ``regions`` the hit
    regions by the same index, ``reopen`` builds a block's open line for a new body.
    """
    qw = content_words(query)
    cap = max(ITEM_FLOOR, int(ITEM_SHARE * room))
    for c in cands:
        if c.status != "excluded_budget":
            continue
        if slack < close_tokens + ITEM_FLOOR // 2:
            break
        trig = sorted(c.unit.triggers)
        trigger_regions = [regions[i] for i in trig if i in regions]
        body = compressed_body(c.unit, c.body, qw, trigger_regions, count, min(cap, slack))
        if body is None:
            continue
        opener = reopen(c, body)
        tt = count(body.text)
        total = tt + count(opener) + close_tokens
        if total > slack:
            body = compressed_body(c.unit, c.body, qw, trigger_regions, count, min(cap, slack) - (total - slack))
            if body is None:
                continue
            opener = reopen(c, body)
            tt = count(body.text)
            total = tt + count(opener) + close_tokens
            if total > slack:
                continue
        keep = frozenset(i for i in trig if i in regions and _carries(regions[i], body))
        if not keep:
            continue  # a compressed block that carries none of its hits is not their evidence
        u = c.unit
        c.fallback_from = "+".join(sorted(u.expansions)) if not (u.kind == "span" and u.full) else "parent_section"
        c.full_cost = c.cost
        c.body, c.open, c.text_tokens, c.wrapper_tokens, c.cost = body, opener, tt, total - tt, total
        c.image_url, c.image_tokens = None, 0
        c.rung = "compressed"
        c.carried = None if keep == frozenset(trig) else keep
        c.status = "included"
        slack -= total
    for c in cands:  # the tail's unused room: whole candidates, in priority order
        if c.status == "excluded_budget" and c.cost <= slack and not c.image_tokens:
            c.status = "included"
            slack -= c.cost
    return slack


def compressed_body(unit: Any, body: Body, query_words: frozenset[str], triggers: Sequence[Region],
                    count: Callable[[str], int], cap: int) -> Body | None:
    """The extractive compression of ``body`` within ``cap`` tokens, or None when nothing fits or
    nothing in it shares a word with the question or carries a hit.

    >>> from assembly.render import Body
    >>> from assembly.words import content_words
    >>> b = Body("Intro text here. The P1 target is 30 minutes. Unrelated 42 words. P1 code is X9.", (), None, "r")
    >>> compressed_body(None, b, content_words("P1 target"), [], lambda s: len(s.split()), 12).text
    'The P1 target is 30 minutes. … P1 code is X9.'
    """
    pieces = _pieces(unit, body)
    if not pieces or cap <= 0:
        return None
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
    if not scored:
        return None
    scored.sort(key=lambda s: (-s[0], s[1]))
    chosen: list[int] = []
    used = 0
    sep = count(JOIN)
    for _, k in scored:
        n = count(pieces[k][0]) + (sep if chosen else 0)
        if used + n > cap:
            continue
        chosen.append(k)
        used += n
    if not chosen:
        return None
    chosen.sort()
    text = JOIN.join(pieces[k][0] for k in chosen)
    shown = set(_TERM.findall(text))
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
    if terms:
        line = "\nKey terms: " + "; ".join(terms[:MAX_TERMS])
        if used + count(line) <= cap:
            text += line
    picked = [pieces[k][1] for k in chosen if pieces[k][1] is not None]
    regions = tuple(dict.fromkeys(picked)) if picked else body.regions
    return Body(text, tuple(r for r in regions if r is not None), body.context, body.context_id)


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
