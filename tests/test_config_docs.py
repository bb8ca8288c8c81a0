"""docs/configuration.md is generated from the code (``scripts/gen_config_docs.py``) and stays in step with it:
every field of every ``Settings`` group, the client's settings and every ``AssemblyOptions`` field are on the
page with their variable and current default."""

from __future__ import annotations

import importlib.util
import json
import re
import types
from pathlib import Path

import pytest
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gen_config_docs.py"
DOC = ROOT / "docs" / "configuration.md"


@pytest.fixture(scope="module")
def gen() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("gen_config_docs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_configuration_doc_is_up_to_date(gen: types.ModuleType) -> None:
    text = DOC.read_text(encoding="utf-8")
    assert gen.render(text, gen.blocks()) == text, (
        "docs/configuration.md is out of date with the settings: run python scripts/gen_config_docs.py"
    )


def test_check_mode_reports_a_stale_page(
    gen: types.ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = DOC.read_text(encoding="utf-8").replace(
        "`FOLIO_MAX_PAGES` | `ingest.max_pages` | int | `2000`", "`FOLIO_MAX_PAGES` | `ingest.max_pages` | int | `20`"
    )
    assert "`20`" in stale
    page = tmp_path / "configuration.md"
    page.write_text(stale, encoding="utf-8")
    monkeypatch.setattr(gen, "DOC", page)
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    messages: list[str] = []
    assert gen.main(["--check"], out=messages.append) == 1
    assert "out of date" in messages[0]
    assert gen.main([], out=messages.append) == 0
    assert page.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8")
    assert gen.main(["--check"], out=messages.append) == 0


def _rows(text: str) -> dict[str, str]:
    """First cell (without backticks) -> the whole table row (the rows, one a line, of a variable in two tables:
    ``FOLIO_API_KEY`` is the server's key and the client's)."""
    out: dict[str, str] = {}
    for m in re.finditer(r"^\| `([^`]+)` \|.*$", text, re.M):
        out[m.group(1)] = out[m.group(1)] + "\n" + m.group(0) if m.group(1) in out else m.group(0)
    return out


def _fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            out += _fields(field.annotation, f"{prefix}{name}.")
            continue
        out.append((prefix + name, field.default))
    return out


def test_every_setting_and_option_is_documented_with_its_default(gen: types.ModuleType) -> None:
    from folio.settings import ClientSettings, Settings, env_names

    rows = _rows(DOC.read_text(encoding="utf-8"))
    groups = [(name, f.annotation) for name, f in Settings.model_fields.items()] + [("client", ClientSettings)]
    assert len(groups) == len(Settings.GROUPS) + 1
    for group_name, group in groups:
        assert isinstance(group, type) and issubclass(group, BaseModel)
        names = env_names(group)  # type: ignore[arg-type]
        for name, default in _fields(group):
            var = names[name]
            assert var in rows, f"{var} ({group_name}.{name}) is not in docs/configuration.md"
            (row,) = [r for r in rows[var].splitlines() if f"| `{group_name}.{name}` |" in r]
            if isinstance(default, int | float | str) and not isinstance(default, bool):
                assert f"`{json.dumps(default)}`" in row, row
    options = gen.import_stage("assembly/options").AssemblyOptions
    for path, default in _fields(options):
        assert path in rows, f"AssemblyOptions.{path} is not in docs/configuration.md"
        if default is None or isinstance(default, int | float | str | bool):
            assert f"`{json.dumps(default)}`" in rows[path], rows[path]
