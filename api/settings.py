"""Service configuration: one ``Settings`` object, read from ``FOLIO_*`` environment variables.

Library functions never read settings themselves; the CLI and the FastAPI app build a ``Settings``
and pass explicit values down.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from folio.ingest.cpus import usable_cpus
from folio.ingest.store import default_data_dir
from folio.kernel.tokens import BUILTIN_TOKENIZERS

logger = logging.getLogger(__name__)


def default_concurrency() -> int:
    """Query threads, and `folio serve`'s query processes, when not set: the cores, at most 8."""
    return max(1, min(8, usable_cpus()))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="FOLIO_", extra="ignore")

    data: str = Field(default_factory=default_data_dir, description="data directory or object-store URI")
    host: str = "127.0.0.1"
    port: int = 8000
    api_key: str | None = Field(
        default=None,
        description="legacy single key with full access (every collection, write); prefer keys_file",
    )
    keys_file: str | None = Field(
        default=None,
        description="JSON file of keys scoped to collections and read/write (api/keys.py, `folio keys`); "
        "re-read when it changes",
    )
    max_upload_bytes: int = 100 * 1024 * 1024
    max_pages: int = 2000
    ocr: bool | None = Field(default=None, description="None: OCR scanned pages when tesseract is installed")
    tokenizer: str = Field(
        "cl100k_base", description="the default tokenizer: cl100k_base, o200k_base or a name in `tokenizers`"
    )
    tokenizers: dict[str, str] = Field(
        default_factory=dict,
        description="Hugging Face tokenizers that requests may name, {name: dir or tokenizer.json}, "
        'e.g. FOLIO_TOKENIZERS=\'{"llama3": "/models/llama3"}\'',
    )
    default_budget: int = 2000
    # HTTP hardening (README "Security").
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host header values accepted besides localhost, 127.0.0.1, [::1] and `host`; "
        "'*' turns the check off",
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="origins (scheme://host[:port]) that browsers may call the API from"
    )
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
        10 * 1024 * 1024, ge=1024, description="JSON request body limit (uploads have max_upload_bytes)"
    )
    keep_alive_s: int = Field(
        75, ge=1, description="idle keep-alive timeout of `folio serve` (above clients' pool expiry)"
    )
    header_timeout_s: float = Field(
        15.0, gt=0, le=600,
        description="`folio serve`: seconds a client has to send a request's headers once it has begun (slowloris)",
    )
    # Optional models. Without them folio runs with the retrievers it has and /v1/health says why.
    clip_model: str | None = Field(default=None, description="open_clip model name, e.g. ViT-B-32, or local-dir:<path>")
    clip_pretrained: str | None = Field(default=None, description="open_clip pretrained tag or local weights path")
    colpali_model: str | None = Field(default=None, description="colpali-engine model dir or hub id (offline cache)")
    colpali_pool_factor: int = Field(0, ge=0, description="ColPali token pooling factor (0: no pooling)")
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint for summaries/reranking")
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_concurrency: int = Field(
        8, ge=1, le=1024, description="POST /v1/answer model calls running at once (they wait on the endpoint "
        "on the event loop, apart from the query pool)"
    )
    llm_queue: int = Field(
        16, ge=0, le=10_000, description="answers waiting for a model call slot before new ones get 503 + "
        "Retry-After"
    )
    llm_summaries: bool = Field(
        default=False,
        description="write section summaries with the LLM at ingest (one call per section: slow, may cost "
        "money); off: extractive summaries. Needs llm_base_url and llm_model",
    )
    ray_address: str | None = Field(
        default=None,
        description="Ray cluster (auto, HOST:PORT or ray://HOST:PORT): POST /v1/documents runs its ingest job "
        "there and every replica sees the same jobs (api/cluster.py)",
    )

    def request_tokenizers(self) -> frozenset[str]:
        """The tokenizer names a request may ask for: the built-ins, ``tokenizers`` and the default."""
        return frozenset(BUILTIN_TOKENIZERS) | frozenset(self.tokenizers) | {self.tokenizer}

    @field_validator("allowed_hosts", "cors_origins", mode="before")
    @classmethod
    def _comma_list(cls, v: Any) -> Any:
        """``FOLIO_ALLOWED_HOSTS=a.example,b.example`` (a JSON list works too)."""
        if isinstance(v, str):
            v = v.strip()
            if v.startswith("["):
                return json.loads(v)
            return [part.strip() for part in v.split(",") if part.strip()]
        return v



# FOLIO_ variables read outside Settings: ingest limits (``ingest.limits.IngestLimits.from_env``), the
# embedder (``ingest.embed``) and the test suite's switches. Anything else with the prefix is a typo;
# tests/api/test_settings.py fails when the code reads one that is not listed here.
OTHER_ENV = frozenset({
    "FOLIO_INGEST_TIMEOUT_S", "FOLIO_PAGE_TIMEOUT_S", "FOLIO_INGEST_MEMORY_MB", "FOLIO_OCR_BUDGET_S",
    "FOLIO_INGEST_ISOLATE", "FOLIO_EMBED_BACKEND", "FOLIO_QUERY_BACKEND", "FOLIO_EMBED_THREADS",
    "FOLIO_MODEL_CACHE", "FOLIO_TABLES_BASELINE",
    "FOLIO_GEN_TEST_DATA", "FOLIO_HYPOTHESIS_EXAMPLES", "FOLIO_KILL_ITERATIONS", "FOLIO_BENCH_DATA",
    # folio on a cluster: object-store options (ingest/objstore.py), Ray resources per document (api/cluster.py)
    "FOLIO_STORAGE_OPTIONS", "FOLIO_RAY_CPUS_PER_DOC", "FOLIO_RAY_GPUS_PER_DOC",
    # the client's server (folio.Client; folio context/search/ask use it when set)
    "FOLIO_URL",
})


def known_env() -> frozenset[str]:
    """Every ``FOLIO_`` variable folio reads."""
    prefix = str(Settings.model_config.get("env_prefix", ""))
    return frozenset(prefix + name.upper() for name in Settings.model_fields) | OTHER_ENV


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
    most close words (``BUGDET`` ~ ``BUDGET``), Settings fields before the others; None if nothing is near.

    >>> nearest_setting("FOLIO_CLIPMODEL"), nearest_setting("FOLIO_XYZ")
    ('FOLIO_CLIP_MODEL', None)
    """
    fields = ["FOLIO_" + f.upper() for f in Settings.model_fields]
    known = fields + sorted(OTHER_ENV)
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
