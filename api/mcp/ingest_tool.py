"""The MCP ``ingest`` tool: a PDF's bytes in the call (base64), ingested as ``POST /v1/documents`` would.

No server-side path is accepted anywhere: the PDF travels in the call, and ``filename`` is only a name (its
last path segment is kept, as an upload's is). The bytes are checked at the door as an upload's are
(``Folio.check_upload``: not a PDF, encrypted, over ``FOLIO_MAX_UPLOAD_BYTES`` or ``FOLIO_MAX_PAGES``, a doc
id of another collection) and queued on the job runner; with ``wait`` (the default) the tool returns when the
job has finished (at most ``MAX_WAIT_S`` seconds; then the running job), else at once with the queued job.

Not read-only: a read-only key (``access: read``) is refused with ``forbidden``, as REST refuses its
uploads. The document goes into the key's collection when the key writes to exactly one, else into
``default`` (which a key scoped to several others may not write: ``forbidden``). Over HTTP the whole call is
one JSON body within ``FOLIO_MAX_REQUEST_BYTES`` (10 MiB by default: a PDF of about 7.5 MB once in base64,
``api.http.body_limits``); a larger PDF goes through ``POST /v1/documents``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from folio.api.keys import Principal

if TYPE_CHECKING:
    from folio.api.application import Folio
    from folio.api.service.jobs import JobHandle

MAX_WAIT_S = 600.0
MAX_FILENAME_CHARS = 200
INGEST = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False)


class IngestToolOut(BaseModel):
    """The ingest job as ``GET /v1/jobs/{id}`` shows it (``result``: the version written, once done)."""

    job_id: str
    status: str = Field(description="queued, running, done or failed")
    progress: dict[str, Any] = Field(description="stage, done, total")
    filename: str | None = None
    doc_id: str | None = None
    collection: str | None = None
    result: dict[str, Any] | None = Field(None, description="doc_id, version_id, pages, status (created, ...)")
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class _Upload:
    pdf_base64: str
    filename: str
    doc_id: str | None


def collection_for(collections: frozenset[str] | None) -> str:
    """Where the tool puts a document: the key's one collection when it has exactly one, else ``default``.

    >>> collection_for(frozenset({"finance"})), collection_for(None), collection_for(frozenset({"a", "b"}))
    ('finance', 'default', 'default')
    """
    return next(iter(collections)) if collections is not None and len(collections) == 1 else "default"


def _ingest(folio: Folio, collections: frozenset[str] | None, upload: _Upload) -> JobHandle:
    """The tool's blocking part, run by ``call`` (folio's errors become tool errors there)."""
    from folio.api.errors import Forbidden  # function-level: the service loads on first use

    collection = collection_for(collections)
    if collections is not None and collection not in collections:
        raise Forbidden(f"this API key cannot write to collection {collection}")
    pdf = _decoded(upload.pdf_base64, folio.settings.ingest.max_upload_bytes)
    checked = folio.check_upload(pdf, filename=upload.filename, doc_id=upload.doc_id, collection=collection)
    return folio.submit_ingest(checked)


def _decoded(pdf_base64: str, max_bytes: int) -> bytes:
    """The PDF's bytes, refused before decoding when the text alone is over the limit (``FOLIO_MAX_UPLOAD_BYTES``)."""
    # function-level, as every import of the service's here: `folio mcp` answers the handshake before they load
    from folio.api.errors import PayloadTooLarge
    from folio.kernel.errors import InvalidRequest

    if len(pdf_base64) > 4 * (max_bytes // 3 + 1) + 64:
        raise PayloadTooLarge(f"the PDF is over the limit of {max_bytes} bytes")
    try:
        pdf = base64.b64decode("".join(pdf_base64.split()), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidRequest("pdf_base64 is not base64") from None
    if len(pdf) > max_bytes:
        raise PayloadTooLarge(f"the PDF is {len(pdf)} bytes, over the limit of {max_bytes} bytes")
    return pdf


def add_ingest_tool(
    server: MCPServer[Any],
    call: Callable[..., Awaitable[Any]],
    principal: Callable[[Context[Any, Any]], Principal],
) -> None:
    """``ingest`` on ``server``: ``call`` runs the blocking part (``api.mcp.server._caller``), ``principal`` says
    whether the caller may write."""

    @server.tool(name="ingest", annotations=INGEST)
    async def ingest_tool(
        ctx: Context[Any, Any], pdf_base64: str, filename: str, doc_id: str | None = None, wait: bool = True
    ) -> Annotated[CallToolResult, IngestToolOut]:
        """Add a PDF to the documents: its bytes base64-encoded in pdf_base64, its file name (the document id
        comes from it unless doc_id is given). The same bytes again are a no-op (status unchanged); new bytes
        under the same doc_id become a new version. wait (default true): return once ingested, with the
        version written (result); false: return the queued job at once. Needs a key with write access; the
        document goes into the key's collection when it writes to exactly one, else into "default"."""
        if not principal(ctx).can_write:
            raise ToolError("forbidden: this API key is read-only: ingest needs a key with write access")
        name = os.path.basename(filename.replace("\\", "/"))[:MAX_FILENAME_CHARS] or "upload.pdf"
        job: JobHandle = await call(ctx, _ingest, _Upload(pdf_base64, name, doc_id))
        if wait:
            try:
                await asyncio.wait_for(job.wait_async(), MAX_WAIT_S)
            except TimeoutError:
                pass  # the job runs on; the caller gets it as it is (GET /v1/jobs/{id} follows it)
        snap = job.snapshot()
        if snap.get("status") == "failed":
            err = snap.get("error") or {}
            raise ToolError(f"{err.get('code', 'ingest_failed')}: {str(err.get('message', ''))[:500]}")
        out = IngestToolOut.model_validate(snap).model_dump(mode="json")
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(out, ensure_ascii=False))], structured_content=out
        )
