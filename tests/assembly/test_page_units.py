"""Page units (``page_units``, auto): a hit is sent as its page's text when the page fits, hits on one page
become one item, distinct pages are covered before one is deepened, and a page too large falls back."""

from __future__ import annotations

from typing import Any

from folio.assembly import assemble
from folio.assembly.expansion.pagetext import compact_page
from folio.assembly.options import AssemblyOptions
from folio.assembly.package import ContextPackage
from folio.kernel.index import RegionIndex
from folio.kernel.model import Region
from tests.assembly.builders import by_kind, find, hit, make_doc
from tests.assembly.recount import recount


def _two_page_doc() -> list:  # type: ignore[type-arg]
    filler = [[f"Filler sentence number {k} about routine inspection of the housing."] for k in range(30)]
    return make_doc("pump", [
        ("Operation", [["The pump starts when the float switch closes.", "Prime the pump before the first start."],
                       *filler,
                       ["The flow rate at full load is 42 litres per minute.", "Noise stays below 60 dB."]]),
    ])


def _sent(regs: list[Region], page: Region) -> str:
    """``page``'s text as it is sent (compact: a paragraph on one line)."""
    paras = [r for r in by_kind(regs, "paragraph") if r.first_page == page.first_page]
    tables = [r for r in by_kind(regs, "table") if r.first_page == page.first_page]
    return compact_page(page, paras, tables).text


def test_hits_on_one_page_become_one_page_item() -> None:
    regs = _two_page_doc()
    pages = by_kind(regs, "page")
    assert len(pages) >= 2
    idx = RegionIndex(regs)
    a, b = find(regs, "float switch"), find(regs, "Prime the pump")
    assert a.first_page == b.first_page == 1
    opts = AssemblyOptions(budget=4000, whole_documents=False)  # page 2 would go too: the document fits
    pkg = assemble("how does the pump start?", [hit(a, 0.9, 1), hit(b, 0.8, 2)], idx, opts)
    assert pkg.budget.used <= 4000 and pkg.budget.used == recount(pkg)
    assert len(pkg.items) == 1
    item = pkg.items[0]
    assert item.modality == "page" and item.expansion == "page_text" and item.pages == [1]
    assert set(item.trigger_ids) == {a.region_id, b.region_id}
    assert item.text.count("The pump starts when the float switch closes.") == 1
    assert "Filler sentence number 3" in item.text  # the page, not just a window around the hits


def test_distinct_pages_before_deepening() -> None:
    regs = _two_page_doc()
    idx = RegionIndex(regs)
    a, b = find(regs, "float switch"), find(regs, "42 litres")
    assert a.first_page != b.first_page
    pkg = assemble("pump start and flow?", [hit(a, 0.9, 1), hit(b, 0.8, 2)], idx, AssemblyOptions(budget=4000))
    assert sorted(p for it in pkg.items for p in it.pages) == sorted({a.first_page, b.first_page})
    assert all(it.expansion == "page_text" for it in pkg.items)


def test_page_too_large_falls_back_to_a_smaller_unit() -> None:
    regs = _two_page_doc()
    idx = RegionIndex(regs)
    a = find(regs, "float switch")
    for budget in (400, 600):
        pkg = assemble("how does the pump start?", [hit(a, 0.9, 1)], idx, AssemblyOptions(budget=budget))
        assert pkg.budget.used <= budget and pkg.items
        assert pkg.items[0].expansion == "page_excerpt"  # a window of the page, not the whole page
        assert "float switch" in pkg.items[0].text and "42 litres" not in pkg.items[0].text
    off = assemble("how does the pump start?", [hit(a, 0.9, 1)], idx,
                   AssemblyOptions(budget=4000, page_units="off"))
    assert off.items[0].modality == "text"


def test_figure_found_by_text_goes_as_page_text_and_by_clip_as_image() -> None:
    regs = make_doc("fig", [("Wiring", [["The wiring diagram shows the relay."],
                                        ("figure", "Figure 1: relay wiring")])])
    idx = RegionIndex(regs)
    fig = by_kind(regs, "figure")[0]
    text_pkg = assemble("relay wiring", [hit(fig, 0.9, 1, "bm25")], idx, AssemblyOptions(budget=2000))
    assert text_pkg.items[0].modality == "page" and text_pkg.items[0].image_url is None
    assert "relay wiring" in text_pkg.items[0].text
    clip_pkg = assemble("relay wiring", [hit(fig, 0.9, 1, "clip")], idx, AssemblyOptions(budget=2000))
    assert clip_pkg.items[0].modality == "figure" and clip_pkg.items[0].image_url is not None


