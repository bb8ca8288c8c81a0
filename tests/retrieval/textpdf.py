"""A real PDF of text pages, one page per string, for retrieval tests that ingest a document in miniature."""

from __future__ import annotations

import pymupdf


def text_pdf(pages: list[str]) -> bytes:
    """An A4 page per string, its text set in a box at 11 pt (line breaks kept)."""
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(60, 80, 535, 600), text, fontsize=11)
    return bytes(doc.tobytes())
