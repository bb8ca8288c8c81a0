"""Worked examples from the seeds, plus the edge cases the properties do not pin down."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from folio.assembly import AssemblyOptions, ImageTokens, assemble, verify_answer
from folio.assembly.budget import image_token_cost
from folio.assembly.dedupe import merge_intervals
from folio.assembly.packing.monotone import entry_budgets
from folio.kernel.hit import Source
from folio.kernel.index import RegionIndex
from folio.kernel.tokens import get_tokenizer
from folio.settings import Settings
from tests.assembly.builders import by_kind, find, hit, make_doc

from .recount import recount

V1, V2 = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
BOX_KEYS = {"x0", "y0", "x1", "y1"}

POLICY = [
    "Priority-one incidents are outages that affect every customer.",
    "The response deadline for a priority-one incident is 15 minutes.",
    "The deadline applies to unplanned outages.",
    "Escalation goes to the duty manager after 30 minutes.",
    "Incidents during announced maintenance windows are exempt from the deadline.",
]


def policy_regions() -> list:
    return make_doc("support", [
        ("Overview", [["Support covers all paid plans.", "Hours are 24/7."]]),
        ("Priority-one incidents", [POLICY[:3], POLICY[3:]]),
        ("Billing", [["Invoices are sent monthly.", "Refunds take ten days."]]),
    ], version_id=V1)


def test_three_overlapping_chunks_and_a_second_document() -> None:
    """Seed pitfall: three chunks of one section + one chunk of another doc, room for about two parents."""
    a = policy_regions()
    b = make_doc("ops", [("On-call", [["The on-call rota is published every Friday.",
                                       "The duty manager owns priority-one escalations."]])], version_id=V2)
    idx = RegionIndex(a + b)
    sents = [find(a, "response deadline"), find(a, "unplanned"), find(a, "Escalation goes")]
    hits = [hit(s, 0.9 - 0.05 * k, k + 1) for k, s in enumerate(sents)]
    hits.append(hit(find(b, "owns priority-one"), 0.6, 4))
    one = assemble("Who owns P1 escalation and what is the deadline?", hits[:1], idx, AssemblyOptions())
    parent_cost = one.items[0].tokens
    fixed = one.budget.used - parent_cost
    # document_focus off: this seed is about parents and dedupe; the builder's hits carry a dense score alone,
    # on which ops (0.6 against 0.9) would be a weaker document (tests/assembly/test_relevance.py)
    opts = AssemblyOptions(budget=fixed + 2 * parent_cost + 10, strategy="parent", document_focus="off")
    pkg = assemble("Who owns P1 escalation and what is the deadline?", hits, idx, opts,
                   filenames={V1: "support.pdf", V2: "ops.pdf"})
    assert pkg.budget.used <= pkg.budget.limit
    assert {it.doc_id for it in pkg.items} == {"support", "ops"}
    support = [it for it in pkg.items if it.doc_id == "support"]
    assert len(support) == 1 and support[0].expansion == "parent_section"
    assert support[0].trigger_ids == [s.region_id for s in sents]
    fates = [m.fate for m in pkg.manifest]
    assert fates == ["included", f"merged_into:{support[0].citation_id}", f"merged_into:{support[0].citation_id}",
                     "included"]
    assert pkg.retrieval.coverage_after.docs == 2
    text = "".join(p.get("text", "") for p in pkg.prompt.messages[1]["content"])
    assert text.count(POLICY[2]) == 1 and "] ops.pdf p.1 | On-call\n" in text


def test_exception_two_sentences_after_the_deadline() -> None:
    """Radius 1 misses the maintenance exception; the parent section captures it."""
    regs = policy_regions()
    idx = RegionIndex(regs)
    h = [hit(find(regs, "response deadline"), 0.9, 1)]
    win = assemble("P1 deadline?", h, idx, AssemblyOptions(strategy="window", window_before=1, window_after=1))
    assert "unplanned" in win.items[0].text and "maintenance" not in win.items[0].text
    assert win.items[0].expansion == "window"
    par = assemble("P1 deadline?", h, idx, AssemblyOptions(strategy="parent"))
    assert "maintenance" in par.items[0].text and "unplanned" in par.items[0].text
    assert "Hours are" not in par.items[0].text  # bounded to the section
    # asymmetric radii
    after = assemble("P1 deadline?", h, idx, AssemblyOptions(strategy="window", window_before=0, window_after=3))
    assert after.items[0].text.startswith("The response deadline") and "maintenance" in after.items[0].text


def test_windows_clamp_at_document_and_section_ends() -> None:
    regs = policy_regions()
    idx = RegionIndex(regs)
    first, last = by_kind(regs, "sentence")[0], by_kind(regs, "sentence")[-1]
    opts = AssemblyOptions(strategy="window", window_before=3, window_after=3)
    p1 = assemble("q", [hit(first, 1.0, 1)], idx, opts)
    assert p1.items[0].text == "Support covers all paid plans. Hours are 24/7."
    p2 = assemble("q", [hit(last, 1.0, 1)], idx, opts)
    assert p2.items[0].text == "Invoices are sent monthly. Refunds take ten days."
    mid = find(regs, "unplanned")  # third of five: window stays inside "Priority-one incidents"
    p3 = assemble("q", [hit(mid, 1.0, 1)], idx, AssemblyOptions(strategy="window", window_before=9, window_after=9))
    assert "Hours" not in p3.items[0].text and "Invoices" not in p3.items[0].text
    assert len(p3.items[0].region_ids) == 5


def test_parent_larger_than_the_whole_budget_falls_back() -> None:
    long = [f"Clause {k} of the agreement sets out obligation number {k} in detail." for k in range(120)]
    regs = make_doc("contract", [("Terms", [long[i:i + 6] for i in range(0, 120, 6)])])
    idx = RegionIndex(regs)
    h = [hit(find(regs, "obligation number 57 "), 1.0, 1)]
    opts = AssemblyOptions(budget=600, strategy="parent", parent_max_tokens=100_000)
    pkg = assemble("clause 57?", h, idx, opts)
    assert pkg.budget.used <= 600 and len(pkg.items) == 1
    assert pkg.items[0].expansion == "paragraph" and "obligation number 57 " in pkg.items[0].text
    assert pkg.budget.used == recount(pkg)
    tiny = AssemblyOptions(budget=260, strategy="parent", parent_max_tokens=100_000)
    pkg2 = assemble("clause 57?", h, idx, tiny)
    assert pkg2.budget.used <= 260


def test_table_whole_truncation_keeps_header_and_figure_image() -> None:
    rows = [[f"model-{k}", f"{k * 10} W", f"{k} kg"] for k in range(40)]
    regs = make_doc("data", [
        ("Specs", [["The table lists every model."], ("table", ["Model", "Power", "Mass"], rows)]),
        ("Diagrams", [["See the wiring diagram."], ("figure", "Figure 2: Wiring of the main board")]),
    ])
    idx = RegionIndex(regs)
    table, fig = by_kind(regs, "table")[0], by_kind(regs, "figure")[0]
    pkg = assemble("power of model-7?", [hit(table, 1.0, 1), hit(fig, 0.5, 2, "clip")], idx,
                   AssemblyOptions(page_units="off"))
    t = next(i for i in pkg.items if i.modality == "table")
    assert t.text.count("\n") == 41 and t.citation_id == "T1"
    f = next(i for i in pkg.items if i.modality == "figure")
    assert f.citation_id == "F1" and f.image_url == f"/v1/regions/{fig.region_id}/image"
    assert f.image_tokens == image_token_cost(800, 380, ImageTokens()) and "Wiring" in f.text
    assert pkg.budget.breakdown.images == f.image_tokens
    # structural truncation: cut at a row boundary, header kept
    small = pkg.budget.used - sum(i.tokens for i in pkg.items) + t.tokens // 2
    tr = assemble("power of model-7?", [hit(table, 1.0, 1)], idx,
                  AssemblyOptions(page_units="off", budget=small, structural_truncation=True))
    assert tr.items[0].status == "truncated" and tr.manifest[0].fate == "truncated"
    lines = tr.items[0].text.splitlines()
    assert lines[0] == "| Model | Power | Mass |" and lines[1].startswith("|---")
    assert all(ln.startswith("| model-") and ln.endswith("|") for ln in lines[2:-1])
    assert lines[-1] == f"({40 - len(lines[2:-1])} of 40 rows left out)"  # it says what it left out
    assert tr.budget.used <= small
    # tables are cut by the fallback ladder even without structural_truncation; with fallbacks off
    # and no structural truncation the table is skipped whole
    auto = assemble("power?", [hit(table, 1.0, 1)], idx, AssemblyOptions(page_units="off", budget=small))
    assert auto.items[0].status == "truncated" and auto.items[0].text.splitlines()[0] == lines[0]
    no = assemble("power?", [hit(table, 1.0, 1)], idx, AssemblyOptions(page_units="off", budget=small, fallbacks=False))
    assert no.items == [] and no.refused and no.manifest[0].fate == "excluded_budget"


def test_cross_modal_dedupe_page_image_contains_figure() -> None:
    regs = make_doc("m", [("Diagrams", [["See the wiring diagram."], ("figure", "Figure 2: Wiring")])])
    idx = RegionIndex(regs)
    fig, page = by_kind(regs, "figure")[0], by_kind(regs, "page")[0]
    pkg = assemble("wiring", [hit(fig, 0.9, 1, "clip"), hit(page, 0.8, 2, "colpali")], idx,
                   AssemblyOptions(page_units="off"))
    assert [i.modality for i in pkg.items] == ["page"]
    assert pkg.items[0].region_ids == [page.region_id, fig.region_id]
    assert pkg.manifest[1].fate == "merged_into:P1" or pkg.manifest[0].fate == "merged_into:P1"
    off = assemble("wiring", [hit(fig, 0.9, 1)], idx, AssemblyOptions(page_units="off", include_images=False))
    assert off.items[0].image_url is None and off.items[0].expansion == "figure_text"
    assert off.budget.breakdown.images == 0


def test_versions_never_deduped_by_text_and_windows_stay_in_version() -> None:
    old = make_doc("policy", [("Rules", [POLICY])], version_id=V1)
    new = make_doc("policy", [("Rules", [POLICY])], version_id=V2)
    idx = RegionIndex(old + new)
    h = [hit(find(old, "unplanned"), 0.9, 1), hit(find(new, "unplanned"), 0.9, 2)]
    pkg = assemble("q", h, idx, AssemblyOptions(strategy="window"))
    assert sorted(i.version_id for i in pkg.items) == [V1, V2]
    for it in pkg.items:
        assert all(rid.split("@")[1].startswith(it.version_id) for rid in it.region_ids)


def test_refuse_branches_never_exceed() -> None:
    regs = policy_regions()
    idx = RegionIndex(regs)
    empty = assemble("What is the P1 deadline?", [], idx, AssemblyOptions())
    assert empty.refused and empty.items == [] and "no hits" in (empty.refusal_reason or "")
    user = "".join(p["text"] for p in empty.prompt.messages[1]["content"])
    assert "Insufficient evidence" in user and empty.budget.used == recount(empty)
    weak = [hit(find(regs, "deadline for"), 0.1, 2), hit(find(regs, "Invoices"), 1.0, 1)]
    thr = assemble("q", weak, idx, AssemblyOptions(score_threshold=2.0, threshold_mode="absolute"))
    assert thr.refused and all(m.fate == "below_threshold" for m in thr.manifest)
    rel = assemble("q", weak, idx, AssemblyOptions(score_threshold=0.5))
    assert [m.fate for m in rel.manifest] == ["included", "below_threshold"]
    for limit in (1, 20, 100, 160, 175, 200):
        p = assemble("What is the P1 deadline?", weak, idx, AssemblyOptions(budget=limit))
        assert p.budget.used <= limit and p.budget.used == recount(p)
        if p.budget.used == 0:
            assert p.refused and p.prompt.messages == [] and "needs" in (p.refusal_reason or "")


def test_anthropic_shape_and_o200k() -> None:
    regs = make_doc("m", [("Diagrams", [["See the wiring diagram."], ("figure", "Figure 2: Wiring")])])
    idx = RegionIndex(regs)
    h = [hit(by_kind(regs, "figure")[0], 0.9, 1, "clip"), hit(by_kind(regs, "sentence")[0], 0.5, 2)]
    opts = AssemblyOptions(page_units="off", prompt_format="anthropic", tokenizer="o200k_base",
                           image_tokens=ImageTokens(kind="area"))
    pkg = assemble("wiring", h, idx, opts)
    assert pkg.prompt.system and [m["role"] for m in pkg.prompt.messages] == ["user"]
    assert any(p["type"] == "image" for p in pkg.prompt.messages[0]["content"])
    assert pkg.budget.tokenizer == "o200k_base" and pkg.budget.used == recount(pkg)


def test_rest_contract_shape() -> None:
    regs = policy_regions()
    pkg = assemble("q", [hit(find(regs, "unplanned"), 0.9, 1)], RegionIndex(regs), AssemblyOptions())
    d = pkg.model_dump()
    assert {"query", "budget", "items", "excluded", "manifest", "retrieval", "prompt", "refused",
            "strategy"} <= set(d)
    assert {"limit", "used", "tokenizer", "breakdown"} <= set(d["budget"])
    assert sum(d["budget"]["breakdown"].values()) == d["budget"]["used"]
    item = d["items"][0]
    for k in ("citation_id", "region_id", "doc_id", "version_id", "filename", "modality", "expansion",
              "trigger_ids", "pages", "locators", "text", "tokens", "status", "score"):
        assert k in item
    assert set(item["locators"][0]) >= {"page", "bbox"} and set(item["locators"][0]["bbox"]) == BOX_KEYS
    assert set(d["retrieval"]["hits"][0]) == {"region_id", "pages", "score", "retriever", "rank"}
    assert set(d["retrieval"]) == {"hits", "coverage_before", "coverage_after", "page_refs", "notes"}


def test_options_validation() -> None:
    assert AssemblyOptions().limit == 2000 == Settings(data="/nonexistent").default_budget  # one default budget
    assert AssemblyOptions(context_window=8000, reserve_output=1000).limit == 7000
    assert AssemblyOptions(budget=500, context_window=8000).limit == 500
    for bad in ({"budget": 0}, {"tokenizer": "gpt2"}, {"context_window": 100, "reserve_output": 200},
                {"score_threshold": 1.5}, {"modality_slots": {"video": 1}}, {"strategy": "magic"},
                {"image_url_template": "/img"}, {"mmr_lambda": 2}, {"typo": 1}):
        with pytest.raises(ValidationError):
            AssemblyOptions(**bad)


def test_slots_max_items_mmr_and_subquestions() -> None:
    regs = make_doc("m", [
        ("A", [["Alpha facts about the pump pressure.", "Pump pressure is 5 bar."]]),
        ("B", [["Beta facts about the pump pressure.", "Pump pressure rises at start."]]),
        ("C", [["The valve is made of brass.", "The valve weighs 2 kg."]]),
        ("D", [("figure", "Figure 1: pump"), ("figure", "Figure 2: valve")]),
    ])
    idx = RegionIndex(regs)
    sents = by_kind(regs, "sentence")
    figs = by_kind(regs, "figure")
    h = [hit(sents[1], 0.9, 1), hit(sents[3], 0.85, 2), hit(sents[4], 0.5, 3), hit(figs[0], 0.4, 4),
         hit(figs[1], 0.3, 5)]
    slots = assemble("q", h, idx, AssemblyOptions(strategy="raw", modality_slots={"figure": 1}))
    assert [m.fate for m in slots.manifest][3:] == ["included", "excluded_slot"]
    capped = assemble("q", h, idx, AssemblyOptions(strategy="raw", max_items=2))
    assert len(capped.items) == 2
    cov = assemble("pump pressure and valve material", h, idx,
                   AssemblyOptions(strategy="raw", max_items=2,
                                   sub_questions=("pump pressure", "valve brass material")))
    assert any("brass" in i.text for i in cov.items)
    mmr = assemble("q", h[:3], idx, AssemblyOptions(strategy="raw", mmr_lambda=0.1, max_items=2))
    assert any("brass" in i.text for i in mmr.items)


def test_verify_answer() -> None:
    regs = policy_regions()
    pkg = assemble("q", [hit(find(regs, "response deadline"), 0.9, 1), hit(find(regs, "Invoices"), 0.5, 2)],
                   RegionIndex(regs), AssemblyOptions(strategy="raw"))
    ids = [i.citation_id for i in pkg.items]
    assert ids == ["S1", "S2"]
    ans = ("The response deadline is 15 minutes [S1]. Invoices are sent monthly. [S2] "
           "Refunds are instant [S1, S7]. It rains often. Could you say which plan?")
    rep = verify_answer(ans, pkg)
    assert rep.kept_ids == ["S1", "S2"] and rep.invented_ids == ["S7"]
    assert rep.uncited_sentences == ["It rains often."]
    sup = {(s.sentence_index, s.citation_id): s.support for s in rep.support}
    assert sup[(0, "S1")] == 1.0 and sup[(1, "S2")] == 1.0 and sup[(2, "S1")] < 0.5
    assert not rep.ok
    good = verify_answer("The response deadline is 15 minutes [S1][S2].", pkg)
    assert good.ok and good.kept_ids == ["S1", "S2"]
    refusal = verify_answer("Insufficient evidence. Which product do you mean?", pkg)
    assert refusal.insufficient_evidence and refusal.ok and refusal.uncited_sentences == []


def test_entry_budgets_and_intervals_small_cases() -> None:
    assert entry_budgets([6, 5, 4]) == [6, 11, 15]
    assert merge_intervals([(0, 1), (2, 3), (5, 6)]) == [(0, 3), (5, 6)]
    assert image_token_cost(512, 512, ImageTokens()) == 85 + 170
    assert get_tokenizer("cl100k_base").count("hello world") == 2



def test_weak_dense_similarity_takes_the_refuse_branch() -> None:
    """Off-topic questions: the best dense cosine is tiny, so nothing is packed and the prompt refuses."""
    from folio.assembly import AssemblyOptions, assemble
    from folio.kernel.hit import Hit, Source
    from folio.kernel.index import RegionIndex
    from tests.assembly.builders import find, make_doc

    regions = make_doc("policy", [("Response targets", [["The engineer must acknowledge a P1 within 30 minutes."]])])
    sent = find(regions, "acknowledge")
    idx = RegionIndex(regions)

    def hit(dense: float) -> Hit:
        return Hit(region_id=sent.region_id, doc_id=sent.doc_id, version_id=sent.version_id, kind="sentence",
                   modality="text", pages=(1,), score=0.03, rank=1,
                   sources=(Source(retriever="bm25", rank=1, score=2.0),
                            Source(retriever="dense", rank=1, score=dense)))

    weak = assemble("capital of Mongolia?", [hit(0.05)], idx, AssemblyOptions(budget=1000))
    assert weak.refused and not weak.items
    assert weak.refusal_reason is not None and weak.refusal_reason.startswith("weak retrieval")
    assert [m.fate for m in weak.manifest] == ["below_threshold"]
    strong = assemble("P1 acknowledgement?", [hit(0.6)], idx, AssemblyOptions(budget=1000))
    assert not strong.refused and strong.items
    off = assemble("capital of Mongolia?", [hit(0.05)], idx, AssemblyOptions(budget=1000, min_relevance=None))
    assert off.items


# -- fallback ladder, tables, pages and the budget-scaled parent cap ------------------------------------


def _prompt_text(pkg) -> str:  # type: ignore[no-untyped-def]
    return "".join(p.get("text", "") for m in pkg.prompt.messages if not isinstance(m["content"], str)
                   for p in m["content"])


def test_oversized_top_table_arrives_truncated_with_header_at_1000() -> None:
    rows = [[f"model-{k}", f"{k * 10} W", f"{k} kg", f"part number {k:05d} rev B"] for k in range(120)]
    regs = make_doc("data", [
        ("Specs", [["The table lists every model."], ("table", ["Model", "Power", "Mass", "Part"], rows)]),
        ("Notes", [["Power is measured at 25 degrees.", "Mass excludes packaging."]]),
    ])
    idx = RegionIndex(regs)
    table = by_kind(regs, "table")[0]
    assert get_tokenizer("cl100k_base").count(table.text) > 1000
    h = [hit(table, 1.0, 1), hit(find(regs, "25 degrees"), 0.5, 2)]
    pkg = assemble("power of model-7?", h, idx, AssemblyOptions(budget=1000))
    assert pkg.budget.used <= 1000 and pkg.budget.used == recount(pkg)
    t = next(i for i in pkg.items if i.modality == "table")
    assert t.status == "truncated" and t.expansion == "table:truncated"
    lines = t.text.splitlines()
    assert lines[0] == "| Model | Power | Mass | Part |" and lines[1].startswith("|---")
    assert lines[2].startswith("| model-0 |") and len(lines) > 10
    assert pkg.manifest[0].fate == "truncated"
    # the table is cut to leave room for the next candidate only if it would not fit otherwise: here it
    # took the room first (priority), and the sentence hit is still accounted for
    assert pkg.manifest[1].fate in ("included", "excluded_budget")


def test_merged_section_larger_than_the_room_falls_back_to_trigger_windows() -> None:
    body = [[f"Rule {k}.{j} says the valve {k} opens at {k * 10 + j} bar under load." for j in range(5)]
            for k in range(12)]
    rows = [[f"item-{k}", str(k)] for k in range(60)]
    regs = make_doc("m", [("Parts", [("table", ["Item", "Qty"], rows)]), ("Valves", body)])
    idx = RegionIndex(regs)
    table = by_kind(regs, "table")[0]
    trig = [find(regs, "Rule 2.1 "), find(regs, "Rule 2.3 "), find(regs, "Rule 9.4 ")]
    h = [hit(table, 1.0, 1)] + [hit(s, 0.9 - 0.1 * k, k + 2) for k, s in enumerate(trig)]
    opts = AssemblyOptions(budget=1300, strategy="parent", parent_max_tokens=100_000)
    whole = assemble("valve", h[1:], idx, opts.model_copy(update={"budget": 4000}))
    assert whole.items[0].expansion == "parent_section"  # the merged parent when there is room
    pkg = assemble("valve 2 and 9 opening pressure", h, idx, opts)
    assert pkg.budget.used <= 1300 and pkg.budget.used == recount(pkg)
    s = next(i for i in pkg.items if i.modality == "text")
    assert s.fallback_from == "parent_section" and s.expansion in ("window", "sentence")
    assert s.tokens < whole.items[0].tokens
    text = _prompt_text(pkg)
    for r in trig:  # every triggering sentence reaches the prompt
        assert r.text in text and r.region_id in s.region_ids
    assert "Rule 6.0" not in s.text  # far from every trigger
    assert "[…]" in s.text  # disjoint runs of one section, gap marked
    m = pkg.manifest
    assert m[1].fate == "included" and m[1].fallback_from == "parent_section"
    assert "replaced by a smaller source region" in m[1].reason
    assert [x.fate for x in m[2:]] == [f"merged_into:{s.citation_id}"] * 2


def test_fallback_drops_weakest_triggers_last_and_says_so() -> None:
    body = [[f"Clause {k}.{j} covers the pump {k} seal {j} with many extra words here." for j in range(6)]
            for k in range(10)]
    filler = [f"Note {k} on unrelated housekeeping matters of the plant." for k in range(200)]
    # plain greedy: the ladder itself (nested packing would keep the pages of half the budget first, and the
    # calibration at 100k would add the document's other pages)
    opts = AssemblyOptions(strategy="parent", parent_max_tokens=100_000, nested=False, whole_documents=False)
    tok = get_tokenizer("cl100k_base")

    def build(n: int) -> tuple[list, RegionIndex]:
        regs = make_doc("m", [("Other", [filler[:n]]), ("Pumps", body)])
        return regs, RegionIndex(regs)

    regs, idx = build(80)
    trig = [find(regs, "Clause 1.2 "), find(regs, "Clause 5.2 "), find(regs, "Clause 8.2 ")]
    h = [hit(s, 0.9 - 0.1 * k, k + 2) for k, s in enumerate(trig)]
    free = assemble("pump", h, idx, opts.model_copy(update={"budget": 100_000}))
    pumps = free.items[0].tokens
    fixed = free.budget.used - pumps
    budget = fixed + pumps + 5  # the parent is within the cap (= room) ...
    two = tok.count(trig[0].text) * 2 + 30  # wrapper, gap mark and two sentences, not three
    for n in range(200, 0, -1):  # ... but a stronger parent leaves room for about two sentences only
        regs, idx = build(n)
        other = hit(find(regs, "Note 0 "), 1.0, 1)
        alone = assemble("pump", [other], idx, opts.model_copy(update={"budget": 100_000}))
        if alone.items[0].tokens <= pumps + 5 - two:
            break
    trig = [find(regs, "Clause 1.2 "), find(regs, "Clause 5.2 "), find(regs, "Clause 8.2 ")]
    h = [other] + [hit(s, 0.9 - 0.1 * k, k + 2) for k, s in enumerate(trig)]
    pkg = assemble("pump", h, idx, opts.model_copy(update={"budget": budget}))
    assert pkg.budget.used <= pkg.budget.limit and pkg.budget.used == recount(pkg)
    it = next(i for i in pkg.items if i.section == "Pumps")
    assert trig[0].text in it.text and it.fallback_from == "parent_section" and it.expansion == "sentence"
    fates = [m.fate for m in pkg.manifest]
    assert fates[:2] == ["included", "included"] and "excluded_budget" in fates[2:]
    lost = [m for m in pkg.manifest if m.fate == "excluded_budget"]
    assert all("does not carry this hit" in m.reason for m in lost)
    assert pkg.retrieval.coverage_after.hits == 4 - len(lost)


def test_figure_image_that_does_not_fit_is_sent_as_its_caption_text() -> None:
    blocks = [["See the wiring diagram."], ("figure", "Figure 2: Wiring of the main board")]
    regs = make_doc("m", [("Diagrams", blocks)])
    idx = RegionIndex(regs)
    fig = by_kind(regs, "figure")[0]
    big = assemble("wiring", [hit(fig, 0.9, 1, "clip")], idx, AssemblyOptions())
    assert big.items[0].image_url is not None and big.items[0].image_tokens == 425
    pkg = assemble("wiring", [hit(fig, 0.9, 1, "clip")], idx, AssemblyOptions(budget=450))
    assert pkg.budget.used <= 450 and pkg.budget.used == recount(pkg)
    f = pkg.items[0]
    assert f.modality == "figure" and f.image_url is None and f.image_tokens == 0
    assert f.expansion == "figure_text" and f.fallback_from == "figure"
    assert "Figure 2: Wiring of the main board" in f.text and pkg.budget.breakdown.images == 0
    assert pkg.manifest[0].fate == "included" and pkg.manifest[0].fallback_from == "figure"
    # the image share: at 900 the image would fit the room but not half of it
    share = assemble("wiring", [hit(fig, 0.9, 1, "clip")], idx, AssemblyOptions(budget=900))
    assert share.items[0].image_url is None and share.items[0].expansion == "figure_text"
    whole = assemble("wiring", [hit(fig, 0.9, 1, "clip")], idx, AssemblyOptions(budget=900, max_image_share=None))
    assert whole.items[0].image_url is not None
    off = assemble("wiring", [hit(fig, 0.9, 1, "clip")], idx,
                   AssemblyOptions(budget=450, fallbacks=False))
    assert off.refused and off.manifest[0].fate == "excluded_budget"


def _page_doc() -> list:
    return make_doc("m", [("Setup", [["Connect the pump to the valve.", "Tighten the seal to 5 Nm."],
                                     ["The alarm resets after ten minutes."]])])


def test_text_only_page_hit_becomes_text_and_visual_page_hit_stays_an_image() -> None:
    regs = _page_doc()
    idx = RegionIndex(regs)
    page = by_kind(regs, "page")[0]
    for retriever in ("bm25", "dense", "summary"):
        pkg = assemble("seal torque", [hit(page, 0.9, 1, retriever)], idx, AssemblyOptions())
        it = pkg.items[0]
        assert it.modality == "page" and it.image_url is None and it.expansion == "page_text"
        assert "Tighten the seal to 5 Nm." in it.text and pkg.budget.breakdown.images == 0
    for retriever in ("colpali", "clip"):
        pkg = assemble("seal torque", [hit(page, 0.9, 1, retriever)], idx, AssemblyOptions())
        assert pkg.items[0].image_url is not None and pkg.items[0].expansion == "page_image"
    # a page found by both kinds of retriever is visual; a scanned (OCR) page goes as its OCR text unless
    # scanned_pages="image"
    both = hit(page, 0.9, 1, "bm25")
    both = both.model_copy(update={"sources": (*both.sources, Source(retriever="colpali", rank=3, score=0.4))})
    assert assemble("seal", [both], idx, AssemblyOptions()).items[0].image_url is not None
    rerank = both.model_copy(update={"sources": (both.sources[0], Source(retriever="rerank:x", rank=1, score=1))})
    assert assemble("seal", [rerank], idx, AssemblyOptions()).items[0].image_url is None
    ocr = page.model_copy(update={"meta": (*page.meta, ("ocr", "1"), ("scanned", "1"))})
    oidx = RegionIndex([r if r.region_id != page.region_id else ocr for r in regs])
    as_text = assemble("seal", [hit(ocr, 0.9, 1, "bm25")], oidx, AssemblyOptions()).items[0]
    assert as_text.image_url is None and "Tighten the seal to 5 Nm." in as_text.text
    assert assemble("seal", [hit(ocr, 0.9, 1, "bm25")], oidx,
                    AssemblyOptions(scanned_pages="image")).items[0].image_url is not None
    blank = ocr.model_copy(update={"text": ""})  # a scan without OCR text can only go as its image
    bidx = RegionIndex([r if r.region_id != page.region_id else blank for r in regs])
    assert assemble("seal", [hit(blank, 0.9, 1, "bm25")], bidx, AssemblyOptions()).items[0].image_url is not None
    # a native page whose figures were OCR'd is not a scan: found by text, it goes as text
    native = page.model_copy(update={"meta": (*page.meta, ("ocr", "1"), ("scanned", "0"))})
    nidx = RegionIndex([r if r.region_id != page.region_id else native for r in regs])
    assert assemble("seal", [hit(native, 0.9, 1, "bm25")], nidx, AssemblyOptions()).items[0].image_url is None
    # other strategies keep the page image
    assert assemble("seal", [hit(page, 0.9, 1, "bm25")], idx,
                    AssemblyOptions(strategy="page")).items[0].image_url is not None


def test_page_image_that_does_not_fit_falls_back_to_page_text_then_paragraph() -> None:
    regs = _page_doc()
    idx = RegionIndex(regs)
    page = by_kind(regs, "page")[0]
    pkg = assemble("seal torque", [hit(page, 0.9, 1, "colpali")], idx, AssemblyOptions(budget=400))
    assert pkg.budget.used <= 400 and pkg.budget.used == recount(pkg)
    it = pkg.items[0]
    assert it.image_url is None and it.fallback_from == "page_image"
    assert it.expansion in ("page_text", "page_paragraphs") and "seal" in it.text


def test_auto_parent_cap_scales_with_the_budget() -> None:
    long = [[f"Step {k}.{j}: turn the housing bolt {k} by {j} quarter turns and check it." for j in range(5)]
            for k in range(8)]
    regs = make_doc("m", [("Assembly", long)])
    idx = RegionIndex(regs)
    sec_tokens = sum(get_tokenizer("cl100k_base").count(s.text) for s in by_kind(regs, "sentence"))
    assert 300 < sec_tokens < 1024
    h = [hit(find(regs, "Step 3.2"), 0.9, 1)]
    small = assemble("bolt 3", h, idx, AssemblyOptions(page_units="off", window_source="section", budget=1000))
    big = assemble("bolt 3", h, idx, AssemblyOptions(page_units="off", window_source="section", budget=4000))
    assert small.items[0].expansion == "window" and big.items[0].expansion == "parent_section"
    assert small.budget.used <= 1000


def test_whole_text_page_is_not_sent_beside_a_span_on_the_same_page() -> None:
    """A page-text hit and a sentence hit on that page: the text goes once, with the sentence's locators."""
    regs = _page_doc()
    idx = RegionIndex(regs)
    page = by_kind(regs, "page")[0]
    sent = find(regs, "Tighten the seal")
    pkg = assemble("seal torque", [hit(page, 0.9, 1, "bm25"), hit(sent, 0.8, 2, "dense")], idx,
                   AssemblyOptions(page_units="off"))
    assert len(pkg.items) == 1
    item = pkg.items[0]
    assert item.modality == "text" and page.region_id not in item.region_ids
    assert sent.region_id in item.trigger_ids and page.region_id in item.trigger_ids
    assert item.text.count("Tighten the seal to 5 Nm.") == 1
    fates = {m.region_id: m.fate for m in pkg.manifest}
    assert fates[page.region_id] == "included" or fates[page.region_id].startswith("merged_into:")
    assert all(page.region_id not in i.region_ids for i in pkg.items)
    # alone, the page hit is still sent as the page's text
    alone = assemble("seal torque", [hit(page, 0.9, 1, "bm25")], idx,
                   AssemblyOptions(page_units="off"))
    assert alone.items[0].modality == "page"



