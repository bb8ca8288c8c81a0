"""``folio.Client`` / ``AsyncClient``: its models are the server's OpenAPI schema (regenerated and
compared), its calls work against a live server on loopback, and errors are typed exceptions
carrying the server's error code. Also the LlamaIndex and LangChain retrievers (``folio.adapters``),
against the real frameworks, through the client and in-process."""

from __future__ import annotations

import asyncio
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

import folio
from folio import errors, models
from folio._codegen import generate
from tests.api.conftest import live_server, make_settings

QUESTION = "How fast must a priority-one incident be acknowledged?"
MODELS = Path(folio.__file__).with_name("models")


def test_client_models_are_the_openapi_schema(tmp_path: Path) -> None:
    """``folio/models/`` is exactly what the generator makes of the live app's schema, file for file: a change
    to the REST schemas fails here until ``python -m folio._codegen`` is run."""
    from folio.api.http.app import create_app

    schema = create_app(make_settings(tmp_path)).openapi()
    committed = {p.name: p.read_text(encoding="utf-8") for p in MODELS.glob("*.py")}
    assert generate(schema) == committed, (
        "folio/models/ is out of date with the API's OpenAPI schema: run .venv/bin/python -m folio._codegen"
    )
    components = schema["components"]["schemas"]
    for name in ("ContextPackage", "ContextItem", "RegionOut", "HitOut", "ContextRequest"):
        model = getattr(models, name)
        assert set(model.model_fields) == set(components[name]["properties"]), name


def test_error_shape_becomes_typed_exceptions() -> None:
    body = {"error": {"code": "region_not_found", "message": "no such region: x", "request_id": "r1"}}
    e = errors.error_for(404, body)
    assert isinstance(e, errors.NotFound) and isinstance(e, LookupError)
    assert (e.status, e.code, e.message, e.request_id) == (404, "region_not_found", "no such region: x", "r1")
    busy = errors.error_for(503, {"error": {"code": "overloaded", "message": "busy"}}, {"retry-after": "2"})
    assert isinstance(busy, errors.Overloaded) and busy.retry_after == 2.0
    proxy = errors.error_for(500, "<html>Internal Server Error</html>", {"x-request-id": "r2"})
    assert isinstance(proxy, errors.ServerError) and proxy.code == "http_500" and proxy.request_id == "r2"
    late = errors.error_for(504, {"error": {"code": "llm_timeout", "message": "the model did not answer"}})
    assert isinstance(late, errors.UpstreamTimeout) and isinstance(late, TimeoutError)


def test_connection_errors() -> None:
    with socket.socket() as s:  # a port that answers nothing: accepted by the kernel, never read
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        silent = f"http://127.0.0.1:{s.getsockname()[1]}"
        with pytest.raises(errors.APITimeoutError), folio.Client(silent, timeout=0.3) as c:
            c.health()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"  # bound, not listening: refused
    with pytest.raises(errors.APIConnectionError), folio.Client(closed) as c:
        c.health()


@pytest.fixture(scope="module")
def server(api_master: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str, Path]]:
    """A live server on a copy of the session data, with a key for the default collection and one
    for a collection that holds nothing: (base URL, key, other key, data dir)."""
    from folio.api.keys import add_key

    root = tmp_path_factory.mktemp("client")
    data = root / "data"
    shutil.copytree(api_master, data)
    _, key = add_key(root / "keys.json", ["default"], "write")
    _, other = add_key(root / "keys.json", ["elsewhere"], "read")
    with live_server(make_settings(data, keys_file=str(root / "keys.json"))) as base:
        yield base, key, other, data


