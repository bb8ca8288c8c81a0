"""One typed configuration tree (issue 21): each group of ``folio.settings`` reads the variables folio always
read, and the typed value reaches the component that uses it.

Every test sets real variables (``monkeypatch.setenv``) and builds the real component: the app, the store, the
encoder, the ingest limits, a Ray job's spec, the client.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from folio.settings import (
    DEFAULT_BUDGET,
    LEGACY_NAMES,
    ClientSettings,
    IngestSettings,
    Settings,
    StorageSettings,
    child_environ,
    hub_offline,
    known_env,
    tiktoken_cache_dir,
)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """A process environment with a fresh data directory and none of the developer's FOLIO_ variables."""
    for name in list(os.environ):
        if name.startswith("FOLIO_") or name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FOLIO_DATA", str(tmp_path / "data"))
    return monkeypatch


# ----------------------------------------------------------------------------- one test per group
def test_server_group_sizes_the_query_pool(env: pytest.MonkeyPatch) -> None:
    from folio.api.http.app import create_app

    env.setenv("FOLIO_QUERY_WORKERS", "2")
    env.setenv("FOLIO_QUERY_QUEUE", "3")
    env.setenv("FOLIO_QUERY_PROCESSES", "0")
    env.setenv("FOLIO_ALLOWED_HOSTS", "testserver")
    settings = Settings()
    assert (settings.server.query_workers, settings.server.query_queue, settings.server.query_processes) == (2, 3, 0)
    with TestClient(create_app(settings)) as client:
        assert client.app.state.query_pool.capacity == 2 + 3  # type: ignore[attr-defined]


def test_security_group_reaches_the_host_check(env: pytest.MonkeyPatch) -> None:
    from folio.api.http.app import create_app

    with TestClient(create_app(Settings())) as plain:
        assert plain.get("/v1/health").status_code == 400  # TestClient's Host "testserver" is not allowed
    env.setenv("FOLIO_ALLOWED_HOSTS", "a.example, testserver")
    env.setenv("FOLIO_CORS_ORIGINS", '["https://app.example"]')
    settings = Settings()
    assert settings.security.allowed_hosts == ["a.example", "testserver"]
    with TestClient(create_app(settings)) as client:
        assert client.get("/v1/health").status_code == 200
        pre = client.options(
            "/v1/search", headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}
        )
        assert pre.headers.get("access-control-allow-origin") == "https://app.example"


def test_context_group_is_the_default_budget_and_tokenizer_of_a_request(env: pytest.MonkeyPatch) -> None:
    from folio.api.schemas import ContextRequest, assembly_options

    env.setenv("FOLIO_DEFAULT_BUDGET", "777")
    env.setenv("FOLIO_TOKENIZER", "o200k_base")
    s = Settings()
    opts = assembly_options(
        ContextRequest(query="x"), default_tokenizer=s.context.tokenizer, default_budget=s.context.default_budget
    )
    assert (opts.budget, opts.tokenizer) == (777, "o200k_base")
    env.delenv("FOLIO_DEFAULT_BUDGET")
    assert Settings().context.default_budget == DEFAULT_BUDGET == 2000


