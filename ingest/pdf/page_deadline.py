"""A page's soft time limit inside the parser process: its slow steps stop, its text stays.

MuPDF holds the interpreter lock and cannot be interrupted from another thread, so the limit is
a ``SIGALRM`` timer in the parsing (main) thread of the parser process (``ingest.parse_supervisor`` runs
``parse_pdf`` there). When it fires, ``PageOverrun`` is raised at the next Python bytecode: at
once inside PyMuPDF's table finder (mostly Python), right after a long C call (``get_cdrawings``,
a render for OCR) returns. ``ingest.pdf.parse`` then drops what the page's slow steps built (tables,
figures, image OCR) and keeps its text layer and page render: the page is *degraded*, not lost.

A C call that does not return is the parent's to cut (``hard_page_limit``, used by ``ingest.parse_supervisor``): it
kills the parser and parses again with that page's slow steps skipped.

``PageOverrun`` is a ``BaseException`` so that no ``except Exception`` on the way (PyMuPDF's
``find_tables`` has one) swallows it. PyMuPDF globals an interrupted step may leave switched are
restored on the way out.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any


class PageOverrun(BaseException):
    """The page ran past its soft limit (raised from the ``SIGALRM`` handler)."""


MAX_TIMER_S = 1e9  # longer (up to inf) is no limit: setitimer overflows past time_t
HARD_PAGE_GRACE_S = 10.0  # at least this much past page_timeout_s before a stuck page's parser is killed
_armed = False  # a signal that arrives after the body is over raises nothing


def hard_page_limit(page_timeout_s: float) -> float:
    """How long the parent waits on one page before it kills the parser. The parser stops a page's
    slow steps itself at ``page_timeout_s`` (``page_deadline`` below); what is left past that is
    one MuPDF call that does not return, and the page's render.

    >>> hard_page_limit(60.0), hard_page_limit(3.0)
    (120.0, 13.0)
    """
    return page_timeout_s + max(page_timeout_s, HARD_PAGE_GRACE_S)


def _fire(signum: int, frame: FrameType | None) -> None:
    global _armed
    if _armed:
        _armed = False
        raise PageOverrun


def can_interrupt() -> bool:
    """Signals reach only the main thread: elsewhere (a server's worker thread) there is no soft limit."""
    return threading.current_thread() is threading.main_thread()


@contextmanager
def page_deadline(seconds: float | None) -> Iterator[None]:
    """Run the body with ``PageOverrun`` raised after ``seconds`` (None: no limit; at most one
    raise, possibly just after the body ended). Raises at once when no time is left."""
    global _armed
    if seconds is None or not seconds < MAX_TIMER_S or not can_interrupt():  # "not <": NaN too
        yield
        return
    if seconds <= 0:
        raise PageOverrun
    import pymupdf

    tools: Any = pymupdf.TOOLS  # untyped
    glyphs, quads = tools.set_small_glyph_heights(), tools.unset_quad_corrections()
    previous = signal.signal(signal.SIGALRM, _fire)
    _armed = True
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        try:
            _armed = False  # from here on the handler raises nothing (if it raised first, it disarmed)
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            signal.signal(signal.SIGALRM, previous)
            # find_tables switches these and restores them in a ``finally`` the raise may have cut short.
            tools.set_small_glyph_heights(glyphs)
            tools.unset_quad_corrections(quads)