def test_window_from_the_page_carries_what_sits_beside_the_hit() -> None:
    regs = _two_page_doc()
    idx = RegionIndex(regs)
    a = find(regs, "float switch")
    page = by_kind(regs, "page")[0]
    pkg = assemble("how does the pump start?", [hit(a, 0.9, 1)], idx, AssemblyOptions(budget=400))
    assert pkg.budget.used <= 400 and pkg.budget.used == recount(pkg)
    item = pkg.items[0]
    assert item.modality == "page" and item.expansion == "page_excerpt" and item.pages == [1]
    assert "float switch" in item.text and item.text in _sent(regs, page)  # a contiguous slice of the page text
    assert len(item.text) < len(page.text)
    # two hits close together on the page become one excerpt; the section source keeps sentence windows
    b = find(regs, "Prime the pump")
    two = assemble("how does the pump start?", [hit(a, 0.9, 1), hit(b, 0.8, 2)], idx, AssemblyOptions(budget=400))
    assert len(two.items) == 1 and set(two.items[0].trigger_ids) == {a.region_id, b.region_id}
    section = assemble("how does the pump start?", [hit(a, 0.9, 1)], idx,
                       AssemblyOptions(budget=400, window_source="section"))
    assert section.items[0].modality == "text" and section.items[0].expansion == "window"


def test_excerpt_grows_with_the_hits_on_its_page() -> None:
    regs = _two_page_doc()
    idx = RegionIndex(regs)
    hits = [hit(find(regs, f"number {k} about"), 0.9 - 0.01 * k, k + 1) for k in (3, 4, 5)]
    base = assemble("inspection of the housing", hits, idx, AssemblyOptions(budget=600))
    grown = assemble("inspection of the housing", hits, idx, AssemblyOptions(budget=600, excerpt_growth=3))
    assert base.items[0].expansion == "page_excerpt" and grown.items[0].expansion == "page_excerpt"
    assert len(grown.items[0].text) > len(base.items[0].text)
    assert grown.budget.used <= 600 and grown.budget.used == recount(grown)


def test_excerpts_a_few_lines_apart_join_into_one() -> None:
    regs = _two_page_doc()
    idx = RegionIndex(regs)
    a = find(regs, "number 3 about")
    near = assemble("inspection of the housing", [hit(a, 0.9, 1), hit(find(regs, "number 12 about"), 0.8, 2)], idx,
                    AssemblyOptions(budget=400))
    assert len(near.items) == 1 and near.items[0].expansion == "page_excerpt"
    assert "number 8 about" in near.items[0].text  # the lines between the two excerpts come along
    assert near.items[0].text in _sent(regs, by_kind(regs, "page")[0])
    far = assemble("inspection of the housing", [hit(a, 0.9, 1), hit(find(regs, "number 18 about"), 0.8, 2)], idx,
                   AssemblyOptions(budget=400))
    # further apart they are still one item (a page is never sent twice), the gap marked
    assert len(far.items) == 1 and "[…]" in far.items[0].text and "number 18 about" in far.items[0].text
    assert far.items[0].text not in by_kind(regs, "page")[0].text
    for pkg in (near, far):
        assert pkg.budget.used <= 400 and pkg.budget.used == recount(pkg)


def _service_doc(rows: int = 60) -> list:  # type: ignore[type-arg]
    body = [[f"part {k:02d} of the pump", f"{100 * (k + 1)} hours"] for k in range(rows)]
    body[47] = ["coolant flush", "2000 hours"]
    return make_doc("svc", [("Service", [["The schedule below lists every maintenance task."],
                                         ("table", ["task", "interval"], body)])])


