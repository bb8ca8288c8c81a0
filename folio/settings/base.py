"""``Group``: a settings group that reads its own variables, and names the variable of a bad value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from folio.settings.environ import given_environ, reading


class _MappingSource(EnvSettingsSource):
    """pydantic-settings' variable source over a mapping instead of ``os.environ``."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._mapping = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        if self.case_sensitive:
            return dict(self._mapping)
        return {k.lower(): v for k, v in self._mapping.items()}


def _named(cls: type[BaseSettings], e: ValidationError) -> ValidationError:
    """``e`` with each field named by the variable that sets it (``FOLIO_LLM_CONCURRENCY: ...``)."""
    names = env_names(cls)
    details: list[Any] = []
    for err in e.errors():
        loc = err["loc"]
        if loc and isinstance(loc[0], str) and loc[0] in names:
            loc = (names[loc[0]], *loc[1:])
        detail: dict[str, Any] = {"type": err["type"], "loc": loc, "input": err["input"]}
        if "ctx" in err:
            detail["ctx"] = err["ctx"]
        details.append(detail)
    try:
        return ValidationError.from_exception_data(cls.__name__, details)
    except (TypeError, ValueError, KeyError):  # an error type that cannot be rebuilt: keep it as it was
        return e


def env_names(cls: type[BaseSettings]) -> dict[str, str]:
    """Field name (and alias) -> the variable that sets it, for one settings group."""
    prefix = str(cls.model_config.get("env_prefix", ""))
    out: dict[str, str] = {}
    for name, field in cls.model_fields.items():
        alias = field.validation_alias
        var = alias.upper() if isinstance(alias, str) else (prefix + name).upper()
        out[name] = var
        if isinstance(alias, str):
            out[alias] = var
    return out


class Group(BaseSettings):
    """A settings group: built from its own variables (``FOLIO_`` and the field name unless the field
    names another); an invalid value is a ``ValidationError`` that names the variable."""

    model_config = SettingsConfigDict(env_prefix="FOLIO_", extra="ignore", populate_by_name=True)

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as e:
            raise _named(type(self), e) from None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keywords, then the variables: the process's, or those ``from_env`` was given."""
        environ = given_environ()
        if environ is not None:
            env_settings = _MappingSource(settings_cls, environ)
        return (init_settings, env_settings, dotenv_settings, file_secret_settings)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Self:
        """The group read from ``environ`` instead of the process's environment (names match in any case)."""
        with reading(environ):
            return cls()
