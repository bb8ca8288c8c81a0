"""The MCP server, driven by the official SDK's own client: over stdio against a spawned
``folio mcp`` process, and over streamable HTTP at ``/mcp`` of a live server with scoped keys."""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from folio.api.keys import add_key
from tests.api.conftest import assert_error, live_server, make_settings

QUESTION = "How fast must a priority-one incident be acknowledged?"
TOOLS = {"list_documents", "search", "get_context", "get_region", "ingest"}
PNG = b"\x89PNG\r\n\x1a\n"


def run(session: Callable[[Any], Awaitable[None]], server: Any) -> None:
    """Open an SDK client on ``server`` (stdio parameters or a transport) and run ``session`` with it."""
    from mcp import Client

    async def main() -> None:
        async with Client(server, read_timeout_seconds=240) as client:
            await session(client)

    asyncio.run(main())


async def check_tools(client: Any) -> None:
    """What every transport must answer, on the session data (support policy v1+v2, the register)."""
    tools = await client.list_tools()
    assert {t.name for t in tools.tools} == TOOLS  # no LLM configured: no answer tool

    docs = (await client.call_tool("list_documents", {})).structured_content
    assert {d["doc_id"] for d in docs["data"]} == {"support-policy", "register"}
    policy = next(d for d in docs["data"] if d["doc_id"] == "support-policy")
    assert policy["versions"] == 2 and policy["filename"] == "support-policy-v2.pdf"

    hits = (await client.call_tool("search", {"query": "escalation path", "k": 5})).structured_content
    assert 0 < hits["count"] <= 5 and all(h["region_id"] and h["pages"] for h in hits["data"])

    result = await client.call_tool(
        "get_context", {"query": QUESTION, "budget": 700, "doc_ids": ["support-policy"], "include_images": False}
    )
    assert not result.is_error, result.content
    ctx = result.structured_content
    assert not ctx["refused"] and 0 < ctx["budget"]["used"] <= ctx["budget"]["limit"] == 700
    text = "\n".join(c.text for c in result.content if c.type == "text")
    assert "30 minutes" in text and "Cite every factual sentence" in text  # the blocks, and the contract
    assert [b["citation_id"] for b in ctx["blocks"]] == list(ctx["citations"])
    for cid, where in ctx["citations"].items():
        assert f"[{cid}]" in text
        assert where["doc_id"] == "support-policy" and where["version_id"] and where["pages"]
        assert where["locators"] and all("bbox" in loc for loc in where["locators"])

    # Image parts of the prompt come back as MCP image content (the PNG itself, not folio's URL).
    pictured = await client.call_tool(
        "get_context",
        {"query": "escalation path diagram", "budget": 3000, "strategy": "raw", "doc_ids": ["support-policy"]},
    )
    pngs = [base64.b64decode(c.data) for c in pictured.content if c.type == "image"]
    assert pngs and all(png.startswith(PNG) for png in pngs)
    assert not any(c.type == "text" and c.text.startswith("(image:") for c in pictured.content)

    region_id = next(iter(ctx["citations"].values()))["region_id"]
    region = await client.call_tool("get_region", {"region_id": region_id})
    assert not region.is_error
    assert region.structured_content["region_id"] == region_id and region.structured_content["locators"]
    images = [c for c in region.content if c.type == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data).startswith(PNG)

    # The block's lines (what made it relevant) painted on its page: the same page, other pixels.
    first = next(iter(ctx["citations"].values()))
    assert first["lines"] and all(ln["page"] in first["pages"] for ln in first["lines"])
    boxes = ";".join(",".join(f"{ln['bbox'][k]:.2f}" for k in ("x0", "y0", "x1", "y1")) for ln in first["lines"]
                     if ln["page"] == first["pages"][0])
    lit = await client.call_tool("get_region", {"region_id": region_id, "highlight": boxes})
    lit_png = base64.b64decode(next(c for c in lit.content if c.type == "image").data)
    assert not lit.is_error and lit_png.startswith(PNG) and lit_png != base64.b64decode(images[0].data)
    bad_boxes = await client.call_tool("get_region", {"region_id": region_id, "highlight": "1,2,3"})
    assert bad_boxes.is_error and "invalid_request" in bad_boxes.content[0].text

    missing = await client.call_tool("get_region", {"region_id": "support-policy@0000:p1:nothing"})
    assert missing.is_error and "region_not_found" in missing.content[0].text
    bad = await client.call_tool("get_context", {"query": QUESTION, "budget": 0})
    assert bad.is_error and "validation_error" in bad.content[0].text


