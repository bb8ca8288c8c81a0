"""folio's configuration: one typed tree of settings groups, read from ``FOLIO_*`` variables.

``Settings`` is the tree: ``server``, ``security``, ``storage``, ``ingest``, ``embedding``, ``models``,
``context``, ``llm`` and ``cluster``, each a group that reads its own variables when it is built (the
names are those folio always had: ``FOLIO_LLM_MODEL`` is ``settings.llm.model``, ``FOLIO_INGEST_TIMEOUT_S``
is ``settings.ingest.timeout_s``). ``ClientSettings`` is what ``folio.Client`` reads. The composition
roots (the CLI, ``create_app``, the workers, ``folio.local``) build a ``Settings`` and pass values down;
a library function that is given nothing builds only the group it needs, here.

This is the only module of folio that reads or writes ``os.environ`` (``tests/test_environ.py``): the
variables a child process or a library needs (Tesseract's thread limit, Hugging Face's offline switch,
tiktoken's cache, Ray's loopback switch) are set through :func:`child_environ`,
:func:`apply_process_environment` and :func:`tiktoken_cache_dir`. It imports nothing of folio, so that
every room may import it (the kernel for tiktoken's cache, the client for its URL and key).
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

logger = logging.getLogger(__name__)

DEFAULT_BUDGET = 2000
"""The token budget of a request that gives neither ``budget`` nor ``context_window``: REST, the CLI,
MCP, answers and ``AssemblyOptions`` in-process (``FOLIO_DEFAULT_BUDGET`` changes it for the server)."""
DEFAULT_TOKENIZER = "cl100k_base"
BUILTIN_TOKENIZERS = ("cl100k_base", "o200k_base")
DEFAULT_DOCUMENT_BACKEND = "onnx-int8"
DEFAULT_QUERY_BACKEND = "onnx"


def usable_cpus() -> int:
    """The cores this process may run on (its CPU affinity: a container's cpuset, ``taskset``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def default_concurrency() -> int:
    """Query threads, and `folio serve`'s query processes, when not set: the cores, at most 8."""
    return max(1, min(8, usable_cpus()))


def default_data_dir() -> str:
    """``$FOLIO_DATA``, else ``$XDG_DATA_HOME/folio``, else ``~/.local/share/folio``."""
    environ = _environ()
    if environ.get("FOLIO_DATA"):
        return environ["FOLIO_DATA"]
    base = environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "folio")


# ----------------------------------------------------------------------------- the environment of others
def child_environ(**overrides: str) -> dict[str, str]:
    """The environment for a child process: this process's, with ``overrides`` on top."""
    return {**os.environ, **overrides}


def apply_process_environment(values: Mapping[str, str], *, override: bool = True) -> None:
    """Set variables that a library reads from this process's environment (and that child processes
    inherit); ``override=False`` keeps a value that is already set."""
    for name, value in values.items():
        if override:
            os.environ[name] = value
        else:
            os.environ.setdefault(name, value)


def hub_offline() -> None:
    """Hugging Face never goes online (weights come from local caches), unless the user said otherwise:
    set before transformers, open_clip or colpali load."""
    apply_process_environment({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}, override=False)


def tiktoken_cache_dir() -> str:
    """``$TIKTOKEN_CACHE_DIR``, else a folder under the temp dir, which is then set for tiktoken to find."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR")
    if not cache_dir:
        cache_dir = os.path.join(tempfile.gettempdir(), "folio-tiktoken-cache")
        os.environ["TIKTOKEN_CACHE_DIR"] = cache_dir
    return cache_dir


# ----------------------------------------------------------------------------- groups
# The variables ``from_env`` reads instead of the process's (None: the process's).
_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("folio_settings_environ", default=None)


@contextmanager
def _reading(environ: Mapping[str, str]) -> Iterator[None]:
    token = _ENVIRON.set(environ)
    try:
        yield
    finally:
        _ENVIRON.reset(token)


def _environ() -> Mapping[str, str]:
    """The variables being read: those given to ``from_env``, else the process's."""
    environ = _ENVIRON.get()
    return os.environ if environ is None else environ


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
        environ = _ENVIRON.get()
        if environ is not None:
            env_settings = _MappingSource(settings_cls, environ)
        return (init_settings, env_settings, dotenv_settings, file_secret_settings)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Self:
        """The group read from ``environ`` instead of the process's environment (names match in any case)."""
        with _reading(environ):
            return cls()


