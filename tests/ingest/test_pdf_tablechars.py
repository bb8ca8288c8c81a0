"""The fast ``make_chars`` gives exactly PyMuPDF's character dicts (the table finder's input)."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from pymupdf import table

from folio.ingest.pdf.tables import chars as pdf_tablechars

SAMPLES = Path(__file__).resolve().parents[2] / "sample_pdfs"


def _chars(fn, page: pymupdf.Page) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    table._CHARS_VAR.set([])
    old = bool(pymupdf.TOOLS.set_small_glyph_heights())
    pymupdf.TOOLS.set_small_glyph_heights(True)  # as find_tables sets it
    try:
        fn(page)
    finally:
        pymupdf.TOOLS.set_small_glyph_heights(old)
    return list(table.CHARS)


@pytest.mark.parametrize("pdf", sorted(p.name for p in SAMPLES.glob("*.pdf"))[:6])
def test_same_chars_as_pymupdf(pdf: str) -> None:
    pdf_tablechars.install()
    original = pdf_tablechars._ORIGINAL or table.make_chars
    doc = pymupdf.open(SAMPLES / pdf)
    for page in list(doc)[:5]:
        assert _chars(pdf_tablechars.fast_make_chars, page) == _chars(original, page)