@pytest.mark.slow
def test_stdio_folio_mcp(data_copy: Path) -> None:
    """``folio mcp --data DIR`` spawned as a desktop client would, spoken to over its stdin/stdout."""
    from mcp import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "folio.api.cli", "mcp", "--data", str(data_copy)],
        env={**os.environ, "FOLIO_OCR": "0"},
        cwd=str(Path(__file__).resolve().parents[3]),
    )
    run(check_tools, params)


@pytest.mark.slow
def test_http_mount_keys_and_collections(data_copy: Path, tmp_path: Path) -> None:
    """``/mcp`` under the API: no key is a 401 in folio's error shape, and a key scoped to another
    collection sees nothing (its documents and regions are unknown ids)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    keys = tmp_path / "keys.json"
    _, full = add_key(keys, ["default"], "read")
    _, other = add_key(keys, ["elsewhere"], "read")
    with live_server(make_settings(data_copy, keys_file=str(keys))) as base:
        url = f"{base}/mcp"
        ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"Accept": "application/json, text/event-stream"}
        assert_error(httpx.post(url, json=ping, headers=headers), 401, "unauthorized")
        bad = httpx.post(url, json=ping, headers={**headers, "X-API-Key": "folio_wrong"})
        assert_error(bad, 401, "unauthorized")

        def transport(key: str) -> Any:
            return streamable_http_client(url, http_client=httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=240))

        run(check_tools, transport(full))

        async def outsider(client: Any) -> None:
            docs = (await client.call_tool("list_documents", {})).structured_content
            assert docs == {"data": [], "count": 0}
            ctx = (await client.call_tool("get_context", {"query": QUESTION, "budget": 700})).structured_content
            assert ctx["refused"] and ctx["citations"] == {}
            named = await client.call_tool("search", {"query": QUESTION, "doc_ids": ["support-policy"]})
            assert named.is_error and "document_not_found" in named.content[0].text
            regions = httpx.post(
                f"{base}/v1/search", json={"query": QUESTION, "k": 1}, headers={"X-API-Key": full}
            ).json()["data"]
            hidden = await client.call_tool("get_region", {"region_id": regions[0]["region_id"]})
            assert hidden.is_error and "region_not_found" in hidden.content[0].text

        run(outsider, transport(other))


@pytest.mark.slow
def test_answer_tool_when_an_llm_is_configured(data_copy: Path) -> None:
    """With ``FOLIO_LLM_BASE_URL`` set, ``answer`` is listed and answers through the endpoint (a
    loopback stand-in for an OpenAI-compatible server, ``tests/api/llm_standin.py``), with the
    citation check: a packed id is resolved, an invented one reported."""
    from tests.api.llm_standin import Reply, StandInLLM

    with StandInLLM() as llm:
        settings = make_settings(data_copy, llm_base_url=llm.url, llm_model="stand-in")
        with live_server(settings) as base:

            async def session(client: Any) -> None:
                tools = {t.name for t in (await client.list_tools()).tools}
                assert tools == TOOLS | {"answer"}
                ctx = (
                    await client.call_tool("get_context", {"query": QUESTION, "doc_ids": ["support-policy"]})
                ).structured_content
                cid = next(c for c, b in zip(ctx["citations"], ctx["blocks"], strict=True) if "30 minutes" in b["text"])
                llm.replies.append(Reply(f"A priority-one incident is acknowledged within 30 minutes [{cid}] [S99]."))
                result = await client.call_tool("answer", {"query": QUESTION, "doc_ids": ["support-policy"]})
                assert not result.is_error, result.content
                out = result.structured_content
                assert out["answer"].startswith("A priority-one incident") and "package" not in out
                assert [c["citation_id"] for c in out["citations"]] == [cid]
                assert out["citations"][0]["region_id"] == ctx["citations"][cid]["region_id"]
                assert out["check"]["invented_ids"] == ["S99"] and not out["faithful"]
                assert f"[{cid}] support-policy-v2.pdf p.1" in result.content[0].text
                assert "[S99]" in result.content[0].text.split("Cited but not in the evidence:")[1]
                assert llm.requests and llm.requests[-1]["body"]["model"] == "stand-in"

            from mcp.client.streamable_http import streamable_http_client

            run(session, streamable_http_client(f"{base}/mcp"))


@pytest.mark.slow
def test_http_mount_survives_a_restart_of_the_app(data_copy: Path) -> None:
    """The SDK's session manager runs once; each start of the app gets a fresh one (JSON-RPC by hand)."""
    from fastapi.testclient import TestClient

    from folio.api.http.app import create_app

    app = create_app(make_settings(data_copy))
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    for _ in range(2):
        with TestClient(app) as c:
            listed = c.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers)
            assert listed.status_code == 200, listed.text
            assert {t["name"] for t in listed.json()["result"]["tools"]} == TOOLS