def _json_or_commas(v: Any) -> Any:
    """``a.example,b.example`` (a JSON list works too)."""
    if isinstance(v, str):
        v = v.strip()
        if v.startswith("["):
            return json.loads(v)
        return [part.strip() for part in v.split(",") if part.strip()]
    return v


def _blank_is_default(cls: type[Group], v: Any, info: ValidationInfo) -> Any:
    """An empty variable means the default (the variables read by hand before they were settings)."""
    if isinstance(v, str) and not v.strip() and info.field_name is not None:
        field = cls.model_fields[info.field_name]
        return field.get_default(call_default_factory=True)
    return v


class ServerSettings(Group):
    """`folio serve` and the query pool."""

    host: str = "127.0.0.1"
    port: int = 8000
    query_workers: int = Field(
        default_factory=default_concurrency,
        ge=1,
        le=256,
        description="query threads (default: the cores, at most 8): search, context and verify when there are no "
        "query processes, answers and MCP tools always",
    )
    query_processes: int | None = Field(
        None,
        ge=0,
        le=64,
        description="worker processes for /v1/search, /v1/context and /v1/verify, each with its own store "
        "handle and models (0: threads of the server process). Unset: `folio serve` starts one per core (at "
        "most 8); an app built in code (create_app) uses threads. See README 'Serving'",
    )
    query_queue: int = Field(
        32, ge=0, le=10_000, description="queries waiting for a worker before new ones get 503 + Retry-After"
    )
    max_request_bytes: int = Field(
        10 * 1024 * 1024,
        ge=1024,
        description="JSON request body limit of /v1/verify; every other JSON route takes the smaller of it and "
        "1 MiB (uploads have max_upload_bytes)",
    )
    keep_alive_s: int = Field(
        75, ge=1, description="idle keep-alive timeout of `folio serve` (above clients' pool expiry)"
    )
    header_timeout_s: float = Field(
        15.0,
        gt=0,
        le=600,
        description="`folio serve`: seconds a client has to send a request's headers once it has begun (slowloris)",
    )


class SecuritySettings(Group):
    """Keys and the HTTP hardening (README "Security")."""

    api_key: str | None = Field(
        default=None,
        description="legacy single key with full access (every collection, write); prefer keys_file",
    )
    keys_file: str | None = Field(
        default=None,
        description="JSON file of keys scoped to collections and read/write (api/keys.py, `folio keys`); "
        "re-read when it changes",
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host header values accepted besides localhost, 127.0.0.1, [::1] and `host`; "
        "'*' turns the check off",
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="origins (scheme://host[:port]) that browsers may call the API from"
    )

    @field_validator("allowed_hosts", "cors_origins", mode="before")
    @classmethod
    def _comma_list(cls, v: Any) -> Any:
        """``FOLIO_ALLOWED_HOSTS=a.example,b.example`` (a JSON list works too)."""
        return _json_or_commas(v)


