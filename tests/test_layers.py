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
from collections.abc import Iterable
from pathlib import Path

import grimp

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
    """The store contract names packages: every other module or package of ``folio.ingest`` must be forbidden
    to the store (a new one says whether it is storage by being listed), and the PDF reader's contract too."""
    (store,) = (c for c in CONTRACTS if c["name"].startswith("The store"))
    (reader,) = (c for c in CONTRACTS if c["name"].startswith("The PDF reader"))
    assert store["source_modules"] == ["folio.ingest.storage"] and reader["source_modules"] == ["folio.ingest.pdf"]
    modules = {f"folio.ingest.{p.stem}" for p in (ROOT / "ingest").glob("*.py") if p.stem != "__init__"}
    modules |= {f"folio.ingest.{p.parent.name}" for p in (ROOT / "ingest").glob("*/__init__.py")}
    others = modules - {"folio.ingest.storage"}
    missing = others - set(store["forbidden_modules"])
    assert not missing, f"add to the store contract: {sorted(missing)}"
    missing = (others - {"folio.ingest.pdf"} | {"folio.ingest.storage"}) - set(reader["forbidden_modules"])
    assert not missing, f"add to the PDF reader's contract: {sorted(missing)}"


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


# LanceDB's query and table API: what retrieval must leave to the store (``ingest/storage/interface.py``).
TABLE_METHODS = frozenset({
    "where", "to_arrow", "to_pandas", "count_rows", "list_indices", "create_index", "merge_insert", "add_columns",
    "open_table", "create_table", "optimize",
})


def store_queries_in(src: str) -> list[int]:
    """Lines of ``src`` that query a LanceDB table themselves: a call of a table or query method (``np.where``
    aside), a call chained onto ``.search(...)``, an ``import lancedb``, or ``store.table(...)``/``store.chunks``."""
    lines = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(n.split(".")[0] == "lancedb" for n in names):
                lines.append(node.lineno)
        if isinstance(node, ast.Attribute) and node.attr in ("chunks", "regions", "versions", "table", "db"):
            if isinstance(node.value, ast.Name | ast.Attribute) and _name(node.value).endswith("store"):
                lines.append(node.lineno)
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        receiver = node.func.value
        if node.func.attr in TABLE_METHODS and not (isinstance(receiver, ast.Name) and receiver.id in ("np", "numpy")):
            lines.append(node.lineno)
        if (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute)
                and receiver.func.attr == "search"):
            lines.append(node.lineno)
    return sorted(set(lines))


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def test_retrieval_asks_the_store_for_scans_and_searches() -> None:
    """Issue 21: retrieval builds no SQL and touches no LanceDB table; the store's scans and searches take a Scope."""
    found = {
        f"{path.relative_to(ROOT).as_posix()}:{line}": path.read_text(encoding="utf-8").splitlines()[line - 1].strip()
        for path in sorted((ROOT / "retrieval").rglob("*.py"))  # the channels' and the other rooms' modules too
        for line in store_queries_in(path.read_text(encoding="utf-8"))
    }
    assert not found, f"ask the store (ingest/storage/interface.py) instead: {found}"


def test_the_store_query_check_sees_table_queries() -> None:
    """The check above finds what retrieval used to do (it would pass vacuously otherwise)."""
    before = '''
import lancedb
rows = table.search().where(scope.where()).select(["a"]).limit(None).to_arrow()
hits = self.store.chunks.search(qv).limit(5)
t = store.table("pages")
'''
    assert store_queries_in(before) == [2, 3, 4, 5]
    assert store_queries_in("x = np.where(m, s, 0)\nhits = self.clip.search(q, scope, 5)\n") == []


# Issue 32: every interface reaches the store through the door (``api.application.Folio``). The modules of the
# api that may import the store themselves, each for a reason:
STORE_ROOMS = {
    "folio.api.application": "the door: it opens the store and every interface calls it",
    "folio.api.service": "the work behind the door, over the store the door hands in (a ServiceStore)",
    "folio.api.cluster.board": "the Ray task opens the store on its worker, in another process than any door",
}


def store_modules() -> tuple[str, ...]:
    """The store's modules as the store contract in pyproject.toml lists them (packages stand for their modules)."""
    (store,) = (c for c in CONTRACTS if c["name"].startswith("The store"))
    return tuple(store["source_modules"])


def _within(module: str, packages: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def store_importers(graph: grimp.ImportGraph) -> dict[str, list[str]]:
    """Each module of the api and ``folio.local`` outside ``STORE_ROOMS`` that imports the store directly
    (type-checking imports too), with what it imports."""
    found = {}
    for module in sorted(graph.modules):
        if not _within(module, ("folio.api", "folio.local")) or _within(module, STORE_ROOMS):
            continue
        hit = sorted(m for m in graph.find_modules_directly_imported_by(module) if _within(m, store_modules()))
        if hit:
            found[module] = hit
    return found


def test_the_interfaces_reach_the_store_only_through_the_door() -> None:
    """The CLI, REST, MCP and ``LocalFolio`` reach the store only through ``Folio``: the CLI's ingest, docs,
    delete, compact and check opened ``Store`` themselves, the upload route used ``folio.store``."""
    found = store_importers(grimp.build_graph("folio", cache_dir=None))
    assert not found, f"call the door (api.application.Folio) instead: {found}"


def test_the_door_check_sees_an_interface_that_imports_the_store() -> None:
    """The check above finds a route that imports the store (it would pass vacuously otherwise)."""
    graph = grimp.build_graph("folio", cache_dir=None)
    graph.add_import(importer="folio.api.http.routes.documents", imported="folio.ingest.storage.store")
    graph.add_import(importer="folio.api.service.context", imported="folio.ingest.storage.store")
    assert store_importers(graph) == {"folio.api.http.routes.documents": ["folio.ingest.storage.store"]}
