"""``folio export`` (issue 48, item 4) as a user runs it: a subprocess over a store of the sample PDFs, in-process
(``--data``); against a running server: ``tests/api/client/test_export_client.py``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[3]


def _folio(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FOLIO_OCR": "0"}
    env.pop("FOLIO_URL", None)  # in-process: no server is asked
    return subprocess.run(
        [sys.executable, "-m", "folio.api.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300, env=env
    )


@pytest.fixture(scope="module")
def data(api_master: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dst = tmp_path_factory.mktemp("export-cli") / "data"
    shutil.copytree(api_master, dst)
    return dst


def test_export_to_a_file_is_the_rest_markdown(data: Path, tmp_path: Path, client: TestClient) -> None:
    out = tmp_path / "register.md"
    done = _folio("export", "register", "--data", str(data), "--no-server", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert f"to {out}" in done.stderr
    md = out.read_text(encoding="utf-8")
    assert md == client.get("/v1/documents/register/export").text  # the same export as REST's, same store content
    assert md.startswith("<!-- page 1 -->") and "<!-- page 3 -->" in md
    assert re.search(r"^# ", md, re.M)


def test_export_json_to_stdout(data: Path) -> None:
    done = _folio("export", "support-policy", "--format", "json", "--data", str(data), "--no-server")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["doc_id"] == "support-policy" and body["latest"] and body["count"] == len(body["data"]) > 0
    assert all(d["locators"] and d["locators"][0]["page"] >= 1 for d in body["data"])
    older = next(
        v["version_id"]
        for v in json.loads(_folio("docs", "support-policy", "--json", "--data", str(data)).stdout)["data"]
        if not v["latest"]
    )
    done = _folio("export", "support-policy", "--version", older, "--format", "json", "--data", str(data), "--out", "-")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["filename"] == "support-policy-v1.pdf"


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["export", "no-such-doc"], 1, "no such document: no-such-doc"),
        (["export", "register", "--version", "0000000000000000"], 1, "has no version 0000000000000000"),
        (["export", "register", "--format", "docx"], 2, "invalid choice: 'docx'"),
    ],
)
def test_export_errors_are_one_line(data: Path, argv: list[str], code: int, says: str) -> None:
    done = _folio(*argv, "--data", str(data), "--no-server")
    assert done.returncode == code, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""



def test_the_cli_offers_the_api_s_formats() -> None:
    """The CLI's ``--format`` choices (kept apart so that asking a server loads no pydantic) are the service's."""
    from folio.api.cli.documents import EXPORT_FORMATS as CLI_FORMATS
    from folio.api.service.export import EXPORT_FORMATS

    assert CLI_FORMATS == EXPORT_FORMATS
