"""``Settings``: the tree of every group, and the flat names it had before it had groups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from folio.settings.base import Group
from folio.settings.environ import reading
from folio.settings.groups import (
    BUILTIN_TOKENIZERS,
    ClusterSettings,
    ContextSettings,
    EmbeddingSettings,
    IngestSettings,
    LlmSettings,
    ModelSettings,
    SecuritySettings,
    ServerSettings,
    StorageSettings,
)

# The flat names Settings had before it had groups, and where they live now. They still work: as
# keyword arguments, in ``model_copy(update=...)`` and as read-only attributes.
LEGACY_NAMES: dict[str, tuple[str, str]] = {
    "data": ("storage", "data"),
    "host": ("server", "host"),
    "port": ("server", "port"),
    "api_key": ("security", "api_key"),
    "keys_file": ("security", "keys_file"),
    "max_upload_bytes": ("ingest", "max_upload_bytes"),
    "max_pages": ("ingest", "max_pages"),
    "ocr": ("ingest", "ocr"),
    "tokenizer": ("context", "tokenizer"),
    "tokenizers": ("context", "tokenizers"),
    "default_budget": ("context", "default_budget"),
    "allowed_hosts": ("security", "allowed_hosts"),
    "cors_origins": ("security", "cors_origins"),
    "query_workers": ("server", "query_workers"),
    "query_processes": ("server", "query_processes"),
    "query_queue": ("server", "query_queue"),
    "max_request_bytes": ("server", "max_request_bytes"),
    "keep_alive_s": ("server", "keep_alive_s"),
    "header_timeout_s": ("server", "header_timeout_s"),
    "clip_model": ("models", "clip_model"),
    "clip_pretrained": ("models", "clip_pretrained"),
    "colpali_model": ("models", "colpali_model"),
    "colpali_pool_factor": ("models", "colpali_pool_factor"),
    "llm_base_url": ("llm", "base_url"),
    "llm_model": ("llm", "model"),
    "llm_api_key": ("llm", "api_key"),
    "llm_concurrency": ("llm", "concurrency"),
    "llm_queue": ("llm", "queue"),
    "llm_summaries": ("llm", "summaries"),
    "ray_address": ("cluster", "address"),
}


def _nest(values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Flat legacy names in ``values`` as ``{group: {field: value}}``."""
    out: dict[str, dict[str, Any]] = {}
    for name, value in values.items():
        if name in LEGACY_NAMES:
            group, field = LEGACY_NAMES[name]
            out.setdefault(group, {})[field] = value
    return out


class Settings(BaseSettings):
    """The service's configuration: one group per concern, each read from its ``FOLIO_*`` variables."""

    model_config = SettingsConfigDict(env_prefix="FOLIO_", extra="ignore")

    server: ServerSettings = Field(default_factory=ServerSettings)
    security: SecuritySettings = Field(default_factory=SecuritySettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    models: ModelSettings = Field(default_factory=ModelSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    cluster: ClusterSettings = Field(default_factory=ClusterSettings)

    GROUPS: ClassVar[tuple[str, ...]] = (
        "server",
        "security",
        "storage",
        "ingest",
        "embedding",
        "models",
        "context",
        "llm",
        "cluster",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The tree reads no variable itself: each group reads its own."""
        return (init_settings,)

    @model_validator(mode="before")
    @classmethod
    def _groups(cls, data: Any) -> Any:
        """Legacy flat keywords go to their group; a group given as a mapping still reads the variables
        it was not given."""
        if not isinstance(data, Mapping):
            return data
        out = {k: v for k, v in data.items() if k not in LEGACY_NAMES}
        for group, values in _nest(data).items():
            given = out.get(group)
            if isinstance(given, Group):
                out[group] = given.model_copy(update=values)
            else:
                out[group] = {**(given or {}), **values}
        for group in cls.GROUPS:
            if isinstance(out.get(group), Mapping):
                out[group] = cls.model_fields[group].annotation(**out[group])  # type: ignore[misc]
        return out

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Every group read from ``environ`` instead of the process's environment."""
        with reading(environ):
            return cls()

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """``model_copy`` that also takes the legacy flat names (``update={"data": ...}``)."""
        if update:
            nested = _nest(update)
            update = {k: v for k, v in update.items() if k not in LEGACY_NAMES}
            for group, values in nested.items():
                update[group] = getattr(self, group).model_copy(update=values)
        return super().model_copy(update=update, deep=deep)

    def request_tokenizers(self) -> frozenset[str]:
        """The tokenizer names a request may ask for: the built-ins, ``tokenizers`` and the default."""
        return frozenset(BUILTIN_TOKENIZERS) | frozenset(self.context.tokenizers) | {self.context.tokenizer}


def _legacy_reader(group: str, field: str) -> property:
    return property(lambda self: getattr(getattr(self, group), field), doc=f"``{group}.{field}`` (read-only)")


# The flat names of before the groups (``LEGACY_NAMES``), read-only, for code written against them; folio's own
# code reads the groups (mypy does not see these, so a flat read inside the package is a type error).
for _name, (_group, _field) in LEGACY_NAMES.items():
    setattr(Settings, _name, _legacy_reader(_group, _field))
