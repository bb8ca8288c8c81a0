"""``pip install`` of the project puts one top-level package into site-packages: ``folio`` (issue 21).

The wheel is built from a copy of the checkout (so the build leaves nothing in it), without build isolation
(no index needed), and read as the zip it is.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "folio", "ingest", "retrieval", "assembly", "api")


def build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, src / name)
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp / "dist"), "."],
        cwd=src,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    (wheel,) = (tmp / "dist").glob("folio-*.whl")
    return wheel


def test_the_wheel_installs_one_top_level_package(tmp_path: Path) -> None:
    with zipfile.ZipFile(build_wheel(tmp_path)) as whl:
        names = whl.namelist()
        entry_points = next(whl.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"folio"}
    for path in (
        "folio/kernel/model.py", "folio/api/cli.py", "folio/api/routes/query.py", "folio/api/static/index.html",
        "folio/ingest/store.py", "folio/retrieval/search.py", "folio/assembly/core.py", "folio/client.py",
    ):
        assert path in names, path
    assert "folio = folio.api.cli:main" in entry_points
