"""Typed models of folio's REST API, generated from its OpenAPI schema by ``folio/_codegen.py``.

Do not edit: run ``.venv/bin/python -m folio._codegen`` after changing the API's schemas
(``tests/api/client/test_client.py`` fails until the two agree). Response models accept fields
they do not know (servers add fields, never rename them); request models reject them. The
``...Options`` ``TypedDict``s type the client's keyword options (a request's fields but ``query``).

Import them from here (``from folio.models import ContextPackage``); the modules hold them by subject:

- ``common``: The models' bases, the one error shape, the server's health, and the parts more than one module uses.
- ``documents``: Documents, their versions, pages and regions, and ingest jobs.
- ``responses``: What a query returns: the context package, search hits, an answer and its citation check.
- ``requests``: What a query sends (``...Request``), and the ``...Options`` that type the client's keyword options.
"""

from __future__ import annotations

from folio.models.common import (
    BBox,
    ErrorBody,
    ErrorResponse,
    HealthOut,
)
from folio.models.documents import (
    BatchItem,
    BatchUploadResponse,
    DeleteResponse,
    DocumentDetail,
    DocumentExport,
    DocumentList,
    DocumentOut,
    IngestResponse,
    IngestResult,
    JobList,
    JobOut,
    JobProgress,
    PageList,
    PageOut,
    RegionLocatorOut,
    RegionOut,
    VersionOut,
)
from folio.models.requests import (
    AnswerOptions,
    AnswerRequest,
    ContextOptions,
    ContextRequest,
    ImageTokens,
    SearchOptions,
    SearchRequest,
    VerifyRequest,
)
from folio.models.responses import (
    AnswerResponse,
    AnswerUsage,
    Breakdown,
    BudgetInfo,
    CitationOut,
    CitationSupport,
    ContextItem,
    ContextPackage,
    Coverage,
    ExcludedEntry,
    HitOut,
    LineOut,
    LocatorOut,
    ManifestEntry,
    PageRefOut,
    PromptOut,
    RetrievalHitOut,
    RetrievalInfo,
    SearchResponse,
    SentenceCheck,
    SentenceLines,
    SourceOut,
    StructuredCheck,
    VerifyReport,
)

__all__ = [
    "AnswerOptions",
    "AnswerRequest",
    "AnswerResponse",
    "AnswerUsage",
    "BBox",
    "BatchItem",
    "BatchUploadResponse",
    "Breakdown",
    "BudgetInfo",
    "CitationOut",
    "CitationSupport",
    "ContextItem",
    "ContextOptions",
    "ContextPackage",
    "ContextRequest",
    "Coverage",
    "DeleteResponse",
    "DocumentDetail",
    "DocumentExport",
    "DocumentList",
    "DocumentOut",
    "ErrorBody",
    "ErrorResponse",
    "ExcludedEntry",
    "HealthOut",
    "HitOut",
    "ImageTokens",
    "IngestResponse",
    "IngestResult",
    "JobList",
    "JobOut",
    "JobProgress",
    "LineOut",
    "LocatorOut",
    "ManifestEntry",
    "PageList",
    "PageOut",
    "PageRefOut",
    "PromptOut",
    "RegionLocatorOut",
    "RegionOut",
    "RetrievalHitOut",
    "RetrievalInfo",
    "SearchOptions",
    "SearchRequest",
    "SearchResponse",
    "SentenceCheck",
    "SentenceLines",
    "SourceOut",
    "StructuredCheck",
    "VerifyReport",
    "VerifyRequest",
    "VersionOut",
]
