"""The installed ``folio`` command's exit status (issue 34, item 1): scripts and CI read it.

These tests run the console script that ``pip install`` wrote (``.venv/bin/folio``, beside the
interpreter), not ``folio.api.cli.main``: its entry point (``folio._cli.main``) once dropped the code that
``main`` returned, and every error exited 0 while the suite, calling the function, saw 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FOLIO = Path(sys.executable).with_name("folio")
Q = "How fast must a priority-one incident be acknowledged?"


def _folio(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert FOLIO.is_file(), f"{FOLIO} is missing: scripts/setup.sh installs the folio command"
    env = {**os.environ, "FOLIO_OCR": "0"}
    env.pop("FOLIO_URL", None)  # the commands below must not reach a server
    return subprocess.run([str(FOLIO), *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    """A store holding the support policy, made by the installed command (which must exit 0)."""
    data = tmp_path_factory.mktemp("exit-codes") / "data"
    out = _folio("ingest", str(samples / "support-policy-v1.pdf"), "--data", str(data), cwd=data.parent)
    assert out.returncode == 0, out.stderr
    return data


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["context", Q, "--data", "{missing}"], 2, "no folio store in"),  # a --data that holds no store
        (["context", "", "--data", "{data}"], 2, "query"),  # an empty question
        (["context", Q, "--budget", "0", "--data", "{data}"], 2, "budget"),  # a budget under the minimum
        (["ingest", "{notes}", "--data", "{data}"], 1, "not a PDF"),  # a file that is no PDF: a failure
        (["ingest", "{nothing}", "--data", "{data}"], 2, "no such file"),  # a path that is not there
        (["delete", "no-such-doc", "--data", "{data}"], 1, "no-such-doc"),  # a document that is not there
        (["no-such-command"], 2, "invalid choice"),  # argparse's usage error
    ],
)
def test_the_installed_command_exits_with_the_documented_code(
    store: Path, tmp_path: Path, argv: list[str], code: int, says: str
) -> None:
    notes = tmp_path / "notes.pdf"
    notes.write_text("meeting notes, not a PDF")
    names = {
        "data": str(store),
        "missing": str(tmp_path / "folio-dta"),
        "notes": str(notes),
        "nothing": str(tmp_path / "nothing.pdf"),
    }
    out = _folio(*(a.format(**names) for a in argv), cwd=tmp_path)
    assert out.returncode == code, (argv, out.returncode, out.stderr)
    assert says in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_the_installed_command_exits_0_on_success(store: Path, tmp_path: Path) -> None:
    out = _folio("context", Q, "--budget", "600", "--data", str(store), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"question: {Q}")


def test_the_install_hint_exits_2_without_the_server_parts(tmp_path: Path, samples: Path) -> None:
    """A client-only install (no torch, no lancedb, ...) gets the install hint and exit 2, through the same
    entry point: ``folio._cli.main`` run with a server module made unimportable."""
    blocker = tmp_path / "lancedb"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ModuleNotFoundError('No module named lancedb', name='lancedb')\n")
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import folio._cli as c; c.main()",
            "ingest",
            str(samples / "support-policy-v1.pdf"),
            "--data",
            str(tmp_path / "data"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])},
    )
    assert out.returncode == 2, out.stderr
    assert "pip install 'folio-context[server]'" in out.stderr and "Traceback" not in out.stderr
