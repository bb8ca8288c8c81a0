"""Issue 48, item 3: the MCP ``ingest`` tool, over streamable HTTP at ``/mcp`` of a live server, driven by the
official SDK's client: the PDF's bytes in the call, never a path; not read-only; refused for read-only keys."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from folio.api.keys import add_key
from tests.api.conftest import live_server, make_settings
from tests.api.mcp.test_mcp import run


@pytest.mark.slow
def test_ingest_tool_takes_the_bytes_and_honours_the_key(data_copy: Path, tmp_path: Path, samples: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    keys = tmp_path / "keys.json"
    _, writer = add_key(keys, ["default"], "write")
    _, reader = add_key(keys, ["default"], "read")
    pdf = base64.b64encode((samples / "support-policy-v1.pdf").read_bytes()).decode()
    settings = make_settings(data_copy, keys_file=str(keys), max_upload_bytes=20_000)
    with live_server(settings) as base:

        def transport(key: str) -> Any:
            client = httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=240)
            return streamable_http_client(f"{base}/mcp", http_client=client)

        async def as_writer(client: Any) -> None:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "ingest")
            assert tool.annotations.read_only_hint is False
            assert set(tool.input_schema["properties"]) == {"pdf_base64", "filename", "doc_id", "wait"}
            done = await client.call_tool(
                "ingest", {"pdf_base64": pdf, "filename": "../../etc/policy-mcp.pdf", "doc_id": "policy-mcp"}
            )
            assert not done.is_error, done.content
            out = done.structured_content
            assert out["status"] == "done" and out["filename"] == "policy-mcp.pdf"  # a name, never a path
            assert out["result"]["doc_id"] == "policy-mcp" and out["result"]["status"] == "created"
            docs = (await client.call_tool("list_documents", {})).structured_content
            assert "policy-mcp" in {d["doc_id"] for d in docs["data"]}
            queued = await client.call_tool("ingest", {"pdf_base64": pdf, "filename": "again.pdf", "wait": False})
            assert queued.structured_content["status"] in ("queued", "running", "done")

            for args, code in (
                ({"pdf_base64": "%%% not base64", "filename": "x.pdf"}, "invalid_request"),
                ({"pdf_base64": base64.b64encode(b"notes, not a PDF").decode(), "filename": "x.pdf"}, "not_a_pdf"),
                ({"pdf_base64": base64.b64encode(b"%PDF-" + b"0" * 30_000).decode(), "filename": "x.pdf"},
                 "limit_exceeded"),
            ):
                bad = await client.call_tool("ingest", args)
                assert bad.is_error and f"{code}: " in bad.content[0].text, (code, bad.content)

        async def as_reader(client: Any) -> None:
            refused = await client.call_tool("ingest", {"pdf_base64": pdf, "filename": "r.pdf"})
            assert refused.is_error and "forbidden: " in refused.content[0].text, refused.content
            docs = (await client.call_tool("list_documents", {})).structured_content
            assert "r" not in {d["doc_id"] for d in docs["data"]}

        run(as_writer, transport(writer))
        run(as_reader, transport(reader))
