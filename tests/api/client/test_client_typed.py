"""``folio.Client`` for its users' type checkers and error handling (issue 23, item 6): the package is
typed (``py.typed`` ships in the wheel, so a user's mypy checks calls and results), options are typed
keyword arguments whose mistakes raise folio's own ``InvalidRequest``, and an ingest job can be
waited for, its result typed."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import folio
from folio import errors, models
from tests.api.conftest import live_server, make_settings

ROOT = Path(__file__).resolve().parents[3]
QUESTION = "How fast must a priority-one incident be acknowledged?"

USER_CODE = '''
import folio

with folio.Client("http://127.0.0.1:8000") as client:
    pkg = client.context("q", budget=700, strategy="window")
    reveal_type(pkg.budget.used)
    client.context("q", budgte=700)
    client.search("q", k="many")
    job = client.wait_for_job("abc")
    if job.result is not None:
        reveal_type(job.result.version_id)
'''


def test_misspelt_or_mistyped_options_raise_folio_errors() -> None:
    with folio.Client("http://127.0.0.1:9") as c:  # nothing is sent: the options are checked first
        with pytest.raises(errors.InvalidRequest) as typo:
            c.context(QUESTION, budgte=700)  # type: ignore[call-arg]
        assert typo.value.code == "validation_error" and "budgte" in typo.value.message
        assert isinstance(typo.value, errors.ClientError) and typo.value.detail[0]["loc"] == ["budgte"]
        with pytest.raises(errors.InvalidRequest) as wrong:
            c.search(QUESTION, k="many")  # type: ignore[typeddict-item]
        assert "k:" in wrong.value.message
        with pytest.raises(errors.InvalidRequest):
            c.answer(QUESTION, strategy="everything")  # type: ignore[typeddict-item]


@pytest.mark.slow
def test_wait_for_job_returns_the_typed_result(data_copy: Path, samples: Path) -> None:
    pdf = (samples / "support-policy-v1.pdf").read_bytes()
    with live_server(make_settings(data_copy)) as url, folio.Client(url) as c:
        queued = c.upload(pdf, filename="policy.pdf", doc_id="policy-copy", wait=False)
        assert isinstance(queued, models.JobOut)
        with pytest.raises(errors.APITimeoutError):
            c.wait_for_job(queued, timeout=0.0)  # not finished the moment it was queued
        job = c.wait_for_job(queued.job_id, timeout=300, poll_interval=0.2)
        assert job.status == "done" and isinstance(job.result, models.IngestResult)
        assert job.result.doc_id == "policy-copy" and job.result.status == "created" and job.result.pages == 1
        assert job.result.version_id in {v.version_id for v in c.get_document("policy-copy").versions}

        async def again() -> models.JobOut:
            async with folio.AsyncClient(url) as ac:
                return await ac.wait_for_job(job)

        assert asyncio.run(again()).result == job.result


@pytest.mark.slow
def test_installed_client_is_typed_for_a_users_mypy(tmp_path: Path) -> None:
    """Build the wheel, install it alone into a folder, and type-check a user's script against it."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path),
         str(ROOT)],
        check=True, capture_output=True,
    )
    wheel = next(tmp_path.glob("folio_context-*.whl"))  # the distribution folio-context (issue 48)
    assert "folio/py.typed" in zipfile.ZipFile(wheel).namelist()
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        check=True, capture_output=True,
    )
    user = tmp_path / "user"
    user.mkdir()
    (user / "app.py").write_text(USER_CODE)
    env = {k: v for k, v in os.environ.items() if k != "MYPYPATH"} | {"PYTHONPATH": str(site)}
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--strict", "--follow-imports=silent", "app.py"],
        cwd=user, env=env, capture_output=True, text=True, timeout=600,
    )
    report = out.stdout
    assert "missing library stubs or py.typed" not in report, report
    assert 'app.py:6: note: Revealed type is "int"' in report, report  # not Any
    assert 'app.py:11: note: Revealed type is "str"' in report, report  # JobOut.result is an IngestResult
    assert 'app.py:7: error: Unexpected keyword argument "budgte"' in report, report
    assert 'app.py:8: error: Argument "k" to "search" of "Client" has incompatible type "str"' in report, report
    assert "Found 2 errors" in report, report
