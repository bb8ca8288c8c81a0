"""Properties of assembly for any mix of text, tables, figures and pages."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from folio.assembly import AssemblyOptions, ContextPackage, ImageTokens, assemble, verify_answer
from folio.assembly.dedupe import merge_intervals
from folio.assembly.packing.monotone import entry_budgets, pack_monotone
from folio.assembly.wholedoc import DOCUMENT_RETRIEVER
from folio.kernel.hit import Hit
from folio.kernel.index import RegionIndex
from folio.kernel.model import Region
from tests.switches import switch

from .builders import SectionSpec, hit, make_doc
from .recount import recount
from .strategies import budgets, corpora, hits_on, options

SETTINGS = settings(max_examples=int(switch("FOLIO_HYPOTHESIS_EXAMPLES") or "60"), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def cases(draw: st.DrawFn):  # type: ignore[no-untyped-def]
    regions = draw(corpora())
    return regions, draw(hits_on(regions)), draw(options), draw(budgets)


Case = tuple[list[Region], list[Hit], AssemblyOptions, int]


def _case(docs: list[tuple[str, str, list[SectionSpec]]], hits: list[tuple[str, float]], opts: AssemblyOptions,
          budget: int) -> Case:
    """A case as ``cases()`` draws it: ``docs`` are (doc, version, sections) for ``make_doc``, ``hits`` are
    (region id, score) with ranks in order, retriever ``fused``."""
    regions = [r for d, v, secs in docs for r in make_doc(d, secs, version_id=v)]
    by_id = {r.region_id: r for r in regions}
    return regions, [hit(by_id[rid], s, k + 1, retriever="fused") for k, (rid, s) in enumerate(hits)], opts, budget


_P = ["pump", "0"]
# Monotone packing at budgets 301 and 302 (the test adds 300): the page cap followed the room, so at 302 the hit's
# page (191 tokens of text) passed the cap and became the unit, whose block (199 tokens) did not fit; at 301 the
# hit went as its window. A bigger budget dropped the only item.
MONOTONE_PAGE_CAP = _case(
    [("doc0", "0" * 16, [
        ("Pump", [["Pump."] * 4, ["Pump."] * 4 + ["Pump pump."], ["Pump."] * 4 + ["Pump pump pump pump pump."]]),
        ("Pump", [("table", ["Name", "Value"], [_P]), ["Pump."], ("table", ["Name", "Value"], [_P] * 4),
                  ["Pump pressure pressure.", "Pump pump pump pump pump valve valve valve pressure pressure pressure.",
                   "Volts valve valve."]]),
        ("Pump", [("table", ["Name", "Value"], [_P]), ("table", ["Name", "Value"], [_P] * 4),
                  ("table", ["Name", "Value"], [["pump", "1"]] * 3 + [["valve", "1"]])])]),
     ("doc1", "0" * 15 + "1", [("Pump", [["Pump."]])])],
    [("doc0@0000000000000000:p1:paragraph1", 0.0)],
    AssemblyOptions(window_before=0, window_after=0, neighbors=0, include_images=False, order="relevance",
                    min_relevance=None, packing="monotone", breadth_share=0.3, excerpt_tokens=32, fallbacks=False,
                    max_image_share=None),
    1)
_SECS: list[SectionSpec] = [("Pump", [("figure", "Figure: Pump.")]),
         ("Pump", [["Pump valve.", "Pump pump.", "Pump pump.", "Pump pump."], ("figure", "Figure: Pump."),
                   ("figure", "Figure: Pump."), ("table", ["Name", "Value"], [_P])]),
         ("Pump", [("figure", "Figure: Pump."), ["Pump pump.", "Valve valve.", "Pump valve.", "Valve valve."],
                   ["Pump.", "Pump pump pump pump pump pump pump pump pump pump."], ["Pump.", "Pump pump."]])]
# Breadth packing at budgets 126 and 466: page 1's figure caption "Figure: Pump." is also in page 2's text (another
# figure with the same caption); at 466 page 2 fits too, and the caption on page 1 was dropped as a repeat of it,
# losing page 1.
BREADTH_REPEATED_CAPTION = _case(
    [("doc0", "0" * 16, _SECS), ("doc0", "f" * 16, _SECS)],
    [("doc0@0000000000000000:p1:figure1", s) for s in (1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0)]
    + [("doc0@0000000000000000:p1:figure2", 0.0), ("doc0@0000000000000000:p2:paragraph1", 0.0),
       ("doc0@0000000000000000:p2:sentence8", 1.0)],
    AssemblyOptions(window_before=0, window_after=0, parent_max_tokens=20, neighbors=0, include_images=False,
                    image_tokens=ImageTokens(kind="area"), min_relevance=None, prompt_format="anthropic",
                    breadth_share=0.3, excerpt_tokens=34, fallbacks=False, max_image_share=0.2),
    126)
_D0: list[SectionSpec] = [
    ("Pump", [("table", ["Name", "Value"], [_P, _P]), ("table", ["Name", "Value"], [_P])]),
    ("Pump", [["Pump."], ["Pump."], ["Pump."] * 5, ["Pump.", "Pump.", "Pump pump pump pump.", "Pump."]]),
    ("Pump", [["Pump."], ["Pump."]])]


def _pumps(n: int) -> str:
    return " ".join(["Pump"] + ["pump"] * (n - 1)) + "."


# Greedy packing with structural truncation at budget 327: the truncation pass after packing added "Pump. Pump. Pump.
# Pump." (S5, sentences 9-12 of doc1 page 1) without the repeat check packing does, so "Pump." (S1, sentence 14 of
# the same page, the top hit) was sent twice.
TRUNCATED_REPEAT = _case(
    [("doc0", "0" * 16, _D0), ("doc0", "f" * 16, _D0),
     ("doc1", "0" * 15 + "1", [
         ("Pump", [["Pump."], ["Pump."], ["Pump pump.", "Pump pump pump pump.", "Pump."]]),
         ("Pump", [["Pump pump.", "Pump pump pump valve pump."], ["Pump."] * 5]),
         ("Pump", [["Pump."]]), ("Pump", [["Pump."], ["Pump.", "Pump.", "Pump pump."]])]),
     ("doc2", "0" * 15 + "2", [
         ("Pump", [["Pump pump.", _pumps(12), _pumps(14), _pumps(11), _pumps(14)], ["Pump."], ["Pump."],
                   ["Pump.", "Pump.", "Pump pump."]]),
         ("Pump", [["Pump."] * 3, ["Pump pump."], ["Pump."] * 5,
                   [_pumps(14), "Pump.", "Pump pump pump pump pump.", "Pump.",
                    "Pump pump maintenance pump model."]]),
         ("Pump", [["Pump response pump pump bar power.", "Pump pump exception."],
                   ["Board minutes pump.", "Pump pump.", "Maintenance maintenance.",
                    "Volts pump figure pump wiring pump.", "Pump pump pump volts power pump."],
                   ["Response figure pump model pump wiring target response pump model pump board board pump."],
                   ["Figure mass.", "Minutes board.", "Power exception."]]),
         ("Pump", [["Pump.", "Pump pump model.", "Pump volts.", "Pump pump."], ["Pump.", "Pump volts mass."],
                   ("figure", "Figure: Pump.")])])],
    [("doc1@0000000000000001:p1:paragraph7", 0.0), ("doc2@0000000000000002:p1:sentence24", 0.0),
     ("doc2@0000000000000002:p1:sentence5", 0.0), ("doc0@0000000000000000:p1:table1", 0.0),
     ("doc2@0000000000000002:p1:sentence31", 0.0), ("doc0@0000000000000000:p1:table1", 0.0),
     ("doc0@0000000000000000:p1:table1", 0.0), ("doc1@0000000000000001:p1:sentence12", 0.0)]
    + [("doc0@0000000000000000:p1:table1", 0.0)] * 3,
    AssemblyOptions(strategy="neighbors", window_before=0, window_after=0, parent_max_tokens=20, neighbors=0,
                    include_images=False, structural_truncation=True, order="relevance", min_relevance=None,
                    breadth_share=0.3, excerpt_tokens=32, fallbacks=False, max_image_share=None),
    327)
_T = ("table", ["Name", "Value"])
_D0T: list[SectionSpec] = [
    ("Pump", [["Pump."] * 2, (*_T, [_P] * 3), (*_T, [_P] * 8)]),
    ("Pump", [(*_T, [_P]), ["Pump."], ["Pump."] * 4, (*_T, [_P] * 5)]),
    ("Pump", [(*_T, [_P] * 4), ["Pump."] * 5]),
    ("Pump", [(*_T, [_P]), ("figure", "Figure: Pump."), ("figure", "Figure: Pump."), (*_T, [_P] * 8)])]
# Breadth packing with structural truncation at budgets 156 and 278: the table hit (58 tokens of text, more than
# excerpt_tokens=39 but within twice that) had no small form, because truncate_table only cuts a table that does not
# fit; left out of the plan, it went in only through structural truncation into a small leftover (156, page 3), and
# not at all where the leftover held it whole (278).
BREADTH_TABLE_SMALL_FORM = _case(
    [("doc0", "0" * 16, _D0T), ("doc0", "f" * 16, _D0T), ("doc1", "0" * 15 + "1", [("Pump", [["Pump."]])]),
     ("doc2", "0" * 15 + "2", [("Pump", [["Pump.", "Pump pump."], ["Pump.", "Pump pump pump.", "Pump.", "Pump."],
                                         ["Pump.", _pumps(7), "Pump pump pump valve pump pump.", _pumps(10)]])])],
    [("doc0@ffffffffffffffff:p3:table1", 0.0), ("doc0@ffffffffffffffff:p2:page1", 0.0)],
    AssemblyOptions(strategy="raw", window_before=0, window_after=0, parent_max_tokens=38, neighbors=2,
                    include_images=False, image_tokens=ImageTokens(kind="fixed", fixed=50), structural_truncation=True,
                    order="document", min_relevance=None, breadth_reserve=2, breadth_share=0.3, excerpt_tokens=39,
                    fallbacks=False),
    156)
_D0S: list[SectionSpec] = [("Pump", [["Pump."]] * 4), ("Pump", [["Pump."], ["Pump."], ["Pump."] * 3]),
                           ("Pump", [["Pump."], ["Pump."], ["Pump."] * 2])]
# Breadth packing with structural truncation at budgets 137 and 897: at 137 the page image (773 tokens) did not fit
# and structural truncation put the second version's paragraph into the leftover (its page 1); at 897 the page image
# took that room. Breadth now truncates only into pages its package covers.
BREADTH_TRUNCATED_LEFTOVER = _case(
    [("doc0", "0" * 16, _D0S), ("doc0", "f" * 16, _D0S)],
    [("doc0@0000000000000000:p1:paragraph1", 0.0)] * 5
    + [("doc0@0000000000000000:p1:page1", 0.0), ("doc0@ffffffffffffffff:p1:paragraph1", 0.0),
       ("doc0@ffffffffffffffff:p1:paragraph2", 0.0)],
    AssemblyOptions(strategy="raw", window_before=0, window_after=0, parent_max_tokens=20, neighbors=0,
                    structural_truncation=True, order="relevance", min_relevance=None, breadth_share=0.3,
                    excerpt_tokens=32, fallbacks=False, max_image_share=None),
    137)

@SETTINGS
@given(cases())
@example(TRUNCATED_REPEAT)
def test_budget_never_exceeded_and_used_is_exact(case) -> None:  # type: ignore[no-untyped-def]
    regions, hits, opts, budget = case
    opts = opts.model_copy(update={"budget": budget})
    pkg = assemble("what is the pump pressure limit?", hits, RegionIndex(regions), opts)
    assert pkg.budget.used <= pkg.budget.limit == budget
    assert pkg.budget.used == recount(pkg)
    assert sum(pkg.budget.breakdown.model_dump().values()) == pkg.budget.used
    _every_hit_once_in_the_manifest(pkg, hits)
    # no region twice, ids unique, refusal iff empty
    carried = [r for it in pkg.items for r in it.region_ids]
    assert len(carried) == len(set(carried))
    assert len({i.citation_id for i in pkg.items}) == len(pkg.items)
    assert pkg.refused == (not pkg.items)
    if opts.packing in ("greedy", "breadth"):  # no packed text is inside another packed item of its version
        # (breadth: that covers its pages; the same caption on another page is evidence for that page)
        flat = [(it.version_id, set(it.pages) if opts.packing == "breadth" else set(), " ".join(it.text.split()))
                for it in pkg.items if it.text and not it.image_url]
        for k, (v, ps, t) in enumerate(flat):
            assert not any(v == w and ps <= qs and t in u for j, (w, qs, u) in enumerate(flat) if j != k), t
    ids = _packed_items_match_their_entries(pkg, opts)
    if opts.packing in ("greedy", "breadth") and opts.max_image_share is not None:
        assert pkg.budget.breakdown.images <= opts.max_image_share * budget
    assert pkg.retrieval.coverage_after.hits <= sum(
        m.fate in ("included", "truncated") or m.fate.startswith("merged_into:") for m in pkg.manifest)
    _items_stay_in_their_version_and_section(pkg, regions)
    # the post-check only keeps packed ids
    answer = " ".join(f"Fact {k} [{c}] [X9]." for k, c in enumerate(sorted(ids)))
    rep = verify_answer(answer, pkg)
    assert set(rep.kept_ids) == ids and rep.invented_ids == (["X9"] if ids else [])


def _every_hit_once_in_the_manifest(pkg: ContextPackage, hits: list[Hit]) -> None:
    """Every candidate exactly once in the manifest, in ranked order; a short document's other pages after
    the hits."""
    assert [m.region_id for m in pkg.manifest] == [h.region_id for h in pkg.retrieval.hits]
    added = [h for h in pkg.retrieval.hits if h.retriever == DOCUMENT_RETRIEVER]  # a short document's other pages
    assert len(pkg.manifest) == len(hits) + len(added)
    assert all(h.rank > max(x.rank for x in hits) for h in added)


def _packed_items_match_their_entries(pkg: ContextPackage, opts: AssemblyOptions) -> set[str]:
    """Included manifest entries point at packed items; every packed item is the primary fate of exactly one
    candidate, and a fallback says so there. The packed ids."""
    ids = {i.citation_id for i in pkg.items}
    for m in pkg.manifest:
        if m.fate in ("included", "truncated"):
            assert m.citation_id in ids
    primary = [m for m in pkg.manifest if m.fate in ("included", "truncated")]
    assert sorted(m.citation_id or "" for m in primary) == sorted(ids)
    by_cid = {m.citation_id: m for m in primary}
    for it in pkg.items:
        assert by_cid[it.citation_id].fallback_from == it.fallback_from
        if it.fallback_from is not None:
            assert it.image_url is None and it.image_tokens == 0  # rungs never carry an image
            assert (opts.fallbacks and opts.packing == "greedy") or opts.packing == "breadth"
            assert "smaller source region" in by_cid[it.citation_id].reason
    return ids


def _items_stay_in_their_version_and_section(pkg: ContextPackage, regions: list[Region]) -> None:
    """Windows and parents never cross a version or section; a packed sentence's text is in its item."""
    by_id = {r.region_id: r for r in regions}
    for it in pkg.items:
        rs = [by_id[r] for r in it.region_ids]
        assert {(r.doc_id, r.version_id) for r in rs} == {(it.doc_id, it.version_id)}
        if it.modality == "text":
            assert len({r.section_id for r in rs}) == 1
        for s in (r for r in rs if r.kind == "sentence"):
            assert s.region_id in it.region_ids and s.text.strip() in it.text