class StorageSettings(Group):
    """Where the store is, and how LanceDB reaches an object store (``ingest/storage/objstore.py``)."""

    data: str = Field(default_factory=default_data_dir, description="data directory or object-store URI")
    storage_options: Annotated[dict[str, str], NoDecode] = Field(
        default_factory=dict,
        description="JSON object of LanceDB storage options, on top of those the AWS_* variables give",
    )
    aws_endpoint_url_s3: str | None = Field(
        None, validation_alias="AWS_ENDPOINT_URL_S3", description="s3:// stores: the endpoint (before the next two)"
    )
    aws_endpoint_url: str | None = Field(None, validation_alias="AWS_ENDPOINT_URL", description="s3://: the endpoint")
    aws_endpoint: str | None = Field(None, validation_alias="AWS_ENDPOINT", description="s3://: the endpoint")
    aws_access_key_id: str | None = Field(
        None, validation_alias="AWS_ACCESS_KEY_ID", repr=False, description="s3://: the access key id"
    )
    aws_secret_access_key: str | None = Field(
        None, validation_alias="AWS_SECRET_ACCESS_KEY", repr=False, description="s3://: the secret key"
    )
    aws_session_token: str | None = Field(
        None, validation_alias="AWS_SESSION_TOKEN", repr=False, description="s3://: a session token"
    )
    aws_region: str | None = Field(None, validation_alias="AWS_REGION", description="s3://: the region")
    aws_default_region: str | None = Field(
        None, validation_alias="AWS_DEFAULT_REGION", description="s3://: the region when AWS_REGION is unset"
    )

    @field_validator("storage_options", mode="before")
    @classmethod
    def _json_object(cls, v: Any) -> Any:
        if isinstance(v, str):
            if not v.strip():
                return {}
            v = json.loads(v)
            if not isinstance(v, dict):
                raise ValueError("FOLIO_STORAGE_OPTIONS must be a JSON object of storage options")
        if isinstance(v, dict):
            return {str(k): str(x) for k, x in v.items()}
        return v


def _positive_or_none(v: Any) -> Any:
    """``0`` (or less) turns a limit off."""
    return None if isinstance(v, int | float) and not isinstance(v, bool) and v <= 0 else v


class IngestSettings(Group):
    """What one upload or one parse may cost (``ingest/parse_supervisor.py``), and how tables are read."""

    max_upload_bytes: int = 100 * 1024 * 1024
    max_pages: int = 2000
    ocr: bool | None = Field(default=None, description="None: OCR scanned pages when tesseract is installed")
    timeout_s: float | None = Field(
        300.0,
        validation_alias="FOLIO_INGEST_TIMEOUT_S",
        description="parse time per document (s), and as long again for the text embedding after it; past either "
        "the parse child is killed or the embedding stopped, and the job fails with `422 ingest_timeout`; `0`: off",
    )
    page_timeout_s: float | None = Field(
        60.0,
        validation_alias="FOLIO_PAGE_TIMEOUT_S",
        description="parse time per page (s); a page past it is degraded (text and page image kept, tables, "
        "figures and OCR stopped; listed in `degraded_pages`); `0`: off",
    )
    memory_mb: int | None = Field(
        3072,
        validation_alias="FOLIO_INGEST_MEMORY_MB",
        description="address space of the parse child (`422 ingest_memory`); a child killed by a signal is "
        "`422 parser_crashed`; `0`: off",
    )
    ocr_budget_s: float | None = Field(
        None,
        validation_alias="FOLIO_OCR_BUDGET_S",
        description="OCR time per document (unset: half the document limit); later scanned pages are indexed "
        "as images with a warning",
    )
    isolate: bool = Field(
        True,
        validation_alias="FOLIO_INGEST_ISOLATE",
        description="`0`: parse in-process, without the time and memory limits (no forkserver child)",
    )
    word_tables: Literal["off", "repair", "all"] = Field(
        "repair",
        description="tables read from word positions (statements, `ingest/pdf/wordtables.py`): `repair` replaces "
        "a ruled-table reading that gets fewer rows right (figures inside label cells), `all` also adds them "
        "where no table was found (unruled statements), `off`: the ruled-table reader alone (parser v6)",
    )

    @field_validator("timeout_s", "page_timeout_s", "memory_mb", "ocr_budget_s", mode="before")
    @classmethod
    def _off(cls, v: Any, info: ValidationInfo) -> Any:
        """Empty: the default; ``0`` (or less): off; megabytes may be written with a fraction (cut off)."""
        v = _blank_is_default(cls, v, info)
        if isinstance(v, str):
            v = float(v)
        if isinstance(v, float) and info.field_name == "memory_mb":
            v = int(v) if v > 0 else None
        return _positive_or_none(v)

    @field_validator("isolate", mode="before")
    @classmethod
    def _isolate(cls, v: Any) -> Any:
        """Anything but ``0``, ``false`` or ``no`` isolates (as before this was a setting)."""
        if isinstance(v, str):
            return v.strip().lower() not in ("0", "false", "no")
        return v


