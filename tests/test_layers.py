"""The layer contracts in pyproject.toml ([tool.importlinter]) hold: import-linter checks them (issue 21).

Bottom up: the kernel imports nothing else of folio; the store only the kernel; ingest the kernel and the
store; retrieval those and ingest; assembly only the kernel (and no LanceDB, torch or PyMuPDF); the api sits
on top; the client needs none of the server; and no package has an import circle between its modules.
"""

from __future__ import annotations

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
