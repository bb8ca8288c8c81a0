"""Where the embedder runs (issue 47, item 4): ``FOLIO_EMBED_DEVICE`` (``auto``, ``cpu``, ``cuda``) read as a
setting, ``cuda`` without a GPU a clear error at startup (the ``folio`` command, as a user runs it, and the settings
handed to the encoder), ``auto`` on this CPU machine the CPU with the vectors of before, and the choice made from
what the runtime offers: given a fake provider list that names CUDA, ``auto`` picks the GPU, and follows ONNX
Runtime back to the CPU when the session cannot open on it (this machine's real ORT is a CPU build).

The GPU itself is exercised by ``benchmarks/embed_device.py`` where a GPU is lent (vectors to cosine >= 0.9999)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from folio.ingest import embed, embed_device
from folio.ingest.embed import MiniLM, text_encoder
from folio.ingest.embed_device import (
    EmbedDeviceUnavailable,
    choose_device,
    onnx_devices,
    resolve_device,
    runtime_devices,
)
from folio.settings import EmbeddingSettings, Settings

ROOT = Path(__file__).resolve().parents[2]
FOLIO = Path(sys.executable).with_name("folio")
TEXTS = [
    "A P1 incident must be acknowledged within 30 minutes.",
    "Tables are read with read.table, CSV files with read.csv.",
    "Die Kernel-Entwicklung wird von Linus Torvalds koordiniert.",
    "x",
    "Reportlab draws text and graphics on a PDF canvas. " * 20,
]
# A FAKE provider list, as onnxruntime-gpu reports it on a GPU machine; this machine's ONNX Runtime is a CPU build.
FAKE_GPU_PROVIDERS = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
HAS_CUDA = "cuda" in runtime_devices("onnx")[0] or "cuda" in runtime_devices("torch")[0]
needs_no_gpu = pytest.mark.skipif(HAS_CUDA, reason="this machine has a CUDA device: the CPU-only cases do not apply")


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No device settled yet in this process, and no shared MiniLM (each test settles its own)."""
    monkeypatch.setattr(embed_device, "_RESOLVED", {})
    monkeypatch.setattr(embed, "_DEFAULT", None)
    return monkeypatch


def fake_gpu_onnxruntime(monkeypatch: pytest.MonkeyPatch) -> None:
    """ONNX Runtime reports the FAKE provider list (its sessions stay what this machine's build can open)."""
    import onnxruntime

    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: list(FAKE_GPU_PROVIDERS))


# ----------------------------------------------------------------------------- the setting
def test_the_device_is_a_setting_named_by_its_variable() -> None:
    assert EmbeddingSettings.from_env({}).embed_device == "auto"
    for given, want in [("cpu", "cpu"), ("CUDA", "cuda"), (" auto ", "auto"), ("", "auto")]:
        assert EmbeddingSettings.from_env({"FOLIO_EMBED_DEVICE": given}).embed_device == want
    with pytest.raises(ValidationError, match="FOLIO_EMBED_DEVICE") as e:
        EmbeddingSettings.from_env({"FOLIO_EMBED_DEVICE": "gpu"})
    assert "'auto', 'cpu' or 'cuda'" in str(e.value)
    assert Settings.from_env({"FOLIO_EMBED_DEVICE": "cpu"}).embedding.embed_device == "cpu"
    assert MiniLM(settings=EmbeddingSettings(embed_device="cpu")).device == "cpu"


def test_a_ray_task_gets_the_drivers_device_setting(tmp_path: Path) -> None:
    """The task rebuilds the driver's settings groups; ``auto`` there picks the GPU Ray gave it."""
    from folio.api.cluster.board import job_spec
    from folio.ingest.options import IngestOptions
    from folio.ingest.pipeline import IngestJob
    from folio.ingest.storage.store import Store

    settings = Settings.from_env({"FOLIO_EMBED_DEVICE": "cuda", "FOLIO_RAY_GPUS_PER_DOC": "0.25"})
    pdf = (ROOT / "sample_pdfs" / "support-policy-v1.pdf").read_bytes()
    job = IngestJob.check(pdf, filename="a.pdf", options=IngestOptions.from_settings(settings.ingest))
    spec = job_spec(Store(tmp_path / "d"), job, settings)
    assert spec.num_gpus == 0.25 and Settings(**spec.settings).embedding.embed_device == "cuda"