def test_a_table_cut_to_fit_keeps_the_rows_the_question_names() -> None:
    regs = _service_doc()
    idx = RegionIndex(regs)
    table = by_kind(regs, "table")[0]
    pkg = assemble("How often is the coolant flush due?", [hit(table, 0.9, 1)], idx,
                   AssemblyOptions(budget=400, page_units="off"))
    item = pkg.items[0]
    assert item.status == "truncated" and pkg.budget.used <= 400 and pkg.budget.used == recount(pkg)
    assert "| task | interval |" in item.text and "coolant flush" in item.text  # row 48 of 60
    rows = [ln for ln in item.text.splitlines() if ln.startswith("| part")]
    assert rows == sorted(rows)  # kept rows stay in table order


def test_a_page_too_large_sends_a_tables_matching_rows() -> None:
    regs = _service_doc()
    idx = RegionIndex(regs)
    table = by_kind(regs, "table")[0]
    page = next(p for p in by_kind(regs, "page") if p.first_page == table.first_page)
    pkg = assemble("How often is the coolant flush due?", [hit(page, 0.9, 1, "bm25")], idx,
                   AssemblyOptions(budget=500))
    item = pkg.items[0]
    assert item.expansion == "page_paragraphs" and pkg.budget.used <= 500 and pkg.budget.used == recount(pkg)
    assert "task|interval" in item.text and "coolant flush|2000 hours" in item.text  # rows, the header once
    assert "part 59" not in item.text  # not the whole table
    assert table.region_id in {x for it in pkg.items for x in it.region_ids}


def _left_short_doc() -> list:  # type: ignore[type-arg]
    """Page 1: prose the first hit sends whole; page 2: a long schedule table; page 3: a gauge note."""
    prose = [[f"Routine note {k} on housing inspection and seal wear of the pump."] for k in range(40)]
    rows = [[f"part {k:02d} of the pump", f"{100 * (k + 1)} hours"] for k in range(44)]
    rows[30] = ["coolant flush", "2000 hours"]
    return make_doc("left", [("Care", prose), ("Schedule", [("table", ["task", "interval"], rows)]),
                             ("Gauge", [["The gauge reads coolant pressure in bar."]])])


def test_a_page_left_short_of_room_sends_its_hit_tables_matching_rows() -> None:
    """The table page fits the page cap but not what the first page leaves: its fallback is the header and
    the rows the question names (the table is the page's own hit), in at most half of the room left, so the
    third page still goes in."""
    regs = _left_short_doc()
    idx = RegionIndex(regs)
    first, table = find(regs, "Routine note 3 "), by_kind(regs, "table")[0]
    gauge = find(regs, "gauge reads")
    assert len({first.first_page, table.first_page, gauge.first_page}) == 3
    q = "How often is the coolant flush due?"
    pkg = assemble(q, [hit(first, 0.9, 1), hit(table, 0.8, 2), hit(gauge, 0.7, 3)], idx,
                   AssemblyOptions(budget=1000))
    assert pkg.budget.used <= 1000 and pkg.budget.used == recount(pkg)
    by_page = {it.pages[0]: it for it in pkg.items}
    assert by_page[first.first_page].expansion == "page_text"
    cut = by_page[table.first_page]
    assert cut.expansion == "page_paragraphs" and "coolant flush|2000 hours" in cut.text
    assert "task|interval" in cut.text and "part 43" not in cut.text
    assert gauge.first_page in by_page


def test_a_page_left_short_of_room_sends_the_text_around_its_hits() -> None:
    """A text page that does not fit what is left goes as the lines around its hit (the value on the next
    line, which shares no word with the question), not as the paragraph sharing most words with it."""
    filler = [[f"Routine note {k} on housing inspection and seal wear."] for k in range(40)]
    body = [["The flow rate of the pump is measured at the outlet flange with a calibrated gauge."],
            *[[f"Seal check {k} of the impeller housing."] for k in range(12)],
            ["Rated flow at full load:"], ["42 litres per minute"],
            *[[f"Bearing check {k} of the motor."] for k in range(12)]]
    regs = make_doc("flow", [("Care", filler), ("Flow", body)])
    idx = RegionIndex(regs)
    first, rated = find(regs, "Routine note 3 "), find(regs, "Rated flow")
    assert first.first_page != rated.first_page
    q = "What is the rated flow of the pump?"
    pkg = assemble(q, [hit(first, 0.9, 1), hit(rated, 0.8, 2)], idx, AssemblyOptions(budget=700))
    assert pkg.budget.used <= 700 and pkg.budget.used == recount(pkg)
    item = next(it for it in pkg.items if it.pages == [rated.first_page])
    assert item.expansion == "page_excerpt" and "42 litres per minute" in item.text
    assert rated.region_id in item.trigger_ids


