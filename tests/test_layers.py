"""The layer contracts in pyproject.toml ([tool.importlinter]) hold: import-linter checks them (issue 21).

Bottom up: the settings (``folio.settings``) import nothing of folio, and every room may import them; the
kernel imports nothing else of folio; the store only the kernel; ingest the kernel and the store; retrieval
those and ingest; assembly only the kernel (and no LanceDB, torch or PyMuPDF); the api sits on top; the
client needs none of the server; and no package has an import circle between its modules.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


def lint_imports() -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe, "import-linter is a dev dependency; install with pip install -e '.[dev]'"
    return subprocess.run(
        [exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False, env=_env_with_root()
    )


def _env_with_root() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def test_layer_contracts_are_kept() -> None:
    out = lint_imports()
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in out.stdout


def test_every_ingest_module_is_on_one_side_of_the_store_contract() -> None:
    """The store contract lists modules by name: a new ingest module must say whether it is storage."""
    (store,) = (c for c in CONTRACTS if c["name"].startswith("The store"))
    storage = set(store["source_modules"])
    others = {m for m in store["forbidden_modules"] if m.startswith("folio.ingest.")}
    modules = {f"folio.ingest.{p.stem}" for p in (ROOT / "ingest").glob("*.py") if p.stem != "__init__"}
    assert not storage & others
    assert modules == storage | others, f"add to pyproject's store contract: {sorted(modules - storage - others)}"


# A module whose function-level imports all have one reason says so once, in a comment line at its top
# level that starts with this; any other function-level import of folio's own code needs a comment on its
# line or on the line above it (start-up cost, an optional dependency, a worker process).
LAZY_MARKER = "# Function-level imports:"


def unexplained_function_level_imports() -> list[str]:
    out = []
    for pkg in ("ingest", "retrieval", "assembly", "api", "folio"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            src = path.read_text(encoding="utf-8")
            if any(line.startswith(LAZY_MARKER) for line in src.splitlines()):
                continue
            lines = src.splitlines()
            for node in _function_level_imports(ast.parse(src)):
                if not _explained(lines, node.lineno - 1):
                    out.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return out


def _explained(lines: list[str], i: int) -> bool:
    """A comment on line ``i``, on an import line of its group above it, or on the line above the group."""
    while True:
        if "  # " in lines[i] or lines[i].strip().startswith("#"):
            return True
        if i == 0 or not lines[i].strip().startswith(("from ", "import ")):
            return False
        i -= 1


def _function_level_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: dict[int, ast.Import | ast.ImportFrom] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "folio":
                    found[node.lineno] = node
                elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "folio" for a in node.names):
                    found[node.lineno] = node
    return [found[k] for k in sorted(found)]


def test_function_level_imports_of_folio_say_why() -> None:
    """Issue 21: function-level imports hid three import circles; those left are there for a stated reason."""
    missing = unexplained_function_level_imports()
    assert not missing, "say why in a comment (or import at the top): " + "\n".join(missing)
