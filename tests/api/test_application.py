"""The application layer (issue 21): one ``Folio`` object, opened once from the settings, that every
interface calls (REST, CLI, MCP, the local client, the query workers), with the same response models;
one LLM client; ingest job runners behind one protocol."""

from __future__ import annotations

import asyncio
import inspect
import io
import re
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from folio.api.application import Folio
from folio.api.cluster.jobs import ClusterJobRunner
from folio.api.http.app import create_app
from folio.api.schemas import SearchRequest
from folio.api.service.jobs import Ingester, JobRunner, LocalJobRunner
from folio.kernel.errors import InvalidRequest
from folio.retrieval.routing.summary import SummaryIndexer
from tests.api.conftest import make_settings

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "escalation path"


def _mcp(folio: Folio, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The structured content of each MCP tool call, in-process, over ``folio``."""
    import anyio.to_thread
    from mcp import Client

    from folio.api.mcp.server import build_server

    async def run(fn: Any) -> Any:
        return await anyio.to_thread.run_sync(fn)

    async def main() -> list[dict[str, Any]]:
        async with Client(build_server(lambda: folio, run), read_timeout_seconds=240) as client:
            out = []
            for name, args in calls:
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content
                out.append(result.structured_content)
            return out

    return asyncio.run(main())


def test_rest_mcp_and_the_service_give_the_same_responses(client: TestClient) -> None:
    """MCP's search, listing and region are the REST responses (they used other shapes and cut a
    hit's text at 300 characters where REST cuts at 500)."""
    folio: Folio = client.app.state.folio  # type: ignore[attr-defined]
    rest_hits = client.post("/v1/search", json={"query": QUESTION, "k": 5}).json()
    assert rest_hits == folio.search(SearchRequest(query=QUESTION, k=5)).model_dump(mode="json")
    long_hit = next(h for h in rest_hits["data"] if h["text"] and len(h["text"]) > 300)
    region_id = long_hit["region_id"]
    hits, docs, region = _mcp(
        folio,
        [("search", {"query": QUESTION, "k": 5}), ("list_documents", {}), ("get_region", {"region_id": region_id})],
    )
    assert hits == rest_hits
    assert docs == client.get("/v1/documents").json()
    assert region == client.get(f"/v1/regions/{region_id}").json()


def test_the_cli_search_is_the_service_search(client: TestClient, api_master: Path) -> None:
    from folio.api.cli import main

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["search", QUESTION, "-k", "5", "--json", "--data", str(api_master)]) == 0
    import json

    assert json.loads(out.getvalue()) == client.post("/v1/search", json={"query": QUESTION, "k": 5}).json()


def test_every_front_end_registers_the_configured_tokenizers(data_copy: Path) -> None:
    """Only the server's startup registered ``FOLIO_TOKENIZERS``; ``LocalFolio`` (and the CLI and MCP)
    could not use a configured tokenizer by name."""
    from folio.ingest.embed import minilm_path
    from folio.local import LocalFolio

    name = "service-test-minilm"  # a name no other test registers in this process
    settings = make_settings(data_copy, tokenizers={name: str(minilm_path())})
    package = LocalFolio(settings=settings).context("incident acknowledged", tokenizer=name, budget=400)
    assert package.budget.tokenizer == name and package.budget.used <= 400