@SETTINGS
@given(cases(), st.integers(0, 3000))
@example(MONOTONE_PAGE_CAP, 1)
def test_bigger_budget_never_drops_an_item(case, extra) -> None:  # type: ignore[no-untyped-def]
    regions, hits, opts, budget = case
    # the plan is budget-independent in monotone packing (its caps do not follow the room, see assembly.room)
    opts = opts.model_copy(update={"structural_truncation": False, "packing": "monotone"})
    idx = RegionIndex(regions)
    small = assemble("q", hits, idx, opts.model_copy(update={"budget": budget + 300}))
    big = assemble("q", hits, idx, opts.model_copy(update={"budget": budget + 300 + extra}))
    assert {i.citation_id for i in small.items} <= {i.citation_id for i in big.items}
    assert {r for i in small.items for r in i.region_ids} <= {r for i in big.items for r in i.region_ids}


@SETTINGS
@given(cases(), st.integers(0, 3000))
@example(BREADTH_REPEATED_CAPTION, 340)
@example(BREADTH_TABLE_SMALL_FORM, 122)
@example(BREADTH_TRUNCATED_LEFTOVER, 760)
def test_breadth_packing_never_covers_fewer_pages_with_more_budget(case, extra) -> None:  # type: ignore[no-untyped-def]
    regions, hits, opts, budget = case
    opts = opts.model_copy(update={"packing": "breadth"})
    idx = RegionIndex(regions)
    small = assemble("q", hits, idx, opts.model_copy(update={"budget": budget}))
    big = assemble("q", hits, idx, opts.model_copy(update={"budget": budget + extra}))
    pages = [{(i.version_id, p) for i in pkg.items for p in i.pages} for pkg in (small, big)]
    assert pages[0] <= pages[1]


