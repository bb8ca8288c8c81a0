"""The parse supervisor: the parse stage runs in a child process, within per-document limits (a deadline and a
memory cap) that it enforces from outside.

Parsing is where a hostile or merely unlucky file costs the most: MuPDF decodes every image and
content stream, Tesseract reads scanned pages. Neither can be interrupted from Python, and the API
has one ingest worker, so one file could hold it for minutes or grow the server by gigabytes.
``parse_with_limits`` therefore runs ``parse_pdf`` in a child process (multiprocessing
``forkserver``: a clean interpreter with ``ingest.pdf.parse`` preloaded, never a fork of the threaded
server) and, from the parent:

- kills it when the whole parse runs past ``timeout_s`` (``IngestTimeout``);
- lets one page cost at most ``page_timeout_s`` of slow steps: the child itself stops a page's
  table, figure and OCR work there and keeps its text layer and render (``ingest.pdf.page_deadline``);
  the page is *degraded* (a warning, ``degraded_pages`` in the report), not the document failed.
  A page the child does not get past within ``hard_page_limit`` (one MuPDF call that does not
  return) gets the child killed and the document parsed again with that page cut to its text
  layer (a second time: to nothing);
- caps its address space at ``memory_mb`` with ``RLIMIT_AS`` (``IngestMemory`` when it runs out);
- reports a child that dies on a signal as ``ParserCrashed``.

The child leads its own process group, so a kill takes its Tesseract subprocesses with it, and it
kills itself when the ingesting process disappears. All three errors are ``InvalidDocument``s
(422): the pipeline removes the half-written version as for any parse failure, nothing stored
before is touched, and the worker goes on with the next job.

OCR is bounded more gently first: one Tesseract call gets at most ``OCR_PAGE_SHARE`` of the page
budget, and the document's OCR time at most ``ocr_budget_s`` (default: half of ``timeout_s``);
pages past that are indexed as images with a warning rather than failing the document.

The caller hands the limits in (``IngestOptions.limits``, or ``IngestLimits.from_settings(settings.ingest)``),
from the settings ``FOLIO_INGEST_TIMEOUT_S``, ``FOLIO_PAGE_TIMEOUT_S``, ``FOLIO_INGEST_MEMORY_MB``,
``FOLIO_OCR_BUDGET_S`` (``0`` disables a limit) and ``FOLIO_INGEST_ISOLATE`` (``0`` parses in
process: no deadline or memory cap, only the OCR budget).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import resource
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from folio.ingest.pdf.ocr import OcrBudget
from folio.ingest.pdf.page_deadline import hard_page_limit
from folio.kernel.errors import FolioError, IngestMemory, IngestTimeout, ParserCrashed

if TYPE_CHECKING:
    from folio.ingest.pdf.parse import ParsedDocument
    from folio.ingest.pdf.validate import CheckedPdf
    from folio.settings import IngestSettings

logger = logging.getLogger(__name__)

OCR_PAGE_SHARE = 0.75  # of page_timeout_s: a slow Tesseract call is cut before the page is killed
_POLL_S = 0.25
STARTUP_GRACE_S = 10.0  # added to the first page's budget: the child's start and imports are not the file's fault
_MB = 1024 * 1024


@dataclass(frozen=True)
class IngestLimits:
    """Budgets for parsing one document; ``None`` disables one."""

    timeout_s: float | None = 300.0
    page_timeout_s: float | None = 60.0
    memory_mb: int | None = 3072  # address space, not RSS: a 300-page manual peaks near 1.4 GB of it
    ocr_budget_s: float | None = None  # None: half of timeout_s (unbounded when that is None)
    isolate: bool = True

    @classmethod
    def from_settings(cls, settings: IngestSettings) -> IngestLimits:
        """The limits of the ``ingest`` settings group (``Settings.ingest``)."""
        mem = settings.memory_mb
        return cls(
            timeout_s=settings.timeout_s,
            page_timeout_s=settings.page_timeout_s,
            memory_mb=int(mem) if mem is not None else None,
            ocr_budget_s=settings.ocr_budget_s,
            isolate=settings.isolate,
        )

    def ocr_budget(self) -> OcrBudget:
        total = self.ocr_budget_s
        if total is None and self.timeout_s is not None:
            total = self.timeout_s / 2
        page = OCR_PAGE_SHARE * self.page_timeout_s if self.page_timeout_s is not None else None
        return OcrBudget(total_s=total, page_s=page)


class _PageStuck(Exception):
    """The parser made no progress on ``page`` (0-based) within ``hard_page_limit``: it was killed."""

    def __init__(self, page: int) -> None:
        super().__init__(page)
        self.page = page


def parse_with_limits(
    data: CheckedPdf | bytes,
    *,
    limits: IngestLimits,
    progress: Callable[[int, int], None] | None = None,
    **parse_kwargs: Any,
) -> ParsedDocument:
    """``ingest.pdf.parse.parse_pdf(data, **parse_kwargs)`` within ``limits`` (see the module docstring). ``data``:
    a ``CheckedPdf`` (the pipeline's: the parse does not check it again), or bytes the parse checks.

    A page past ``page_timeout_s`` is degraded by the parser itself. A page the parser does not
    get past within ``hard_page_limit`` gets the parser killed and the document parsed again with
    that page cut to its text layer (a second time: to nothing), until the document's deadline."""
    if not limits.isolate:
        # here, not at the top: PyMuPDF stays out of processes that only read limits (the forkserver
        # preloads it for the parse children)
        from folio.ingest.pdf.parse import parse_pdf

        return parse_pdf(data, ocr_budget=limits.ocr_budget(), progress=progress, **parse_kwargs)
    started = time.monotonic()
    modes: dict[int, str] = {}
    while True:
        try:
            return _parse_in_child(data, limits, progress, {**parse_kwargs, "page_modes": dict(modes)}, started)
        except _PageStuck as stuck:
            if modes.get(stuck.page) == "skip":  # nothing left to cut on this page
                raise _page_timeout(limits, f"page {stuck.page + 1}") from None
            modes[stuck.page] = "skip" if stuck.page in modes else "text"
            logger.warning(
                "page %d did not finish within %g s; parsing again with it cut to %s",
                stuck.page + 1,
                hard_page_limit(limits.page_timeout_s or 0.0),
                "its text layer" if modes[stuck.page] == "text" else "nothing",
            )


def _parse_in_child(
    data: CheckedPdf | bytes,
    limits: IngestLimits,
    progress: Callable[[int, int], None] | None,
    parse_kwargs: dict[str, Any],
    started: float,
) -> ParsedDocument:
    ctx = _context()
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(
        target=_child_main,
        args=(send, os.getpid(), limits, data, parse_kwargs),
        name="folio-parse",
        daemon=True,
    )
    proc.start()
    send.close()
    try:
        return _supervise(proc, recv, limits, progress, started)
    finally:
        recv.close()
        if proc.is_alive() and proc.pid is not None:
            _kill_group(proc.pid)
        proc.join(5)


def _page_timeout(limits: IngestLimits, where: str) -> IngestTimeout:
    hard = hard_page_limit(limits.page_timeout_s or 0.0)
    return IngestTimeout(f"ingest timeout: {where} took longer than {hard:g} s (FOLIO_PAGE_TIMEOUT_S)")


def _supervise(
    proc: Any,
    recv: Connection,
    limits: IngestLimits,
    progress: Callable[[int, int], None] | None,
    started: float,
) -> ParsedDocument:
    last = time.monotonic() + STARTUP_GRACE_S
    hard = hard_page_limit(limits.page_timeout_s) if limits.page_timeout_s is not None else None
    done = total = 0
    while True:
        if recv.poll(_POLL_S):
            try:
                msg = recv.recv()
            except EOFError:
                proc.join(5)
                raise _death(proc.exitcode, limits) from None
            if msg[0] != "progress":
                return _result(msg, limits)
            done, total = msg[1], msg[2]
            last = time.monotonic()
            if progress:
                progress(done, total)
            continue
        now = time.monotonic()
        where = f"page {done + 1} of {total}" if total else "opening the file"
        if limits.timeout_s is not None and now - started > limits.timeout_s + (STARTUP_GRACE_S if not total else 0):
            raise IngestTimeout(
                f"ingest timeout: parsing took longer than {limits.timeout_s:g} s "
                f"(FOLIO_INGEST_TIMEOUT_S), stopped at {where}"
            )
        if hard is not None and now - last > hard:
            if total and done < total:
                raise _PageStuck(done)
            raise _page_timeout(limits, where)  # opening the file, or the pass after the last page


def _result(msg: tuple[Any, ...], limits: IngestLimits) -> ParsedDocument:
    """The parse of the child's last message (``ok``), or the error it stands for."""
    kind = msg[0]
    if kind == "ok":
        parsed: ParsedDocument = msg[1]
        return parsed
    if kind == "error":
        err: BaseException = msg[1]
        raise err
    if kind == "memory":
        raise IngestMemory(_memory_message(limits))
    raise RuntimeError(f"parser process failed: {msg[1]}")


def _memory_message(limits: IngestLimits) -> str:
    return f"ingest memory: parsing needed more than {limits.memory_mb} MB (FOLIO_INGEST_MEMORY_MB)"


def _death(exitcode: int | None, limits: IngestLimits) -> FolioError:
    """The error for a child that closed its pipe without a result."""
    if exitcode is not None and exitcode < 0:
        sig = -exitcode
        if sig == signal.SIGKILL:  # not ours (we only kill after deciding): the kernel's OOM killer
            return IngestMemory(_memory_message(limits) + " and was killed by the system")
        return ParserCrashed(f"parser crashed: the PDF parser died with {signal.Signals(sig).name} on this file")
    return ParserCrashed(f"parser crashed: the PDF parser exited with status {exitcode} on this file")


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


_ctx_lock = threading.Lock()
_ctx: Any = None


def _context() -> Any:
    global _ctx
    with _ctx_lock:
        if _ctx is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["pymupdf", "folio.ingest.pdf.parse"])
            _ctx = ctx
        return _ctx


