"""No code names folio's old top-level packages (``api.…``, ``ingest.model`` …): everything is ``folio.…``.

``scripts/migrate_namespace.py --check`` finds what is left (a merge of a branch written before the move,
say); ``python scripts/migrate_namespace.py`` rewrites it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_nothing_is_left_to_migrate() -> None:
    out = subprocess.run(
        [sys.executable, "scripts/migrate_namespace.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, "run python scripts/migrate_namespace.py:\n" + out.stderr[-4000:]
