"""Reading a multipart upload within a byte limit: the single upload's and the batch's one path.

The body streams through ``limited`` into Starlette's parser, so a body past its limit is a 413 as soon as it
grows past it (never buffered whole), and a declared ``Content-Length`` past it is a 413 before a byte is read.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from fastapi import Request
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from folio.api.errors import PayloadTooLarge
from folio.kernel.errors import InvalidRequest

MULTIPART_SLACK = 64 * 1024  # boundaries, part headers and the small fields, on top of the files


@dataclass(frozen=True)
class FormLimits:
    """One form's bounds and how its errors name it: ``what`` ("upload", "batch") and ``scope`` (" in all" for a
    batch), the ``hint`` of a body that is not multipart, the files and fields it may hold."""

    max_bytes: int  # the files' bytes; the body may be ``MULTIPART_SLACK`` larger
    what: str
    hint: str
    max_files: int = 1
    max_fields: int = 5
    scope: str = ""


async def limited(request: Request, limits: FormLimits) -> AsyncGenerator[bytes, None]:
    """The request body, failing with 413 as soon as it grows past the limit (never buffered whole)."""
    seen, limit = 0, limits.max_bytes + MULTIPART_SLACK
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > limit:
            raise PayloadTooLarge(f"{limits.what} is over the limit of {limits.max_bytes} bytes{limits.scope}")
        yield chunk


async def read_form(request: Request, limits: FormLimits) -> FormData:
    """The multipart form within ``limits`` (413 past them) and well formed (422); the caller closes it. Past
    ``max_files`` files is a Starlette ``MultiPartException`` the caller words (``too_many_files``)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limits.max_bytes + MULTIPART_SLACK:
        raise PayloadTooLarge(
            f"{limits.what} of {declared} bytes is over the limit of {limits.max_bytes} bytes{limits.scope}")
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()  # case-insensitive
    if media_type != "multipart/form-data":
        raise InvalidRequest(limits.hint)
    parser = MultiPartParser(request.headers, limited(request, limits), max_files=limits.max_files,
                             max_fields=limits.max_fields)
    return await parser.parse()


def malformed(e: MultiPartException) -> InvalidRequest:
    return InvalidRequest(f"malformed multipart body: {e.message}")


def too_many_files(e: MultiPartException) -> bool:
    return e.message.startswith("Too many files")


def upload_filename(upload: UploadFile) -> str:
    """The part's file name without any folder (either slash), at most 200 characters; ``upload.pdf`` if none."""
    return os.path.basename((upload.filename or "").replace("\\", "/"))[:200] or "upload.pdf"