def test_storage_group_places_the_store_and_reaches_lancedb_options(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from folio.ingest.storage.objstore import storage_options
    from folio.ingest.storage.store import Store
    from folio.settings import StorageSettings

    env.setenv("FOLIO_DATA", str(tmp_path / "elsewhere"))
    assert Store().uri == str(tmp_path / "elsewhere") == Settings().storage.data
    env.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
    env.setenv("AWS_SECRET_ACCESS_KEY", "s3-secret")
    env.setenv("FOLIO_STORAGE_OPTIONS", '{"timeout": "60s"}')
    assert storage_options("s3://b/p", StorageSettings()) == {
        "aws_endpoint": "http://127.0.0.1:9000",
        "allow_http": "true",
        "aws_secret_access_key": "s3-secret",
        "timeout": "60s",
    }
    assert "s3-secret" not in repr(Settings())  # secrets stay out of logs
    env.setenv("FOLIO_STORAGE_OPTIONS", "[1]")
    with pytest.raises(ValueError, match="FOLIO_STORAGE_OPTIONS must be a JSON object"):
        storage_options("s3://b/p", StorageSettings())


def test_ingest_group_is_the_parse_limits(env: pytest.MonkeyPatch) -> None:
    from folio.ingest.options import IngestOptions
    from folio.ingest.parse_supervisor import IngestLimits

    env.setenv("FOLIO_PAGE_TIMEOUT_S", "7")
    env.setenv("FOLIO_INGEST_MEMORY_MB", "0")  # 0: off
    env.setenv("FOLIO_INGEST_TIMEOUT_S", "")  # empty: the default
    env.setenv("FOLIO_INGEST_ISOLATE", "no")
    env.setenv("FOLIO_MAX_PAGES", "12")
    expected = IngestLimits(timeout_s=300.0, page_timeout_s=7.0, memory_mb=None, isolate=False)
    assert IngestLimits.from_settings(Settings().ingest) == expected
    assert IngestOptions.from_settings(Settings().ingest).limits == expected  # what the pipeline is handed
    assert Settings().max_pages == 12
    assert IngestLimits.from_settings(IngestSettings.from_env({})) == IngestLimits()  # one set of defaults


def test_embedding_group_chooses_the_encoder(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from folio.ingest.embed import MiniLM, model_cache_dir

    env.setenv("FOLIO_EMBED_BACKEND", "torch")
    env.setenv("FOLIO_EMBED_THREADS", "3")
    env.setenv("FOLIO_MODEL_CACHE", str(tmp_path / "models"))
    enc = MiniLM(settings=Settings().embedding)
    assert (enc.document_backend, enc.query_backend, enc.threads) == ("torch", "onnx", 3)
    assert model_cache_dir(enc.cache) == tmp_path / "models"
    assert MiniLM(settings=Settings.from_env({}).embedding).document_backend == "onnx-int8"
    env.setenv("FOLIO_EMBED_THREADS", "-1")
    with pytest.raises(ValidationError, match="FOLIO_EMBED_THREADS"):
        MiniLM(settings=Settings().embedding)


def test_models_group_is_what_retrieval_reads(env: pytest.MonkeyPatch) -> None:
    from folio.retrieval.channels.clip import load_clip

    env.setenv("FOLIO_COLPALI_POOL_FACTOR", "3")
    env.setenv("FOLIO_CLIP_MODEL", "ViT-B-32")
    s = Settings()
    assert load_clip.__annotations__["settings"] == "Settings"  # retrieval reads the tree itself, by group
    seen = s  # the flat names of before the groups still read the same values
    assert (s.models.colpali_pool_factor, s.models.clip_model) == (3, "ViT-B-32")
    assert (seen.colpali_pool_factor, seen.clip_model) == (3, "ViT-B-32")


def test_llm_group_names_its_variable_when_invalid(env: pytest.MonkeyPatch, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from folio.api.cli import main

    env.setenv("FOLIO_LLM_MODEL", "tiny")
    assert Settings().llm.model == Settings().llm_model == "tiny"
    env.setenv("FOLIO_LLM_CONCURRENCY", "0")
    with pytest.raises(ValidationError, match="FOLIO_LLM_CONCURRENCY"):
        Settings()
    assert main(["docs", "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "FOLIO_LLM_CONCURRENCY: Input should be greater than or equal to 1" in err and "Traceback" not in err


def test_cluster_group_sizes_a_ray_task_and_keys_stay_behind(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from folio.api.cluster.board import job_spec
    from folio.ingest.options import IngestOptions
    from folio.ingest.pipeline import IngestJob
    from folio.ingest.storage.store import Store

    env.setenv("FOLIO_RAY_CPUS_PER_DOC", "2.5")
    env.setenv("FOLIO_RAY_GPUS_PER_DOC", "1")
    env.setenv("FOLIO_API_KEY", "api-secret")
    env.setenv("FOLIO_LLM_MODEL", "tiny")
    env.setenv("AWS_SECRET_ACCESS_KEY", "s3-secret")
    settings = Settings(ocr=False)
    pdf = (Path(__file__).parent.parent / "sample_pdfs" / "support-policy-v1.pdf").read_bytes()
    job = IngestJob.check(pdf, filename="a.pdf", options=IngestOptions.from_settings(settings.ingest))
    spec = job_spec(Store(tmp_path / "d"), job, settings)
    assert (spec.num_cpus, spec.num_gpus) == (2.5, 1.0)
    text = json.dumps([spec.settings, spec.storage_options, spec.store])
    assert "api-secret" not in text and "s3-secret" not in text
    worker = Settings(**spec.settings)  # what a Ray worker rebuilds
    assert (worker.ocr, worker.llm.model, worker.cluster.cpus_per_doc) == (False, "tiny", 2.5)
    assert spec.job.options.ocr is False and spec.job.options.reparse_outdated is False  # what the task runs


def test_client_settings_reach_the_client_and_the_cli(env: pytest.MonkeyPatch) -> None:
    from folio.api.cli.common import Remote, remote_server
    from folio.client import Client

    env.setenv("FOLIO_URL", "http://127.0.0.1:9/")
    env.setenv("FOLIO_API_KEY", "k1")
    with Client() as client:
        assert client.base_url == "http://127.0.0.1:9"
        assert client._http.headers["X-API-Key"] == "k1"
    assert remote_server(argparse.Namespace(server=None, data=None)) == Remote("http://127.0.0.1:9/", "k1")
    assert ClientSettings.from_env({}).url is None


# ----------------------------------------------------------------------------- the tree itself
def test_flat_names_of_before_the_groups_still_work(env: pytest.MonkeyPatch) -> None:
    env.setenv("FOLIO_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    s = Settings(data="/d", llm_model="tiny", host="0.0.0.0", ray_address="auto")
    assert (s.storage.data, s.llm.model, s.server.host, s.cluster.address) == ("/d", "tiny", "0.0.0.0", "auto")
    assert s.llm.base_url == "http://127.0.0.1:9/v1"  # a group given some fields still reads the others
    t = s.model_copy(update={"data": "/e", "port": 9, "query_processes": 0, "tokenizers": {"x": "/m"}})
    assert (t.data, t.port, t.query_processes, t.tokenizers, t.host) == ("/e", 9, 0, {"x": "/m"}, "0.0.0.0")
    assert (s.data, s.port) == ("/d", 8000)  # the copy is a copy
    for flat, (group, field) in LEGACY_NAMES.items():
        assert getattr(s, flat) == getattr(getattr(s, group), field), flat


def test_from_env_reads_only_the_mapping_given(env: pytest.MonkeyPatch) -> None:
    env.setenv("FOLIO_PORT", "1234")
    assert Settings().port == 1234
    s = Settings.from_env({"folio_llm_model": "m", "FOLIO_PAGE_TIMEOUT_S": "0"})
    assert (s.port, s.llm.model, s.ingest.page_timeout_s) == (8000, "m", None)
    with pytest.raises(ValidationError, match="FOLIO_PORT"):
        Settings.from_env({"FOLIO_PORT": "x"})


def test_every_variable_is_known_and_only_folio_settings_reads_them() -> None:
    assert {"FOLIO_INGEST_TIMEOUT_S", "FOLIO_EMBED_BACKEND", "FOLIO_STORAGE_OPTIONS", "FOLIO_RAY_CPUS_PER_DOC",
            "FOLIO_URL", "FOLIO_LLM_MODEL", "FOLIO_DATA"} <= known_env()
    assert not {"FOLIO_TABLES_BASELINE", "FOLIO_GEN_TEST_DATA", "FOLIO_BENCH_DATA"} & known_env()  # test switches


def test_the_environment_others_need_is_set_through_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    env = child_environ(OMP_THREAD_LIMIT="1")
    assert env["OMP_THREAD_LIMIT"] == "1" and env.get("PATH") == os.environ.get("PATH")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # the user's choice stands
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    hub_offline()
    assert (os.environ["HF_HUB_OFFLINE"], os.environ["TRANSFORMERS_OFFLINE"]) == ("0", "1")
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    path = tiktoken_cache_dir()
    assert os.environ["TIKTOKEN_CACHE_DIR"] == path  # tiktoken reads it from there
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/somewhere")
    assert tiktoken_cache_dir() == "/somewhere"


def test_storage_group_without_aws_variables_gives_no_options() -> None:
    assert StorageSettings.from_env({"AWS_REGION": "x"}).aws_region == "x"
    from folio.ingest.storage.objstore import storage_options

    assert storage_options("/local/dir", StorageSettings.from_env({"AWS_REGION": "x"})) == {}
