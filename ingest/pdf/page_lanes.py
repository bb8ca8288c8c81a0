"""The first pass's GIL-free work, run beside it: PNG encoding of page renders and Tesseract calls.

MuPDF holds the interpreter lock while it renders, encodes PNGs and extracts text, so the parse
is one thread of work. Two parts of it need no MuPDF object once their pixels exist: encoding a
render as PNG (Pillow's zlib encoder releases the lock) and Tesseract (a subprocess the thread
waits on). They go to lanes (one PNG thread; one Tesseract thread per core, at most four) while the
parsing thread moves on to the next pages. On why3 (184 pages, 10 OCRed images) the sequential
first pass waited 4.2 s on Tesseract and spent 2.7 s in MuPDF's PNG encoder, two thirds of it.

Results come back to the parsing thread (``Pending.apply``, in the order the work was handed
out), so a page's blocks, figures and warnings are exactly what the sequential pass built. A
page's Tesseract calls run one after another on one thread and share its per-page limit; calls
of different pages overlap only while ``OcrBudget.decide`` lets them (a tight document budget is
spent one call after another, as before).
"""

from __future__ import annotations

import pathlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from folio.ingest.pdf.ocr import ImageOcrError, OcrBudget, OcrInput, page_blocks, run_tesseract
from folio.ingest.pdf.text import Block
from folio.settings import usable_cpus

PNG_COMPRESS_LEVEL = 3  # zlib level: 6 costs 40% more time for PNGs no smaller than MuPDF's own
_PIL_MODES = {1: "L", 3: "RGB"}  # colour components of an alpha-free pixmap → Pillow mode

OcrResult = tuple[list[Block] | None, str | None]  # blocks (None: not OCRed) and the warning, if any


@dataclass(frozen=True, slots=True)
class OcrCall:
    """One Tesseract call of a page: the area as rendered (None: not rendered, the document's OCR
    time was already spent), its languages, and the warnings for a spent budget or a failure."""

    inp: OcrInput | None
    languages: str
    spent: str
    failed: str
    page_text: bool = False  # blocks are the page's only text layer


@dataclass(slots=True)
class Pending:
    """Work handed to a lane, and what the parsing thread does with it once it is done."""

    future: Future[Any]
    apply: Callable[[Future[Any]], None]


def write_png(path: pathlib.Path, mode: str, size: tuple[int, int], samples: bytes) -> None:
    """Encode raw pixels as PNG and write them atomically (a reader never sees half a file)."""
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    try:
        Image.frombytes(mode, size, samples).save(tmp, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)  # after a failure; a no-op once renamed


def _save_here(pix: Any, path: pathlib.Path) -> Future[None]:
    """MuPDF's own PNG encoder, on this thread, for pixmaps Pillow cannot take as they are."""
    done: Future[None] = Future()
    tmp = path.with_suffix(".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        pix.save(str(tmp), output="png")
        tmp.replace(path)
        done.set_result(None)
    except Exception as exc:  # handed to the page's apply step, which records the warning
        tmp.unlink(missing_ok=True)
        done.set_exception(exc)
    return done


def ocr_workers() -> int:
    """Tesseract calls at once: one per core (each runs single-threaded), at most four."""
    return max(1, min(4, usable_cpus()))


class PageLanes:
    """One thread for PNG writes, ``ocr_workers()`` for Tesseract; ``close`` waits for both."""

    def __init__(self, budget: OcrBudget | None) -> None:
        self._png = ThreadPoolExecutor(1, thread_name_prefix="folio-png")
        self._ocr = ThreadPoolExecutor(ocr_workers(), thread_name_prefix="folio-ocr")
        self._budget = budget
        self._turn = threading.Condition()  # guards the budget; a waiting call sleeps on it

    def save_png(self, pix: Any, path: pathlib.Path) -> tuple[tuple[int, int], Future[None]]:
        """The pixmap's pixel size now; its PNG written on the PNG lane."""
        size = (int(pix.width), int(pix.height))
        mode = _PIL_MODES.get(int(pix.n)) if not pix.alpha else None
        if mode is None or int(pix.stride) != pix.width * pix.n:
            return size, _save_here(pix, path)
        return size, self._png.submit(write_png, path, mode, size, pix.samples)

    def ocr_spent(self) -> bool:
        """The document's OCR time is spent: render nothing more for Tesseract."""
        return self._budget is None or self._budget.document_spent()

    def ocr(self, page: int, calls: list[OcrCall]) -> Future[list[OcrResult]]:
        """A page's Tesseract calls, one after another on one OCR thread, each within the budget.
        Failures come back as the page's warnings, never raised."""
        return self._ocr.submit(self._run_page, page, calls)

    def _run_page(self, page: int, calls: list[OcrCall]) -> list[OcrResult]:
        out: list[OcrResult] = []
        page_spent = 0.0
        for call in calls:
            limit = self._start(page_spent) if call.inp is not None else None
            if call.inp is None or limit is None:
                out.append((None, f"page {page + 1}: {call.spent}, the OCR time budget is spent"))
                continue
            started = time.perf_counter()
            try:
                blocks = run_tesseract(call.inp, call.languages, timeout_s=limit)
            except ImageOcrError as exc:
                out.append((None, f"page {page + 1}: {call.failed} ({exc})"))
                continue
            finally:
                took = time.perf_counter() - started
                page_spent += took
                self._end(limit, took)
            out.append((page_blocks(blocks) if call.page_text else blocks, None))
        return out

    def _start(self, page_spent: float) -> float | None:
        budget = self._budget
        assert budget is not None, "OCR lane used without an OCR budget"
        with self._turn:
            while True:
                verdict, limit = budget.decide(page_spent)
                if verdict == "start":
                    budget.running_s += limit
                    return limit
                if verdict == "skip":
                    return None
                self._turn.wait()

    def _end(self, limit: float, took: float) -> None:
        budget = self._budget
        assert budget is not None
        with self._turn:
            budget.running_s -= limit
            budget.spent_s += took
            self._turn.notify_all()

    def close(self) -> None:
        """Wait for what is running (a failed parse: drop what has not started)."""
        self._png.shutdown(wait=True, cancel_futures=True)
        self._ocr.shutdown(wait=True, cancel_futures=True)
