"""Every Python example in README.md and docs/*.md type-checks with mypy, under the project's settings (strict,
pydantic plugin): issue 34, item 6. The typed client's example in docs/api.md failed a user's mypy: ``upload(...,
wait=False)`` was typed ``IngestResponse | JobOut``, so ``wait_for_job(job)`` was an arg-type error, and the
finished job's ``result`` was Optional."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def examples() -> dict[str, str]:
    """Each ```python block of the README and docs, by a module name that says where it is."""
    out = {}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for i, found in enumerate(BLOCK.finditer(path.read_text(encoding="utf-8"))):
            out[f"{path.stem.replace('-', '_').lower()}_example_{i}"] = found.group(1)
    return out


def test_the_docs_have_python_examples() -> None:
    found = examples()
    assert {"readme_example_0", "api_example_0", "api_example_1", "api_example_2"} <= set(found)
    assert "wait=False" in found["api_example_0"] and "wait_for_job" in found["api_example_0"]


@pytest.mark.slow
def test_every_python_example_in_the_docs_type_checks(tmp_path: Path) -> None:
    files = []
    for name, code in examples().items():
        files.append(tmp_path / f"{name}.py")
        files[-1].write_text(code, encoding="utf-8")
    # run from the repository: mypy reads its configuration there and finds this checkout's folio
    out = subprocess.run(
        [sys.executable, "-m", "mypy", *map(str, files)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
    )
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


ADAPTERS = ("from folio.adapters.langchain import", "from folio.adapters.llamaindex import")
PRINTS = re.compile(r"^print\(.*\)  # (?P<shown>.+)$", re.M)


def _run(code: str) -> str:
    """What ``code`` prints, run here (the models this process has loaded serve it too)."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<docs example>", "exec"), {"__name__": "docs_example"})
    return out.getvalue()


@pytest.mark.slow
def test_the_adapters_examples_print_what_they_say(ingested_readonly: Path) -> None:
    """The LlamaIndex and LangChain examples of docs/api.md run against a real server on loopback over the sample
    store, and print what their comments say they print (``print(...)  # shown``): the LangChain example printed
    ``False`` when its fake answer cited an id the package does not hold (issue 48)."""
    from tests.api.conftest import live_server, make_settings

    found = {name: code for name, code in examples().items() if any(a in code for a in ADAPTERS)}
    assert len(found) == 2, sorted(found)
    assert any(PRINTS.search(code) for code in found.values())  # at least one example says what it prints
    with live_server(make_settings(ingested_readonly)) as url:
        for name, code in found.items():
            assert "http://127.0.0.1:8000" in code, name
            printed = _run(code.replace("http://127.0.0.1:8000", url))
            assert printed.strip(), name
            for said in PRINTS.finditer(code):
                assert said["shown"] in printed, (name, said["shown"], printed)