def test_the_store_and_retriever_are_opened_in_one_place() -> None:
    """``Folio.open`` is the one place that opens them (there were five, each different)."""
    opened = []
    for pkg in ("api", "folio"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if "Retriever.from_settings(" in path.read_text(encoding="utf-8"):
                opened.append(path.relative_to(ROOT).as_posix())
    assert opened == ["api/application.py"]


def test_one_llm_client_serves_answers_compression_rerank_and_summaries(data_copy: Path) -> None:
    from folio.api.service.chat import AnswerClient
    from folio.api.service.llm import ChatClient

    assert AnswerClient is ChatClient
    posting = sorted(
        p.relative_to(ROOT).as_posix()
        for pkg in ("api", "retrieval", "ingest", "assembly", "folio")
        for p in (ROOT / pkg).rglob("*.py")
        if "/chat/completions" in p.read_text(encoding="utf-8") and "class " in p.read_text(encoding="utf-8")
    )
    assert posting == ["api/service/llm.py"]
    settings = make_settings(data_copy, llm_base_url="http://127.0.0.1:9/v1", llm_model="stand-in")
    folio = Folio.open(settings.model_copy(update={"llm_summaries": True}))
    assert folio.llm is folio.retriever.llm is folio.retriever.reranker.client  # type: ignore[union-attr]
    summaries = [i for i in folio.indexers if isinstance(i, SummaryIndexer)]
    assert [s.llm for s in summaries] == [folio.llm]  # the door hands its client to retrieval's summaries too
    assert folio.llm.timeout == 30.0  # rerank and summaries; answers and compress='llm' pass their own


def test_job_runners_implement_one_protocol() -> None:
    wanted = {
        n: inspect.signature(getattr(JobRunner, n)) for n in ("start", "stop", "submit_ingest", "get", "list", "counts")
    }
    for runner in (LocalJobRunner, ClusterJobRunner):
        for name, sig in wanted.items():
            assert list(inspect.signature(getattr(runner, name)).parameters) == list(sig.parameters), (runner, name)
    routes = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "api").rglob("*.py"))
    assert not re.search(r"getattr\(\w+, \"remote\"", routes)  # no runner is told apart by an attribute


def test_the_ray_runner_refuses_what_it_cannot_do_before_reaching_the_cluster(tmp_path: Path) -> None:
    from folio.ingest.options import IngestOptions
    from folio.ingest.pipeline import IngestJob

    job = IngestJob(source=None, options=IngestOptions(redo_degraded=True))  # type: ignore[arg-type]
    ingester = Ingester(store=None, settings=make_settings(tmp_path))  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest, match="redo_degraded"):
        ClusterJobRunner("ray://127.0.0.1:9").submit_ingest(job, ingester)


def test_the_local_runner_ingests_through_the_protocol(data_copy: Path, samples: Path) -> None:
    with TestClient(create_app(make_settings(data_copy))) as c:
        folio: Folio = c.app.state.folio  # type: ignore[attr-defined]
        checked = folio.check_upload(
            (samples / "support-policy-v1.pdf").read_bytes(), filename="p.pdf", doc_id="again", collection="default"
        )
        job = folio.submit_ingest(checked)
        asyncio.run(asyncio.wait_for(job.wait_async(), 120))
        assert job.status == "done" and job.result and job.result["doc_id"] == "again"
        assert c.get(f"/v1/jobs/{job.job_id}").json()["status"] == "done"


