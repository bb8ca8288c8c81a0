"""folio's settings groups, one per concern, each read from its ``FOLIO_*`` variables when it is built
(``FOLIO_LLM_MODEL`` is ``LlmSettings.model``, ``FOLIO_INGEST_TIMEOUT_S`` is ``IngestSettings.timeout_s``), and
the defaults other rooms share (the budget, the tokenizer, the embedding backends)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from folio.settings.base import Group
from folio.settings.environ import default_concurrency, default_data_dir

DEFAULT_BUDGET = 2000
"""The token budget of a request that gives neither ``budget`` nor ``context_window``: REST, the CLI,
MCP, answers and ``AssemblyOptions`` in-process (``FOLIO_DEFAULT_BUDGET`` changes it for the server)."""
DEFAULT_TOKENIZER = "cl100k_base"
BUILTIN_TOKENIZERS = ("cl100k_base", "o200k_base")
DEFAULT_DOCUMENT_BACKEND = "onnx-int8"
DEFAULT_QUERY_BACKEND = "onnx"


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

    ann_min_rows: int = Field(
        500_000,
        ge=0,
        description="the chunk vectors get an ANN index (built by maintenance: `folio ingest`'s end, every 20th "
        "commit, `folio compact`) once the chunks table has this many rows; `0`: never (exact search only)",
    )
    ann_index: Literal["IVF_PQ", "IVF_HNSW_SQ"] = Field("IVF_PQ", description="the ANN index type (cosine)")
    ann_nprobes: int = Field(64, ge=1, description="IVF partitions an ANN query searches")
    ann_refine_factor: int = Field(
        20, ge=1, description="an ANN query re-ranks this many times its limit by exact distance"
    )
    ann_scope_regions: int = Field(
        100_000,
        ge=0,
        description="dense search of scopes over this many regions runs in the store (its ANN index, or a flat "
        "scan where it has none) and holds no vectors in the query process; smaller scopes (a few documents) "
        "stay in process, exact",
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
        "all",
        description="tables read from word positions (statements, `ingest/pdf/tables/words.py`): `all` (default) "
        "adds them where no table was found (unruled statements: a label and its figures in one row under the "
        "title, unit and periods) and replaces a ruled-table reading that gets fewer rows right; `repair`: the "
        "replacing only; `off`: the ruled-table reader alone (parser v6)",
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
    embed_device: Literal["auto", "cpu", "cuda"] = Field(
        "auto",
        description="where both encoders run: `auto` (a CUDA GPU when the backend's runtime sees one: "
        "`torch.cuda.is_available()`, or ONNX Runtime's `CUDAExecutionProvider`; else the CPU), `cpu`, or `cuda` "
        "(no GPU is an error at startup). On a GPU `onnx-int8` runs the fp32 graph: int8 is a CPU optimisation",
    )
    embed_threads: int = Field(0, ge=0, description="threads of the document encoder (0: the cores)")
    model_cache: str | None = Field(
        None, description="where the ONNX files are exported once per machine (unset: ~/.cache/folio/models)"
    )

    @field_validator("embed_backend", "query_backend", "embed_device", "model_cache", mode="before")
    @classmethod
    def _blank(cls, v: Any, info: ValidationInfo) -> Any:
        v = _blank_is_default(cls, v, info)
        return v.strip().lower() if isinstance(v, str) and info.field_name == "embed_device" else v


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
