"""Figures with CLIP: image vectors of figure crops at ingest, text→image search at query time.

The loader is open_clip's own ``create_model_and_transforms``, given either a model name plus a
``pretrained`` tag or weights file, or ``local-dir:<folder>`` holding ``open_clip_config.json`` and
``open_clip_model.safetensors``. A model name without ``pretrained`` is refused: open_clip would
silently build random weights, which would look like a working but useless retriever.

CLIP alone is weak on text-heavy diagrams; figures are also found through their text surrogate
(caption and in-figure text are ``figure`` rows of the ``chunks`` table), and fusion combines both.

The ``clip`` channel (``ClipChannel``, registered at the bottom) runs ``ClipRetriever`` when the settings name a
model (``load_clip``, once per process); its indexer writes the ``figures`` table at ingest.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from folio.ingest.storage.interface import StoreReader, StoreWriter
from folio.ingest.storage.schema import TableSpec, VersionScopedRow, vector_row
from folio.kernel.errors import InvalidRequest, ModelUnavailable
from folio.kernel.scope import Scope
from folio.retrieval.cache.models import load_error, load_once, off_status, on_status
from folio.retrieval.channels.base import (
    Channel,
    ChannelContext,
    ChannelQuery,
    ChannelSpec,
    Configured,
    Ranking,
    register,
)
from folio.retrieval.text import Candidate, VectorCache, top_k
from folio.retrieval.threads import torch_single_thread
from folio.settings import Settings

if TYPE_CHECKING:
    from PIL.Image import Image

    from folio.ingest.pdf.parse import ParsedDocument
    from folio.ingest.pipeline import VersionIndexer

logger = logging.getLogger(__name__)

FIGURES_TABLE = "figures"
CLIP_ENABLE_HINT = (
    "set FOLIO_CLIP_MODEL to an open_clip model name with FOLIO_CLIP_PRETRAINED pointing at a weights "
    "file or a cached pretrained tag (e.g. ViT-B-32 + /models/clip/open_clip_model.safetensors), "
    "or FOLIO_CLIP_MODEL="
    "local-dir:<folder with open_clip_config.json and open_clip_model.safetensors>; then re-ingest documents"
)


class FigureVectorRow(VersionScopedRow):
    """A row of ``figures``: the CLIP vector of one figure crop (``vector``, added per dimension)."""

    model: str


def figures_spec(dim: int) -> TableSpec:
    """The ``figures`` table for ``dim``-dimensional CLIP vectors."""
    return TableSpec(FIGURES_TABLE, vector_row("FigureVectorRow", dim, FigureVectorRow))


class ClipModel:
    """An open_clip model with its preprocessing and tokenizer; outputs are L2-normalised float32."""

    def __init__(self, model_name: str, pretrained: str | None = None, *, device: str = "cpu") -> None:
        if not model_name.startswith("local-dir:") and not pretrained:
            raise ModelUnavailable(
                f"CLIP model {model_name!r} has no pretrained weights configured; refusing random "
                f"weights. {CLIP_ENABLE_HINT}"
            )
        # function-level: optional model: torch and torchvision load only when CLIP is configured
        from folio.ingest.torchfix import ensure_torchvision

        ensure_torchvision()
        try:
            import open_clip
            import torch
        except ImportError as exc:  # pragma: no cover - open_clip is a declared dependency
            raise ModelUnavailable(
                f"open_clip is not installed ({exc}); pip install open-clip-torch"
            ) from exc
        self._torch = torch
        self.name = model_name if not pretrained else f"{model_name}:{Path(pretrained).name}"
        self.device = device
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(
                model_name, pretrained=pretrained, device=device
            )
            self._tokenizer: Any = open_clip.get_tokenizer(model_name)
        except (RuntimeError, OSError, ValueError) as exc:
            raise ModelUnavailable(
                f"cannot load CLIP model {model_name!r} (pretrained={pretrained!r}): {exc}"
            ) from exc
        self._model: Any = model.eval()
        self._preprocess: Any = preprocess
        self._lock = threading.Lock()
        self.dim = int(self.encode_texts(["dimension probe"]).shape[1])

    def encode_images(self, images: Sequence[Image], *, batch_size: int = 16) -> np.ndarray:
        """``(n, dim)`` image vectors."""
        torch = self._torch
        out: list[np.ndarray] = []
        with self._lock, torch.inference_mode():
            for start in range(0, len(images), batch_size):
                batch = torch.stack(
                    [self._preprocess(im.convert("RGB")) for im in images[start : start + batch_size]]
                )
                feats = self._model.encode_image(batch.to(self.device))
                out.append(torch.nn.functional.normalize(feats.float(), dim=-1).cpu().numpy())
        return (
            np.concatenate(out).astype(np.float32)
            if out
            else np.zeros((0, getattr(self, "dim", 0)), np.float32)
        )

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, dim)`` text vectors in the image space."""
        torch = self._torch
        with self._lock, torch.inference_mode(), torch_single_thread():
            feats = self._model.encode_text(self._tokenizer(list(texts)).to(self.device))
            out: np.ndarray = (
                torch.nn.functional.normalize(feats.float(), dim=-1).cpu().numpy().astype(np.float32)
            )
            return out

    # Protocol spellings (``ImageEncoder.encode(images)``, ``TextEncoder.encode(texts)``).
    def encode(self, images: Sequence[Image]) -> np.ndarray:
        return self.encode_images(images)


