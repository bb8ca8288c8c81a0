"""Thread limits for query-time work.

A query is one short text: its encoder forward pass and the skinny matrix products of scoring are
too small to gain from intra-op parallelism, and on a busy machine the threads cost far more than
they give. Measured on the 2-core dev box under load: a CLIP ViT-B-32 text forward took 2.2 s with
torch's default 2 threads and 0.09 s with 1; a 20x128 @ 128x1000 BLAS product was ~4x slower
multi-threaded. Ingest (large batches) keeps the default thread counts.

Both limits are process-wide while held (torch and BLAS each have one setting), so a concurrent
batch job in the same process may briefly run single-threaded: a speed effect, never a result one.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

_CONTROLLER: Any = None
_TORCH_LOCK = threading.Lock()


def blas_single_thread() -> Any:
    """A context in which BLAS runs on one thread (no-op without ``threadpoolctl``)."""
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


@contextlib.contextmanager
def torch_single_thread() -> Iterator[None]:
    """Run torch ops on one intra-op thread inside the block (only if torch is already imported)."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    with _TORCH_LOCK:
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(before)
