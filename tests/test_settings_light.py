"""``folio.settings_light`` reads what ``folio.settings`` reads, without pydantic (issue 34, item 2): a ``folio``
command that asks a server reads its URL, key and data directory there, and checks for misspelled variables,
so the two readings must not drift apart."""

from __future__ import annotations

import os

import pytest

from folio import settings_light
from folio.settings import ClientSettings, StorageSettings, known_env, unknown_env

ENVIRONMENTS = [
    {},
    {"FOLIO_URL": "http://127.0.0.1:8000", "FOLIO_API_KEY": "k1", "FOLIO_DATA": "/srv/folio"},
    {"folio_url": "http://lower.example", "Folio_Api_Key": "k2", "folio_data": "/lower"},  # any case, as pydantic
    {"FOLIO_URL": "http://first.example", "folio_url": "http://last.example"},  # the last spelling wins
    {"FOLIO_URL": "", "FOLIO_API_KEY": "", "FOLIO_DATA": ""},  # empty values are kept as given
    {"XDG_DATA_HOME": "/xdg"},
    {"XDG_DATA_HOME": ""},
    {"FOLIO_BUGDET": "500", "FOLIO_OCR": "false"},
    {"folio_bugdet": "500", "FOLIO_LLM_MODEL": "m"},  # not FOLIO_ in capitals: not a misspelled setting
    {"FOLIO_": "x"},
]


def test_the_known_variables_are_the_settings_variables() -> None:
    assert settings_light.KNOWN_ENV == known_env()


@pytest.mark.parametrize("environ", ENVIRONMENTS)
def test_the_light_reading_is_the_settings_reading(environ: dict[str, str]) -> None:
    client = ClientSettings.from_env(environ)
    assert settings_light.client_url(environ) == client.url
    assert settings_light.client_api_key(environ) == client.api_key
    assert settings_light.data_dir(environ) == StorageSettings.from_env(environ).data
    assert settings_light.any_unknown_env(environ) == bool(unknown_env(environ))


def test_the_process_environment_is_read_when_none_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOLIO_URL", "http://env.example")
    monkeypatch.setenv("FOLIO_DATA", "/from-env")
    monkeypatch.setenv("FOLIO_BUGDET", "1")
    assert settings_light.client_url() == ClientSettings().url == "http://env.example"
    assert settings_light.data_dir() == StorageSettings().data == "/from-env"
    assert settings_light.any_unknown_env()
    monkeypatch.delenv("FOLIO_BUGDET")
    for name in [n for n in os.environ if n.startswith("FOLIO_") and n not in known_env()]:
        monkeypatch.delenv(name)
    assert not settings_light.any_unknown_env()