# ----------------------------------------------------------------------------- choosing
def test_auto_picks_cuda_from_a_fake_provider_list() -> None:
    assert onnx_devices(FAKE_GPU_PROVIDERS) == ("cuda", "cpu")
    assert choose_device("auto", onnx_devices(FAKE_GPU_PROVIDERS), runtime="onnx") == "cuda"
    assert choose_device("cuda", onnx_devices(FAKE_GPU_PROVIDERS), runtime="onnx") == "cuda"
    assert choose_device("cpu", onnx_devices(FAKE_GPU_PROVIDERS), runtime="onnx") == "cpu"
    assert choose_device("auto", onnx_devices(["CPUExecutionProvider"]), runtime="onnx") == "cpu"
    with pytest.raises(EmbedDeviceUnavailable, match="install onnxruntime-gpu"):
        choose_device("cuda", onnx_devices(["CPUExecutionProvider"]), runtime="onnx")
    with pytest.raises(ValueError, match="unknown embedding device"):
        choose_device("tpu", ("cpu",), runtime="torch")


def test_the_settled_device_and_backend_from_a_fake_gpu(fresh: pytest.MonkeyPatch) -> None:
    """With the FAKE provider list, the process settles on CUDA for both ONNX encoders, and the document encoder
    runs the fp32 graph there (int8 is a CPU optimisation): what ``/v1/health`` reports."""
    fake_gpu_onnxruntime(fresh)
    minilm = MiniLM(settings=EmbeddingSettings.from_env({}))
    assert minilm.devices()["document"]["device"] == "auto"  # not settled before a use: nothing probed yet
    assert resolve_device("auto", "onnx-int8") == "cuda"
    assert minilm.devices() == {
        "document": {"backend": "onnx", "device": "cuda"},
        "query": {"backend": "onnx", "device": "cuda"},
    }
    assert MiniLM(settings=EmbeddingSettings(embed_device="cpu")).resolve_devices()["document"] == {
        "backend": "onnx-int8", "device": "cpu"
    }  # fmt: skip


