"""Service configuration: one ``Settings`` object, read from ``FOLIO_*`` environment variables.

Library functions never read settings themselves; the CLI and the FastAPI app build a ``Settings``
and pass explicit values down.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from ingest.store import default_data_dir


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="FOLIO_", extra="ignore")

    data: str = Field(default_factory=default_data_dir, description="data directory or object-store URI")
    host: str = "127.0.0.1"
    port: int = 8000
    api_key: str | None = Field(default=None, description="when set, every /v1 request needs it (X-API-Key or Bearer)")
    max_upload_bytes: int = 100 * 1024 * 1024
    max_pages: int = 2000
    ocr: bool | None = Field(default=None, description="None: OCR scanned pages when tesseract is installed")
    tokenizer: str = "cl100k_base"
    default_budget: int = 2000
    # Optional models. Without them folio runs with the retrievers it has and /v1/health says why.
    clip_model: str | None = Field(default=None, description="open_clip model name, e.g. ViT-B-32, or local-dir:<path>")
    clip_pretrained: str | None = Field(default=None, description="open_clip pretrained tag or local weights path")
    colpali_model: str | None = Field(default=None, description="colpali-engine model dir or hub id (offline cache)")
    colpali_pool_factor: int = 0
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint for summaries/reranking")
    llm_model: str | None = None
    llm_api_key: str | None = None


@lru_cache
def get_settings() -> Settings:
    return Settings()