@pytest.mark.slow
def test_client_calls(server: tuple[str, str, str, Path]) -> None:
    base, key, other, _ = server
    with folio.Client(base, api_key=key) as c:
        assert c.health().status == "ok"
        docs = c.list_documents()
        assert isinstance(docs, models.DocumentList) and {d.doc_id for d in docs.data} == {"support-policy", "register"}
        detail = c.get_document("support-policy")
        assert len(detail.versions) == 2 and detail.filename == "support-policy-v2.pdf"
        pages = c.list_pages("support-policy", detail.version_id)
        assert pages.count == 1 and pages.data[0].width > 0

        pkg = c.context(QUESTION, budget=700, doc_ids=["support-policy"])
        assert isinstance(pkg, models.ContextPackage) and not pkg.refused
        assert 0 < pkg.budget.used <= pkg.budget.limit == 700
        assert any("30 minutes" in item.text for item in pkg.items)
        hits = c.search(QUESTION, k=5)
        assert 0 < hits.count <= 5 and isinstance(hits.data[0], models.HitOut)

        item = pkg.items[0]
        region = c.region(item.region_id)
        assert region.doc_id == "support-policy" and region.version_id == item.version_id and region.locators
        assert c.region_image(item.region_id).startswith(b"\x89PNG")
        assert c.page_image("support-policy", detail.version_id, 1).startswith(b"\x89PNG")

        cid = item.citation_id
        report = c.verify(f"An incident is acknowledged within 30 minutes [{cid}]. See [Z9].", package=pkg)
        assert cid in report.kept_ids and "Z9" in report.invented_ids

        with pytest.raises(errors.NotFound) as nf:
            c.region("support-policy@0000:p1:nothing")
        assert nf.value.code == "region_not_found" and nf.value.request_id
        with pytest.raises(errors.NotFound) as nf:
            c.context(QUESTION, doc_ids=["no-such-doc"])
        assert nf.value.code == "document_not_found"
        with pytest.raises(errors.InvalidRequest) as bad:
            c.context(QUESTION, budget=0)
        assert bad.value.code == "validation_error" and bad.value.detail
        with pytest.raises(errors.InvalidRequest) as bad:
            c.upload(b"this is not a PDF", filename="notes.pdf")
        assert bad.value.code == "not_a_pdf"
        with pytest.raises(ValueError):  # an unknown option fails before anything is sent
            c.context(QUESTION, budgte=700)

    with pytest.raises(errors.Unauthorized) as unauth, folio.Client(base, api_key="") as c:
        c.list_documents()
    assert unauth.value.code == "unauthorized"
    with folio.Client(base, api_key=other) as c:  # another collection's regions are unknown ids
        assert c.list_documents().count == 0
        with pytest.raises(errors.NotFound):
            c.region(item.region_id)
        with pytest.raises(errors.Forbidden):
            c.delete("support-policy")


@pytest.mark.slow
def test_async_client(server: tuple[str, str, str, Path]) -> None:
    base, key, _, _ = server

    async def main() -> None:
        async with folio.AsyncClient(base, api_key=key) as c:
            docs, pkg = await asyncio.gather(c.list_documents(), c.context(QUESTION, budget=700))
            assert docs.count == 2 and pkg.items and pkg.budget.used <= 700
            with pytest.raises(errors.NotFound) as nf:
                await c.get_document("no-such-doc")
            assert nf.value.code == "document_not_found"

    asyncio.run(main())


def _check_metadata(meta: dict[str, object], item: models.ContextItem) -> None:
    assert meta["citation_id"] == item.citation_id and meta["region_id"] == item.region_id
    assert meta["version_id"] == item.version_id and meta["doc_id"] == item.doc_id
    assert meta["pages"] == item.pages and meta["bbox"] == item.locators[0].model_dump(mode="json")["bbox"]


@pytest.mark.slow
def test_llamaindex_retriever(server: tuple[str, str, str, Path]) -> None:
    from llama_index.core.schema import MetadataMode, NodeWithScore

    from folio.adapters.llamaindex import FolioRetriever
    from folio.local import LocalFolio

    base, key, _, data = server
    with folio.Client(base, api_key=key) as c:
        pkg = c.context(QUESTION, budget=700, doc_ids=["support-policy"])
        nodes = FolioRetriever(c, budget=700, doc_ids=["support-policy"]).retrieve(QUESTION)
    assert [n.node.metadata["citation_id"] for n in nodes] == [i.citation_id for i in pkg.items]
    for node, item in zip(nodes, pkg.items, strict=True):
        assert isinstance(node, NodeWithScore) and node.score == item.score and node.node.get_content() == item.text
        _check_metadata(node.node.metadata, item)
        assert node.node.metadata["image_url"] is None or node.node.metadata["image_url"].startswith(base)
    shown = nodes[0].node.get_content(metadata_mode=MetadataMode.LLM)
    assert f"citation_id: {pkg.items[0].citation_id}" in shown and "locators" not in shown

    local = FolioRetriever(LocalFolio(data), budget=700, doc_ids=["support-policy"])
    in_process = asyncio.run(local.aretrieve(QUESTION))
    assert [n.node.metadata["region_id"] for n in in_process] == [i.region_id for i in pkg.items]


@pytest.mark.slow
def test_langchain_retriever(server: tuple[str, str, str, Path]) -> None:
    from langchain_core.documents import Document

    from folio.adapters.langchain import FolioRetriever

    base, key, _, data = server
    with folio.Client(base, api_key=key) as c:
        pkg = c.context(QUESTION, budget=700, doc_ids=["support-policy"])
        docs = FolioRetriever(source=c, options={"budget": 700, "doc_ids": ["support-policy"]}).invoke(QUESTION)
    assert [d.metadata["citation_id"] for d in docs] == [i.citation_id for i in pkg.items]
    for doc, item in zip(docs, pkg.items, strict=True):
        assert isinstance(doc, Document) and doc.page_content == item.text and doc.id == item.region_id
        assert doc.metadata["score"] == item.score
        _check_metadata(doc.metadata, item)

    async def via_async_client() -> list[Document]:
        async with folio.AsyncClient(base, api_key=key) as ac:
            retriever = FolioRetriever.from_source(ac, budget=700, doc_ids=["support-policy"])
            return await retriever.ainvoke(QUESTION)

    assert [d.metadata["region_id"] for d in asyncio.run(via_async_client())] == [i.region_id for i in pkg.items]
    in_process = FolioRetriever.from_source(str(data), budget=700, doc_ids=["support-policy"]).invoke(QUESTION)
    assert [d.metadata["region_id"] for d in in_process] == [i.region_id for i in pkg.items]


