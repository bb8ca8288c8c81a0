"""Numbered objects named in the question ("Table 2", "Abbildung 1.13") are found through their captions,
and a figure found that way is sent as text, like any figure that only text retrievers vouched for."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytest

from folio.retrieval.channels.labelref import LabelIndex, LabelRef, parse_label_refs
from folio.retrieval.query import SearchQuery

# Each table's caption is the only place its number appears; the body text mentions the measured
# quantities on other pages, so without the label the question's words point elsewhere.
PAGES = [
    ("Pump capacity depends on the inlet pressure. Table 2 lists the flow rates measured in the lab; "
     "flow rates of the large pump are higher than those of the small pump.", None),
    ("Flow rates were measured at three inlet pressures for each pump model in the test lab.", None),
    ("Maintenance of the pump is described in chapter 4.", "Table 1. Service intervals"),
    ("The measurements were repeated twice.", "Table 2. Measured capacities"),
]


def _pdf() -> bytes:
    doc = pymupdf.open()
    for body, caption in PAGES:
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(60, 100, 535, 200), body, fontsize=11)
        if caption:
            page.insert_textbox(pymupdf.Rect(60, 300, 535, 330), caption, fontsize=11)
            rows = [("Model", "Value"), ("small", "12 l/min" if "2" in caption else "90 days"),
                    ("large", "31 l/min" if "2" in caption else "60 days")]
            for i, (a, b) in enumerate(rows):
                page.insert_text((60, 360 + 16 * i), a, fontsize=10)
                page.insert_text((260, 360 + 16 * i), b, fontsize=10)
    return bytes(doc.tobytes())


def test_parse_refs_any_script_and_not_years() -> None:
    assert parse_label_refs("In Table 2, which pump is faster?") == [LabelRef("table", "2")]
    assert [r.number for r in parse_label_refs("Exhibit 2.3.59-12 and Figure 3-10")] == ["2.3.59-12", "3-10"]
    assert parse_label_refs("Revenue in 2023 and 2024") == []
    assert parse_label_refs("Tabelle 4 und Tabelle 4") == [LabelRef("tabelle", "4")]


def test_matches_prefer_captions_then_pages() -> None:
    @dataclass(frozen=True)
    class Stub:  # the four fields matching reads (retrieval.channels.labelref.Captioned)
        region_id: str
        kind: str
        first_page: int
        text: str

    def region(rid: str, kind: str, page: int, text: str) -> Stub:
        return Stub(rid, kind, page, text)

    regions = [
        region("mention", "paragraph", 1, "Table 4 shows that the small pump is slower " + "x" * 500),
        region("caption", "paragraph", 2, "Table 4: Capacities"),
        region("table", "table", 3, "| Table 4 (continued) |"),
        region("other", "paragraph", 1, "Table 41: something else"),
        region("step", "paragraph", 1, "Step 4 close the valve"),  # one 'Step' paragraph: not a numbering
        region("date", "table", 1, "June 30, 2023 | 2022"),  # a date, not a label
    ]
    index = LabelIndex(regions)
    assert [r.region_id for r in index.find([LabelRef("table", "4")])] == ["table", "caption", "mention"]
    assert index.find([LabelRef("step", "4"), LabelRef("june", "30")]) == []


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> object:
    from folio.ingest.pipeline import ingest_bytes
    from folio.ingest.storage.store import Store

    s = Store(Path(tmp_path_factory.mktemp("labelref")))
    ingest_bytes(s, _pdf(), filename="pumps.pdf", doc_id="pumps", ocr=False)
    return s


def test_named_table_is_retrieved(store: object) -> None:
    from folio.retrieval.search import Retriever

    retriever = Retriever(store)  # type: ignore[arg-type]
    query = "According to Table 2, what flow rate does the large pump reach?"
    result = retriever.search_detailed(SearchQuery(query, doc_ids=["pumps"], k=10))
    assert "labelref" in result.retrievers
    named = [h for h in result.hits if any(s.retriever == "labelref" for s in h.sources)]
    assert named and all(h.pages == (4,) for h in named), [(h.kind, h.pages) for h in named]
    assert result.hits[0].pages == (4,), [(h.kind, h.pages, h.sources) for h in result.hits[:5]]

    plain = retriever.search_detailed(SearchQuery("What flow rate does the large pump reach?", doc_ids=["pumps"], k=10))
    assert "labelref" not in plain.retrievers


def test_a_caption_line_names_the_object_next_to_it() -> None:
    """A caption parsed as its own paragraph ("Table 7: ...") above a table that was parsed as a figure:
    the label list offers the figure (``captioned_object``), not only the caption's sentence. A caption
    with nothing right above or below it names nothing."""
    from folio.kernel.index import RegionIndex
    from folio.retrieval.channels.labelref import captioned_object
    from tests.assembly.builders import by_kind, make_doc

    regs = make_doc("rules", [
        ("Monitoring", [["Table 7: Monitoring of emergency diesel engines"],
                        ("figure", "Lubricating oil pressure L | Cooling water pressure L"),
                        [f"Arrangement note {k} on starting air." for k in range(4)],
                        ["Table 8: Documentation to be submitted"],
                        [f"Documentation note {k} for the cylinder liner." for k in range(4)]]),
    ])
    index = RegionIndex(regs)
    caption7, caption8 = (next(r for r in by_kind(regs, "paragraph") if r.text.startswith(t))
                          for t in ("Table 7", "Table 8"))
    figure = by_kind(regs, "figure")[0]
    assert captioned_object(index, caption7) == figure
    assert captioned_object(index, caption8) is None  # prose above and below: no object to name
