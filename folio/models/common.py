"""The models' bases, the one error shape, the server's health, and the parts more than one module uses.

Generated from folio's OpenAPI schema by ``folio/_codegen.py``: do not edit (see ``folio.models``).
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, protected_namespaces=(), validate_default=True)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, protected_namespaces=(), validate_default=True)


class BBox(_Response):
    x0: float
    y0: float
    x1: float
    y1: float


class ErrorBody(_Response):
    code: str
    message: str
    detail: Any | None = None
    request_id: str | None = None


class ErrorResponse(_Response):
    error: ErrorBody


class HealthOut(_Response):
    status: Literal["ok"]
    state: Literal["starting", "ready", "stopping", "failed"] = "ready"
    instance: str = ""
    version: str
    parser_version: str
    counts: dict[str, int]
    jobs: dict[str, int]
    retrieval: dict[str, Any]
    tokenizer: str
    auth: bool


for _model in (BBox, ErrorBody, ErrorResponse, HealthOut):
    _model.model_rebuild()