def test_auto_follows_onnx_runtime_back_to_the_cpu(fresh: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The provider list names CUDA (the FAKE one), but the session opens on the CPU (as onnxruntime-gpu does on a
    machine without a driver): ``auto`` embeds on the CPU, says so in the log, and gives the CPU vectors; ``cuda``
    is the clear error instead."""
    fake_gpu_onnxruntime(fresh)
    # (the UserWarning: this CPU build's own words for a provider it does not have, where a GPU build would log
    # that the CUDA libraries did not load)
    with caplog.at_level(logging.WARNING, logger="folio.ingest.embed"), pytest.warns(UserWarning, match="CUDA"):
        got = MiniLM(settings=EmbeddingSettings.from_env({})).encode_queries(TEXTS[:2])
    assert np.array_equal(got, text_encoder("onnx", threads=1).encode(TEXTS[:2]))
    assert resolve_device("auto", "onnx") == "cpu"
    assert any("the GPU is not usable" in r.getMessage() for r in caplog.records)
    strict = MiniLM(settings=EmbeddingSettings(embed_device="cuda"))  # the FAKE list promises a GPU
    with pytest.raises(EmbedDeviceUnavailable, match="could not open the encoder on it"), pytest.warns(UserWarning):
        strict.encode_queries(TEXTS[:1])


@needs_no_gpu
def test_auto_on_this_machine_is_the_cpu(fresh: pytest.MonkeyPatch) -> None:
    assert MiniLM(settings=EmbeddingSettings.from_env({})).resolve_devices() == {
        "document": {"backend": "onnx-int8", "device": "cpu"},
        "query": {"backend": "onnx", "device": "cpu"},
    }
    assert resolve_device("auto", "torch") == "cpu"


@needs_no_gpu
def test_cuda_without_a_gpu_is_a_clear_error_from_the_settings(fresh: pytest.MonkeyPatch) -> None:
    settings = EmbeddingSettings.from_env({"FOLIO_EMBED_DEVICE": "cuda"})
    with pytest.raises(EmbedDeviceUnavailable, match=r"FOLIO_EMBED_DEVICE=cuda, but ONNX Runtime sees no CUDA"):
        MiniLM(settings=settings)  # at startup: before any text is encoded
    with pytest.raises(EmbedDeviceUnavailable, match=r"torch sees no CUDA device .*CUDA build of torch"):
        MiniLM(document_backend="torch", settings=settings)


@needs_no_gpu
def test_cuda_without_a_gpu_is_one_line_from_the_folio_command(tmp_path: Path) -> None:
    """``folio ingest`` stops before parsing, ``folio context`` before searching: exit 1, one line, no traceback."""
    assert FOLIO.is_file(), f"{FOLIO} is missing: scripts/setup.sh installs the folio command"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLIO_")}
    env.update(FOLIO_EMBED_DEVICE="cuda", FOLIO_OCR="0")
    data = tmp_path / "data"
    runs = [
        ["ingest", str(ROOT / "sample_pdfs" / "support-policy-v1.pdf"), "--data", str(data)],
        ["context", "How fast must a P1 incident be acknowledged?", "--data", str(data)],  # the store ingest made
    ]
    for args in runs:
        out = subprocess.run([str(FOLIO), *args], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
        assert out.returncode == 1, (args, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("folio: FOLIO_EMBED_DEVICE=cuda, but ONNX Runtime sees no"), (
            args, out.stderr
        )  # fmt: skip
        assert "FOLIO_EMBED_DEVICE=auto" in lines[0] and out.stdout == ""


# ----------------------------------------------------------------------------- the vectors
def _plain_cpu_session(quantized: bool, texts: list[str], threads: int) -> np.ndarray:
    """The vectors as the encoder computed them before it had a device: a CPU session of the cached file with the
    same options, over the same length-sorted batches (one batch here)."""
    import onnxruntime as ort

    from folio.ingest.embed import MAX_LENGTH, fast_tokenizer, minilm_path, session_model_file

    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads, opts.log_severity_level = threads, 1, 3
    session = ort.InferenceSession(
        str(session_model_file(quantized=quantized)), opts, providers=["CPUExecutionProvider"]
    )
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    encoded = fast_tokenizer(minilm_path(), MAX_LENGTH).encode_batch([texts[i] or " " for i in order])
    feed: dict[str, Any] = {
        "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
    }
    out = np.zeros((len(texts), 384), dtype=np.float32)
    out[order] = session.run(None, feed)[0]
    return out


@needs_no_gpu
@pytest.mark.parametrize("device", ["auto", "cpu"])
def test_vectors_on_the_cpu_are_those_of_before_to_the_bit(fresh: pytest.MonkeyPatch, device: str) -> None:
    from folio.ingest.embed import MiniLMEncoder
    from folio.settings import usable_cpus

    settings = EmbeddingSettings.from_env({"FOLIO_EMBED_DEVICE": device})
    minilm = MiniLM(settings=settings)
    want_int8, want_fp32 = _plain_cpu_session(True, TEXTS, usable_cpus()), _plain_cpu_session(False, TEXTS, 1)
    assert minilm.encode(TEXTS).tobytes() == want_int8.tobytes()  # onnx-int8, documents
    assert minilm.encode_queries(TEXTS).tobytes() == want_fp32.tobytes()  # onnx, queries: one thread each
    torch_minilm = MiniLM(document_backend="torch", settings=settings)
    assert torch_minilm.encode(TEXTS).tobytes() == MiniLMEncoder().encode(TEXTS).tobytes()  # a model never moved


# ----------------------------------------------------------------------------- a Ray task
def test_a_ray_task_reports_its_embedder_device(fresh: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """What a task records in its job's ``worker`` (``api/cluster/board.py``): ``cuda`` where its runtime offers the
    GPU Ray gave it (the FAKE list here); a reserved GPU left unused is a warning, ``cuda`` absent no crash."""
    from folio.api.cluster.board import _embed_device

    settings = Settings.from_env({})
    if not HAS_CUDA:
        with caplog.at_level(logging.WARNING, logger="folio.api.cluster.board"):
            assert _embed_device(settings, 0.5) == "cpu"
        assert any("reserves 0.5 GPU, but its encoder runs on the cpu" in r.getMessage() for r in caplog.records)
        fresh.setattr(embed, "_DEFAULT", None)  # a worker's MiniLM is configured once, by its first task's settings
        assert _embed_device(Settings.from_env({"FOLIO_EMBED_DEVICE": "cuda"}), 1.0) == "unavailable"
    fresh.setattr(embed, "_DEFAULT", None)
    fresh.setattr(embed_device, "_RESOLVED", {})
    fake_gpu_onnxruntime(fresh)
    assert _embed_device(settings, 1.0) == "cuda"
