"""Issue 32: the import paths that moved (the api's rooms, the chat client, ``folio.api.settings``) keep
working through one table (``folio._migration.MOVED``), each with a ``DeprecationWarning`` naming the new
path, and hand out the very object of the new home."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from folio._migration import MODULES, MOVED

ROOT = Path(__file__).resolve().parent.parent


def _new_object(home: str) -> object:
    module, name = home.split(":")
    found = getattr(importlib.import_module(module), name, None)
    return found if found is not None else importlib.import_module(f"{module}.{name}")


@pytest.mark.parametrize(
    ("old", "name", "home"),
    [
        ("folio.api.app", "create_app", "folio.api.http.app:create_app"),
        ("folio.api.settings", "Settings", "folio.settings:Settings"),
        ("folio.retrieval.llm", "ChatClient", "folio.api.service.llm:ChatClient"),
        ("folio.api.jobs", "JobRunner", "folio.api.service.jobs:JobRunner"),
        ("folio.api.body_limits", "json_shape", "folio.api.http.body_limits:json_shape"),
        ("folio.api.service", "search_hits", "folio.api.service.context:search_hits"),
        ("folio.api.cluster", "job_spec", "folio.api.cluster.board:job_spec"),
        ("folio.api.mcp_server", "mount", "folio.api.http.mcp_mount:mount"),
        ("folio.api.routes", "documents", "folio.api.http.routes:documents"),
    ],
)
def test_an_old_path_warns_and_gives_the_new_object(old: str, name: str, home: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} moved to .*{name}"):
        got = getattr(importlib.import_module(old), name)
    assert got is _new_object(home)


def test_every_entry_of_the_table_resolves() -> None:
    """A module entry's new home imports; a name entry's new home has the name."""
    for old, new in MOVED.items():
        if ":" in old:
            assert _new_object(new) is not None, old
        else:
            importlib.import_module(new)


def test_the_table_never_shadows_a_real_module() -> None:
    """An old module of the table is gone from the tree (else its file, not the table, would answer)."""
    for old in MODULES:
        parts = old.split(".")
        folder = {"api": "api", "retrieval": "retrieval"}[parts[1]]
        assert not (ROOT / folder / Path(*parts[2:])).with_suffix(".py").exists(), old


def test_a_name_that_never_existed_is_an_attribute_error() -> None:
    import folio.api.service

    with pytest.raises(AttributeError, match="no_such_name"):
        folio.api.service.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        from folio.api.app import no_such_name  # noqa: F401


def test_the_old_import_line_works_in_a_fresh_process() -> None:
    """As a user's code writes it: ``from folio.api.app import create_app`` (docs/security.md before)."""
    code = (
        "from folio.api.app import create_app\nfrom folio.api.http.app import create_app as new\n"
        "print(create_app is new)"
    )
    out = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.stdout.strip() == "True" and "DeprecationWarning" in out.stderr, out.stderr
