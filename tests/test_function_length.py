"""No function in the four packages is over 80 lines unless this file says why (issue 13)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 80
# "path:function": why it is longer. Keep this short; prefer splitting the function along its steps.
ALLOWED: dict[str, str] = {}


def long_functions() -> dict[str, int]:
    out = {}
    for pkg in ("ingest", "retrieval", "assembly", "api", "folio"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    n = (node.end_lineno or node.lineno) - node.lineno + 1
                    if n > MAX_LINES:
                        out[f"{path.relative_to(ROOT).as_posix()}:{node.name}"] = n
    return out


def test_functions_are_at_most_80_lines_or_say_why() -> None:
    unexplained = {k: n for k, n in long_functions().items() if k not in ALLOWED}
    assert not unexplained, f"split these along their steps, or add a reason to ALLOWED: {unexplained}"