class EmbeddingSettings(Group):
    """The MiniLM text encoder (``ingest/embed.py``)."""

    embed_backend: str = Field(
        DEFAULT_DOCUMENT_BACKEND,
        description="document embeddings: `onnx-int8` (about 2.6x fp32 on 2 cores, page recall@10 within 1 "
        "point), `onnx` (fp32) or `torch` (the fp32 baseline)",
    )
    query_backend: str = Field(
        DEFAULT_QUERY_BACKEND,
        description="query embeddings: `onnx` or `torch`, always fp32 (what every store was written with)",
    )
    embed_threads: int = Field(0, ge=0, description="threads of the document encoder (0: the cores)")
    model_cache: str | None = Field(
        None, description="where the ONNX files are exported once per machine (unset: ~/.cache/folio/models)"
    )

    @field_validator("embed_backend", "query_backend", "model_cache", mode="before")
    @classmethod
    def _blank(cls, v: Any, info: ValidationInfo) -> Any:
        return _blank_is_default(cls, v, info)


class ModelSettings(Group):
    """Optional models. Without them folio runs with the retrievers it has and /v1/health says why."""

    clip_model: str | None = Field(default=None, description="open_clip model name, e.g. ViT-B-32, or local-dir:<path>")
    clip_pretrained: str | None = Field(default=None, description="open_clip pretrained tag or local weights path")
    colpali_model: str | None = Field(default=None, description="colpali-engine model dir or hub id (offline cache)")
    colpali_pool_factor: int = Field(0, ge=0, description="ColPali token pooling factor (0: no pooling)")


class ContextSettings(Group):
    """What a request gets when it does not say: the tokenizer and the budget."""

    tokenizer: str = Field(
        DEFAULT_TOKENIZER, description="the default tokenizer: cl100k_base, o200k_base or a name in `tokenizers`"
    )
    tokenizers: dict[str, str] = Field(
        default_factory=dict,
        description="Hugging Face tokenizers that requests may name, {name: dir or tokenizer.json}, "
        'e.g. FOLIO_TOKENIZERS=\'{"llama3": "/models/llama3"}\'',
    )
    default_budget: int = DEFAULT_BUDGET


class LlmSettings(Group):
    """An OpenAI-compatible endpoint: answers, reranking, LLM compression and summaries."""

    model_config = SettingsConfigDict(env_prefix="FOLIO_LLM_", extra="ignore", populate_by_name=True)

    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint for summaries/reranking")
    model: str | None = None
    api_key: str | None = None
    concurrency: int = Field(
        8,
        ge=1,
        le=1024,
        description="POST /v1/answer model calls running at once (they wait on the endpoint "
        "on the event loop, apart from the query pool)",
    )
    queue: int = Field(
        16, ge=0, le=10_000, description="answers waiting for a model call slot before new ones get 503 + Retry-After"
    )
    summaries: bool = Field(
        default=False,
        description="write section summaries with the LLM at ingest (one call per section: slow, may cost "
        "money); off: extractive summaries. Needs llm_base_url and llm_model",
    )


LLM_ENABLE_HINT = (
    "set FOLIO_LLM_BASE_URL (an OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1), "
    "FOLIO_LLM_MODEL and, if the server needs one, FOLIO_LLM_API_KEY"
)
"""How to switch the LLM on: what an answer, ``compress="llm"`` or a rerank asked for without one is told."""


