"""A ``folio`` command that asks a server costs what asking costs (issue 34, item 2: at most 0.3 s with a server).

The command reads the server file and its few variables (``folio.settings_light``), sends the request with the
standard library and prints the answer: it imports no settings tree (pydantic, pydantic-settings), no request
models, no HTTP client library, no store and no model. Each test runs the command as its own process against a
stand-in server on loopback (``StandInServer``: it answers ``/v1/health`` as a ready ``folio serve`` does and
returns a fixed package; what the command prints of a real server's answer is tests/api/test_serving.py's) and
reads ``sys.modules`` after the command ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from folio.kernel.handshake import instance_proof
from tests.api.cli.standin import JsonHandler, LoopbackServer

ROOT = Path(__file__).resolve().parents[3]
Q = "How fast must a priority-one incident be acknowledged?"
INSTANCE = "stand-in-1"
SECRET = "stand-in-secret"
# What a command that asks a server must not import (each was once on that path, or is a server's part).
HEAVY = (
    "pydantic", "pydantic_settings", "httpx", "numpy", "pyarrow", "lancedb", "onnxruntime", "tiktoken",
    "torch", "transformers", "fastapi", "uvicorn",
    "folio.settings", "folio.client", "folio.models", "folio.api.schemas", "folio.api.application",
    "folio.assembly", "folio.retrieval", "folio.ingest",
)  # fmt: skip
PACKAGE = {
    "query": Q,
    "budget": {"used": 120, "limit": 2000, "tokenizer": "cl100k_base"},
    "retrieval": {"notes": []},
    "items": [
        {"citation_id": "P1", "filename": "support-policy.pdf", "pages": [1], "modality": "text",
         "expansion": "window", "tokens": 40, "region_id": "r1",
         "text": "P1 incidents: acknowledged within 30 minutes."},
    ],
    "excluded": [{"reason": "weak_document"}],
    "prompt": {"messages": [{"role": "user", "content": "the question"}]},
}  # fmt: skip
SEARCH = {"data": [], "count": 0, "notes": []}


class StandInServer(LoopbackServer):
    """A stand-in for ``folio serve`` on loopback: ``/v1/health`` says ready (with ``INSTANCE``), ``POST
    /v1/context`` and ``/v1/search`` answer ``PACKAGE`` and ``SEARCH``; the request bodies are kept."""

    def __init__(self) -> None:
        self.bodies: list[tuple[str, dict[str, Any]]] = []
        stand_in = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                nonce = parse_qs(urlsplit(self.path).query).get("nonce", [""])[0]
                proof = instance_proof(SECRET, nonce)  # as /v1/health/proof: it holds the server file's secret
                self.answer({"status": "ok", "state": "ready", "instance": INSTANCE, "auth": False,
                              "instance_proof": proof, "key_proof": None})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stand_in.bodies.append((self.path, body))
                self.answer(PACKAGE if self.path == "/v1/context" else SEARCH)

        super().__init__(Handler)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[StandInServer, Path]]:
    """A stand-in server, announced in a data directory (``server.json``, as ``folio serve`` writes it: readable by
    its user only; this process's id, which holds the stand-in's listening socket)."""
    data = tmp_path / "data"
    data.mkdir()
    with StandInServer() as server:
        announced = {"url": server.url, "pid": os.getpid(), "instance": INSTANCE, "secret": SECRET}
        (data / "server.json").write_text(json.dumps(announced))
        (data / "server.json").chmod(0o600)
        yield server, data


def run_folio(argv: list[str], **variables: str) -> tuple[subprocess.CompletedProcess[str], int, list[str]]:
    """``folio argv`` in a fresh process with none of the developer's ``FOLIO_`` variables but ``variables``:
    the process, the command's exit code and which of ``HEAVY`` it imported."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLIO_")} | variables
    code = (
        "import json, sys\nfrom folio.api.cli import main\n"
        f"code = main({argv!r})\n"
        "sys.stdout.flush()\n"
        f"print(json.dumps([code, [m for m in {HEAVY!r} if m in sys.modules]]), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
    *_, last = out.stderr.strip().splitlines()
    status, loaded = json.loads(last)
    return out, status, loaded


def test_context_through_a_found_server_imports_nothing_heavy(served: tuple[StandInServer, Path]) -> None:
    server, data = served
    out, status, loaded = run_folio(["context", Q, "--data", str(data), "--budget", "700", "--json"])
    assert status == 0 and loaded == [], out.stderr
    assert out.stderr.startswith(f"folio: asking the server at {server.url} (it serves {data}; --no-server runs")
    assert json.loads(out.stdout) == PACKAGE
    assert server.bodies == [("/v1/context", {"query": Q, "k": 50, "budget": 700})]


def test_context_and_search_through_a_named_server_import_nothing_heavy(served: tuple[StandInServer, Path]) -> None:
    server, _ = served
    out, status, loaded = run_folio(["context", Q, "--no-prompt"], FOLIO_URL=server.url, FOLIO_OCR="false")
    assert status == 0 and loaded == [], out.stderr
    assert out.stdout.startswith(f"question: {Q}\nbudget:   120 / 2000 tokens (cl100k_base)\n"), out.stdout
    out, status, loaded = run_folio(["search", Q, "--server", server.url, "-k", "3", "--json"])
    assert status == 0 and loaded == [], out.stderr
    assert json.loads(out.stdout) == SEARCH and server.bodies[-1] == ("/v1/search", {"query": Q, "k": 3})


def test_a_misspelled_variable_is_still_named(served: tuple[StandInServer, Path]) -> None:
    """Only then do the settings load: to say which variable, and what it may mean."""
    server, data = served
    out, status, loaded = run_folio(["context", Q, "--data", str(data), "--json"], FOLIO_BUGDET="500")
    assert status == 0 and "folio.settings" in loaded, out.stderr
    assert out.stderr.startswith("WARNING folio.settings: unknown setting FOLIO_BUGDET; did you mean "
                                 "FOLIO_DEFAULT_BUDGET?\n"), out.stderr
    assert json.loads(out.stdout) == PACKAGE
