"""Where the MiniLM encoders run: ``FOLIO_EMBED_DEVICE`` (``Settings.embedding.embed_device``), for documents and
queries alike.

- ``auto`` (default): a CUDA GPU when the backend's runtime sees one, else the CPU. torch:
  ``torch.cuda.is_available()``; ONNX Runtime: ``CUDAExecutionProvider`` among ``ort.get_available_providers()`` (the
  ``onnxruntime-gpu`` build), and then among the providers of the session it opens (the provider is listed wherever
  the build is installed, and a session without a driver falls back to the CPU: ``auto`` follows it there, with a
  warning).
- ``cpu``: the CPU, whatever is installed.
- ``cuda``: the GPU or nothing: without one, the process stops at startup with ``EmbedDeviceUnavailable``, one line
  that says what the runtime sees.

A Ray task that reserves a GPU (``FOLIO_RAY_GPUS_PER_DOC``) sees it through ``CUDA_VISIBLE_DEVICES``, which Ray
sets, as device 0: ``auto`` picks it there and the task's job says so (``api/cluster/board.py``).

On a GPU the document encoder runs the fp32 graph, whatever ``FOLIO_EMBED_BACKEND`` says: ``onnx-int8``'s dynamic
quantization is a CPU optimisation (its integer MatMul kernels are CPU kernels; on CUDA the graph would run slower
than fp32, partly on the CPU). GPU vectors are those of fp32 on the CPU within float tolerance (cosine >= 0.9999):
ONNX Runtime's TF32 matmuls are turned off (``use_tf32=0``), as torch's are by default.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from folio.ingest.torchfix import ensure_torchvision
from folio.kernel.errors import ModelUnavailable

DEVICES = ("auto", "cpu", "cuda")
CUDA_PROVIDER = "CUDAExecutionProvider"
CPU_PROVIDER = "CPUExecutionProvider"
GPU_FALLBACKS = {"onnx-int8": "onnx"}  # the backend a GPU runs instead (int8 is a CPU optimisation)


class EmbedDeviceUnavailable(ModelUnavailable):
    """``FOLIO_EMBED_DEVICE=cuda``, and the encoder's runtime sees no CUDA device (or cannot open a session on it)."""

    code = "embed_device_unavailable"


def runtime_of(backend: str) -> str:
    """The runtime a backend runs on: ``torch``, or ``onnx`` for both ONNX Runtime backends."""
    return "torch" if backend == "torch" else "onnx"


def onnx_devices(providers: Sequence[str]) -> tuple[str, ...]:
    """The devices ONNX Runtime offers, from its provider names (``ort.get_available_providers()``).

    >>> onnx_devices(["CUDAExecutionProvider", "CPUExecutionProvider"])
    ('cuda', 'cpu')
    >>> onnx_devices(["AzureExecutionProvider", "CPUExecutionProvider"])
    ('cpu',)
    """
    return ("cuda", "cpu") if CUDA_PROVIDER in providers else ("cpu",)


def choose_device(setting: str, available: Sequence[str], *, runtime: str, seen: str = "") -> str:
    """The device for ``setting`` (``auto``, ``cpu``, ``cuda``) among the ``available`` ones of ``runtime``
    (``seen``: what the runtime reported, for the error). A pure function: the probing is ``runtime_devices``.

    >>> choose_device("auto", ("cuda", "cpu"), runtime="onnx")
    'cuda'
    >>> choose_device("auto", ("cpu",), runtime="torch")
    'cpu'
    >>> choose_device("cpu", ("cuda", "cpu"), runtime="onnx")
    'cpu'
    """
    if setting not in DEVICES:
        raise ValueError(f"unknown embedding device {setting!r}; use one of {', '.join(DEVICES)}")
    if setting == "cpu":
        return "cpu"
    if "cuda" in available:
        return "cuda"
    if setting == "cuda":
        raise EmbedDeviceUnavailable(
            f"FOLIO_EMBED_DEVICE=cuda, but {runtime_name(runtime)} sees no CUDA device ({seen or 'CPU only'}): "
            f"{install_hint(runtime)}, or set FOLIO_EMBED_DEVICE=auto (a GPU when there is one) or cpu"
        )
    return "cpu"


def runtime_name(runtime: str) -> str:
    return "torch" if runtime == "torch" else "ONNX Runtime"


def install_hint(runtime: str) -> str:
    if runtime == "torch":
        return "install a CUDA build of torch on a machine with an NVIDIA driver"
    return "install onnxruntime-gpu (in place of onnxruntime) on a machine with an NVIDIA driver and CUDA 12"


def runtime_devices(runtime: str) -> tuple[tuple[str, ...], str]:
    """What ``runtime`` can run on here, probed (imports it), and what it reported (for messages)."""
    if runtime == "torch":
        ensure_torchvision()
        import torch

        cuda = bool(torch.cuda.is_available())
        seen = f"torch {torch.__version__}, CUDA {torch.version.cuda or 'not built in'}"
        return (("cuda", "cpu") if cuda else ("cpu",)), seen
    import onnxruntime as ort

    providers = list(ort.get_available_providers())
    return onnx_devices(providers), f"onnxruntime {ort.__version__}: {', '.join(providers)}"


_RESOLVED: dict[tuple[str, str], str] = {}  # (setting, runtime) -> device, once per process
_RESOLVED_LOCK = threading.Lock()


def resolve_device(setting: str, backend: str) -> str:
    """The device ``backend`` runs on under ``setting``, probed once per process and runtime (``cpu``: no probe).
    Raises ``EmbedDeviceUnavailable`` for ``cuda`` without one."""
    if setting == "cpu":
        return "cpu"
    runtime = runtime_of(backend)
    with _RESOLVED_LOCK:
        known = _RESOLVED.get((setting, runtime))
        if known is None:
            available, seen = runtime_devices(runtime)
            known = _RESOLVED[(setting, runtime)] = choose_device(setting, available, runtime=runtime, seen=seen)
        return known


def resolved_device(setting: str, backend: str) -> str:
    """What ``resolve_device`` has found so far, without probing: the setting (``auto``) before the first use."""
    if setting == "cpu":
        return "cpu"
    with _RESOLVED_LOCK:
        return _RESOLVED.get((setting, runtime_of(backend)), setting)


def fall_back_to_cpu(setting: str, backend: str) -> None:
    """``auto`` found a GPU that the runtime then could not use (``onnxruntime-gpu`` without a driver): the CPU
    from now on in this process."""
    with _RESOLVED_LOCK:
        _RESOLVED[(setting, runtime_of(backend))] = "cpu"


def backend_on(backend: str, device: str) -> str:
    """The backend that runs on ``device``: ``onnx-int8`` runs the fp32 graph on a GPU.

    >>> backend_on("onnx-int8", "cuda"), backend_on("onnx-int8", "cpu"), backend_on("torch", "cuda")
    ('onnx', 'onnx-int8', 'torch')
    """
    return GPU_FALLBACKS.get(backend, backend) if device == "cuda" else backend


def onnx_providers(device: str) -> list[str | tuple[str, dict[str, str]]]:
    """ONNX Runtime's providers for ``device``: on ``cuda`` the CUDA provider without TF32 (fp32 vectors), the CPU
    for the few operators it lacks."""
    if device == "cuda":
        return [(CUDA_PROVIDER, {"use_tf32": "0"}), CPU_PROVIDER]
    return [CPU_PROVIDER]
