"""Export (issue 48, item 4) through what talks to a running server: ``Client.export_document`` and
``AsyncClient.export_document`` on loopback, ``folio export --server URL`` as a subprocess, and the Export
example of docs/api.md, run against the same server (it prints what its comments say)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import folio
from folio import errors, models
from tests.api.conftest import live_server, make_settings

ROOT = Path(__file__).resolve().parents[3]
PRINTS = re.compile(r"^\s*print\(.*\)  # (?P<shown>.+)$", re.M)


@pytest.fixture(scope="module")
def server(api_master: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """A live server on a copy of the sample store: (base URL, a key for its documents, a key for a collection
    that holds none)."""
    from folio.api.keys import add_key

    root = tmp_path_factory.mktemp("export-client")
    data = root / "data"
    shutil.copytree(api_master, data)
    _, key = add_key(root / "keys.json", ["default"], "read")
    _, other = add_key(root / "keys.json", ["elsewhere"], "read")
    with live_server(make_settings(data, keys_file=str(root / "keys.json"))) as base:
        yield base, key, other


def test_client_exports_markdown_and_json(server: tuple[str, str, str]) -> None:
    base, key, other = server
    with folio.Client(base, api_key=key) as c:
        md = c.export_document("register")
        assert isinstance(md, str) and md.startswith("<!-- page 1 -->") and "<!-- page 3 -->" in md
        doc = c.export_document("register", format="json")
        assert isinstance(doc, models.DocumentExport) and doc.count == len(doc.data) > 0
        assert all(r.locators and r.doc_id == "register" for r in doc.data)
        for r in doc.data:
            if r.kind == "paragraph":
                assert r.text.strip() in md
        older = next(v.version_id for v in c.get_document("support-policy").versions if not v.latest)
        assert c.export_document("support-policy", format="json", version_id=older).filename == "support-policy-v1.pdf"
        with pytest.raises(errors.NotFound) as e:
            c.export_document("no-such-doc")
        assert e.value.code == "document_not_found"
    with folio.Client(base, api_key=other) as c, pytest.raises(errors.NotFound):
        c.export_document("register")

    async def run() -> tuple[str, models.DocumentExport]:
        async with folio.AsyncClient(base, api_key=key) as ac:
            return await ac.export_document("register"), await ac.export_document("register", format="json")

    amd, adoc = asyncio.run(run())
    assert amd == md and adoc == doc


def test_folio_export_asks_the_server(server: tuple[str, str, str], tmp_path: Path) -> None:
    base, key, other = server
    env = {**os.environ, "FOLIO_API_KEY": key}
    out = tmp_path / "register.md"
    done = subprocess.run(
        [sys.executable, "-m", "folio.api.cli", "export", "register", "--server", base, "--out", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=120, env=env,
    )
    assert done.returncode == 0, done.stderr
    with folio.Client(base, api_key=key) as c:
        assert out.read_text(encoding="utf-8") == c.export_document("register")
        as_json = c.export_document("register", format="json").model_dump(mode="json")
    done = subprocess.run(
        [sys.executable, "-m", "folio.api.cli", "export", "register", "--server", base, "--format", "json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, env=env,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == as_json
    done = subprocess.run(
        [sys.executable, "-m", "folio.api.cli", "export", "register", "--server", base],
        capture_output=True, text=True, cwd=ROOT, timeout=120, env={**os.environ, "FOLIO_API_KEY": other},
    )
    assert done.returncode == 1 and "404 no such document: register" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_docs_export_example_runs(
    server: tuple[str, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Python example of docs/api.md's "Export" section, against the server, prints what it says."""
    from tests.test_docs_examples import _run, examples

    found = [code for code in examples().values() if "export_document(" in code]
    assert len(found) == 1, found
    code = found[0]
    base, key, _ = server
    assert "http://127.0.0.1:8000" in code
    monkeypatch.setenv("FOLIO_API_KEY", key)
    monkeypatch.chdir(tmp_path)
    printed = _run(code.replace("http://127.0.0.1:8000", base))
    said = list(PRINTS.finditer(code))
    assert said
    for s in said:
        assert s["shown"] in printed, (s["shown"], printed)
