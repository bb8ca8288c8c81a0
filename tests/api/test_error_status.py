"""The HTTP status of every error lives in the api layer (``folio.api.errors.status_for``), not in the kernel.

The table is the REST contract as it stood when the statuses were class attributes of the kernel errors.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from folio.api.errors import (
    AssetNotFound,
    Forbidden,
    JobNotFound,
    Overloaded,
    PayloadTooLarge,
    Unauthorized,
    status_for,
)
from folio.api.keys import KeysUnavailable
from folio.api.service.chat import LLMNotConfigured, LLMTimeout, LLMUpstreamError
from folio.kernel import errors

KERNEL = {
    "FolioError": 500,
    "InvalidDocument": 422,
    "NotAPDF": 422,
    "CorruptPDF": 422,
    "EncryptedPDF": 422,
    "EmptyPDF": 422,
    "LimitExceeded": 413,
    "IngestTimeout": 422,
    "IngestMemory": 422,
    "ParserCrashed": 422,
    "NotFound": 404,
    "DocumentNotFound": 404,
    "VersionNotFound": 404,
    "RegionNotFound": 404,
    "ModelUnavailable": 503,
    "VersionBusy": 409,
    "ClaimLost": 409,
    "CollectionConflict": 409,
    "InvalidRequest": 422,
}
API = [
    (Unauthorized, 401),
    (Forbidden, 403),
    (JobNotFound, 404),
    (AssetNotFound, 404),
    (PayloadTooLarge, 413),
    (Overloaded, 503),
    (LLMTimeout, 504),
    (LLMUpstreamError, 502),
    (LLMNotConfigured, 503),
    (KeysUnavailable, 503),
]


def test_every_kernel_error_is_in_the_table() -> None:
    found = {n for n, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.FolioError)}
    assert found == set(KERNEL)


@pytest.mark.parametrize("name", sorted(KERNEL))
def test_kernel_error_status(name: str) -> None:
    cls = getattr(errors, name)
    assert status_for(cls("x")) == KERNEL[name]
    assert "http_status" not in vars(cls)  # the kernel knows nothing of HTTP


@pytest.mark.parametrize(("cls", "status"), API)
def test_api_error_status(cls: type[errors.FolioError], status: int) -> None:
    assert status_for(cls("x")) == status


def test_a_subclass_outside_the_table_answers_with_its_ancestors_status() -> None:
    class Odd(errors.CorruptPDF):
        pass

    assert status_for(Odd("x")) == 422


def test_no_stage_below_the_api_names_an_http_status() -> None:
    """Only the api layer says which HTTP status an error answers with (``KERNEL_STATUS`` for the kernel's)."""
    root = Path(__file__).resolve().parents[2]
    found = []
    for folder in ("folio/kernel", "ingest", "retrieval", "assembly"):
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    for stmt in node.body:
                        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
                        if any(isinstance(t, ast.Name) and t.id == "http_status" for t in targets):
                            found.append(f"{path.relative_to(root).as_posix()}:{node.name}")
    assert not found, found
