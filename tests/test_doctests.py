"""The examples in docstrings are tests too: every ``>>>`` example in the four packages must stay true.

Modules are found by their source (any ``>>>``), so a new example is run without being listed here.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ingest", "retrieval", "assembly", "api", "folio")


def modules_with_examples() -> list[str]:
    out = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                rel = path.relative_to(ROOT).with_suffix("")
                parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
                # the stage folders are installed as folio.<stage> (pyproject.toml's package-dir)
                out.append(".".join(parts if pkg == "folio" else ("folio", *parts)))
    return out


MODULES = modules_with_examples()


def test_examples_are_found() -> None:
    assert len(MODULES) >= 20 and "folio.assembly.budget" in MODULES and "folio.retrieval.ranking.fusion" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    found = sum(len(t.examples) for t in doctest.DocTestFinder().find(module))
    assert found > 0, f"{name} has '>>>' in its source but doctest finds no example"
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