@SETTINGS
@given(cases(), st.integers(0, 3000))
def test_nested_greedy_keeps_at_least_what_plain_greedy_keeps_of_half_the_budget(case, extra) -> None:  # type: ignore[no-untyped-def]
    """Greedy with ``nested`` (the default) carries every page the package at half the budget carries whenever
    plain greedy does, and in any case no fewer of them; both stay within the budget."""
    regions, hits, opts, budget = case
    b = 2 * budget + extra
    opts = opts.model_copy(update={"packing": "greedy", "compress": "off", "nested": True})
    idx = RegionIndex(regions)
    half = assemble("q", hits, idx, opts.model_copy(update={"budget": b // 2, "context_window": None}))
    nested = assemble("q", hits, idx, opts.model_copy(update={"budget": b, "context_window": None}))
    plain = assemble("q", hits, idx, opts.model_copy(update={"budget": b, "context_window": None, "nested": False}))
    pages = [{(i.version_id, p) for i in pkg.items if i.text.strip() for p in i.pages} for pkg in (half, nested, plain)]
    assert len(pages[0] & pages[1]) >= len(pages[0] & pages[2])
    if pages[0] <= pages[2]:
        assert pages[0] <= pages[1]
    assert nested.budget.used <= b and nested.budget.used == recount(nested)


@SETTINGS
@given(cases())
def test_assembly_is_idempotent_under_duplicate_hits(case) -> None:  # type: ignore[no-untyped-def]
    regions, hits, opts, budget = case
    idx = RegionIndex(regions)
    opts = opts.model_copy(update={"budget": budget})
    once = assemble("q", hits, idx, opts)
    twice = assemble("q", list(hits) + list(hits), idx, opts)
    assert [i.model_dump() for i in once.items] == [i.model_dump() for i in twice.items]
    if once.manifest and all(m.reason.startswith("off-topic") for m in once.manifest):
        assert {m.fate for m in twice.manifest} == {"below_threshold"}  # the question is judged before duplicates
        return
    assert sum(m.fate == "duplicate" for m in twice.manifest) == len(hits) + sum(
        m.fate == "duplicate" for m in once.manifest)


intervals = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 8)).map(lambda t: (t[0], t[0] + t[1])),
                     max_size=12)


