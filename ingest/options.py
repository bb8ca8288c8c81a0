"""What one ingest is asked to do, in one value (docling's ``PipelineOptions``): built once by the caller, from
the settings (``IngestOptions.from_settings``) or by hand, and read by every stage of the pipeline
(``ingest.pipeline``); no stage reads a setting itself.

What belongs to one document (its bytes, file name, doc id, collection, password) is not an option: it is the
pipeline's ``IngestSource``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from folio.ingest.parse_supervisor import IngestLimits
from folio.ingest.pdf.tables.base import TableMode
from folio.settings import IngestSettings

DEFAULT_MAX_BYTES = 200 * 1024 * 1024
DEFAULT_MAX_PAGES = 2000


@dataclass(frozen=True)
class IngestOptions:
    """How to ingest: what the PDF may cost, how it is read, what is indexed.

    ``ocr``: None OCRs scanned pages when Tesseract is installed. ``max_bytes`` / ``max_pages``: bigger files
    are refused before anything is written (None: no limit). ``limits``: the parse's time and memory
    (``ingest.parse_supervisor``), and ``limits.timeout_s`` again for the embedding after it. ``word_tables``:
    the table reader's mode (``ingest.pdf.tables``). ``row_units``: a chunk per body row of each
    long table (``ingest.row_units``; off: neutral on mmlb). ``redo_degraded``: parse a stored version with
    degraded pages again and keep the better parse. ``reparse_outdated``: the same bytes stored by an older
    parser (``DocumentVersion.parser_version``) are parsed again and replaced in place, so an upgrade of folio
    reaches documents already stored (off: such an ingest is ``unchanged``)."""

    ocr: bool | None = None
    max_bytes: int | None = DEFAULT_MAX_BYTES
    max_pages: int | None = DEFAULT_MAX_PAGES
    render_scale: float = 1.5
    limits: IngestLimits = field(default_factory=IngestLimits)
    word_tables: TableMode = "all"
    row_units: bool = False
    redo_degraded: bool = False
    reparse_outdated: bool = True

    @classmethod
    def from_settings(cls, settings: IngestSettings, **changes: Any) -> IngestOptions:
        """The options of the ``ingest`` settings group (``Settings.ingest``), with ``changes`` (fields) on top.

        >>> IngestOptions.from_settings(IngestSettings.from_env({"FOLIO_PAGE_TIMEOUT_S": "7"})).limits.page_timeout_s
        7.0
        >>> IngestOptions.from_settings(IngestSettings.from_env({}), ocr=False).ocr
        False
        """
        options = cls(
            ocr=settings.ocr,
            max_bytes=settings.max_upload_bytes,
            max_pages=settings.max_pages,
            limits=IngestLimits.from_settings(settings),
            word_tables=settings.word_tables,
        )
        return replace(options, **changes)