def test_a_table_cut_to_fit_skips_a_row_too_long_for_the_room() -> None:
    """A layout table can hold a whole page in one cell: the row sharing most words with the question
    is then too long for any budget here, and the cut keeps the shorter rows that fit instead of
    dropping the table."""
    long_cell = " ".join(f"Coolant flush note {k} on the pump housing and seals." for k in range(150))
    rows = [[f"part {k:02d} of the pump", f"{100 * (k + 1)} hours"] for k in range(30)]
    rows[3] = ["coolant flush notes", long_cell]
    rows[20] = ["coolant flush", "2000 hours"]
    regs = make_doc("lay", [("Service", [("table", ["task", "interval"], rows)])])
    idx = RegionIndex(regs)
    table = by_kind(regs, "table")[0]
    pkg = assemble("How often is the coolant flush due?", [hit(table, 0.9, 1)], idx,
                   AssemblyOptions(budget=600, page_units="off"))
    assert pkg.budget.used <= 600 and pkg.budget.used == recount(pkg)
    item = pkg.items[0]
    assert item.status == "truncated" and "| coolant flush | 2000 hours |" in item.text
    assert "note 149" not in item.text


def test_a_best_row_a_little_too_long_is_cut_to_fit() -> None:
    """The row the question names, a few times longer than the room (a label cell and a long description),
    is sent as its prefix after the header, not dropped for short rows that share no word with the question."""
    rows = [["mode", "unused"], *[[f"p{k}", f"value {k}"] for k in range(3)],
            ["mz", "All or nothing scoring: the score is mz when every box is right, else zero. "
                   + " ".join(f"Further detail {k} about how the scoring strategy treats partial answers."
                              for k in range(10))]]
    regs = make_doc("score", [("Care", [[f"Routine note {k} on housing inspection and seal wear of the pump."]
                                        for k in range(40)]),
                              ("Scoring", [("table", ["parameter", "meaning"], rows)])])
    idx = RegionIndex(regs)
    first, table = find(regs, "Routine note 3 "), by_kind(regs, "table")[0]
    q = "Which parameter gives all or nothing scoring?"
    pkg = assemble(q, [hit(first, 0.9, 1), hit(table, 0.8, 2)], idx, AssemblyOptions(budget=800))
    assert pkg.budget.used <= 800 and pkg.budget.used == recount(pkg)
    cut = next(it for it in pkg.items if it.pages == [table.first_page])
    assert "parameter|meaning" in cut.text and "mz|All or nothing scoring" in cut.text
    assert cut.text.rstrip().endswith("…") and "Further detail 9" not in cut.text
    assert "| p0 |" not in cut.text  # rows sharing no word with the question do not take its place


def _four_pages() -> tuple[RegionIndex, list]:  # type: ignore[type-arg]
    """Four pages of text with a hit on each (page 2 ranked first): at 800 tokens each goes as an excerpt, at 1600
    the first two fit whole and, packed greedily, leave no room for the others."""
    secs = [
        (f"S{s}", [[f"Section {s} paragraph {k} sentence {j} about the valve pressure and pump seal wear." for j in
                    range(5)] for k in range(10)])
        for s in range(3)
    ]
    regs = make_doc("d", secs)
    sents = by_kind(regs, "sentence")
    picks = [next(s for s in sents if s.first_page == p) for p in (2, 1, 3, 4)]
    return RegionIndex(regs), [hit(x, 1.0 - 0.05 * i, i + 1, "bm25") for i, x in enumerate(picks)]


def _text_pages(pkg) -> set[int]:  # type: ignore[no-untyped-def]
    return {p for i in pkg.items if i.text.strip() for p in i.pages}


def test_a_bigger_budget_keeps_the_pages_of_half_the_budget() -> None:
    idx, hits = _four_pages()
    half = assemble("valve pressure", hits, idx, AssemblyOptions(budget=800))
    plain = assemble("valve pressure", hits, idx, AssemblyOptions(budget=1600, nested=False))
    nested = assemble("valve pressure", hits, idx, AssemblyOptions(budget=1600))
    assert _text_pages(half) == {1, 2, 3, 4}
    assert _text_pages(plain) == {1, 2}  # two whole pages took the room
    assert _text_pages(nested) == {1, 2, 3, 4}
    assert nested.budget.used <= 1600 and nested.budget.used == recount(nested)
    assert nested.items[0].pages == [2] and nested.items[0].expansion == "page_text"  # the top page still whole


