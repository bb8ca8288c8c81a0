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


def _sources(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, src / name)
    return src


def build_wheel(tmp: Path) -> Path:
    src = _sources(tmp)
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
        "folio/kernel/model.py",
        "folio/api/cli/__init__.py",
        "folio/api/cli/__main__.py",
        "folio/api/http/routes/query.py",
        "folio/api/http/static/index.html",
        "folio/ingest/storage/store.py",
        "folio/retrieval/search.py",
        "folio/assembly/core.py",
        "folio/client/sync_client.py",
    ):
        assert path in names, path
    assert "folio = folio._cli:main" in entry_points
    for folder in ("folio", "ingest", "retrieval", "assembly", "api"):  # every module, subpackages included
        for module in (ROOT / folder).rglob("*.py"):
            rel = module.relative_to(ROOT).as_posix()
            installed = rel if folder == "folio" else f"folio/{rel}"
            if "/__pycache__/" not in rel and not (folder == "folio" and rel.split("/")[1] in SOURCES):
                assert installed in names, (
                    f"{installed} is missing from the wheel (pyproject [tool.setuptools] packages)"
                )


def test_an_editable_install_builds_without_warnings(tmp_path: Path) -> None:
    """Issue 34, item 6: ``scripts/setup.sh`` (``pip install -e``) printed setuptools' warning that
    ``folio.api.http.static`` was absent from ``packages``."""
    src = _sources(tmp_path)
    build = f"from setuptools import build_meta; build_meta.build_editable({str(tmp_path / 'dist')!r})"
    out = subprocess.run([sys.executable, "-c", build], cwd=src, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "is absent from the `packages` configuration" not in out.stdout + out.stderr, out.stderr[-3000:]


def test_a_plain_install_is_the_client_and_the_server_is_an_extra(tmp_path: Path) -> None:
    """``pip install folio`` pulls no torch, LanceDB, PyMuPDF or FastAPI: they come with ``folio[server]``."""
    with zipfile.ZipFile(build_wheel(tmp_path)) as whl:
        meta = next(whl.read(n).decode() for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
    requires = [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    plain = {r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip() for r in requires if "extra ==" not in r}
    server = {
        r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip()
        for r in requires
        if "'server'" in r or '"server"' in r
    }
    assert plain == {"pydantic", "pydantic-settings", "httpx"}, plain
    assert {"torch", "lancedb", "pymupdf", "fastapi", "uvicorn", "transformers"} <= server, server


CLIENT_ONLY = """
import importlib.abc, sys
from folio._cli import SERVER_MODULES

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in SERVER_MODULES:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
import folio
from folio.models import ContextPackage
with folio.Client("http://127.0.0.1:9", timeout=1) as client:
    try:
        client.health()
    except folio.APIConnectionError:
        print("client ok")
from folio import _cli
sys.argv = ["folio", "docs", "--data", sys.argv[1]]
_cli.main()
"""


def test_the_client_works_without_the_server_parts_and_the_command_says_what_to_install(tmp_path: Path) -> None:
    """With every server dependency made unimportable: the client imports and runs, ``folio`` exits 2 with
    the install hint (not a traceback)."""
    out = subprocess.run(
        [sys.executable, "-c", CLIENT_ONLY, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert "client ok" in out.stdout, out.stdout + out.stderr
    assert out.returncode == 2, out.stdout + out.stderr
    assert "pip install 'folio[server]'" in out.stderr and "Traceback" not in out.stderr, out.stderr