class ClusterSettings(Group):
    """folio on a Ray cluster (``api/cluster/board.py``, docs/scaling.md)."""

    model_config = SettingsConfigDict(env_prefix="FOLIO_RAY_", extra="ignore", populate_by_name=True)

    address: str | None = Field(
        default=None,
        description="Ray cluster (auto, HOST:PORT or ray://HOST:PORT): POST /v1/documents runs its ingest job "
        "there and every replica sees the same jobs (api/cluster/board.py)",
    )
    cpus_per_doc: float = Field(1.0, ge=0, description="CPUs a Ray ingest task reserves")
    gpus_per_doc: float = Field(0.0, ge=0, description="GPUs a Ray ingest task reserves")


class ClientSettings(Group):
    """What ``folio.Client`` reads when it is not told (also ``folio context/search/ask`` without ``--data``)."""

    url: str | None = Field(
        None,
        description="the server `folio.Client` talks to, and that `folio context`/`search`/`ask` use when "
        "`--data` is not given",
    )
    api_key: str | None = Field(None, description="the key `folio.Client` sends (`X-API-Key`)", repr=False)


# ----------------------------------------------------------------------------- the tree
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
        with _reading(environ):
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

# ----------------------------------------------------------------------------- misspelled variables
def setting_groups() -> list[type[Group]]:
    """Every group of the tree, then the client's."""
    tree = [Settings.model_fields[name].annotation for name in Settings.GROUPS]
    return [g for g in tree if isinstance(g, type) and issubclass(g, Group)] + [ClientSettings]


def known_env() -> frozenset[str]:
    """Every ``FOLIO_`` variable folio reads."""
    return frozenset(v for g in setting_groups() for v in env_names(g).values() if v.startswith("FOLIO_"))


def _known_in_order() -> list[str]:
    """The variables of the flat settings of before the groups first (in their old order), then the rest."""
    groups = dict(zip(Settings.GROUPS, setting_groups(), strict=False))
    out = [env_names(groups[g])[f] for g, f in LEGACY_NAMES.values()]
    for g in setting_groups():
        out += [v for n, v in env_names(g).items() if n in g.model_fields and v.startswith("FOLIO_") and v not in out]
    return out


def unknown_env(environ: Mapping[str, str]) -> list[str]:
    """One message per ``FOLIO_`` variable that folio does not read, with the nearest known name.

    >>> unknown_env({"FOLIO_BUGDET": "500", "FOLIO_DATA": "/d", "HOME": "/root"})
    ['unknown setting FOLIO_BUGDET; did you mean FOLIO_DEFAULT_BUDGET?']
    """
    known = known_env()
    out = []
    for name in sorted(environ):
        if not name.startswith("FOLIO_") or name in known:
            continue
        near = nearest_setting(name)
        out.append(f"unknown setting {name}" + (f"; did you mean {near}?" if near else ""))
    return out


def nearest_setting(name: str) -> str | None:
    """The known variable ``name`` most likely misspells: a close whole name, else the one sharing the
    most close words (``BUGDET`` ~ ``BUDGET``), the settings of before the groups first; None if nothing is near.

    >>> nearest_setting("FOLIO_CLIPMODEL"), nearest_setting("FOLIO_XYZ")
    ('FOLIO_CLIP_MODEL', None)
    """
    known = _known_in_order()
    suffix = name.removeprefix("FOLIO_")
    tails = [k.removeprefix("FOLIO_") for k in known]
    close = difflib.get_close_matches(suffix, tails, n=1, cutoff=0.75)
    if close:
        return "FOLIO_" + close[0]
    words = [w for w in suffix.split("_") if w]

    def shared(tail: str) -> int:
        return sum(1 for w in words if difflib.get_close_matches(w, tail.split("_"), n=1, cutoff=0.6))

    scored = [(shared(t), -k, t) for k, t in enumerate(tails)]
    best = max(scored)
    return "FOLIO_" + best[2] if best[0] else None


def warn_unknown_env(environ: Mapping[str, str] | None = None) -> list[str]:
    """Log a warning per misspelled ``FOLIO_`` variable (at startup: the CLI and ``create_app``)."""
    messages = unknown_env(os.environ if environ is None else environ)
    for m in messages:
        logger.warning("%s", m)
    return messages
