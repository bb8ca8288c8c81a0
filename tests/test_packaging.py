"""``pip install`` of the project puts one top-level package into site-packages: ``folio`` (issue 21), from the
distribution ``folio-context`` (issue 48: the registry's ``folio`` is someone else's project).

``python -m build`` makes the sdist and, from it, the wheel, once for this module, from a copy of the checkout (so
the build leaves nothing in it) and without build isolation (setuptools and ``build`` are in the dev install, so
no index is needed to build). The wheel is read as the zip it is, and installed into a fresh venv.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "folio", "ingest", "retrieval", "assembly", "api")
DISTRIBUTION = "folio-context"
# What pip prints when it cannot reach a registry for the client's dependencies (pydantic, httpx)
OFFLINE = ("No matching distribution found", "Could not find a version", "NewConnectionError", "Network is unreachable")


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


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder ``python -m build`` wrote the sdist and the wheel into (the wheel built from the sdist)."""
    assert importlib.util.find_spec("build"), "build is a dev dependency; install with pip install -e '.[dev]'"
    tmp = tmp_path_factory.mktemp("build")
    src = _sources(tmp)
    out = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist"), "."],
        cwd=src,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return tmp / "dist"


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (whl,) = dist.glob("folio_context-*-py3-none-any.whl")
    return whl


def test_build_makes_the_sdist_and_the_wheel_under_the_distribution_name(dist: Path, wheel: Path) -> None:
    from folio._version import __version__

    (sdist,) = dist.glob("*.tar.gz")
    assert sdist.name == f"folio_context-{__version__}.tar.gz", sdist.name
    assert wheel.name == f"folio_context-{__version__}-py3-none-any.whl", wheel.name
    with tarfile.open(sdist) as tar:
        tops = {n.split("/")[1] for n in tar.getnames() if n.count("/") >= 1}
    assert {"pyproject.toml", "README.md", "LICENSE", "folio", "ingest", "retrieval", "assembly", "api"} <= tops
    with zipfile.ZipFile(wheel) as whl:
        meta = next(whl.read(n).decode() for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
    assert f"Name: {DISTRIBUTION}\n" in meta and f"Version: {__version__}\n" in meta, meta[:300]


def test_the_wheel_installs_one_top_level_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as whl:
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


def test_a_plain_install_is_the_client_and_the_server_is_an_extra(wheel: Path) -> None:
    """``pip install folio-context`` pulls no torch, LanceDB, PyMuPDF or FastAPI: they come with
    ``folio-context[server]``."""
    with zipfile.ZipFile(wheel) as whl:
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


HIDE_SERVER = """
import importlib.abc, sys
from folio._cli import SERVER_MODULES

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in SERVER_MODULES:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
"""
"""The opening of a script that runs as on a client-only install: the server's modules fail to import."""

CLIENT_ONLY = HIDE_SERVER + """import folio
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
    assert "pip install 'folio-context[server]'" in out.stderr and "Traceback" not in out.stderr, out.stderr


FRESH = """
import importlib.metadata, sys
import folio
assert folio.__file__.startswith(sys.prefix), folio.__file__  # the installed wheel, not the checkout
assert callable(folio.Client) and callable(folio.AsyncClient)
print(importlib.metadata.version(sys.argv[1]), folio.__version__)
"""


def test_the_built_client_wheel_installs_into_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    """Issue 48, item 1: the wheel, no extras, into a venv of its own (no system site-packages, so nothing of this
    checkout or its .venv is seen): ``import folio`` works, ``folio.Client`` is there, the installed metadata answers
    under ``folio-context``, and the ``folio`` command says to install ``folio-context[server]``.

    The venv is made without pip and this interpreter's pip installs into it (``pip --python``), which saves
    ensurepip's seconds. The client's dependencies (pydantic, pydantic-settings, httpx) come from the registry pip
    is configured with: if it cannot be reached the test skips and says so (building needs no network, installing
    them does)."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, clear=True).create(env_dir)
    python = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(wheel)],
        capture_output=True,
        text=True,
        check=False,
        timeout=240,
        env=env,
    )
    if install.returncode != 0 and any(s in install.stdout + install.stderr for s in OFFLINE):
        pytest.skip(f"the client's dependencies cannot be fetched (no registry): {install.stderr.strip()[-400:]}")
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    ran = subprocess.run(
        [str(python), "-c", FRESH, DISTRIBUTION], capture_output=True, text=True, check=False, cwd=tmp_path, env=env
    )
    from folio._version import __version__

    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.split() == [__version__, __version__], ran.stdout
    folio_cmd = env_dir / "bin" / "folio"
    version = subprocess.run([str(folio_cmd), "--version"], capture_output=True, text=True, check=False, env=env)
    assert (version.returncode, version.stdout.strip()) == (0, f"folio {__version__}"), version.stdout + version.stderr
    docs = subprocess.run(
        [str(folio_cmd), "docs", "--data", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=env,
    )
    assert docs.returncode == 2, docs.stdout + docs.stderr
    assert "pip install 'folio-context[server]'" in docs.stderr and "Traceback" not in docs.stderr, docs.stderr
    shown = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "show", DISTRIBUTION],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert f"Name: {DISTRIBUTION}" in shown.stdout and "static website" not in shown.stdout, shown.stdout