@pytest.mark.slow
def test_answer_and_its_stream(server: tuple[str, str, str, Path], api_master: Path, tmp_path: Path) -> None:
    """``answer`` / ``answer_stream`` against a server whose LLM is the loopback stand-in
    (``tests/api/llm_standin.py``); without an LLM, the typed 503; a stalled endpoint, the typed 504
    from the stream's error event."""
    from tests.api.llm_standin import Reply, StandInLLM

    base, key, _, _ = server
    with pytest.raises(errors.ServiceUnavailable) as off, folio.Client(base, api_key=key) as c:
        c.answer(QUESTION)
    assert off.value.code == "llm_not_configured"

    data = tmp_path / "data"
    shutil.copytree(api_master, data)
    with StandInLLM() as llm, live_server(make_settings(data, llm_base_url=llm.url, llm_model="stand-in")) as url:
        with folio.Client(url) as c:
            pkg = c.context(QUESTION, doc_ids=["support-policy"])
            cid = next(i.citation_id for i in pkg.items if "30 minutes" in i.text)
            llm.replies.append(Reply(f"Within 30 minutes [{cid}]."))
            done = c.answer(QUESTION, doc_ids=["support-policy"], include_package=False)
            assert isinstance(done, models.AnswerResponse) and done.faithful
            assert [x.citation_id for x in done.citations] == [cid] and done.package is None

            llm.replies.append(Reply(f"Within 30 minutes [{cid}] [S99]."))
            events = list(c.answer_stream(QUESTION, doc_ids=["support-policy"]))
            assert [e.event for e in events][0] == "package" and events[-1].event == "done"
            assert "".join(e.data["text"] for e in events if e.event == "delta") == f"Within 30 minutes [{cid}] [S99]."
            final = events[-1].answer
            assert final is not None and final.check.invented_ids == ["S99"] and not final.faithful

            llm.replies.append(Reply("late", delay=2.5))
            with pytest.raises(errors.UpstreamTimeout) as late:
                list(c.answer_stream(QUESTION, doc_ids=["support-policy"], timeout_s=1))
            assert late.value.code == "llm_timeout"

        async def streamed() -> list[folio.AnswerEvent]:
            llm.replies.append(Reply(f"Within 30 minutes [{cid}]."))
            async with folio.AsyncClient(url) as ac:
                return [e async for e in ac.answer_stream(QUESTION, doc_ids=["support-policy"])]

        got = asyncio.run(streamed())
        assert got[-1].answer is not None and got[-1].answer.faithful


@pytest.mark.parametrize("bad", ["..", ".", ""])
def test_dot_ids_are_refused_before_anything_is_sent(bad: str) -> None:
    """``delete("victim", "..")`` once became ``DELETE /v1/documents/victim`` (httpx removes the dot
    segment, issue 31): an id that is ``.``, ``..`` or empty is refused by the client itself."""
    with socket.socket() as s:  # nothing answers here: the call must fail before connecting
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
        with folio.Client(closed) as c:
            for call in (
                lambda: c.delete("victim", bad),
                lambda: c.delete(bad),
                lambda: c.region(bad),
                lambda: c.page_image("victim", bad, 1),
                lambda: c.job(bad),
            ):
                with pytest.raises(errors.InvalidRequest) as refused:
                    call()
                assert refused.value.code == "invalid_id" and "path segment" in refused.value.message


def test_dot_ids_are_422_on_the_server_and_delete_nothing(server: tuple[str, str, str, Path]) -> None:
    """A client that sends the dot segment percent-encoded (so no URL normaliser drops it) reaches
    the server with ``..`` as the id: refused with 422, and the document is still there."""
    import httpx

    base, key, _, _ = server
    headers = {"X-API-Key": key}
    for path in (
        "/v1/documents/support-policy/versions/%2E%2E",
        "/v1/documents/support-policy/versions/%2e",
        "/v1/documents/%2E%2E",
        "/v1/regions/%2E%2E",
        "/v1/jobs/%2e%2E",
    ):
        for method in ("GET", "DELETE") if "documents" in path else ("GET",):
            r = httpx.request(method, base + path, headers=headers)
            assert r.status_code == 422, (method, path, r.text)
            assert r.json()["error"]["code"] == "invalid_id", r.text
    with folio.Client(base, api_key=key) as c:
        assert len(c.get_document("support-policy").versions) == 2