def test_a_page_sent_as_some_of_its_paragraphs_keeps_its_title() -> None:
    """A slide's or a page's first line is its name ("Electronic Medical Records" over a screenshot) and is
    often what the question asks for, though it shares no word with it: the selected paragraphs are led by
    it. The budget still holds."""
    notes = [[f"Routine note {k} on housing inspection and seal wear of the pump."] for k in range(28)]
    notes[20] = ["The coolant flush is due every 2000 hours."]
    regs = make_doc("slides", [("Service", notes)])
    page = by_kind(regs, "page")[0]  # the slide's title is in its text only (a line of a screenshot, say)
    blocks = ["Maintenance Records", *page.text.split("\n")]  # stored page text: blocks apart by a blank line
    page = page.model_copy(update={"text": "\n\n".join(blocks)})
    regs = [page if r.region_id == page.region_id else r for r in regs]
    idx = RegionIndex(regs)
    assert find(regs, "coolant flush").first_page == page.first_page
    pkg = assemble("How often is the coolant flush due?", [hit(page, 0.9, 1, "bm25")], idx,
                   AssemblyOptions(budget=300))
    item = pkg.items[0]
    assert item.expansion == "page_paragraphs" and pkg.budget.used <= 300 and pkg.budget.used == recount(pkg)
    assert item.text.startswith("Maintenance Records\n\n") and "every 2000 hours" in item.text
    assert "Routine note 27 " not in item.text  # some paragraphs, not the page
    assert item.text.count("Maintenance Records") == 1


def _schedule(*, lines: bool) -> tuple[list[Region], Region, Region]:
    """A one-page schedule: a long table (the row "coolant flush | 2000 hours" among 40), with a unit line above
    it and a notes line under it when ``lines``. Returns (regions, table, page)."""
    rows = [[f"part {k:02d} of the pump", f"{100 * (k + 1)} hours"] for k in range(40)]
    rows[25] = ["coolant flush", "2000 hours"]
    blocks: list[list[str] | tuple[Any, ...]] = [("table", ["task", "interval"], rows)]
    if lines:
        blocks = [["Intervals in operating hours."], *blocks, ["See the accompanying notes."]]
    regs = make_doc("stmt", [("Schedule", blocks)])
    table = by_kind(regs, "table")[0]
    page = next(p for p in by_kind(regs, "page") if p.first_page == table.first_page)
    return regs, table, page


def _statement_page(first: str) -> tuple[ContextPackage, Region]:
    """The schedule with its lines packed at 300 tokens for a question on one row, with the page and its table
    both hits: ``first`` ("page" or "table") ranks first, the other fifth. Returns (package, table region)."""
    regs, table, page = _schedule(lines=True)
    ranked = [hit(page, 0.9, 1, "pagelex"), hit(table, 0.3, 5, "bm25")] if first == "page" else \
        [hit(table, 0.9, 1, "bm25"), hit(page, 0.3, 5, "pagelex")]
    pkg = assemble("How often is the coolant flush due?", ranked, RegionIndex(regs), AssemblyOptions(budget=300))
    assert pkg.budget.used <= 300 and pkg.budget.used == recount(pkg)
    return pkg, table


def test_a_page_ranked_before_its_table_sends_the_tables_rows_not_the_notes_around_it() -> None:
    """A page list ranks the page first and the table is a hit of its own further down: the page is too large
    for the cap, and its best paragraphs are the table's header and best rows (the table merges into it), not
    the two lines around the table with the table left to a candidate the budget never reaches."""
    pkg, table = _statement_page("page")
    (item,) = [it for it in pkg.items if table.first_page in it.pages]
    assert item.expansion.startswith("page_paragraphs") and "coolant flush|2000 hours" in item.text
    assert "task|interval" in item.text and "part 39" not in item.text
    assert table.region_id in item.region_ids and table.region_id in item.trigger_ids
    # in the manifest as merged into the page's item, not left out for budget
    assert [e.reason for e in pkg.excluded if e.region_id == table.region_id] == [f"merged_into:{item.citation_id}"]


