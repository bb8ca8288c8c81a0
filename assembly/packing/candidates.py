"""A candidate (``Cand``: a unit with its body, citation id, open line and token costs) and the smaller
representations it can be sent as when its full form does not fit.

``make_candidates`` gives citation ids to every surviving unit in priority order (``S``/``T``/``F``/``P``
numbered per type, or ``S`` only), before packing. A candidate therefore keeps its id at every budget;
ids of candidates that were not packed are simply absent from the prompt.

* ``fallback``: the first (largest) rung of its fallback ladder that fits (``packing.fallback``);
* ``grow``: its largest representation below its full form that fits (breadth packing's growth steps);
* ``truncate``: its largest structural truncation that fits; a table keeps its header and best rows
  (``truncate_table``);
* ``drop_repeats``: after packing, a candidate whose text is already in a packed item becomes its duplicate.

What each of them measures with travels as one value, ``Fitting`` (the options, the expander, the hits and
their regions, the token counter, the tokens that close a block), built once per packing.

``reopen`` writes the open line of a smaller body: same id, type, file and section, its own pages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import quote

from folio.assembly.budget import image_pixels, image_token_cost
from folio.assembly.expansion.expander import Expander
from folio.assembly.expansion.tables import fitted_rows, table_text
from folio.assembly.expansion.units import Unit
from folio.assembly.options import AssemblyOptions, BlockFormat
from folio.assembly.package import CandidateStatus
from folio.assembly.packing.fallback import Rung, anchor_of, carried, excerpt_rung, rungs, span_floor
from folio.assembly.prompt import BlockSource, block_open
from folio.assembly.render import Body, paragraphs_body, truncations
from folio.kernel.hit import Hit
from folio.kernel.model import Region

FLOOR_SLACK = 8  # a rung's open tag may be this much shorter than the unit's (fewer pages in its label)
PREFIX = {"text": "S", "table": "T", "figure": "F", "page": "P"}  # citation ids by modality (typed)


@dataclass(frozen=True, slots=True)
class Fitting:
    """What packing fits the candidates with, the same for every candidate of one packing: the options, the
    expander (the smaller forms of a unit; ``ex.query_words``, the question's content words), the hits in
    priority order (``shits``; a unit's ``triggers`` index them), their regions by that index, the token
    counter and the tokens that close a block."""

    o: AssemblyOptions
    ex: Expander
    shits: Sequence[Hit]
    regions: Mapping[int, Region]
    count: Callable[[str], int]
    close_tokens: int


@dataclass(slots=True)
class Cand:
    unit: Unit
    body: Body
    cid: str
    open: str
    image_url: str | None
    image_tokens: int
    cost: int
    text_tokens: int
    wrapper_tokens: int
    status: CandidateStatus = "excluded_budget"
    fallback_from: str | None = None  # the expansion that did not fit, when a rung was sent
    rung: str | None = None  # the rung's expansion name
    carried: frozenset[int] | None = None  # trigger indices the sent body carries (None: all)
    full_cost: int = 0
    source: str = ""  # file name shown in the open line
    fmt: BlockFormat = "compact"
    duplicate_of: str | None = None  # status "duplicate": the packed item whose text holds this one's


def make_candidates(survivors: Sequence[Unit], bodies: Sequence[Body], fit: Fitting,
                    names: Mapping[str, str]) -> list[Cand]:
    """One candidate per surviving unit (with its body), in priority order, each with its citation id (see the
    module docstring); ``names``: file name by version id, for the open lines."""
    o = fit.o
    numbers: dict[str, int] = {}
    out: list[Cand] = []
    if o.block_format == "compact" and len({u.version_id for u in survivors}) == 1:
        names = {}  # one document: its name on every block says nothing; the id resolves it
    for u, b in zip(survivors, bodies, strict=True):
        prefix = PREFIX[u.modality] if o.citation_style == "typed" else "S"
        numbers[prefix] = numbers.get(prefix, 0) + 1
        cid = f"{prefix}{numbers[prefix]}"
        c = _cand(u, b, cid, fit, names)
        out.append(c)
    return out


def _cand(u: Unit, b: Body, cid: str, fit: Fitting, names: Mapping[str, str]) -> Cand:
    """Unit ``u`` as the block ``cid``: its open line, image URL and exact costs."""
    o, cnt = fit.o, fit.count
    pages = b.pages
    section = section_of(u, b)
    name = names.get(u.version_id, u.doc_id) if names else ""
    opener = block_open(cid, u.modality, BlockSource(name, pages, section), o.block_format)
    url, img = None, 0
    if u.image:
        r = u.regions[0]
        # The one placeholder, replaced literally: the template is the client's, and str.format would
        # let it reach attributes ({region_id.__class__}) or pad to any width ({region_id:>5000000}).
        url = o.image_url_template.replace("{region_id}", quote(r.region_id, safe="@:"))
        img = image_token_cost(*image_pixels(r, o.render_scale), o.image_tokens)
    text_tokens = cnt(b.text)
    wrapper = cnt(opener) + fit.close_tokens
    return Cand(u, b, cid, opener, url, img, text_tokens + wrapper + img, text_tokens, wrapper, source=name,
                fmt=o.block_format)


def drop_repeats(c: Cand, sent: list[tuple[Cand, str]], slack: int, keep_pages: bool = False) -> int:
    """After packing ``c``: if its text is already inside a packed item of the same version (never
    across versions), it is a duplicate of that item; packed items whose text is inside ``c``'s become
    duplicates of ``c``. A candidate can repeat another once fallbacks shrink them (a page's best
    paragraphs, then one of its sentences from a later hit). With ``keep_pages`` (breadth packing, which
    promises that a larger budget never covers fewer pages) only an item that covers the repeat's pages
    holds it: the same caption on another page stays, as evidence for that page. Returns the slack with
    the duplicates' tokens given back."""
    flat = " ".join(c.body.text.split())
    if not flat:
        return slack
    pages = carried_pages(c) if keep_pages else set()
    mine = [(other, text) for other, text in sent if other.unit.version_id == c.unit.version_id]
    for other, text in mine:
        if flat in text and pages <= carried_pages(other):
            c.status, c.duplicate_of = "duplicate", other.cid
            return slack + c.cost
    for other, text in mine:
        if text in flat and (not keep_pages or carried_pages(other) <= pages):
            other.status, other.duplicate_of = "duplicate", c.cid
            sent.remove((other, text))
            slack += other.cost
    sent.append((c, flat))
    return slack


def carried_pages(c: Cand) -> set[tuple[str, int]]:
    """The (version, page) pairs of ``c``'s body (its text's pages, or its image's when it has no text)."""
    return {(c.unit.version_id, p) for p in c.body.pages if p}


def fallback(c: Cand, slack: int, fit: Fitting) -> bool:
    """Send the first (largest) rung of ``c``'s ladder that fits ``slack``; see ``packing.fallback``."""
    regions = fit.regions
    u = c.unit
    trig = sorted(u.triggers)
    anchors: list[tuple[int, int]] = []
    if u.kind == "span" and u.view is not None:
        for i in trig:
            a = anchor_of(u.view, regions[i]) if i in regions else None
            if a is not None:
                anchors.append(a)
    floor = span_floor(u, anchors)
    if floor is not None and fit.count(floor) + c.wrapper_tokens - FLOOR_SLACK > slack:
        return False
    on_page = [(i, regions[i]) for i in trig if i in regions]
    return any(take_rung(c, rung, slack, fit)
               for rung in rungs(u, c.body, anchors, fit.ex, slack - c.wrapper_tokens, on_page))


def take_rung(c: Cand, rung: Rung, slack: int, fit: Fitting) -> bool:
    """Send ``rung`` in place of ``c``'s body when it fits ``slack`` and carries one of ``c``'s hits."""
    regions, count, close_tokens = fit.regions, fit.count, fit.close_tokens
    u, b = c.unit, rung.body
    tt = count(b.text)
    if tt + close_tokens > slack:  # too large whatever its open line: not worth writing that line
        return False
    opener = reopen(c, b)
    total = tt + count(opener) + close_tokens
    if total > slack:
        return False
    keep = None if rung.carries_all else rung.keep if rung.keep is not None else frozenset(
        i for i in u.triggers if i in regions and carried(regions[i], b))
    if keep is not None and not keep:
        return False  # a rung that carries none of the hits is not evidence for them
    c.fallback_from = "+".join(sorted(u.expansions)) if not (u.kind == "span" and u.full) else "parent_section"
    c.full_cost = c.cost
    c.body, c.open, c.text_tokens, c.wrapper_tokens, c.cost = b, opener, tt, total - tt, total
    c.image_url, c.image_tokens = None, 0
    c.rung = rung.expansion
    c.carried = keep
    c.status = "included"
    return True


def grow(c: Cand, slack: int, fit: Fitting) -> Cand | None:
    """A copy of ``c`` at its largest representation below its full form that fits ``slack``: for a page
    sent as text, the page around its hits sized to the room (then its best paragraphs that fit); for
    other units, the first rung of their ladder that fits."""
    g = replace(c)
    u, ex, regions = c.unit, fit.ex, fit.regions
    if u.kind == "table":
        return truncate_table(g, slack, fit.count, fit.close_tokens, ex.query_words)
    if u.kind != "page" or u.image:
        return g if fallback(g, slack, fit) else None
    page, body_room = u.regions[0], slack - c.wrapper_tokens
    on_page = [(i, regions[i]) for i in sorted(u.triggers) if i in regions]
    grown = [excerpt_rung(page, on_page, body_room, ex)]
    best = ex.best_paragraphs(page, body_room, frozenset(r.region_id for _, r in on_page))
    if best:
        grown.append(Rung(paragraphs_body(page, ex.structure.in_reading_order(page, best)), "page_paragraphs"))
    return g if any(r is not None and take_rung(g, r, slack, fit) for r in grown) else None


def section_of(u: Unit, b: Body) -> str | None:
    if u.view is not None:
        return u.view.heading
    r = b.regions[0] if b.regions else None
    return r.heading_path[-1] if r is not None and r.heading_path else None


def truncate(c: Cand, slack: int, fit: Fitting) -> Cand | None:
    """Largest structural truncation of ``c`` that fits ``slack`` (binary search on length); a table
    keeps its header and the rows that fit, best first (``fitted_rows``)."""
    cnt, close_tokens, query_words = fit.count, fit.close_tokens, fit.ex.query_words
    if c.unit.kind == "table":
        return truncate_table(c, slack, cnt, close_tokens, query_words)
    trig = {fit.shits[i].region_id for i in sorted(c.unit.triggers)[:1]}
    variants = list(truncations(c.unit, trig, query_words))
    lo, hi, best = 0, len(variants) - 1, None
    while lo <= hi:  # variants are longest first; find the first (longest) that fits
        mid = (lo + hi) // 2
        b = variants[mid]
        opener = reopen(c, b)
        tt = cnt(b.text)
        total = tt + cnt(opener) + close_tokens
        if total <= slack:
            best = (b, opener, tt, total)
            hi = mid - 1
        else:
            lo = mid + 1
    if best is None:
        return None
    b, opener, tt, total = best
    c.body, c.open, c.text_tokens, c.wrapper_tokens, c.cost = b, opener, tt, total - tt, total
    c.status = "truncated"
    return c


def truncate_table(c: Cand, slack: int, count: Callable[[str], int], close_tokens: int,
                   query_words: frozenset[str]) -> Cand | None:
    regions = tuple(c.unit.regions)
    opener = reopen(c, Body("", regions, regions[0], regions[0].region_id))
    full = table_text(regions)
    text = fitted_rows(full, query_words, slack - count(opener) - close_tokens, count)
    if text is None or text == full:
        return None
    tt, wrap = count(text), count(opener) + close_tokens
    c.body = Body(text, regions, regions[0], regions[0].region_id)
    c.open, c.text_tokens, c.wrapper_tokens, c.cost = opener, tt, wrap, tt + wrap
    c.status = "truncated"
    return c


def reopen(c: Cand, b: Body) -> str:
    """The open tag for a truncated body: same id, type, file and section, its own pages."""
    return block_open(c.cid, c.unit.modality, BlockSource(c.source, b.pages, section_of(c.unit, b)), c.fmt)