def open_image(store: StoreReader, relative: str) -> Image | None:
    from PIL import Image as PILImage

    try:
        with PILImage.open(io.BytesIO(store.read_asset(relative))) as im:
            im.load()
            return im.copy()
    except (OSError, LookupError) as exc:
        logger.warning("cannot read image asset %s: %s", relative, exc)
        return None


class ClipFigureIndexer:
    """``VersionIndexer``: CLIP vectors of every figure crop of a freshly parsed version."""

    name = "clip"

    def __init__(self, model: ClipModel, *, batch_size: int = 16) -> None:
        self.model = model
        self.batch_size = batch_size

    def index_version(self, store: StoreWriter, parsed: ParsedDocument) -> int:
        figures = [r for r in parsed.regions if r.kind == "figure" and r.image and r.image.path]
        spec = figures_spec(self.model.dim)
        have = store.vector_dim(FIGURES_TABLE) or self.model.dim
        if have != self.model.dim:
            raise InvalidRequest(
                f"the figures table holds {have}-dim CLIP vectors but {self.model.name} makes "
                f"{self.model.dim}-dim ones; delete the figures table or use the same model"
            )
        written = 0
        for start in range(0, len(figures), self.batch_size):
            batch = figures[start : start + self.batch_size]
            opened = [(r, open_image(store, r.image.path if r.image else "")) for r in batch]
            pairs = [(r, im) for r, im in opened if im is not None]
            if not pairs:
                continue
            vecs = self.model.encode_images([im for _, im in pairs])
            rows = [
                spec.model(
                    region_id=r.region_id,
                    doc_id=r.doc_id,
                    version_id=r.version_id,
                    kind="figure",
                    page=r.first_page,
                    model=self.model.name,
                    vector=v.tolist(),
                )
                for (r, _), v in zip(pairs, vecs, strict=True)
            ]
            store.add(spec, rows)
            written += len(rows)
        return written


class ClipRetriever:
    """Text→image search over the figure vectors of the versions in scope."""

    name = "clip"

    def __init__(self, store: StoreReader, model: ClipModel) -> None:
        self.store = store
        self.model = model
        self.cache = VectorCache(FIGURES_TABLE)

    def clear(self) -> None:
        """Forget the cached figure vectors (``Retriever.refresh``)."""
        self.cache = VectorCache(FIGURES_TABLE)

    def search(self, query: str, scope: Scope, limit: int) -> list[Candidate]:
        if scope.kinds is not None and "figure" not in scope.kinds:
            return []
        vv = self.cache.get(self.store, scope)
        if vv is None or not vv.rows:
            return []
        qv = self.model.encode_texts([query])[0]
        scores = vv.vectors @ qv
        if scope.pages is not None:
            scores = np.where(np.isin(vv.pages, np.fromiter(scope.pages, np.int32)), scores, -np.inf)
        n = int(np.isfinite(scores).sum())
        idx = top_k(scores, min(limit, n))
        return vv.take(idx, scores[idx])


# ----------------------------------------------------------------------------- the channel
@dataclass
class ClipChannel:
    """Text-to-image search over the CLIP vectors of figure crops (``ClipRetriever``)."""

    clip: ClipRetriever
    name: str = "clip"
    table: str = FIGURES_TABLE
    weight: float = 1.0

    def search(self, query: ChannelQuery) -> Ranking | None:
        return Ranking(self.clip.search(query.text, query.scope, query.limit))

    def clear(self) -> None:
        self.clip.clear()

    def status(self) -> dict[str, Any] | None:
        return on_status(self.clip.model.name, dim=self.clip.model.dim)


def load_clip(settings: Settings) -> tuple[ClipModel | None, dict[str, Any]]:
    """The configured CLIP model (shared) and its status entry."""
    name, pretrained = settings.models.clip_model, settings.models.clip_pretrained
    if not name:
        return None, off_status("FOLIO_CLIP_MODEL is not set", CLIP_ENABLE_HINT)
    key = ("clip", name, pretrained or "")
    model = load_once(key, lambda: ClipModel(name, pretrained))
    if model is None:
        return None, off_status(load_error(key), CLIP_ENABLE_HINT, model=name)
    return model, on_status(model.name, dim=model.dim)


def _clip_from_settings(settings: Settings) -> Configured:
    model, status = load_clip(settings)
    return Configured({"clip": model}, status)


def _clip_indexer(settings: Settings) -> VersionIndexer | None:
    model = load_clip(settings)[0]
    return ClipFigureIndexer(model) if model is not None else None


def _open_clip(context: ChannelContext) -> Channel | None:
    model = context.options["clip"]
    return ClipChannel(ClipRetriever(context.store, model)) if model else None


register(ChannelSpec("clip", _open_clip, {"clip": None}, from_settings=_clip_from_settings, indexer=_clip_indexer,
                     off=lambda: off_status("no CLIP model configured", CLIP_ENABLE_HINT)))
