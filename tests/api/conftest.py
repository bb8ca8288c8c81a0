"""API fixtures: one small ingested data dir per session (the support policy in two versions and
a three-page excerpt of a real Federal Register PDF), copied for tests that write."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import HTTP_IMPL, create_app
from folio.settings import Settings
from tests.api.llm_standin import StandInLLM

EXCERPT_PAGES = 3


def excerpt(path: Path, pages: int) -> bytes:
    """The first ``pages`` pages of a real PDF, as new PDF bytes (same content, smaller ingest)."""
    import pymupdf

    src = pymupdf.open(path)
    out = pymupdf.open()
    out.insert_pdf(src, from_page=0, to_page=pages - 1)
    data: bytes = out.tobytes(garbage=3, deflate=True)
    return data


@pytest.fixture(scope="session")
def register_excerpt(samples: Path) -> bytes:
    return excerpt(samples / "federal-register-2020-17221.pdf", EXCERPT_PAGES)


@pytest.fixture(scope="session")
def api_master(tmp_path_factory: pytest.TempPathFactory, samples: Path, register_excerpt: bytes) -> Path:
    from folio.ingest.pipeline import ingest_bytes, ingest_path
    from folio.ingest.storage.store import Store

    data = tmp_path_factory.mktemp("folio-api-data")
    store = Store(data)
    ingest_path(store, samples / "support-policy-v1.pdf", doc_id="support-policy")
    ingest_path(store, samples / "support-policy-v2.pdf", doc_id="support-policy")
    ingest_bytes(
        store, register_excerpt, filename="federal-register-excerpt.pdf", doc_id="register", ocr=False
    )
    return data


def make_settings(data: Path, **overrides: object) -> Settings:
    """Test settings: TestClient sends ``Host: testserver``, which only tests allow."""
    overrides.setdefault("allowed_hosts", ["testserver"])
    return Settings(data=str(data), ocr=False, **overrides)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def client(api_master: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """A read-mostly client over a copy of the session data (tests must not write through it)."""
    data = tmp_path_factory.mktemp("api-ro") / "data"
    shutil.copytree(api_master, data)
    with TestClient(create_app(make_settings(data))) as c:
        yield c


@pytest.fixture()
def data_copy(api_master: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "data"
    shutil.copytree(api_master, dst)
    return dst


def assert_error(resp: object, status: int, code: str | None = None) -> dict[str, object]:
    """Every error has the one shape ``{"error": {"code", "message", "detail"?, "request_id"}}``, and
    the request id is the one in the ``X-Request-ID`` header."""
    assert resp.status_code == status, resp.text  # type: ignore[attr-defined]
    body = resp.json()  # type: ignore[attr-defined]
    assert set(body) == {"error"}, body
    err = body["error"]
    assert isinstance(err["code"], str) and err["code"]
    assert isinstance(err["message"], str) and err["message"]
    assert set(err) <= {"code", "message", "detail", "request_id"}
    assert err["request_id"] and err["request_id"] == resp.headers["x-request-id"]  # type: ignore[attr-defined]
    if code is not None:
        assert err["code"] == code, err
    return err  # type: ignore[no-any-return]


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def folio_serve(env: dict[str, str], log: Any, *args: str) -> tuple[Any, str]:
    """``folio serve`` as its own process on a free loopback port (``args`` added to its command line),
    once it is ready (``/v1/ready``; ``/v1/health`` answers earlier, while it loads): the process and its base
    URL. Killed if it does not start."""
    import subprocess
    import sys
    import time

    import httpx

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "folio.api.cli", "serve", "--host", "127.0.0.1", "--port", str(port), *args],
        env=env, cwd=Path(__file__).resolve().parents[2], stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            if httpx.get(f"{url}/v1/ready", timeout=2).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("folio serve did not start")
        time.sleep(0.2)


@contextlib.contextmanager
def live_server(settings: Settings) -> Iterator[str]:
    """uvicorn on loopback in a thread (real sockets, real HTTP); yields the base URL."""
    import threading
    import time

    import uvicorn

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning", http=HTTP_IMPL)
    )
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture(scope="module")
def llm() -> Iterator[StandInLLM]:
    """A loopback stand-in for an OpenAI-compatible server (``tests/api/llm_standin.py``), one per test module."""
    with StandInLLM() as server:
        yield server


@pytest.fixture(scope="module")
def answer_data(api_master: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the session data for one module that answers through ``llm``."""
    dst = tmp_path_factory.mktemp("answer") / "data"
    shutil.copytree(api_master, dst)
    return dst


@pytest.fixture(scope="module")
def ac(answer_data: Path, llm: StandInLLM) -> Iterator[TestClient]:
    """A client over ``answer_data`` whose configured LLM is the stand-in ``llm``."""
    settings = make_settings(answer_data, llm_base_url=llm.url, llm_model="stand-in", llm_api_key="sk-test")
    with TestClient(create_app(settings)) as c:
        yield c