def _watch_parent(parent_pid: int) -> None:
    """Kill this process group when the ingesting process is gone (kill -9 included)."""
    while True:
        time.sleep(1.0)
        try:
            os.kill(parent_pid, 0)
        except ProcessLookupError:
            os.killpg(0, signal.SIGKILL)
        except PermissionError:
            pass


def _child_main(
    conn: Connection, parent_pid: int, limits: IngestLimits, data: CheckedPdf | bytes, parse_kwargs: dict[str, Any]
) -> None:
    os.setpgrp()
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    if limits.memory_mb is not None:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = limits.memory_mb * _MB
        resource.setrlimit(resource.RLIMIT_AS, (cap if hard < 0 else min(cap, hard), hard))
    from folio.ingest.pdf.parse import parse_pdf  # preloaded by the forkserver; see parse_with_limits

    def progress(done: int, total: int) -> None:
        conn.send(("progress", done, total))

    try:
        parsed = parse_pdf(
            data,
            ocr_budget=limits.ocr_budget(),
            progress=progress,
            page_timeout_s=limits.page_timeout_s,
            **parse_kwargs,
        )
        del data
        conn.send(("ok", parsed))
    except MemoryError:
        conn.send(("memory", ""))
    except FolioError as exc:
        conn.send(("error", exc))
    except BaseException as exc:  # our bug, unless the memory cap was reached (C++ bad_alloc and the like)
        if limits.memory_mb is not None and _vm_peak_mb() >= 0.9 * limits.memory_mb:
            conn.send(("memory", ""))
        else:
            conn.send(("failed", f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"))
    finally:
        conn.close()


def _vm_peak_mb() -> float:
    """This process's peak address space (Linux ``VmPeak``), 0 when unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
