"""Every MCP tool declares the JSON schema of its structured content (``outputSchema``), and what
the tools return conforms to it: checked by the official SDK's client (it validates each result
against the schema it listed) and again here with jsonschema, in-process over the session data."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import jsonschema

from tests.api.conftest import make_settings

QUESTION = "How fast must a priority-one incident be acknowledged?"
EXPECTED = {
    "list_documents": {"data", "count"},
    "search": {"data", "count", "notes"},
    "get_context": {"query", "budget", "refused", "blocks", "citations"},
    "get_region": {"region_id", "doc_id", "version_id", "pages", "locators", "text"},
    "answer": {"answer", "citations", "check", "faithful", "usage"},
    "ingest": {"job_id", "status", "progress"},
}


def test_every_tool_declares_its_output_schema_and_conforms(data_copy: Path) -> None:
    import anyio.to_thread
    from mcp import Client

    from folio.api.application import LazyFolio
    from folio.api.mcp.server import build_server
    from tests.api.llm_standin import Reply, StandInLLM

    async def run(fn: Any) -> Any:
        return await anyio.to_thread.run_sync(fn)

    async def session(client: Any, llm: StandInLLM) -> None:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        assert set(schemas) == set(EXPECTED)
        for name, fields in EXPECTED.items():
            schema = schemas[name]
            assert schema and schema["type"] == "object", name
            assert fields <= set(schema["properties"]) and fields <= set(schema["required"]), name
            jsonschema.Draft202012Validator.check_schema(schema)

        def conforms(name: str, result: Any) -> dict[str, Any]:
            assert not result.is_error, result.content
            jsonschema.validate(result.structured_content, schemas[name])
            out: dict[str, Any] = result.structured_content
            return out

        conforms("list_documents", await client.call_tool("list_documents", {}))
        conforms("search", await client.call_tool("search", {"query": "escalation path", "k": 3}))
        ctx = conforms("get_context", await client.call_tool("get_context", {"query": QUESTION, "budget": 900}))
        cid, target = next(iter(ctx["citations"].items()))
        conforms("get_region", await client.call_tool("get_region", {"region_id": target["region_id"]}))
        llm.replies.append(Reply(f"It is acknowledged within 30 minutes [{cid}]."))
        answer = conforms("answer", await client.call_tool("answer", {"query": QUESTION, "budget": 900}))
        assert [c["citation_id"] for c in answer["citations"]] == [cid]
        pdf = base64.b64encode((Path(__file__).parents[3] / "sample_pdfs" / "support-policy-v1.pdf").read_bytes())
        job = conforms("ingest", await client.call_tool("ingest", {"pdf_base64": pdf.decode(), "filename": "p.pdf",
                                                                  "wait": False}))
        assert job["status"] in ("queued", "running") and job["doc_id"] == "p"
        # A tool error carries no structured content and is not held to the schema.
        missing = await client.call_tool("get_region", {"region_id": "support-policy@0000:p1:nothing"})
        assert missing.is_error and "region_not_found" in missing.content[0].text

    with StandInLLM() as llm:
        settings = make_settings(data_copy, llm_base_url=llm.url, llm_model="stand-in")
        server = build_server(LazyFolio(settings), run, with_answer=True)

        async def main() -> None:
            async with Client(server, read_timeout_seconds=240) as client:
                await session(client, llm)

        asyncio.run(main())