def test_a_table_ranked_before_its_page_keeps_its_own_item() -> None:
    """The other way round the table goes as its own item, and the page's paragraphs do not repeat its rows."""
    pkg, table = _statement_page("table")
    with_row = [it for it in pkg.items if "| coolant flush | 2000 hours |" in it.text]
    assert len(with_row) == 1 and with_row[0].region_id == table.region_id


def test_a_page_that_is_only_its_table_merges_into_the_tables_item() -> None:
    """Rule 1c's third case: the table ranks first and the page's best paragraphs are the table alone, so
    nothing is left of the page once the table is taken out; the page merges into the table's item (both hits
    trigger it, the page is in the manifest as merged) instead of being sent as a second copy of the rows."""
    regs, table, page = _schedule(lines=False)
    pkg = assemble("How often is the coolant flush due?", [hit(table, 0.9, 1, "bm25"), hit(page, 0.3, 5, "pagelex")],
                   RegionIndex(regs), AssemblyOptions(budget=300))
    assert pkg.budget.used <= 300 and pkg.budget.used == recount(pkg)
    (item,) = pkg.items
    assert item.region_id == table.region_id and "| coolant flush | 2000 hours |" in item.text
    assert set(item.trigger_ids) == {table.region_id, page.region_id}
    assert [e.reason for e in pkg.excluded if e.region_id == page.region_id] == [f"merged_into:{item.citation_id}"]


def test_an_excerpt_stretches_to_keep_the_line_that_answers() -> None:
    """The hit that found the page ("inspection of the housing") is at its top; the line that shares most of the
    question's words ("flow rate at full load ... litres per minute") is further down: the excerpt keeps both,
    where a slice around the hit alone cut the answer out."""
    filler = [[f"Filler sentence number {k} about routine inspection of the housing."] for k in range(14)]
    regs = make_doc("pump", [("Operation", [*filler, ["The flow rate at full load is 42 litres per minute."]])])
    idx = RegionIndex(regs)
    a = find(regs, "number 9 about")
    q = "What is the flow rate at full load in litres per minute, per the inspection of the housing?"
    answer = find(regs, "flow rate at full load")
    assert answer.first_page == a.first_page
    pkg = assemble(q, [hit(a, 0.9, 1)], idx, AssemblyOptions(budget=250, whole_documents=False))
    item = pkg.items[0]
    assert item.expansion == "page_excerpt" and "number 9 about" in item.text
    assert "42 litres per minute" in item.text
    assert pkg.budget.used <= 250 and pkg.budget.used == recount(pkg)


def test_an_excerpt_keeps_a_far_answering_line_as_a_slice_of_its_own() -> None:
    """The line that answers is too far below the hit for one slice to hold both: it goes as a slice of its own
    after a ``[…]`` line, the slice around the hit cut shorter, the item's text still the page's own lines."""
    filler = [[f"Filler sentence number {k} about routine inspection of the housing."] for k in range(28)]
    regs = make_doc("pump", [("Operation", [*filler, ["The flow rate at full load is 42 litres per minute."]])])
    idx = RegionIndex(regs)
    a = find(regs, "number 1 about")
    q = "What is the flow rate at full load in litres per minute, per the inspection of the housing?"
    assert find(regs, "flow rate at full load").first_page == a.first_page
    pkg = assemble(q, [hit(a, 0.9, 1)], idx, AssemblyOptions(budget=250, whole_documents=False))
    item = pkg.items[0]
    assert item.expansion == "page_excerpt" and "number 1 about" in item.text
    assert "number 20 about" not in item.text  # not one slice from the hit down to the answer
    head, tail = item.text.split("\n[…]\n")
    assert tail.strip() == "The flow rate at full load is 42 litres per minute."
    page = _sent(regs, by_kind(regs, "page")[0])
    assert head in page and tail in page
    assert pkg.budget.used <= 250 and pkg.budget.used == recount(pkg)
    # a line that shares no more of the question than the excerpt already does is no reason for a second slice
    plain = assemble("inspection of the housing", [hit(a, 0.9, 1)], idx,
                     AssemblyOptions(budget=250, whole_documents=False))
    assert "[…]" not in plain.items[0].text
