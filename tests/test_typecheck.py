"""The folio package type-checks under ``mypy --strict`` (pyproject.toml, pydantic plugin): the kernel, the
client, and the four stage folders, which mypy reaches as ``folio.*`` through the symlinks in folio/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mypy_strict_is_clean() -> None:
    import importlib.util

    assert importlib.util.find_spec("mypy"), "mypy is a dev dependency; install with pip install -e '.[dev]'"
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "folio"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert "Success: no issues found" in out.stdout
