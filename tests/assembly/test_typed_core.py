"""Issue 13, assembly side: what the loosely typed core got wrong, each pinned by a test."""

from __future__ import annotations

from folio.assembly import AssemblyOptions, ImageTokens, assemble
from folio.kernel.index import RegionIndex
from tests.assembly.builders import by_kind, hit, make_doc

AREA = ImageTokens(kind="area")  # Anthropic: ceil(w * h / 750) after the long edge <= 1568 px


def _letter_page(meta: tuple[tuple[str, str], ...]) -> tuple[RegionIndex, object]:
    regs = make_doc("scan", [("Seals", [["Tighten the seal to 5 Nm."]])])
    page = by_kind(regs, "page")[0]
    page = page.model_copy(update={"meta": (*page.meta, *meta)})
    regs = [page if r.region_id == page.region_id else r for r in regs]
    return RegionIndex(regs), page


def _image_tokens(idx: RegionIndex, page: object, **options: object) -> int:
    opts = AssemblyOptions(budget=20_000, image_tokens=AREA, max_image_share=None, **options)  # type: ignore[arg-type]
    pkg = assemble("seal torque", [hit(page, 0.9, 1, "colpali")], idx, opts)  # type: ignore[arg-type]
    assert pkg.items and pkg.items[0].image_url is not None
    return pkg.items[0].image_tokens


def test_page_image_is_priced_at_the_scale_ingest_rendered_it() -> None:
    # ingest (pdf_regions) records render_scale 1.5 on page regions; a Letter page is then
    # 918 x 1188 px: ceil(918 * 1188 / 750) = 1455 tokens (it was priced at scale 2.0: 2534).
    idx, page = _letter_page((("render_scale", "1.5"),))
    assert _image_tokens(idx, page) == 1455
    assert _image_tokens(idx, page, render_scale=2.0) == 1455  # the recorded scale wins over the option
    # a recorded pixel size wins over the scale
    idx, page = _letter_page((("render_scale", "1.5"), ("width_px", "750"), ("height_px", "1000")))
    assert _image_tokens(idx, page) == 1000
    # nothing recorded (older rows): the option, whose default is ingest's scale
    idx, page = _letter_page(())
    assert _image_tokens(idx, page) == 1455
    assert _image_tokens(idx, page, render_scale=1.0) == 647  # ceil(612 * 792 / 750)


def test_a_forgotten_field_is_a_validation_error_never_pydantic_undefined() -> None:
    """``_Frozen.trusted`` wrote pydantic's private attributes and filled a forgotten required field with
    ``PydanticUndefined``, which then serialized. Output models are built with plain validation now."""
    import pytest
    from pydantic import ValidationError

    from folio.assembly import package as t

    models = [t.ContextItem, t.ManifestEntry, t.ExcludedEntry, t.RetrievalHitOut, t.LocatorOut]
    assert not [m.__name__ for m in models if hasattr(m, "trusted")]
    with pytest.raises(ValidationError, match="score"):
        t.RetrievalHitOut(region_id="d@v:p1:sentence1", pages=[1], retriever="bm25", rank=1)  # type: ignore[call-arg]
    regs = make_doc("policy", [("Deadlines", [["The deadline is 15 minutes.", "Escalate after 30."]])])
    sentence = by_kind(regs, "sentence")[0]
    pkg = assemble("deadline", [hit(sentence, 0.9, 1)], RegionIndex(regs), AssemblyOptions())
    text = pkg.model_dump_json()
    assert "PydanticUndefined" not in text
    assert type(pkg).model_validate_json(text) == pkg  # every value the packer built is a valid value
