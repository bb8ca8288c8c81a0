"""Typed region payloads (issue 13): rows of older parser versions read back typed; new ingests
record the pixel size of the PNGs they wrote; the legacy ``meta`` view still reads the same."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from folio.ingest.storage.store import Store
from folio.kernel.model import (
    BBox,
    FigurePayload,
    ImageRef,
    Locator,
    OcrInfo,
    PagePayload,
    Region,
    TablePayload,
    TextPayload,
    payload_from_meta,
    payload_to_meta,
)

DOC, VER = "manual", "00112233aabbccdd"
LOC = Locator(page=2, bbox=BBox(x0=10, y0=20, x1=300, y1=400), page_width=612, page_height=792)

# The flat ``meta`` parser v3 wrote, per kind, as it lies in a ``regions`` row (JSON of a dict).
V3_META: dict[str, dict[str, str]] = {
    "section": {},
    "paragraph": {},
    "sentence": {"ocr": "1"},
    "table": {"markdown": "| A | B |\n| --- | --- |\n| 4 | x |", "header": "A | B", "rows": "4-5",
              "continued_from": f"{DOC}@{VER}:p1:table1"},
    "figure": {"caption": "Figure 2: Wiring", "inner_text": "Relay K1", "source": "raster",
               "image": f"assets/{DOC}@{VER}/fig-p2-1.png", "ocr": "1"},
    "page": {"image": f"assets/{DOC}@{VER}/page-2.png", "ocr": "1", "scanned": "0", "render_scale": "1.5",
             "label": "iv"},
}


def _v3_row(kind: str, n: int) -> dict[str, object]:
    """A ``regions`` row exactly as parser v3 (folio before typed payloads) wrote it."""
    text = V3_META["table"]["markdown"] if kind == "table" else f"{kind} text"
    return {
        "region_id": f"{DOC}@{VER}:p2:{kind}{n}",
        "doc_id": DOC,
        "version_id": VER,
        "kind": kind,
        "text": text,
        "page": 2,
        "locators": json.dumps([LOC.model_dump(mode="json")]),
        "parent_id": None,
        "section_id": None,
        "heading_path": json.dumps(["Wiring"]),
        "level": 1,
        "seq": n,
        "tokens": 3,
        "meta": json.dumps(V3_META[kind]),
    }


def test_rows_written_by_parser_v3_read_back_as_typed_payloads(tmp_path: Path) -> None:
    import lancedb

    from folio.ingest.storage.schema import REGIONS_SCHEMA
    from tests.ingest.test_schema import WRITTEN_BEFORE

    # A regions table as folio created it before issue 13 (hand-written schema, its column order).
    old_schema = pa.schema(list(WRITTEN_BEFORE["regions"].items()))
    lancedb.connect(str(tmp_path / "data" / "lancedb")).create_table("regions", schema=old_schema)
    store = Store(tmp_path / "data")
    assert store.regions.schema.names == old_schema.names
    assert store.begin_version(DOC, VER, "manual.pdf", 1, "3")
    rows = [_v3_row(kind, 1) for kind in V3_META]
    store.add_rows("regions", REGIONS_SCHEMA, pa.Table.from_pylist(rows, schema=REGIONS_SCHEMA))
    store.commit_version(DOC, VER, pages=1, regions=len(rows), report={})

    got = {r.kind: r for r in Store(tmp_path / "data").region_index(DOC, VER).regions()}
    assert got["section"].payload is None
    assert got["paragraph"].payload == TextPayload(ocr=None)
    assert got["sentence"].payload == TextPayload(ocr=OcrInfo(engine="tesseract", confidence=None))
    assert got["table"].payload == TablePayload(
        header=("A", "B"), first_row=4, last_row=5, continued_from=f"{DOC}@{VER}:p1:table1"
    )
    fig = got["figure"].payload
    assert isinstance(fig, FigurePayload) and fig.source == "raster" and fig.caption == "Figure 2: Wiring"
    # A v3 figure crop carries no pixel size or scale: readers fall back to the option.
    assert fig.image == ImageRef(path=f"assets/{DOC}@{VER}/fig-p2-1.png") and fig.ocr is not None
    page = got["page"].payload
    assert page == PagePayload(
        image=ImageRef(path=f"assets/{DOC}@{VER}/page-2.png", scale=1.5), ocr=OcrInfo(), scanned=False, label="iv"
    )
    assert got["page"].image is not None and got["page"].image.dpi == 108.0
    # The legacy view of every migrated row is the meta it was written with, key for key.
    for kind, region in got.items():
        assert dict(region.meta) == V3_META[kind], kind
        assert region.locators == (LOC,) and region.heading_path == ("Wiring",)

    # A new version's typed payloads go into the same old table and come back equal.
    ver2 = "ffeeddccbbaa9988"
    fig = Region(region_id=f"{DOC}@{ver2}:p2:figure1", doc_id=DOC, version_id=ver2, kind="figure", text="K1",
                 locators=(LOC,), payload=FigurePayload(caption="K1", source="vector", image=ImageRef(
                     path=f"assets/{DOC}@{ver2}/fig-p2-1.png", width_px=435, height_px=570, scale=1.5),
                     ocr=OcrInfo(confidence=91.5)))
    assert store.begin_version(DOC, ver2, "manual.pdf", 2, "5")
    store.add_regions([fig])
    store.commit_version(DOC, ver2, pages=1, regions=1, report={})
    assert Store(tmp_path / "data").get_region(fig.region_id) == fig


def test_new_ingest_stores_the_pixel_size_of_the_rendered_pngs(tmp_path: Path, samples: Path) -> None:
    from PIL import Image

    from folio.ingest.pdf.parse import parse_pdf

    store = Store(tmp_path / "data")
    data = (samples / "support-policy-v2.pdf").read_bytes()
    parsed = parse_pdf(data, doc_id="policy", filename="p.pdf", assets_dir=store.assets_root, render_scale=2.0)
    assert store.begin_version("policy", parsed.version_id, "p.pdf", len(data), "4")
    store.add_regions(parsed.regions)
    store.commit_version("policy", parsed.version_id, pages=len(parsed.pages), regions=len(parsed.regions), report={})

    back = list(Store(tmp_path / "data").region_index("policy", parsed.version_id).regions())
    assert sorted(r.region_id for r in back) == sorted(r.region_id for r in parsed.regions)
    assert {r.region_id: r for r in back} == {r.region_id: r for r in parsed.regions}  # typed round trip
    imaged = [r for r in back if r.image is not None]
    assert {r.kind for r in imaged} == {"page", "figure"}
    for r in imaged:
        assert r.image is not None and r.image.scale == 2.0
        with Image.open(store.asset_path(r.image.path)) as im:
            assert (r.image.width_px, r.image.height_px) == im.size, r.region_id
        # What assembly's image pricing reads (issue 13: it read width_px, which nothing wrote).
        assert r.meta_get("width_px") == str(r.image.width_px) and r.meta_get("render_scale") == "2"
    (page,) = [r for r in back if r.kind == "page"]
    size = (round(page.locators[0].page_width * 2), round(page.locators[0].page_height * 2))  # A4 at 144 dpi
    assert page.image is not None and (page.image.width_px, page.image.height_px) == size == (1190, 1684)


def test_payload_must_fit_the_region_kind() -> None:
    with pytest.raises(ValidationError, match="cannot carry a table payload"):
        Region(region_id="d@v:p1:figure1", doc_id="d", version_id="v", kind="figure", text="", locators=(LOC,),
               payload=TablePayload())
    with pytest.raises(ValidationError, match="unknown region meta keys"):
        Region(region_id="d@v:p1:page1", doc_id="d", version_id="v", kind="page", text="", locators=(LOC,),
               meta=(("imgae", "x.png"),))


def test_legacy_meta_update_through_model_copy() -> None:
    page = Region(region_id="d@v:p1:page1", doc_id="d", version_id="v", kind="page", text="", locators=(LOC,),
                  meta=(("image", "p.png"), ("render_scale", "1.5")))
    bigger = page.model_copy(update={"meta": (*page.meta, ("width_px", "800"), ("height_px", "600"))})
    assert bigger.image == ImageRef(path="p.png", width_px=800, height_px=600, scale=1.5)
    assert page.image == ImageRef(path="p.png", scale=1.5)  # the original is untouched


_text = st.text(alphabet=st.characters(blacklist_characters="|", blacklist_categories=("Cs",)), max_size=12)
_images = st.none() | st.builds(
    ImageRef,
    path=st.text(min_size=1, max_size=20),
    width_px=st.none() | st.integers(1, 5000),
    height_px=st.none() | st.integers(1, 5000),
    scale=st.none() | st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.25]),
).filter(lambda im: (im.width_px is None) == (im.height_px is None))
_ocr = st.none() | st.just(OcrInfo())


@given(
    st.one_of(
        st.builds(TextPayload, ocr=_ocr),
        st.builds(TablePayload, header=st.lists(_text.filter(bool), max_size=4).map(tuple),
                  first_row=st.integers(1, 50), last_row=st.integers(0, 80),
                  continued_from=st.none() | st.just("d@v:p1:table1")),
        st.builds(FigurePayload, caption=_text, inner_text=_text, source=st.sampled_from(["raster", "vector"]),
                  image=_images, ocr=_ocr),
        st.builds(PagePayload, image=_images, ocr=_ocr, scanned=st.none() | st.booleans(), label=_text),
    )
)
def test_legacy_meta_view_round_trips(payload: TextPayload | TablePayload | FigurePayload | PagePayload) -> None:
    kind = {"text": "sentence", "table": "table", "figure": "figure", "page": "page"}[payload.kind]
    assert payload_from_meta(kind, payload_to_meta(payload, "| a |")) == payload