def test_breadth_reserve_leaves_room_for_the_next_candidates() -> None:
    """Greedy with ``breadth_reserve``: a large first page goes in as a smaller form so that the next
    candidate still fits beside it; without it the first page takes the room and the second is left out."""
    facts = [f"Pump fact {i} concerns the pressure of valve {i}." for i in range(50)]
    # five paragraphs: the page's best paragraphs are a smaller form of it (a compact page has each on one line)
    regs = make_doc("doc", [("Pumps", [facts[k:k + 10] for k in range(0, 50, 10)]),
                            ("Limits", [["The pump pressure limit is 8 bar."]])])
    first = next(p for p in by_kind(regs, "page") if "Pump fact 0 " in p.text)
    limits = find(regs, "limit is 8 bar", "page")
    assert first.first_page < limits.first_page and len(first.text) > 3 * len(limits.text)
    idx = RegionIndex(regs)
    hits = [hit(first, 1.0, 1), hit(limits, 0.5, 2)]
    roomy = assemble("pump pressure", hits, idx, AssemblyOptions(budget=10_000, strategy="page", include_images=False))
    cost = {i.pages[0]: i.tokens for i in roomy.items}
    budget = roomy.budget.used - cost[limits.first_page] // 2  # the first page fits, not both
    opts = AssemblyOptions(budget=budget, strategy="page", include_images=False, breadth_reserve=0)
    plain = assemble("pump pressure", hits, idx, opts)
    reserved = assemble("pump pressure", hits, idx, opts.model_copy(update={"breadth_reserve": 1,
                                                                          "breadth_min_room": 0}))
    assert [i.pages for i in plain.items] == [[first.first_page]]
    assert sorted(p for i in reserved.items for p in i.pages) == [first.first_page, limits.first_page]
    assert reserved.budget.used <= budget
    # below breadth_min_room the reserve holds nothing back: the first page goes in whole, as without it
    small_room = opts.model_copy(update={"breadth_reserve": 1, "breadth_min_room": budget})
    assert assemble("pump pressure", hits, idx, small_room).model_dump() == plain.model_dump()
    assert AssemblyOptions().breadth_reserve == 3 and AssemblyOptions().breadth_min_room == 1500
