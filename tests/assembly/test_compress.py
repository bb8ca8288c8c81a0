"""Extractive compression of evidence below what fits whole (``assembly.packing.compress``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from folio.assembly import AssemblyOptions, assemble
from folio.kernel.index import RegionIndex
from tests.assembly.builders import find, hit, make_doc

from .recount import recount
from .test_properties import SETTINGS, cases


def _manual() -> list:
    sections = []
    for k in range(8):
        filler = [f"Section {k} paragraph {j} describes routine maintenance of the unit in general terms."
                  for j in range(12)]
        filler[6] = f"The pump pressure limit in mode {k} is {100 + k * 7} kPa at 20 C."
        sections.append((f"Mode {k}", [filler[:6], filler[6:]]))
    return make_doc("manual", sections)


def test_a_candidate_that_does_not_fit_goes_in_compressed_and_stays_cited() -> None:
    regs = _manual()
    idx = RegionIndex(regs)
    hits = [hit(find(regs, f"limit in mode {k} "), 1.0 - k / 10, k + 1) for k in range(8)]
    q = "What is the pump pressure limit?"
    base = AssemblyOptions(budget=700, strategy="parent", page_units="off", fallbacks=False)
    off = assemble(q, hits, idx, base)
    on = assemble(q, hits, idx, base.model_copy(update={"compress": "extractive", "compress_share": 0.3}))
    assert on.budget.used <= 700 and on.budget.used == recount(on)
    comp = [it for it in on.items if it.expansion == "compressed"]
    assert comp and len(on.items) > len(off.items)
    for it in comp:
        k = int(it.section.split()[-1]) if it.section else -1
        assert f"{100 + k * 7} kPa" in it.text  # the trigger sentence is kept
        assert it.fallback_from == "parent_section" and it.image_url is None
        assert it.locators and all(r.startswith("manual@") for r in it.region_ids)
        entry = next(m for m in on.manifest if m.citation_id == it.citation_id and m.fate == "included")
        assert entry.expansion == "compressed" and "compressed" in entry.reason
    # whole items ranked above the compressed ones were not given up for them
    whole = [it.citation_id for it in on.items if it.expansion != "compressed"]
    assert whole and all(int(c[1:]) < min(int(x.citation_id[1:]) for x in comp) for c in whole)


def test_compression_is_off_by_default_and_never_in_monotone_packing() -> None:
    regs = _manual()
    idx = RegionIndex(regs)
    hits = [hit(find(regs, f"limit in mode {k} "), 1.0 - k / 10, k + 1) for k in range(8)]
    assert AssemblyOptions().compress == "off"
    mono = assemble("pump limit?", hits, idx, AssemblyOptions(budget=700, strategy="parent", packing="monotone",
                                                              compress="extractive", compress_share=0.3))
    assert not any(it.expansion == "compressed" for it in mono.items)


@SETTINGS
@given(cases(), st.sampled_from([0.0, 0.15, 0.3]))
def test_budget_holds_with_compression(case, share) -> None:  # type: ignore[no-untyped-def]
    regions, hits, opts, budget = case
    opts = opts.model_copy(update={"budget": budget, "compress": "extractive", "compress_share": share})
    pkg = assemble("what is the pump pressure limit?", hits, RegionIndex(regions), opts)
    assert pkg.budget.used <= pkg.budget.limit == budget
    assert pkg.budget.used == recount(pkg)
    carried = [r for it in pkg.items for r in it.region_ids]
    assert len(carried) == len(set(carried))
    for it in pkg.items:
        if it.expansion == "compressed":
            assert it.fallback_from and it.image_url is None and opts.packing == "greedy"