@given(intervals, intervals)
def test_merge_intervals_is_a_transitive_idempotent_union(a, b) -> None:  # type: ignore[no-untyped-def]
    m = merge_intervals(a)
    assert merge_intervals(m) == m
    assert merge_intervals(a + b) == merge_intervals(merge_intervals(a) + merge_intervals(b))
    covered = {x for lo, hi in a for x in range(lo, hi + 1)}
    assert {x for lo, hi in m for x in range(lo, hi + 1)} == covered
    for (_, h1), (l2, _) in itertools.pairwise(m):
        assert l2 > h1 + 1  # neither overlapping nor adjacent: merging was transitive


costs = st.lists(st.integers(1, 60), max_size=9)


@given(costs)
def test_entry_budgets_feasible_monotone_and_prioritised(cs) -> None:  # type: ignore[no-untyped-def]
    es = entry_budgets(cs)
    top = sum(cs) + 1
    prev: set[int] = set()
    for room in range(0, top + 1):
        chosen = {i for i, ok in enumerate(pack_monotone(cs, room)) if ok}
        assert sum(cs[i] for i in chosen) <= room
        assert prev <= chosen
        prev = chosen
    assert prev == set(range(len(cs)))
    assert all(e <= top for e in es)


def test_the_chain_rule_is_monotone() -> None:
    cs = [6, 5, 4]  # greedy would take [6, 4] at 10 and drop the 4 at 11; the chain rule never drops one
    assert pack_monotone(cs, 10) == [True, False, False] and pack_monotone(cs, 11) == [True, True, False]


def test_options_defaults_are_valid() -> None:
    assert AssemblyOptions().order == "edges" and AssemblyOptions().strategy == "auto"
