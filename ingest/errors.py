"""folio's exceptions. Every one is a ``FolioError`` and also subclasses the matching builtin.

    FolioError
    ├── InvalidDocument (ValueError)          bad input: the file cannot become a document
    │   ├── NotAPDF                           not PDF bytes at all (or empty)
    │   ├── CorruptPDF                        PDF header, but the file cannot be opened or is truncated
    │   ├── EncryptedPDF                      needs a password (none given, or the one given is wrong)
    │   ├── EmptyPDF                          opens, but has zero pages
    │   └── LimitExceeded                     over the size or page limit (HTTP 413)
    ├── NotFound (LookupError)
    │   ├── DocumentNotFound
    │   ├── VersionNotFound
    │   └── RegionNotFound
    ├── ModelUnavailable (RuntimeError)       an optional model (CLIP, ColPali, LLM) is not configured
    └── InvalidRequest (ValueError)           a query or option that cannot be served as asked

``code`` is the stable machine-readable name used in the REST error shape.
"""

from __future__ import annotations


class FolioError(Exception):
    code = "folio_error"
    http_status = 500


class InvalidDocument(FolioError, ValueError):
    code = "invalid_document"
    http_status = 422


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
    http_status = 413


class NotFound(FolioError, LookupError):
    code = "not_found"
    http_status = 404


class DocumentNotFound(NotFound):
    code = "document_not_found"


class VersionNotFound(NotFound):
    code = "version_not_found"


class RegionNotFound(NotFound):
    code = "region_not_found"


class ModelUnavailable(FolioError, RuntimeError):
    code = "model_unavailable"
    http_status = 503


class InvalidRequest(FolioError, ValueError):
    code = "invalid_request"
    http_status = 422
