"""The installed ``folio`` command's exit status (issue 34, item 1): scripts and CI read it.

These tests run the console script that ``pip install`` wrote (``.venv/bin/folio``, beside the
interpreter), not ``folio.api.cli.main``: its entry point (``folio._cli.main``) once dropped the code that
``main`` returned, and every error exited 0 while the suite, calling the function, saw 2.
"""

from __future__ import annotations

import json
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
def ingested(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A store holding the support policy, made by the installed command (which must exit 0), with what the
    command printed: its stdout and stderr are pipes, as in CI or a log."""
    data = tmp_path_factory.mktemp("exit-codes") / "data"
    out = _folio("ingest", str(samples / "support-policy-v1.pdf"), "--data", str(data), cwd=data.parent)
    assert out.returncode == 0, out.stderr
    return data, out


@pytest.fixture(scope="module")
def store(ingested: tuple[Path, subprocess.CompletedProcess[str]]) -> Path:
    return ingested[0]


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
        (["contxt", Q], 2, "did you mean 'context'?"),  # a mistyped command (issue 48)
        (["context", "--budgt", "300", Q, "--data", "{data}"], 2, "unknown option --budgt; did you mean '--budget'?"),
        (["context", Q, "--strategy", "windw", "--data", "{data}"], 2, "did you mean 'window'?"),
        (["context", Q, "--budget", "5", "--data", "{data}"], 3, "folio: refused: "),  # no evidence fits 5 tokens
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


def test_a_mistyped_option_shows_the_subcommands_usage_and_the_nearest_option(store: Path, tmp_path: Path) -> None:
    """As the REST API says of a misspelt body field (``unknown field; did you mean 'budget'?``), issue 48."""
    out = _folio("context", "--budgt", "300", Q, "--data", str(store), cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == "", out
    usage, error = out.stderr.split("\nfolio context: error: ")
    assert usage.startswith("usage: folio context ") and "--budget BUDGET" in usage, usage
    assert error == "unknown option --budgt; did you mean '--budget'?\n", error
    far = _folio("context", "--zzzzzz", Q, "--data", str(store), cwd=tmp_path)
    assert far.returncode == 2 and far.stderr.endswith("folio context: error: unknown option --zzzzzz\n"), far.stderr


def test_an_impossible_budget_says_why_on_stderr_and_exits_3(store: Path, tmp_path: Path) -> None:
    """A budget no evidence fits (5 tokens) once printed "refused" and an empty prompt, and exited 0 (issue 48):
    the package is still printed, its reason is one line on stderr, and the exit code is ``EXIT_REFUSED``."""
    out = _folio("context", Q, "--budget", "5", "--data", str(store), cwd=tmp_path)
    assert out.returncode == 3, out
    reason = out.stderr.removeprefix("folio: refused: ")
    assert reason != out.stderr and reason.count("\n") == 1 and "the limit is 5" in reason, out.stderr
    assert f"refused:  {reason}" in out.stdout and "packed:   0 items" in out.stdout, out.stdout
    assert "prompt:   none" in out.stdout, out.stdout
    package = _folio("context", Q, "--budget", "5", "--json", "--data", str(store), cwd=tmp_path)
    assert package.returncode == 3 and package.stderr == out.stderr, package
    assert json.loads(package.stdout)["refused"] is True


def test_ingest_off_a_terminal_prints_a_line_per_stage(ingested: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    """``folio ingest`` with stdout and stderr piped once printed nothing until each document was done (95 s
    for a long one, issue 48): now each stage says when it starts and when it ends, the parse with its pages."""
    stderr = ingested[1].stderr
    lines = [line for line in stderr.splitlines() if line.startswith("support-policy-v1.pdf: ")]
    stages = [line.split()[1] for line in lines]
    assert "support-policy-v1.pdf: parse 1/1 pages" in lines, stderr
    for stage in ("parse", "embed", "commit"):
        assert stage in stages, stderr
    assert any(s.startswith("index:") for s in stages), stderr
    assert stages.index("parse") < stages.index("embed") < stages.index("commit"), stages
    assert len(lines) == len(set(lines)), lines  # no line twice
    assert "\r" not in stderr, repr(stderr)  # no bar off a terminal
    assert "support-policy-v1.pdf: created " in ingested[1].stdout, ingested[1].stdout
