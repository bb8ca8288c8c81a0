"""Open untrusted PDF bytes safely, turning every failure into one specific ``InvalidDocument``.

The checks run cheapest first: size limit, the ``%PDF`` signature, opening, encryption, page count,
page limit, the first page, every page's place in the page tree. PyMuPDF repairs many damaged files
silently; a file it has to repair *and* that then shows no pages, or whose first page cannot be loaded,
is reported as corrupt rather than as empty.
Error messages are one line and never contain a traceback, so the API can show them as they are.

``CheckedPdf`` is a file that passed: the ingest checks its bytes once, and the parse (in a process of its own,
``ingest.parse_supervisor``) opens them again without checking them again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from folio.kernel.errors import CorruptPDF, EmptyPDF, EncryptedPDF, LimitExceeded, NotAPDF
from folio.kernel.model import version_id_for

if TYPE_CHECKING:
    import pymupdf

logger = logging.getLogger(__name__)

# The PDF spec allows junk before the header; Acrobat accepts the signature within the first 1024 bytes.
_HEADER_WINDOW = 1024


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] or type(exc).__name__


def open_pdf(
    data: bytes,
    *,
    password: str | None = None,
    max_bytes: int | None = None,
    max_pages: int | None = None,
    filename: str | None = None,
) -> pymupdf.Document:
    """Open ``data`` as a PDF and return the (authenticated) document.

    Raises ``NotAPDF`` (empty or no ``%PDF`` signature), ``CorruptPDF`` (cannot be opened, or
    truncated so badly that no page loads), ``EncryptedPDF`` (a password is needed and none was
    given, or the one given is wrong: the message says which), ``EmptyPDF`` (zero pages) and
    ``LimitExceeded`` (more than ``max_bytes`` bytes or ``max_pages`` pages). ``filename``, when
    given (a local file), names the file in the message for an empty one.
    """
    import pymupdf

    _check_bytes(data, max_bytes, filename)
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # PyMuPDF raises several types (FileDataError, RuntimeError, ValueError)
        raise CorruptPDF(f"corrupt PDF: cannot be opened ({_one_line(exc)})") from None
    try:
        n = _check_document(doc, password, max_pages)
    except Exception:
        doc.close()
        raise
    if doc.is_repaired:
        logger.info("PDF needed repair when opening (%d pages recovered)", n)
    return doc


def _check_bytes(data: bytes, max_bytes: int | None, filename: str | None) -> None:
    """What the bytes alone tell: over ``max_bytes``, empty, or without a ``%PDF`` header."""
    if max_bytes is not None and len(data) > max_bytes:
        raise LimitExceeded(f"file is {len(data)} bytes, over the limit of {max_bytes} bytes")
    if not data:
        raise NotAPDF(f"empty file: {filename} is 0 bytes" if filename else "empty file: no bytes received")
    if b"%PDF-" not in data[:_HEADER_WINDOW]:
        raise NotAPDF("not a PDF: the file does not start with a %PDF header")


def _check_document(doc: pymupdf.Document, password: str | None, max_pages: int | None) -> int:
    """Authenticate the opened ``doc`` and check its pages (see ``open_pdf``); its page count."""
    if doc.needs_pass:
        if password is None:
            raise EncryptedPDF("encrypted PDF: a password is required to open it")
        if not doc.authenticate(password):
            raise EncryptedPDF("encrypted PDF: the password given is wrong")
    try:
        n: int = doc.page_count
    except Exception as exc:  # a page tree MuPDF cannot count ("Invalid number of pages")
        raise CorruptPDF(f"corrupt PDF: the page tree is broken ({_one_line(exc)})") from None
    if n == 0:
        if doc.is_repaired:
            raise CorruptPDF("corrupt PDF: the file is damaged and no pages could be recovered")
        raise EmptyPDF("empty PDF: the document has no pages")
    if max_pages is not None and n > max_pages:
        raise LimitExceeded(f"document has {n} pages, over the limit of {max_pages} pages")
    try:
        doc.load_page(0)
    except Exception as exc:
        raise CorruptPDF(f"corrupt PDF: the first page cannot be loaded ({_one_line(exc)})") from None
    _check_page_tree(doc, n)
    return n


def _check_page_tree(doc: pymupdf.Document, n: int) -> None:
    """Every page of the tree can be found: ``CorruptPDF`` when MuPDF cannot reach one (a ``/Kids`` that
    points back at an ancestor: "cycle in page tree"). The parse would meet it at that page only, after
    the first pages were parsed. MuPDF walks the tree from its root for each page (its own cycle check);
    2,000 pages take about 25 ms, and ``n`` is bounded: MuPDF refuses a page count past the file's object count."""
    for i in range(n):
        try:
            doc.page_xref(i)
        except Exception as exc:
            raise CorruptPDF(f"corrupt PDF: the page tree is broken at page {i + 1} ({_one_line(exc)})") from None


@dataclass(frozen=True)
class CheckedPdf:
    """PDF bytes that ``open_pdf`` accepted, with what it learned: the page count, and the version id (the
    bytes' hash, ``kernel.model.version_id_for``). Plain data, so it crosses to the parse's process."""

    data: bytes
    password: str | None
    pages: int
    version_id: str

    @classmethod
    def check(
        cls,
        data: bytes,
        *,
        password: str | None = None,
        max_bytes: int | None = None,
        max_pages: int | None = None,
        filename: str | None = None,
    ) -> CheckedPdf:
        """Check ``data`` (``open_pdf``'s errors, its arguments) and keep what the parse needs."""
        doc = open_pdf(data, password=password, max_bytes=max_bytes, max_pages=max_pages, filename=filename)
        try:
            return cls(data, password, doc.page_count, version_id_for(data))
        finally:
            doc.close()

    def open(self) -> pymupdf.Document:
        """The document, opened again and authenticated: the checks passed once and are not run again."""
        import pymupdf

        doc = pymupdf.open(stream=self.data, filetype="pdf")
        if doc.needs_pass:
            doc.authenticate(self.password or "")
        return doc
