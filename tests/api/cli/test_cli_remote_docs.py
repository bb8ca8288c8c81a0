"""Issue 48, item 3: ``folio ingest FILE... / docs / delete --server URL`` from a client-only install (the server's
parts unimportable, as ``tests/test_packaging.py`` simulates them), as subprocesses against a server this test
starts on loopback: the upload goes in one batch, a progress line per stage comes from the server's events, and
the exit codes say what happened."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.conftest import live_server, make_settings
from tests.test_packaging import HIDE_SERVER

ROOT = Path(__file__).resolve().parents[3]
CLIENT_ONLY = HIDE_SERVER + """from folio import _cli
sys.argv = ["folio", *sys.argv[1:]]
_cli.main()
"""


def _folio(*args: str, cwd: Path, client_only: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FOLIO_OCR": "0"}
    for name in ("FOLIO_URL", "FOLIO_API_KEY", "FOLIO_DATA"):
        env.pop(name, None)
    command = [sys.executable, "-c", CLIENT_ONLY] if client_only else [sys.executable, "-m", "folio.api.cli"]
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env)


@pytest.mark.slow
def test_ingest_docs_and_delete_on_a_server_from_a_client_only_install(
    data_copy: Path, tmp_path: Path, samples: Path
) -> None:
    good, twin, bad = tmp_path / "policy-a.pdf", tmp_path / "policy-b.pdf", tmp_path / "notes.pdf"
    shutil.copy(samples / "support-policy-v1.pdf", good)
    shutil.copy(samples / "support-policy-v2.pdf", twin)
    bad.write_text("meeting notes, not a PDF")
    with live_server(make_settings(data_copy, allowed_hosts=["127.0.0.1"])) as url:
        out = _folio("ingest", str(good), str(bad), str(twin), "--meta", "year=2021", "--server", url, cwd=tmp_path)
        assert out.returncode == 1, out.stderr  # one file failed
        assert "Traceback" not in out.stderr and "pip install" not in out.stderr, out.stderr
        assert "notes.pdf: failed: not a PDF" in out.stderr, out.stderr
        for name in ("policy-a.pdf", "policy-b.pdf"):
            lines = [ln for ln in out.stderr.splitlines() if ln.startswith(f"{name}: ")]
            assert f"{name}: parse 1/1 pages" in lines, out.stderr  # a line per stage, from the server's events
            assert len({ln.split()[1] for ln in lines}) >= 2, lines
            assert f"{name}: created {Path(name).stem}@" in out.stdout, out.stdout

        again = _folio("ingest", str(good), "--server", url, "--json", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        (report,) = json.loads(again.stdout)["data"]
        assert (report["doc_id"], report["status"], report["collection"]) == ("policy-a", "unchanged", "default")

        docs = _folio("docs", "--server", url, cwd=tmp_path)
        assert docs.returncode == 0, docs.stderr
        rows = {ln.split()[0] for ln in docs.stdout.splitlines()[1:-1]}
        assert {"policy-a", "policy-b", "support-policy", "register"} <= rows, docs.stdout
        assert sum(ln.startswith("support-policy ") for ln in docs.stdout.splitlines()) == 2  # both versions
        one = _folio("docs", "policy-a", "--json", "--server", url, cwd=tmp_path)
        assert one.returncode == 0 and json.loads(one.stdout)["count"] == 1, one.stderr
        assert json.loads(one.stdout)["data"][0]["metadata"] == {"year": 2021}  # --meta went with the batch

        gone = _folio("delete", "policy-a", "--server", url, cwd=tmp_path)
        assert (gone.returncode, gone.stdout) == (0, "deleted policy-a (1 version)\n"), gone.stderr
        missing = _folio("delete", "policy-a", "--server", url, cwd=tmp_path)
        assert missing.returncode == 1 and "404" in missing.stderr and "Traceback" not in missing.stderr
        unknown = _folio("docs", "policy-a", "--server", url, cwd=tmp_path)
        assert unknown.returncode == 1 and "no such document: policy-a" in unknown.stderr

        # options that run only here are a usage error with --server; a missing file too
        local = _folio("ingest", str(good), "--no-ocr", "--server", url, cwd=tmp_path)
        assert local.returncode == 2 and "--no-ocr run here, not on a server" in local.stderr, local.stderr
        nothing = _folio("ingest", str(tmp_path / "nothing.pdf"), "--server", url, cwd=tmp_path)
        assert nothing.returncode == 2 and "no such file" in nothing.stderr, nothing.stderr

    down = _folio("docs", "--server", url, cwd=tmp_path)  # the server has stopped
    assert down.returncode == 1 and "no answer from the server" in down.stderr, down.stderr


def test_without_a_server_the_client_only_command_still_says_what_to_install(tmp_path: Path) -> None:
    """No --server and no server found: the command runs here, which a client-only install cannot (exit 2)."""
    out = _folio("docs", "--data", str(tmp_path / "data"), cwd=tmp_path)
    assert out.returncode == 2 and "pip install 'folio-context[server]'" in out.stderr, out.stderr