def test_no_code_asks_the_installed_metadata_for_the_old_name() -> None:
    """``importlib.metadata.version("folio")`` would find nothing once installed as ``folio-context`` (or the
    other project's version, where that is installed): folio's own code reads ``folio._version`` instead."""
    old = re.compile(r"""\b(?:version|distribution|metadata|files|requires)\(\s*["']folio["']\s*\)""")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("folio", "ingest", "retrieval", "assembly", "api", "scripts", "benchmarks", "tests")
        for path in (ROOT / folder).rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if old.search(line) and path != Path(__file__).resolve()
    ]
    assert not found, found


def test_the_server_the_command_and_the_client_report_the_one_version(tmp_path: Path) -> None:
    """``folio/_version.py`` is the one place: the OpenAPI document, ``folio --version`` and the client's
    User-Agent say it, in a checkout as in an install (no metadata lookup under a distribution name)."""
    from folio._version import __version__
    from folio.api.http.app import create_app
    from folio.client.calls import default_headers
    from folio.settings import Settings

    assert create_app(Settings(data=str(tmp_path / "data"))).openapi()["info"]["version"] == __version__
    assert default_headers("k", None)["User-Agent"] == f"folio-client/{__version__}"
    out = subprocess.run(
        [sys.executable, "-m", "folio.api.cli", "--version"], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert (out.returncode, out.stdout.strip()) == (0, f"folio {__version__}"), out.stdout + out.stderr


@pytest.mark.slow
def test_the_client_wheel_ingests_lists_and_deletes_on_a_server(wheel: Path, tmp_path: Path) -> None:
    """Issue 48, item 3: from the built client wheel alone (a fresh venv: no torch, LanceDB, PyMuPDF or FastAPI),
    ``folio ingest FILE --server URL`` uploads to a server this test starts on loopback and prints a line per stage
    of its progress events, ``folio docs`` lists the document and ``folio delete`` removes it; each exits 0."""
    from tests.api.conftest import live_server, make_settings

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, clear=True).create(env_dir)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "FOLIO_URL")}
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"), "install", "-q", str(wheel)],
        capture_output=True, text=True, check=False, timeout=240, env=env,
    )
    if install.returncode != 0 and any(s in install.stdout + install.stderr for s in OFFLINE):
        pytest.skip(f"the client's dependencies cannot be fetched (no registry): {install.stderr.strip()[-400:]}")
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    pdf = tmp_path / "policy.pdf"
    shutil.copy(ROOT / "sample_pdfs" / "support-policy-v1.pdf", pdf)

    def folio_cmd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(env_dir / "bin" / "folio"), *args], capture_output=True, text=True, check=False,
                              cwd=tmp_path, env=env, timeout=300)

    with live_server(make_settings(tmp_path / "data", allowed_hosts=["127.0.0.1"])) as url:
        ingested = folio_cmd("ingest", str(pdf), "--server", url)
        assert ingested.returncode == 0, ingested.stdout + ingested.stderr
        assert "policy.pdf: parse 1/1 pages" in ingested.stderr and "policy.pdf: created policy@" in ingested.stdout
        docs = folio_cmd("docs", "--server", url)
        assert docs.returncode == 0 and docs.stdout.splitlines()[1].startswith("policy "), docs.stdout + docs.stderr
        deleted = folio_cmd("delete", "policy", "--server", url)
        assert (deleted.returncode, deleted.stdout) == (0, "deleted policy (1 version)\n"), deleted.stderr