def test_the_door_hands_its_settings_to_every_ingest(
    data_copy: Path, samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32: the pipeline reads no setting where the door calls it; ``folio ingest``, ``folio demo`` and an
    upload's job ingest with the door's ``IngestOptions.from_settings`` and embedder settings. After the merge of
    the store's half, ``ingest_path`` handed the pipeline ``limits=None`` and an upload's job let
    ``ingest_bytes`` read the process environment: here a parse timeout no PDF meets, which the door's settings
    (made before it was set) do not hold."""
    settings = make_settings(data_copy)
    monkeypatch.setenv("FOLIO_INGEST_TIMEOUT_S", "0.001")
    folio = Folio.open(settings)
    pdf = samples / "support-policy-v1.pdf"
    assert folio.ingest_path(pdf, doc_id="by-path").status == "created"
    folio.start()
    try:
        job = folio.submit_ingest(
            folio.check_upload(pdf.read_bytes(), filename="p.pdf", doc_id="by-job", collection="default")
        )
        asyncio.run(asyncio.wait_for(job.wait_async(), 120))
    finally:
        folio.close()
    assert job.status == "done" and job.result and job.result["status"] == "created", job.error


def test_the_door_opens_the_retriever_only_for_what_needs_it(data_copy: Path) -> None:
    """Issue 32: ``Folio.open`` loaded the retriever and the query encoder at once, so a command that only lists
    documents could not go through the door without paying for them. ``folio docs`` now calls the door, and
    neither it nor opening a ``Folio`` loads the retriever, the embedder, ONNX Runtime or torch."""
    import json
    import subprocess
    import sys

    heavy = ("torch", "onnxruntime", "folio.ingest.embed", "folio.retrieval.search")
    code = (
        "import json, sys\nfrom folio.api.cli import main\nfrom folio.api.application import Folio\n"
        "from folio.settings import Settings\n"
        f"code = main(['docs', '--data', {str(data_copy)!r}, '--json'])\n"
        f"folio = Folio.open(Settings(data={str(data_copy)!r}), must_exist=True)\n"
        "listed = len(folio.documents().data)\n"
        f"print(json.dumps([code, listed, [m for m in {heavy!r} if m in sys.modules]]), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    code_, listed, loaded = json.loads(out.stderr.strip().splitlines()[-1])
    assert code_ == 0 and listed > 0 and json.loads(out.stdout)["count"] > 0, out.stderr
    assert loaded == [], loaded


def test_local_verify_goes_through_the_door(data_copy: Path) -> None:
    """``LocalFolio.verify`` called ``assembly.verify_answer`` itself, past ``Folio.verify`` and the request's
    bounds that REST applies (an answer of at most 200,000 characters)."""
    from pydantic import ValidationError

    from folio.local import LocalFolio

    local = LocalFolio(settings=make_settings(data_copy))
    package = local.context(QUESTION, budget=400)
    cited = package.items[0].citation_id
    assert local.verify(f"The escalation path is documented [{cited}].", package=package).kept_ids == [cited]
    with pytest.raises(ValidationError, match="answer"):
        local.verify("x" * 200_001, package=package)


def test_an_upload_is_checked_once_by_the_door(
    tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 46: the door checked an upload, the job checked it again and so did the parse child; now the door
    builds the one typed job (its facts carried), the runner runs it, and the PDF is validated once."""
    import folio.ingest.pdf.parse as parse_mod
    import folio.ingest.pdf.validate as validate_mod

    checks: list[int] = []
    real = validate_mod.open_pdf

    def counted(data: bytes, **kwargs: Any) -> Any:
        checks.append(len(data))
        return real(data, **kwargs)

    monkeypatch.setattr(validate_mod, "open_pdf", counted)
    monkeypatch.setattr(parse_mod, "open_pdf", counted)
    from folio.kernel.model import version_id_for

    settings = make_settings(tmp_path / "data")
    folio = Folio.open(settings.model_copy(update={"ingest": settings.ingest.model_copy(update={"isolate": False})}))
    data = (samples / "support-policy-v1.pdf").read_bytes()
    job = folio.check_upload(data, filename="p.pdf", doc_id=None, collection="default")
    assert (job.doc_id, job.source.pdf.pages, job.source.version_id) == ("p", 1, version_id_for(data))
    assert folio.ingester.run(job).status == "created"
    assert checks == [len(data)]


def test_a_file_the_door_refuses_is_a_failed_ray_job_report(tmp_path: Path) -> None:
    """``folio ingest --ray`` checks each file on the driver (the typed job the task runs): a bad one is reported
    as a failed task was before (its file name, the error, one attempt), without reaching the cluster."""
    import argparse

    from folio.api.cli.ray_ingest import _report, _submit

    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"hello")
    settings = make_settings(tmp_path / "data")
    args = argparse.Namespace(doc_id=None, collection="default", password=None, no_ocr=True, metadata=None)
    snap = _submit(None, bad, args, settings, Folio.open(settings))
    assert snap["status"] == "failed" and snap["doc_id"] is None
    assert _report(snap) == {
        "filename": "bad.pdf",
        "status": "failed",
        "error": {"code": "not_a_pdf", "message": "not a PDF: the file does not start with a %PDF header"},
        "attempts": 1,
        "embed_device": None,  # it never reached a worker
    }
