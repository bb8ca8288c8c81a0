"""MiniLM throughput per backend and device, and how close each one's vectors are to torch fp32 on the CPU.

    python benchmarks/embed_device.py [--texts 1000] [--repeat 2] [--devices cpu,cuda] [--out FILE.json]

One command, on any machine: every backend (``torch``, ``onnx``, ``onnx-int8``) on the CPU, and on a CUDA GPU where
its runtime sees one (torch built with CUDA; ``onnxruntime-gpu``). ``onnx-int8`` has no GPU row: on a GPU folio runs
the fp32 graph instead (``ingest/embed_device.py``: int8 dynamic quantization is a CPU optimisation), which is the
``onnx`` row. The texts are the paragraphs of folio's own docs and README (prose, lists and tables of a few words to
a few hundred tokens, like a document's units), repeated with a number to make ``--texts`` distinct ones; each
encoder is loaded and warmed on 64 of them first, so the table is steady-state throughput, the model load apart.

Columns: texts/s (best of ``--repeat``), load seconds, and the cosine of each vector to torch fp32 on the CPU (the
vectors every store was written with): mean and minimum. fp32 on a GPU should stay at >= 0.9999.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BACKENDS = ("torch", "onnx", "onnx-int8")


def corpus(n: int) -> list[str]:
    """``n`` distinct texts: the paragraphs of docs/*.md and README.md, in turn, each with its round's number."""
    paragraphs: list[str] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            text = " ".join(block.split())
            if len(text) >= 40:
                paragraphs.append(text)
    return [f"{paragraphs[i % len(paragraphs)]} ({i // len(paragraphs)})" for i in range(n)]


def devices_of(backend: str) -> list[str]:
    """The devices ``backend`` can run on here (``onnx-int8``: the CPU only, see the module docstring)."""
    from folio.ingest.embed_device import runtime_devices, runtime_of

    available, _ = runtime_devices(runtime_of(backend))
    return [d for d in ("cpu", "cuda") if d in available and not (backend == "onnx-int8" and d == "cuda")]


def measure(backend: str, device: str, texts: list[str], repeat: int) -> tuple[np.ndarray, dict[str, Any]]:
    from folio.ingest.embed import text_encoder

    t = time.perf_counter()
    enc = text_encoder(backend, device=device)
    enc.encode(texts[:64])  # warm: the first calls allocate, pick kernels, and (on a GPU) compile
    load_s = time.perf_counter() - t
    best, vectors = float("inf"), np.zeros((0, 384), dtype=np.float32)
    for _ in range(repeat):
        t = time.perf_counter()
        vectors = enc.encode(texts)
        best = min(best, time.perf_counter() - t)
    return vectors, {"backend": backend, "device": device, "texts_per_s": len(texts) / best, "load_s": load_s}


def environment() -> dict[str, Any]:
    import onnxruntime as ort
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "gpu": gpu,
        "torch": torch.__version__,
        "onnxruntime": ort.__version__,
        "onnx_providers": ort.get_available_providers(),
    }


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| backend | device | texts/s | load (s) | cosine to torch fp32 CPU: mean | min |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['backend']} | {r['device']} | {r['texts_per_s']:,.0f} | {r['load_s']:.1f} | "
            f"{r['cos_mean']:.6f} | {r['cos_min']:.6f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--texts", type=int, default=1000, help="distinct texts encoded per run (default 1000)")
    ap.add_argument("--repeat", type=int, default=2, help="timed runs per encoder; the best counts (default 2)")
    ap.add_argument("--devices", default="cpu,cuda", help="devices to try, where present (default cpu,cuda)")
    ap.add_argument("--backends", default=",".join(BACKENDS), help="backends to try (default all three)")
    ap.add_argument("--out", type=Path, help="also write the rows and the environment as JSON here")
    args = ap.parse_args(argv)
    from folio.ingest.embed_device import EmbedDeviceUnavailable

    if args.texts < 64 or args.repeat < 1:
        ap.error("--texts must be at least 64 and --repeat at least 1")
    wanted = set(args.devices.split(","))
    texts = corpus(args.texts)
    reference, _ = measure("torch", "cpu", texts, 1)  # torch fp32 on the CPU: what every store was written with
    rows = []
    for backend in [b for b in BACKENDS if b in args.backends.split(",")]:
        for device in [d for d in devices_of(backend) if d in wanted]:
            try:
                vectors, row = measure(backend, device, texts, args.repeat)
            except EmbedDeviceUnavailable as e:  # onnxruntime-gpu installed, but no session opens on the GPU
                print(f"{backend} on {device}: skipped: {e}", file=sys.stderr)
                continue
            cos = (vectors * reference).sum(1)
            rows.append({**row, "cos_mean": float(cos.mean()), "cos_min": float(cos.min())})
            print("measured:", table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    env = environment()
    print(
        f"{args.texts} texts, best of {args.repeat}; {env['cpus']} CPUs, GPU: {env['gpu'] or 'none'}; "
        f"torch {env['torch']}, onnxruntime {env['onnxruntime']} ({', '.join(env['onnx_providers'])})\n"
    )
    print(table(rows))
    if args.out:
        args.out.write_text(json.dumps({"environment": env, "texts": args.texts, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
