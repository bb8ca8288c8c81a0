"""The CLI's errors are one line and an exit code, never a traceback; its choices are the API's."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from folio.api.cli import main
from folio.assembly import AssemblyOptions, assemble
from folio.assembly.options import Strategy
from folio.kernel.hit import RetrievalStrategy
from folio.kernel.index import RegionIndex
from tests.assembly.builders import by_kind, hit, make_doc


def _one_line_error(capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith(("folio", "usage")), err
    for n in needles:
        assert n in err, err
    return err


def test_unknown_strategy_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["context", "q", "--strategy", "bogus", "--data", str(tmp_path)])
    assert exc.value.code == 2
    _one_line_error(capsys, "invalid choice: 'bogus'")
    with pytest.raises(SystemExit) as exc:
        main(["context", "q", "--retrieval", "fuzzy", "--data", str(tmp_path)])
    assert exc.value.code == 2


def test_invalid_option_value_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["context", "q", "--budget", "0", "--data", str(tmp_path)]) == 2
    err = _one_line_error(capsys, "budget", "greater than or equal to 1")
    assert err.count("\n") == 1


def test_missing_answer_file_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    regs = make_doc("policy", [("Deadlines", [["The deadline is 15 minutes."]])])
    pkg = assemble("deadline", [hit(by_kind(regs, "sentence")[0], 0.9, 1)], RegionIndex(regs), AssemblyOptions())
    package = tmp_path / "package.json"
    package.write_text(pkg.model_dump_json())
    missing = tmp_path / "nope.txt"
    assert main(["verify", "--package", str(package), "--answer-file", str(missing)]) == 2
    err = _one_line_error(capsys, "No such file", str(missing))
    assert err.count("\n") == 1
    assert main(["verify", "--package", str(tmp_path / "nopkg.json"), "--answer", "x"]) == 2
    _one_line_error(capsys, "nopkg.json")


def test_cli_choices_are_the_api_literals() -> None:
    from folio.api.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    context = sub.choices["context"]  # type: ignore[index]
    by_dest = {a.dest: a for a in context._actions}
    assert tuple(by_dest["strategy"].choices) == get_args(Strategy)
    assert tuple(by_dest["retrieval_strategy"].choices) == get_args(RetrievalStrategy)


def test_subcommand_modules_do_not_import_the_entry_point() -> None:
    """The entry point (``folio.api.cli``, the package's ``__init__``) imports the command modules, never the
    other way round (Python imports the package itself first; no command module names it)."""
    import grimp

    graph = grimp.build_graph("folio", cache_dir=None)
    commands = [m for m in graph.modules if m.startswith("folio.api.cli.") and m != "folio.api.cli.__main__"]
    assert {f"folio.api.cli.{m}" for m in ("query", "keys", "mcp", "documents")} <= set(commands)
    assert not [m for m in commands if "folio.api.cli" in graph.find_modules_directly_imported_by(m)]
