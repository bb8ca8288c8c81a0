"""folio's exceptions. Every one is a ``FolioError`` and also subclasses the matching builtin.

    FolioError
    ├── InvalidDocument (ValueError)          bad input: the file cannot become a document
    │   ├── NotAPDF                           not PDF bytes at all (or empty)
    │   ├── CorruptPDF                        PDF header, but the file cannot be opened or is truncated
    │   ├── EncryptedPDF                      needs a password (none given, or the one given is wrong)
    │   ├── EmptyPDF                          opens, but has zero pages
    │   ├── LimitExceeded                     over the size or page limit
    │   ├── IngestTimeout                     parsing ran past the document or page time budget
    │   ├── IngestMemory                      parsing needed more memory than the ingest budget
    │   └── ParserCrashed                     the parser process died on this file (a signal)
    ├── NotFound (LookupError)
    │   ├── DocumentNotFound
    │   ├── VersionNotFound
    │   └── RegionNotFound
    ├── ModelUnavailable (RuntimeError)       an optional model (CLIP, ColPali, LLM) is not configured
    ├── VersionBusy (TimeoutError)            another live writer holds this version's claim
    ├── ClaimLost (RuntimeError)              this writer's claim was taken over or deleted before commit
    ├── CollectionConflict (ValueError)       the doc_id is taken by another collection
    └── InvalidRequest (ValueError)           a query or option that cannot be served as asked

``code`` is the stable machine-readable name used in the REST error shape. The kernel knows nothing of HTTP:
the status each class answers with is ``folio.api.errors.KERNEL_STATUS`` (``status_for``).
"""

from __future__ import annotations


class FolioError(Exception):
    code = "folio_error"


class InvalidDocument(FolioError, ValueError):
    code = "invalid_document"


class NotAPDF(InvalidDocument):
    code = "not_a_pdf"


class CorruptPDF(InvalidDocument):
    code = "corrupt_pdf"


class EncryptedPDF(InvalidDocument):
    code = "encrypted_pdf"


class EmptyPDF(InvalidDocument):
    code = "empty_pdf"


class LimitExceeded(InvalidDocument):
    code = "limit_exceeded"


class IngestTimeout(InvalidDocument):
    code = "ingest_timeout"


class IngestMemory(InvalidDocument):
    code = "ingest_memory"


class ParserCrashed(InvalidDocument):
    code = "parser_crashed"


class NotFound(FolioError, LookupError):
    code = "not_found"


class DocumentNotFound(NotFound):
    code = "document_not_found"


class VersionNotFound(NotFound):
    code = "version_not_found"


class RegionNotFound(NotFound):
    code = "region_not_found"


class ModelUnavailable(FolioError, RuntimeError):
    code = "model_unavailable"


class VersionBusy(FolioError, TimeoutError):
    code = "version_busy"


class ClaimLost(FolioError, RuntimeError):
    code = "claim_lost"


class CollectionConflict(FolioError, ValueError):
    code = "collection_conflict"


class InvalidRequest(FolioError, ValueError):
    code = "invalid_request"
