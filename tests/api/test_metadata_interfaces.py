"""Metadata and filters through every other interface a user touches (issue 48, item 2): ``folio ingest --meta``
and ``folio docs`` (subprocesses, in-process on a data dir), ``folio search/context --filter`` against a running
server, the Python clients (``upload(metadata=)``, ``search/context(filter=)``), and the MCP tools over HTTP.
REST itself: ``tests/api/http/test_metadata_filters.py``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import live_server, make_settings

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "How long is a product supported?"


def _folio(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FOLIO_OCR": "0"}
    env.pop("FOLIO_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "folio.api.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300, env=env
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    """Two documents ingested by ``folio ingest --meta`` (typed from the command line) and ``--meta-json``."""
    data = tmp_path_factory.mktemp("meta-cli") / "data"
    done = _folio("ingest", str(samples / "support-policy-v1.pdf"), "--doc-id", "acme", "--meta", "company=Acme",
                  "--meta", "year=2021", "--meta", "filed=2021-03-01", "--meta", "ratio=0.5", "--data", str(data))
    assert done.returncode == 0, done.stderr
    done = _folio("ingest", str(samples / "support-policy-v2.pdf"), "--doc-id", "globex", "--meta-json",
                  '{"company": "Globex", "year": 2023, "audited": true}', "--data", str(data))
    assert done.returncode == 0, done.stderr
    return data


@pytest.fixture(scope="module")
def server(data: Path) -> Iterator[str]:
    with live_server(make_settings(data)) as base:
        yield base


def test_cli_ingest_types_its_values_and_docs_shows_them(data: Path) -> None:
    listed = json.loads(_folio("docs", "--json", "--data", str(data)).stdout)["data"]
    meta = {v["doc_id"]: v["metadata"] for v in listed}
    assert meta["acme"] == {"company": "Acme", "year": 2021, "filed": "2021-03-01", "ratio": 0.5}
    assert meta["globex"] == {"company": "Globex", "year": 2023, "audited": True}
    table = _folio("docs", "--data", str(data)).stdout
    assert '"company": "Acme"' in table


def test_cli_bad_metadata_is_a_usage_error(data: Path, samples: Path) -> None:
    for bad in (["--meta", "no-equals-sign"], ["--meta", "bad key=1"], ["--meta-json", "[1]"]):
        done = _folio("ingest", str(samples / "support-policy-v1.pdf"), "--doc-id", "nope", *bad, "--data", str(data))
        assert done.returncode == 2, (bad, done.stderr)
        assert "Traceback" not in done.stderr and "meta" in done.stderr.lower(), done.stderr


def test_cli_filter_against_a_server_and_in_process(data: Path, server: str) -> None:
    for where in (["--server", server], ["--data", str(data), "--no-server"]):
        done = _folio("search", QUESTION, "--json", "--filter", '{"company": "Acme"}', *where)
        assert done.returncode == 0, done.stderr
        assert {h["doc_id"] for h in json.loads(done.stdout)["data"]} == {"acme"}
    done = _folio("context", QUESTION, "--json", "--filter", '{"year": {"gte": 2022}}', "--server", server)
    assert done.returncode == 0, done.stderr
    assert {i["doc_id"] for i in json.loads(done.stdout)["items"]} == {"globex"}
    done = _folio("search", QUESTION, "--filter", "{not json", "--server", server)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    done = _folio("search", QUESTION, "--filter", '{"field": "year\' OR 1=1 --", "value": 1}', "--server", server)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr


def test_client_uploads_metadata_and_filters(server: str, samples: Path) -> None:
    from folio import Client
    from folio.errors import InvalidRequest

    with Client(server) as c:
        meta = {"company": "Initech", "year": 2019}
        res = c.upload(samples / "support-policy-v1.pdf", doc_id="initech", metadata=meta)
        assert res.status == "created"
        docs = {d.doc_id: d.metadata for d in c.list_documents().data}
        assert docs["initech"] == {"company": "Initech", "year": 2019}
        hits = c.search(QUESTION, filter={"company": ["Initech", "Acme"]}, k=20)
        assert {h.doc_id for h in hits.data} == {"initech", "acme"}
        pkg = c.context(QUESTION, filter={"and": [{"field": "year", "op": "lt", "value": 2020}]}, budget=600)
        assert {i.doc_id for i in pkg.items} == {"initech"}
        assert c.search(QUESTION, filter={"company": "x' OR '1'='1"}).data == []
        with pytest.raises(InvalidRequest):
            c.search(QUESTION, filter={"year' OR 1=1 --": 1})
        with pytest.raises(InvalidRequest):
            c.upload(samples / "support-policy-v1.pdf", doc_id="bad", metadata={"n": float("nan")})


def test_async_client_filters(server: str) -> None:
    from folio import AsyncClient

    async def main() -> set[str]:
        async with AsyncClient(server) as c:
            hits = await c.search(QUESTION, filter={"field": "audited", "op": "eq", "value": True})
            return {h.doc_id for h in hits.data}

    assert asyncio.run(main()) == {"globex"}


def test_mcp_tools_show_metadata_and_filter(server: str) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def session(client: Any) -> None:
        docs = (await client.call_tool("list_documents", {})).structured_content
        assert {d["doc_id"]: d["metadata"].get("company") for d in docs["data"]}["globex"] == "Globex"
        hits = (await client.call_tool("search", {"query": QUESTION, "filter": {"company": "Globex"}}))
        assert not hits.is_error, hits.content
        assert {h["doc_id"] for h in hits.structured_content["data"]} == {"globex"}
        ctx = await client.call_tool(
            "get_context", {"query": QUESTION, "filter": {"year": {"lte": 2021}}, "include_images": False}
        )
        assert {c["doc_id"] for c in ctx.structured_content["citations"].values()} <= {"acme", "initech"}
        injected = await client.call_tool("search", {"query": QUESTION, "filter": {"company": "x' OR '1'='1"}})
        assert injected.structured_content["data"] == []
        bad = await client.call_tool("search", {"query": QUESTION, "filter": {"field": "year' OR 1=1 --", "value": 1}})
        assert bad.is_error and "validation_error" in bad.content[0].text
        other = await client.call_tool("search", {"query": QUESTION, "collection": "nowhere-else"})
        assert not other.is_error and other.structured_content["data"] == []

    async def main() -> None:
        transport = streamable_http_client(f"{server}/mcp", http_client=httpx2.AsyncClient(timeout=240))
        async with Client(transport, read_timeout_seconds=240) as client:
            await session(client)

    asyncio.run(main())


def test_the_docs_examples_run_and_print_what_they_say(tmp_path: Path, samples: Path) -> None:
    """The Python examples of docs/api.md's "Metadata" and "Filters" sections, run in that order against a server
    over an empty store (the PDF named as in the example), print what their ``# shown`` comments say."""
    import contextlib
    import io
    import re

    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = []
    for section in ("## Metadata", "## Filters"):
        body = text.split(f"\n{section}\n", 1)[1].split("\n## ", 1)[0]
        blocks += re.findall(r"^```python\n(.*?)^```", body, re.M | re.S)
    assert len(blocks) == 2
    with live_server(make_settings(tmp_path / "data")) as url:
        for code in blocks:
            runnable = code.replace("http://127.0.0.1:8000", url).replace(
                '"support-policy-v1.pdf"', repr(str(samples / "support-policy-v1.pdf"))
            )
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(runnable, "<docs example>", "exec"), {"__name__": "docs_example"})
            shown = re.findall(r"^\s*print\(.*\)  # (.+)$", code, re.M)
            assert shown and [line.strip() for line in out.getvalue().splitlines()] == shown, out.getvalue()
