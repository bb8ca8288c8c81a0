"""Documents, their versions, pages and regions, and ingest jobs.

Generated from folio's OpenAPI schema by ``folio/_codegen.py``: do not edit (see ``folio.models``).
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, Literal

from folio.models.common import (
    BBox,
    ErrorBody,
    _Response,
)


class BatchItem(_Response):
    filename: str
    doc_id: str | None = None
    status: Literal["accepted", "refused"]
    job_id: str | None = None
    error: ErrorBody | None = None
    http_status: int = 202


class BatchUploadResponse(_Response):
    data: list[BatchItem]
    count: int
    accepted: int
    refused: int


class DeleteResponse(_Response):
    doc_id: str
    deleted_versions: list[str]


class DocumentDetail(_Response):
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    size_bytes: int
    parser_version: str
    created_at: float
    regions: int
    latest: bool
    metadata: dict[str, str | int | float | bool] | None = None
    versions: list[VersionOut]
    report: dict[str, Any] | None = None


class DocumentExport(_Response):
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    size_bytes: int
    parser_version: str
    created_at: float
    regions: int
    latest: bool
    metadata: dict[str, str | int | float | bool] | None = None
    data: list[RegionOut]
    count: int
    coords: str = "pdf-points, origin top-left of the displayed page (CropBox, rotation applied), y down"


class DocumentList(_Response):
    data: list[DocumentOut]
    count: int


class DocumentOut(_Response):
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    size_bytes: int
    parser_version: str
    created_at: float
    regions: int
    latest: bool
    metadata: dict[str, str | int | float | bool] | None = None
    versions: int = 1


class IngestResponse(_Response):
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    status: Literal["created", "unchanged", "partial"]
    report: dict[str, Any]
    job_id: str


class IngestResult(_Response):
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    status: Literal["created", "unchanged", "partial"]
    report: dict[str, Any]


class JobList(_Response):
    data: list[JobOut]
    count: int


class JobOut(_Response):
    job_id: str
    kind: str
    status: Literal["queued", "running", "done", "failed"]
    progress: JobProgress
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    result: IngestResult | None = None
    error: ErrorBody | None = None
    filename: str | None = None
    doc_id: str | None = None
    collection: str | None = None


class JobProgress(_Response):
    stage: str
    done: int
    total: int


class PageList(_Response):
    data: list[PageOut]
    count: int
    coords: str = "pdf-points, origin top-left of the displayed page (CropBox, rotation applied), y down"


class PageOut(_Response):
    page: int
    width: float
    height: float
    image_url: str | None
    region_id: str | None = None
    ocr: bool = False


class RegionLocatorOut(_Response):
    page: int
    bbox: BBox
    page_width: float
    page_height: float
    line_boxes: list[BBox] = []
    char_start: int | None = None
    char_end: int | None = None


class RegionOut(_Response):
    region_id: str
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str | None = None
    kind: str
    text: str
    pages: list[int]
    locators: list[RegionLocatorOut]
    heading_path: list[str]
    parent_id: str | None = None
    section_id: str | None = None
    level: int = 0
    tokens: int = 0
    meta: dict[str, str]
    image_url: str
    coords: str = "pdf-points, origin top-left of the displayed page (CropBox, rotation applied), y down"


class VersionOut(_Response):
    doc_id: str
    collection: str = "default"
    version_id: str
    filename: str
    pages: int
    size_bytes: int
    parser_version: str
    created_at: float
    regions: int
    latest: bool
    metadata: dict[str, str | int | float | bool] | None = None


for _model in (BatchItem, BatchUploadResponse, DeleteResponse, DocumentDetail, DocumentExport, DocumentList, DocumentOut, IngestResponse, IngestResult, JobList, JobOut, JobProgress, PageList, PageOut, RegionLocatorOut, RegionOut, VersionOut):
    _model.model_rebuild()
