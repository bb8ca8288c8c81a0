"""Functions with too many arguments or too complex a structure only get fewer (issue 32, item 6).

ruff checks ``PLR0913`` (more than 5 arguments) and ``C901`` (complexity over 10) everywhere
(``pyproject.toml``); each function that was over when the rules came in carries a ``# noqa`` for its rule, and
``CEILING`` is how many there were. A new function over either limit fails ``tests/test_lint.py``; a ``noqa``
added to hide one fails here. When a function is split or loses arguments, take its ``noqa`` away and lower the
ceiling: the counts only go down.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CEILING = {"PLR0913": 10, "C901": 1}  # 2026-12-07 (issue 46: 69 and 29 when the rules came in, 2026-12-05)
FOLDERS = ("api", "assembly", "benchmarks", "folio", "ingest", "retrieval", "scripts", "tests")


def suppressed() -> dict[str, int]:
    """How many ``# noqa`` comments name each rule, in the repository's own Python files."""
    counts = dict.fromkeys(CEILING, 0)
    seen: set[Path] = set()
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            real = path.resolve()
            if real in seen or ".venv" in path.parts:
                continue  # folio/api etc. are symlinks to the stage folders
            seen.add(real)
            for marker in re.findall(r"# noqa: ([A-Z0-9, ]+)", real.read_text(encoding="utf-8")):
                for rule in CEILING:
                    counts[rule] += rule in marker.replace(" ", "").split(",")
    return counts


def test_the_ceilings_only_go_down() -> None:
    counts = suppressed()
    over = {rule: n for rule, n in counts.items() if n > CEILING[rule]}
    assert not over, f"new functions over the limits ({over} against {CEILING}): split them or pass one value"
    under = {rule: n for rule, n in counts.items() if n < CEILING[rule]}
    assert not under, f"fewer functions over the limits now ({under}): lower CEILING to match, so it stays down"
