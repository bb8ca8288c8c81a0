"""The first pass's lanes: PNG writes and Tesseract calls beside the parsing thread."""

from __future__ import annotations

import pathlib
import threading

import pymupdf
import pytest

import folio.ingest.pdf.page_lanes as lanes_mod
from folio.ingest.pdf.ocr import OcrBudget, OcrInput
from folio.ingest.pdf.page_lanes import OcrCall, PageLanes
from folio.ingest.pdf.parse import parse_pdf
from folio.ingest.pdf.text import Block

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "sample_pdfs"
INPUT = OcrInput(png=b"", box=(0.0, 0.0, 10.0, 10.0), dpi=72, sx=1.0, sy=1.0)


def _call(name: str) -> OcrCall:
    return OcrCall(INPUT, name, spent="not OCRed", failed="OCR failed")


def _overlap(monkeypatch: pytest.MonkeyPatch, budget: OcrBudget, pages: int) -> int:
    """Run one fake Tesseract call per page; how many were ever running at once."""
    monkeypatch.setattr(lanes_mod, "ocr_workers", lambda: 2)
    running = peak = 0
    lock = threading.Lock()
    both = threading.Barrier(2)

    def fake(inp: OcrInput, languages: str, *, timeout_s: float) -> list[Block]:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        try:
            both.wait(timeout=1.0)  # meets a second call only if one runs at the same time
        except threading.BrokenBarrierError:
            pass
        with lock:
            running -= 1
        return []

    monkeypatch.setattr(lanes_mod, "run_tesseract", fake)
    lanes = PageLanes(budget)
    futures = [lanes.ocr(p, [_call(f"p{p}")]) for p in range(pages)]
    results = [f.result() for f in futures]
    lanes.close()
    assert all(r == [([], None)] for r in results), results
    return peak


def test_pages_are_ocred_at_once_when_the_budget_has_room(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _overlap(monkeypatch, OcrBudget(total_s=100.0, page_s=10.0), pages=2) == 2


def test_a_tight_budget_runs_calls_one_after_another(monkeypatch: pytest.MonkeyPatch) -> None:
    """45.5 s for the document, 45 s per call: a second call must wait, since the first may use
    all but half a second of what is left."""
    budget = OcrBudget(total_s=45.5, page_s=45.0)
    assert _overlap(monkeypatch, budget, pages=2) == 1
    assert budget.running_s == 0.0 and budget.spent_s >= 0.9  # the first waited 1 s on the barrier


def test_a_page_without_render_or_time_gets_the_budget_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    lanes = PageLanes(OcrBudget(total_s=10.0, page_s=5.0, spent_s=9.5))
    assert lanes.ocr_spent()
    got = lanes.ocr(2, [OcrCall(None, "eng", spent="not OCRed", failed="x")]).result()
    lanes.close()
    assert got == [(None, "page 3: not OCRed, the OCR time budget is spent")]


def test_a_page_png_that_cannot_be_written_is_a_warning_not_a_failure(tmp_path: pathlib.Path) -> None:
    data = (SAMPLES / "support-policy-v1.pdf").read_bytes()
    from folio.kernel.model import version_id_for

    assets = tmp_path / "assets"
    blocked = assets / f"policy@{version_id_for(data)}" / "page-1.png"
    (blocked / "x").mkdir(parents=True)  # a directory where page 1's PNG goes: the rename fails
    parsed = parse_pdf(data, doc_id="policy", filename="p.pdf", assets_dir=assets, ocr=False)
    assert parsed.pages[0].image is None
    assert any(w.startswith("page 1: not rendered (") for w in parsed.warnings), parsed.warnings
    assert any(r.kind == "sentence" for r in parsed.regions)  # the text is all there
    assert not list(assets.rglob("*.tmp"))  # nothing half-written left behind


def test_pngs_hold_the_rendered_pixels(tmp_path: pathlib.Path) -> None:
    """Pillow writes what MuPDF rendered: same size, same pixels."""
    data = (SAMPLES / "support-policy-v1.pdf").read_bytes()
    parsed = parse_pdf(data, doc_id="policy", filename="p.pdf", assets_dir=tmp_path / "assets", ocr=False)
    info = parsed.pages[0]
    assert info.image is not None
    written = pymupdf.Pixmap(str(tmp_path / info.image))
    page = pymupdf.open(stream=data, filetype="pdf")[0]
    rendered = page.get_pixmap(matrix=pymupdf.Matrix(1.5, 1.5))
    assert (written.width, written.height) == (rendered.width, rendered.height)
    assert written.samples == rendered.samples
