"""The command line a new user meets (issue 23, item 7): ``--version``, ``-v`` on either side of the
subcommand, ``folio search``, folders with no PDFs or with subfolders, a ``--data`` that holds no
store, progress lines when stderr is not a terminal, and ``context``/``search``/``ask`` through a
running server (``--server`` or ``$FOLIO_URL``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from folio.api.cli import build_parser, main
from tests.api.conftest import live_server, make_settings

ROOT = Path(__file__).resolve().parents[3]
Q = "How fast must a priority-one incident be acknowledged?"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``folio`` as its own process, stdout and stderr piped (not terminals)."""
    return subprocess.run(
        [sys.executable, "-m", "folio.api.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=600,
        env={**os.environ, "FOLIO_OCR": "0", **(env or {})},
    )


def test_version_and_verbose_after_the_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("folio ")
    parser = build_parser()
    assert parser.parse_args(["docs", "-v"]).verbose is True
    assert parser.parse_args(["-v", "docs"]).verbose is True
    assert parser.parse_args(["ingest", "x.pdf", "--verbose"]).verbose is True
    assert parser.parse_args(["keys", "list", "-v"]).verbose is True
    assert parser.parse_args(["docs"]).verbose is False


def test_read_commands_refuse_a_data_dir_without_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FOLIO_URL", raising=False)
    monkeypatch.setenv("FOLIO_LLM_BASE_URL", "http://127.0.0.1:9")  # ask gets past "no LLM configured"
    monkeypatch.setenv("FOLIO_LLM_MODEL", "stand-in")
    typo = tmp_path / "folio-dta"
    for argv in (["context", Q], ["search", Q], ["ask", Q], ["docs"], ["delete", "x"], ["check"]):
        assert main([*argv, "--data", str(typo)]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"folio: no folio store in {typo}") and err.count("\n") == 1, err
    assert not typo.exists()  # nothing was created


def test_ingest_empty_folder_is_an_error_and_subfolders_are_ingested(tmp_path: Path, samples: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    (empty / "notes.txt").write_text("not a pdf")
    out = _cli("ingest", str(empty), "--data", str(tmp_path / "data"))
    assert out.returncode == 2 and "no PDF files in" in out.stderr and "Traceback" not in out.stderr

    nested = tmp_path / "pdfs" / "policies" / "2024"
    nested.mkdir(parents=True)
    shutil.copy(samples / "support-policy-v1.pdf", nested)
    out = _cli("ingest", str(tmp_path / "pdfs"), "-v", "--data", str(tmp_path / "data"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("support-policy-v1.pdf: created support-policy-v1@")
    # -v with stderr not a terminal: plain progress lines, one per stage at least
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("support-policy-v1.pdf: ")]
    assert len(lines) >= 2 and all("/" in ln for ln in lines), out.stderr

    twins = tmp_path / "twins"
    for sub in ("a", "b"):
        (twins / sub).mkdir(parents=True)
        shutil.copy(samples / "support-policy-v1.pdf", twins / sub / "report.pdf")
    out = _cli("ingest", str(twins), "--data", str(tmp_path / "data"))
    assert out.returncode == 2 and "would both be document 'report'" in out.stderr


def test_search_prints_ranked_hits(data_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "escalation path", "-k", "3", "--json", "--data", str(data_copy)]) == 0
    body = json.loads(capsys.readouterr().out)
    assert 0 < body["count"] <= 3 and [h["rank"] for h in body["data"]] == sorted(h["rank"] for h in body["data"])
    assert all(h["region_id"] and h["pages"] for h in body["data"])
    assert main(["search", "escalation path", "-k", "3", "--data", str(data_copy)]) == 0
    text = capsys.readouterr().out
    assert body["data"][0]["region_id"] in text.splitlines()[0]


def test_context_search_and_ask_use_a_running_server(data_copy: Path, tmp_path: Path) -> None:
    from tests.api.llm_standin import Reply, StandInLLM

    nowhere = tmp_path / "no-store-here"  # in-process, these commands would refuse it
    with StandInLLM() as llm, live_server(make_settings(data_copy, llm_base_url=llm.url, llm_model="stand-in")) as url:
        env = {"FOLIO_URL": url, "FOLIO_DATA": str(nowhere)}
        out = _cli("context", Q, "--doc", "support-policy", "--budget", "700", "--json", env=env)
        assert out.returncode == 0, out.stderr
        pkg = json.loads(out.stdout)
        assert pkg["budget"]["limit"] == 700 and pkg["items"]
        cid = next(i["citation_id"] for i in pkg["items"] if "30 minutes" in i["text"])

        out = _cli("search", "escalation path", "--server", url, "--json", env={"FOLIO_DATA": str(nowhere)})
        assert out.returncode == 0 and json.loads(out.stdout)["count"] > 0, out.stderr

        llm.replies.append(Reply(f"A priority-one incident is acknowledged within 30 minutes [{cid}]."))
        out = _cli("ask", Q, "--doc", "support-policy", "--budget", "700", env=env)
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout.startswith("A priority-one incident") and "check: ok" in out.stdout

        llm.replies.append(Reply("Within 30 minutes [S99]."))
        out = _cli("ask", Q, "--doc", "support-policy", env=env)
        assert out.returncode == 1 and "check: NOT ok" in out.stdout and "invented S99" in out.stdout
        assert len(llm.requests) == 2  # both answers came through the server's LLM client
    assert not nowhere.exists()
    out = _cli("context", Q, "--server", "http://127.0.0.1:9", "--data", str(data_copy))
    assert out.returncode == 2 and "--server and --data" in out.stderr


LOADED = ("torch", "transformers", "fastapi", "lancedb", "httpx", "folio.client", "folio.assembly", "folio.api.schemas")


def _modules_after(argv: list[str], env: dict[str, str]) -> tuple[list[str], str]:
    """Run ``folio`` with ``argv`` in a fresh process; which of ``LOADED`` it imported, and its stderr."""
    code = (
        "import json, sys\nfrom folio.api.cli import main\n"
        f"code = main({argv!r})\n"
        f"print(json.dumps([code, [m for m in {LOADED!r} if m in sys.modules]]), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600,
                         env=env)
    *lines, last = out.stderr.strip().splitlines()
    status, loaded = json.loads(last)
    assert status == 0, out.stderr
    return loaded, "\n".join(lines)


def test_a_query_command_loads_what_its_work_needs(data_copy: Path) -> None:
    """Issue 34, item 2: ``folio context`` loaded torch, transformers and the web framework (11 to 13 s a call).
    In-process it loads the store and the ONNX encoder only; asking a server, not even those, nor httpx or
    the request models (the server validates)."""
    env = {k: v for k, v in os.environ.items() if k not in ("FOLIO_URL", "FOLIO_API_KEY")}
    loaded, _ = _modules_after(["context", Q, "--data", str(data_copy), "--no-server", "--json"], env)
    assert "lancedb" in loaded and "folio.assembly" in loaded
    assert not {"torch", "transformers", "fastapi"} & set(loaded), loaded
    with live_server(make_settings(data_copy, allowed_hosts=["127.0.0.1"])) as url:
        loaded, err = _modules_after(["context", Q, "--server", url, "--json"], env)
        assert loaded == [], loaded
        loaded, err = _modules_after(["search", Q, "--server", url, "--json"], env)
        assert loaded == [], loaded


def test_the_cli_offers_the_api_s_strategies() -> None:
    """``folio context --strategy/--retrieval`` list the values without importing assembly (start-up time)."""
    from typing import get_args

    from folio.api.cli.query import RETRIEVAL_STRATEGIES, STRATEGIES
    from folio.assembly.options import Strategy
    from folio.kernel.hit import RetrievalStrategy

    assert STRATEGIES == get_args(Strategy) and RETRIEVAL_STRATEGIES == get_args(RetrievalStrategy)


def test_a_server_s_errors_reach_the_command_line(data_copy: Path) -> None:
    """Asking a server, an option out of bounds is the server's 422 as a usage error (exit 2), and a server that
    does not answer is a failure (exit 1): one line each, never a traceback."""
    with live_server(make_settings(data_copy, allowed_hosts=["127.0.0.1"])) as url:
        out = _cli("context", Q, "--server", url, "--budget", "0")
        assert out.returncode == 2 and out.stderr.startswith(f"folio: {url}: invalid request: body.budget"), out.stderr
        assert out.stderr.count("\n") == 1
    out = _cli("context", Q, "--server", "http://127.0.0.1:9")
    assert out.returncode == 1 and "no answer from the server" in out.stderr and "Traceback" not in out.stderr


def test_the_summary_lists_packed_ids_in_order_and_names_only_packed_ones(
    ingested_readonly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 34, item 6: the summary said ``excluded: ... merged_into:P12`` of ids that were not packed, and listed
    the packed ids as P1, P4, P2 (the prompt's order)."""
    import re

    argv = ["context", "How do I read a CSV file into R?", "--doc", "r-data-import-export", "--budget", "1000",
            "--data", str(ingested_readonly), "--no-server", "--no-prompt"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    listed = re.findall(r"^  \[([A-Z]+\d+)\]", out, re.M)
    assert len(listed) > 2 and listed == sorted(listed, key=lambda c: (c[0], int(c[1:]))), out
    assert re.search(r"^packed: .*\(in the prompt: P1, .*\)$", out, re.M), out  # the prompt's order, said once
    excluded = next(line for line in out.splitlines() if line.startswith("excluded: "))
    assert set(re.findall(r"merged_into:([A-Z]+\d+)", excluded)) <= set(listed), excluded
    assert "merged into a candidate not packed" in excluded, excluded


def _subparsers(parser: Any) -> dict[str, Any]:
    import argparse

    return next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_every_subcommand_says_what_it_does_with_examples_and_every_argument_has_help() -> None:
    """Issue 34, item 6: subcommands had no description or example, and ``question``, ``PATH``, ``QUERY``,
    ``doc_id``, ``verify --answer/--json``, ``demo --budget/--host/--port`` and ``delete --version`` no help."""
    import argparse

    commands = dict(_subparsers(build_parser()))
    commands |= {f"keys {name}": p for name, p in _subparsers(commands["keys"]).items()}
    assert {"ingest", "docs", "delete", "context", "search", "verify", "demo", "serve", "ask", "mcp"} <= set(commands)
    for name, p in commands.items():
        if not name.startswith("keys "):
            assert p.description and p.epilog and p.epilog.startswith("examples:\n  "), name
            assert all(line.startswith(("  folio ", "  FOLIO_", "  claude ")) for line in p.epilog.splitlines()[1:])
        silent = [a.dest for a in p._actions if not a.help and not isinstance(a, argparse._SubParsersAction)]
        assert not silent, f"folio {name}: arguments without help: {silent}"
