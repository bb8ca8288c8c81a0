"""Settings are typed where read, and a misspelled ``FOLIO_`` variable is reported at startup."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from folio.api.service.llm import client_from_settings
from folio.retrieval.routing.summary import SummaryIndexer
from folio.retrieval.visual import indexers_from_settings
from folio.settings import Settings, known_env, unknown_env, warn_unknown_env

ROOT = Path(__file__).resolve().parents[2]


def test_llm_summaries_can_be_switched_on_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOLIO_LLM_SUMMARIES", "1")
    monkeypatch.setenv("FOLIO_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("FOLIO_LLM_MODEL", "tiny")
    s = Settings(data="/nonexistent")
    assert s.llm_summaries is True  # was silently dropped: Settings had no such field
    llm = client_from_settings(s)  # the door's one client (api.application.Folio.indexers hands it in)
    summaries = [i for i in indexers_from_settings(s, llm=llm) if isinstance(i, SummaryIndexer)]
    assert summaries and summaries[0].llm is llm and llm is not None and llm.model == "tiny"
    off = Settings(data="/nonexistent", llm_summaries=False)
    assert [i for i in indexers_from_settings(off, llm=llm) if isinstance(i, SummaryIndexer)][0].llm is None


def test_health_reports_llm_summaries_only_when_they_are_on(tmp_path: Path) -> None:
    from folio.api.application import Folio

    llm = {"llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "tiny"}
    for on, expected in ((False, "extractive"), (True, "extractive+llm:tiny")):
        s = Settings(data=str(tmp_path), llm_summaries=on, **llm)  # type: ignore[arg-type]
        assert Folio.open(s).retriever.status()["summary"]["model"] == expected


def test_misspelled_variable_is_named_with_the_nearest_setting(caplog: pytest.LogCaptureFixture) -> None:
    env = {"FOLIO_BUGDET": "500", "FOLIO_DEFAULT_BUDGET": "800", "FOLIO_INGEST_TIMEOUT_S": "9", "PATH": "/bin"}
    with caplog.at_level(logging.WARNING, logger="folio.settings"):
        assert warn_unknown_env(env) == ["unknown setting FOLIO_BUGDET; did you mean FOLIO_DEFAULT_BUDGET?"]
    assert "FOLIO_BUGDET" in caplog.text
    assert unknown_env({"FOLIO_CLIPMODEL": "x"}) == ["unknown setting FOLIO_CLIPMODEL; did you mean FOLIO_CLIP_MODEL?"]


def test_every_folio_variable_the_code_reads_is_known() -> None:
    """A ``FOLIO_`` variable named in the code is a field of a settings group (else folio would
    warn about it as a misspelling); the test suite's own switches are in ``tests/switches.py``."""
    names: set[str] = set()
    for pkg in ("ingest", "retrieval", "assembly", "api", "folio"):
        for path in (ROOT / pkg).rglob("*.py"):
            if path == ROOT / "folio" / "settings" / "misspelled.py":  # its doctests name misspellings on purpose
                continue
            names |= set(re.findall(r"\"(FOLIO_[A-Z0-9_]+[A-Z0-9])\"", path.read_text(encoding="utf-8")))
    assert names and names <= known_env(), sorted(names - known_env())
