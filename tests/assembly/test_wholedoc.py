"""Short documents sent whole (``whole_documents``): when all the page text of a document fits the evidence
room, the pages no hit lies on go after the hits; a document that does not fit gets nothing added."""

from __future__ import annotations

from folio.assembly import assemble
from folio.assembly.options import AssemblyOptions
from folio.assembly.wholedoc import DOCUMENT_RETRIEVER
from folio.kernel.index import RegionIndex
from folio.kernel.model import Region
from tests.assembly.builders import SectionSpec, by_kind, find, hit, make_doc
from tests.assembly.recount import recount


def _deck(slides: int = 6, filler: int = 0) -> list[Region]:
    """A slide deck: one short section per page (forced onto its own page by filler lines)."""
    return _slides([filler] * slides)


def _pages(pkg) -> set[int]:  # type: ignore[no-untyped-def]
    return {p for it in pkg.items for p in it.pages}


def test_a_short_document_goes_whole_after_its_hits() -> None:
    regs = _deck(filler=38)
    pages = by_kind(regs, "page")
    assert len(pages) >= 4
    idx = RegionIndex(regs)
    h = [hit(find(regs, "Slide 2 lists"), 0.9, 1)]
    pkg = assemble("pump P200 pressure?", h, idx, AssemblyOptions(budget=16_000))
    assert pkg.budget.used <= 16_000 and pkg.budget.used == recount(pkg)
    assert _pages(pkg) == {p.first_page for p in pages}
    added = [x for x in pkg.retrieval.hits if x.retriever == DOCUMENT_RETRIEVER]
    assert [x.pages[0] for x in added] == sorted({p.first_page for p in pages} - {2})  # page order, after the hit
    assert all(x.rank > 1 and x.score < 0.9 for x in added)
    assert pkg.items[0].pages == [2] or any(it.pages == [2] and it.trigger_ids for it in pkg.items)
    off = assemble("pump P200 pressure?", h, idx, AssemblyOptions(budget=16_000, whole_documents=False))
    assert _pages(off) == {2}


def test_a_document_larger_than_the_room_gets_nothing_added() -> None:
    regs = _deck(filler=38)
    idx = RegionIndex(regs)
    h = [hit(find(regs, "Slide 2 lists"), 0.9, 1)]
    pkg = assemble("pump P200 pressure?", h, idx, AssemblyOptions(budget=1000))
    assert not [x for x in pkg.retrieval.hits if x.retriever == DOCUMENT_RETRIEVER]
    assert _pages(pkg) == {2}


def test_added_pages_never_displace_a_hit_and_grow_with_the_budget() -> None:
    regs = _deck(filler=38)
    idx = RegionIndex(regs)
    h = [hit(find(regs, "Slide 5 lists"), 0.9, 1), hit(find(regs, "Slide 3 lists"), 0.5, 2)]
    seen: set[int] = set()
    for budget in (6000, 8000, 16_000):
        pkg = assemble("pump pressure?", h, idx, AssemblyOptions(budget=budget))
        assert pkg.budget.used <= budget and pkg.budget.used == recount(pkg)
        assert {3, 5} <= _pages(pkg)
        assert seen <= _pages(pkg)
        seen = _pages(pkg)


def _slides(lines: list[int]) -> list[Region]:
    """A deck whose slides have these many spacer lines each (a long slide runs onto the next page)."""
    sections: list[SectionSpec] = []
    for k, n in enumerate(lines, 1):
        body = [f"Slide {k} lists the pump model P{k}00 and its rated pressure of {k}0 bar."]
        body += [f"Spacer line {j} of slide {k} about routine upkeep." for j in range(n)]
        sections.append((f"Slide {k}", [body]))
    return make_doc("deck", sections)


def test_added_pages_keep_every_item_of_the_package_without_them() -> None:
    """Nested packing carries the pages of the half-budget package first. A page added there (the document fit
    the half budget) must not go ahead of the hits at the full budget, where a page image takes most of the
    room: every item of the package without added pages is still there, word for word."""
    regs = _slides([70, 3, 70, 3, 40, 3])
    idx = RegionIndex(regs)
    first = by_kind(regs, "page")[0]
    h = [hit(first, 1.0, 1, retriever="colpali")]  # a visual hit: the page goes as its image
    h += [hit(find(regs, f"Slide {k} lists"), 0.5 - 0.05 * n, n + 2) for n, k in enumerate((1, 3))]
    for budget in range(2000, 4001, 250):
        opts = AssemblyOptions(budget=budget)
        on = assemble("pump pressure?", h, idx, opts)
        off = assemble("pump pressure?", h, idx, opts.model_copy(update={"whole_documents": False}))
        assert on.budget.used <= budget and on.budget.used == recount(on)
        kept = {(it.region_id, it.text) for it in on.items}
        assert {(it.region_id, it.text) for it in off.items} <= kept, budget


def test_added_pages_rank_after_every_hit_even_those_of_a_document_left_out() -> None:
    """A weak document's hits are left out of the pages made whole but keep their ranks: the added pages rank after
    them (they took the ranks after the kept hits, so two hits could share a rank: a property test found it)."""
    from folio.assembly.wholedoc import after_every_hit, whole_documents

    regs = _deck(filler=38)
    kept = [hit(find(regs, "Slide 2 lists"), 0.9, 1)]
    weak = hit(find(regs, "Slide 3 lists"), 0.5, 7)  # a hit of a document left out (any region serves here)
    more = whole_documents(kept, RegionIndex(regs), 16_000, lambda t: len(t.split()))
    assert [x.rank for x in more[1:]][0] == 2  # after the kept hit only
    added = after_every_hit(more, 1, [*kept, weak])[1:]
    assert added and [x.rank for x in added] == list(range(8, 8 + len(added)))
    assert all(x.sources[0].rank == x.rank for x in added)
