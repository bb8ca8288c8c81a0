"""Nested greedy packing: the package at a budget keeps the pages the package at half the budget carries
(``AssemblyOptions.nested``; ``assembly.core._plan`` packs the half budget first). These are the page sets it
compares, the order that puts the half-budget pages first, and the rule that keeps a partial nesting."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from folio.assembly.options import AssemblyOptions
from folio.assembly.packing.candidates import Cand, carried_pages
from folio.assembly.wholedoc import DOCUMENT_RETRIEVER
from folio.kernel.hit import Hit


def nested_carries_more(must: Collection[tuple[str, int]], nested: set[tuple[str, int]],
                        plain: set[tuple[str, int]]) -> bool:
    """Whether the nested packing (pages ``nested``) keeps more of the half-budget package's pages ``must`` than
    plain greedy packing (``plain``); then it stands, even when a page of ``must`` has no unit at this budget (a
    section spanning two pages at half the budget, its first page whole here) and it cannot keep them all."""
    return len(nested.intersection(must)) > len(plain.intersection(must))


def added_by_documents(c: Cand, shits: Sequence[Hit]) -> bool:
    """Whether ``c`` carries only pages that ``whole_documents`` added: nesting does not put them first (they
    follow the hits at every budget where the document fits)."""
    return all(shits[i].sources and all(s.retriever == DOCUMENT_RETRIEVER for s in shits[i].sources)
               for i in c.unit.triggers)


def nest_order(packable: Sequence[Cand], must: Mapping[tuple[str, int], int]) -> tuple[list[Cand], list[int]]:
    """``packable`` with the candidates that carry a page of ``must`` first (each kind in priority order), and
    for each the tokens to leave free: what the later ones' new pages cost at half the budget (``must``)."""
    first = [c for c in packable if must.keys() & body_pages(c)]
    rest = [c for c in packable if not must.keys() & body_pages(c)]
    need: list[int] = []
    seen: set[tuple[str, int]] = set()
    for c in first:
        new = (must.keys() & body_pages(c)) - seen
        seen |= new
        need.append(NEST_SLACK * sum(must[p] for p in new))
    keeps = [sum(need[k + 1:]) for k in range(len(first))] + [0] * len(rest)
    return first + rest, keeps


def priority_keeps(packable: Sequence[Cand], must: Mapping[tuple[str, int], int]) -> tuple[list[int], set[int]]:
    """For ``packable`` in priority order, the tokens each candidate must leave free: what the pages of
    ``must`` that only later candidates carry cost at half the budget (``NEST_SLACK`` times). A higher-ranked
    new page then goes in before a lower-ranked carried page grows to its full form, and the carried page still
    finds room for a form of at least its half-budget size. Also the candidates that carry none of those pages:
    they keep that room strictly (``pack_greedy``'s ``hard``)."""
    carried = [must.keys() & body_pages(c) for c in packable]
    keeps: list[int] = []
    seen: set[tuple[str, int]] = set()
    for k, pages in enumerate(carried):
        seen |= pages
        later = set().union(*carried[k + 1:]) - seen
        keeps.append(NEST_SLACK * sum(must[p] for p in later))
    return keeps, {k for k, pages in enumerate(carried) if not pages}


NEST_FLOOR = 400  # tokens of evidence room at half the budget below which packing does not nest
NEST_SLACK = 2  # a page rung takes at most half of what is left (packing.fallback): room for twice the half cost


def nests(o: AssemblyOptions, room: int) -> bool:
    """Whether packing keeps the pages of the package at half the budget (``nested``: greedy packing
    without compression, while half the budget still leaves ``NEST_FLOOR`` tokens of room)."""
    return (o.nested and o.packing == "greedy" and o.compress == "off"
            and room - (o.limit - o.limit // 2) >= NEST_FLOOR)


def body_pages(c: Cand) -> set[tuple[str, int]]:
    """The (version, page) pairs whose text ``c``'s body carries."""
    return carried_pages(c) if c.body.text.strip() else set()


def page_costs(packable: Sequence[Cand]) -> dict[tuple[str, int], int]:
    """The (version, page) pairs whose text a packed candidate carries, each with the cost of the first
    packed candidate that carries it (shared among the pages it carries)."""
    out: dict[tuple[str, int], int] = {}
    for c in packable:
        if c.status in ("included", "truncated"):
            pages = body_pages(c) - out.keys()
            for vp in pages:
                out[vp] = -(-c.cost // max(1, len(pages)))
    return out


def text_pages(packable: Sequence[Cand]) -> set[tuple[str, int]]:
    """The (version, page) pairs whose text a packed candidate carries (a page sent only as its image
    does not count)."""
    return {vp for c in packable if c.status in ("included", "truncated") for vp in body_pages(c)}
