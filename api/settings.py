"""Service configuration: one ``Settings`` object, read from ``FOLIO_*`` environment variables.

Library functions never read settings themselves; the CLI and the FastAPI app build a ``Settings``
and pass explicit values down.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ingest.store import default_data_dir


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
        default_factory=lambda: max(1, min(8, os.cpu_count() or 1)),
        ge=1,
        le=256,
        description="threads that run /v1/search, /v1/context and /v1/verify (default: the cores, at most 8)",
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
    # Optional models. Without them folio runs with the retrievers it has and /v1/health says why.
    clip_model: str | None = Field(default=None, description="open_clip model name, e.g. ViT-B-32, or local-dir:<path>")
    clip_pretrained: str | None = Field(default=None, description="open_clip pretrained tag or local weights path")
    colpali_model: str | None = Field(default=None, description="colpali-engine model dir or hub id (offline cache)")
    colpali_pool_factor: int = 0
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint for summaries/reranking")
    llm_model: str | None = None
    llm_api_key: str | None = None

    def request_tokenizers(self) -> frozenset[str]:
        """The tokenizer names a request may ask for: the built-ins, ``tokenizers`` and the default."""
        from ingest.tokens import BUILTIN_TOKENIZERS

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


@lru_cache
def get_settings() -> Settings:
    return Settings()
