"""``os.environ`` is read in the settings modules only (issue 21: one typed configuration tree, read once).

``folio.settings`` reads every variable into a typed group and sets the ones a child process or a library
needs (``child_environ``, ``apply_process_environment``). An ``os.environ`` / ``os.getenv`` anywhere else
fails here: put the variable into a group of ``folio.settings`` and pass the value down instead.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ingest", "retrieval", "assembly", "api", "folio")
# The settings package, and the few of its variables a command that asks a server reads without pydantic
# (folio/settings_light.py; tests/test_settings_light.py keeps both readings equal): reading the environment is
# their job.
SETTINGS = ("folio/settings/", "folio/settings_light.py")
# Files that may still read os.environ besides the settings (file: uses); the list may only shrink, and is empty.
ALLOWED: dict[str, int] = {}


def environ_uses(tree: ast.AST) -> int:
    """``os.environ``, ``os.getenv`` and ``from os import environ/getenv`` in one module."""
    n = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
            n += node.attr in ("environ", "getenv", "environb", "getenvb")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            n += sum(a.name in ("environ", "getenv", "environb", "getenvb") for a in node.names)
    return n


def uses_by_file() -> Counter[str]:
    out: Counter[str] = Counter()
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith(SETTINGS):
                n = environ_uses(ast.parse(path.read_text(encoding="utf-8")))
                if n:
                    out[rel] = n
    return out


def test_environ_is_read_only_by_the_settings() -> None:
    found = uses_by_file()
    grown = {f: n for f, n in found.items() if n > ALLOWED.get(f, 0)}
    assert not grown, f"os.environ read outside the settings module (move it into folio.settings): {grown}"


def test_the_allow_list_only_shrinks() -> None:
    found = uses_by_file()
    stale = {f: (n, found.get(f, 0)) for f, n in ALLOWED.items() if found.get(f, 0) < n}
    assert not stale, f"fewer os.environ uses than ALLOWED says (allowed, found): lower the counts: {stale}"


def test_the_scan_sees_every_form() -> None:
    src = "import os\nfrom os import getenv\na = os.environ['X']\nb = os.getenv('Y')\nc = getenv('Z')\n"
    assert environ_uses(ast.parse(src)) == 3  # os.environ, os.getenv, and the from-import of getenv
