"""Pages with ColPali-family models: page multivectors at ingest, late-interaction scoring at query.

Loading uses colpali-engine's own ``from_pretrained`` on a local folder or a hub id already in the
offline cache. The family (ColPali, ColQwen2, ColIdefics3, ColModernVBert, ...) is read from the
model's ``config.json`` (``architectures`` first, then ``model_type``).

Each page's vectors go to the ``pages`` table as a multivector column
``list<fixed_size_list<float32, D>>`` (LanceDB's native multivector type), optionally pooled by a
factor to cut storage. Query time is two-stage (see :mod:`retrieval.channels.maxsim`): candidate pages from
pooled sketches of every page in scope plus the pages other retrievers found, then exact MaxSim.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from folio.ingest.storage.interface import StoreReader, StoreWriter
from folio.ingest.storage.schema import Int32, TableSpec, VersionScopedRow, vector_row
from folio.kernel.errors import ModelUnavailable
from folio.kernel.model import region_id_for
from folio.kernel.scope import Scope
from folio.retrieval.cache.models import load_error, load_once, off_status, on_status
from folio.retrieval.cache.version_cache import VersionCache
from folio.retrieval.channels.base import (
    Channel,
    ChannelContext,
    ChannelQuery,
    ChannelSpec,
    Configured,
    Ranking,
    register,
)
from folio.retrieval.channels.clip import open_image
from folio.retrieval.channels.maxsim import PageMatrix, maxsim, pool_hierarchical, pool_mean
from folio.retrieval.text import Candidate
from folio.retrieval.threads import torch_single_thread
from folio.settings import Settings

if TYPE_CHECKING:
    from PIL.Image import Image

    from folio.ingest.pdf.parse import ParsedDocument
    from folio.ingest.pipeline import VersionIndexer

logger = logging.getLogger(__name__)

PAGES_TABLE = "pages"
COLPALI_ENABLE_HINT = (
    "set FOLIO_COLPALI_MODEL to a local folder (or an offline-cached hub id) of a colpali-engine "
    "model such as vidore/colpali-v1.3, vidore/colqwen2-v1.0, vidore/colSmol-256M or "
    "ModernVBERT/colmodernvbert; optionally "
    "FOLIO_COLPALI_POOL_FACTOR=3; then re-ingest documents"
)

# architectures[0] / model_type → (model class, processor class) in colpali_engine.models
FAMILIES: dict[str, tuple[str, str]] = {
    "ColPali": ("ColPali", "ColPaliProcessor"),
    "ColQwen2": ("ColQwen2", "ColQwen2Processor"),
    "ColQwen2_5": ("ColQwen2_5", "ColQwen2_5_Processor"),
    "ColIdefics3": ("ColIdefics3", "ColIdefics3Processor"),
    "ColModernVBert": ("ColModernVBert", "ColModernVBertProcessor"),
    "ColGemma3": ("ColGemma3", "ColGemmaProcessor3"),
    "ColQwen3": ("ColQwen3", "ColQwen3Processor"),
}
MODEL_TYPES: dict[str, str] = {
    "paligemma": "ColPali",
    "qwen2_vl": "ColQwen2",
    "qwen2_5_vl": "ColQwen2_5",
    "idefics3": "ColIdefics3",
    "modernvbert": "ColModernVBert",
    "gemma3": "ColGemma3",
    "qwen3_vl": "ColQwen3",
}


class PageVectorsRow(VersionScopedRow):
    """A row of ``pages``: the ColPali multivector of one rendered page (``vectors``, added per dimension)."""

    model: str
    n_vectors: Int32


def pages_spec(dim: int) -> TableSpec:
    """The ``pages`` table for ColPali multivectors of ``dim``-dimensional token vectors."""
    return TableSpec(PAGES_TABLE, vector_row("PageVectorsRow", dim, PageVectorsRow, multi=True))


def detect_family(config: dict[str, Any]) -> str:
    """The colpali-engine family named by a model config (``InvalidRequest``-free: ModelUnavailable)."""
    for arch in config.get("architectures") or []:
        if arch in FAMILIES:
            return str(arch)
    mt = str(config.get("model_type", ""))
    if mt in MODEL_TYPES:
        return MODEL_TYPES[mt]
    raise ModelUnavailable(
        f"cannot tell the ColPali family from architectures={config.get('architectures')} model_type={mt!r}; "
        f"supported: {', '.join(FAMILIES)}"
    )


def _read_config(model: str) -> dict[str, Any]:
    path = Path(model)
    if path.is_dir():
        cfg = path / "config.json"
        if not cfg.exists():
            raise ModelUnavailable(f"{model} has no config.json")
        data: dict[str, Any] = json.loads(cfg.read_text())
        return data
    try:
        from huggingface_hub import hf_hub_download

        local = hf_hub_download(model, "config.json", local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - any hub/cache failure means "not available offline"
        raise ModelUnavailable(
            f"ColPali model {model!r} is neither a folder nor in the offline hub cache: {exc}"
        ) from exc
    cached: dict[str, Any] = json.loads(Path(local).read_text())
    return cached


class ColPaliModel:
    """A colpali-engine model and processor; multivectors are returned without padding rows."""

    def __init__(self, model: str, *, device: str = "cpu") -> None:
        # function-level: optional model: torch and torchvision load only when ColPali is configured
        from folio.ingest.torchfix import ensure_torchvision

        ensure_torchvision()
        self.family = detect_family(_read_config(model))
        try:
            import colpali_engine.models as cm
            import torch
        except ImportError as exc:  # pragma: no cover - declared dependency
            raise ModelUnavailable(
                f"colpali-engine is not installed ({exc}); pip install colpali-engine"
            ) from exc
        model_cls_name, proc_cls_name = FAMILIES[self.family]
        model_cls = getattr(cm, model_cls_name, None)
        proc_cls = getattr(cm, proc_cls_name, None)
        if model_cls is None or proc_cls is None:
            raise ModelUnavailable(f"this colpali-engine has no {model_cls_name}; upgrade colpali-engine")
        self._torch = torch
        self.device = device
        self.name = f"{self.family}:{Path(model).name or model}"
        try:
            m = model_cls.from_pretrained(model, torch_dtype=torch.float32)
            self._processor: Any = proc_cls.from_pretrained(model)
        except (OSError, ValueError, RuntimeError) as exc:
            raise ModelUnavailable(f"cannot load ColPali model {model!r}: {exc}") from exc
        # PaliGemma under transformers 5 can leave the tied lm_head on the meta device; it is unused
        # for embeddings, but re-tie it so .to(device) works.
        lm_head = getattr(getattr(m, "model", None), "lm_head", None)
        if lm_head is not None and getattr(lm_head.weight, "is_meta", False):
            m.model.lm_head.weight = m.model.get_input_embeddings().weight
        self._model: Any = m.to(device).eval()
        self._lock = threading.Lock()
        self.dim = int(getattr(m, "dim", 128))

    def _run(self, batch: Any) -> list[np.ndarray]:
        torch = self._torch
        batch = {k: v.to(self.device) if hasattr(v, "to") else v for k, v in batch.items()}
        with self._lock, torch.inference_mode():
            out = self._model(**batch).float().cpu().numpy()
        mask = batch["attention_mask"].cpu().numpy().astype(bool)
        return [out[i][mask[i]].astype(np.float32) for i in range(len(out))]

    def encode_pages(self, images: Sequence[Image], *, batch_size: int = 4) -> list[np.ndarray]:
        """One ``(n_tokens, dim)`` array per page image."""
        res: list[np.ndarray] = []
        for start in range(0, len(images), batch_size):
            chunk = [im.convert("RGB") for im in images[start : start + batch_size]]
            res.extend(self._run(self._processor.process_images(chunk)))
        return res

    def encode_query(self, text: str) -> np.ndarray:
        proc = self._processor
        batch = (
            proc.process_queries([text]) if hasattr(proc, "process_queries") else proc.process_texts([text])
        )
        with torch_single_thread():
            return self._run(batch)[0]

    def score(self, query: str, pages: Sequence[np.ndarray]) -> np.ndarray:
        """``PageScorer``: exact MaxSim of ``query`` against page multivectors."""
        return maxsim(self.encode_query(query), pages)


def pool(vectors: np.ndarray, factor: int, method: str = "hierarchical") -> np.ndarray:
    if factor <= 1:
        return vectors
    return pool_hierarchical(vectors, factor) if method == "hierarchical" else pool_mean(vectors, factor)


class ColPaliPageIndexer:
    """``VersionIndexer``: ColPali multivectors of every rendered page of a freshly parsed version."""

    name = "colpali"

    def __init__(
        self, model: ColPaliModel, *, pool_factor: int = 0, pool_method: str = "hierarchical"
    ) -> None:
        self.model = model
        self.pool_factor = pool_factor
        self.pool_method = pool_method

    def _pages(self, parsed: ParsedDocument) -> list[tuple[str, str, str, int, str]]:
        regions = [(r, r.image.path) for r in parsed.regions if r.kind == "page" and r.image and r.image.path]
        if regions:
            return [(r.region_id, r.doc_id, r.version_id, r.first_page, path) for r, path in regions]
        doc_id, version_id = getattr(parsed, "doc_id", ""), getattr(parsed, "version_id", "")
        return [
            (region_id_for(doc_id, version_id, p.page, "page", 1), doc_id, version_id, p.page, p.image)
            for p in parsed.pages
            if p.image
        ]

    def index_version(self, store: StoreWriter, parsed: ParsedDocument) -> int:
        spec = pages_spec(self.model.dim)
        written = 0
        pages = self._pages(parsed)
        for start in range(0, len(pages), 4):
            batch = pages[start : start + 4]
            opened = [(p, open_image(store, p[4])) for p in batch]
            loaded = [(p, im) for p, im in opened if im is not None]
            if not loaded:
                continue
            vecs = self.model.encode_pages([im for _, im in loaded])
            rows = []
            for ((rid, doc_id, version_id, page, _), _im), v in zip(loaded, vecs, strict=True):
                pv = pool(v, self.pool_factor, self.pool_method)
                rows.append(
                    spec.model(
                        region_id=rid,
                        doc_id=doc_id,
                        version_id=version_id,
                        kind="page",
                        page=page,
                        model=self.model.name,
                        n_vectors=len(pv),
                        vectors=pv.tolist(),
                    )
                )
            store.add(spec, rows)
            written += len(rows)
        return written


class _VersionPages:
    def __init__(self, region_ids: list[str], pages: list[int], matrix: PageMatrix) -> None:
        self.region_ids = region_ids
        self.pages = pages
        self.matrix = matrix


def load_page_vectors(
    store: StoreReader, key: tuple[str, str]
) -> tuple[list[str], list[int], list[np.ndarray]] | None:
    """One version's page ids, page numbers and multivectors (None when no ``pages`` table exists)."""
    data = store.scan_versions(PAGES_TABLE, [key], ["region_id", "page", "vectors"])
    if data is None:
        return None
    col = data.column("vectors").combine_chunks()
    outer = col.offsets.to_numpy()
    inner = col.values  # fixed_size_list
    dim = inner.type.list_size
    flat = inner.values.to_numpy(zero_copy_only=False).reshape(-1, dim).astype(np.float32)
    mats = [flat[outer[i] : outer[i + 1]] for i in range(len(outer) - 1)]
    return data.column("region_id").to_pylist(), [int(p) for p in data.column("page").to_pylist()], mats


class ColPaliRetriever:
    """Page scoring over the multivectors of the versions in scope."""

    name = "colpali"

    def __init__(
        self, store: StoreReader, model: ColPaliModel, *, candidates: int = 100, max_versions: int = 64
    ) -> None:
        self.store = store
        self.model = model
        self.candidates = candidates
        # None: no pages table yet (a version ingested before it existed has no rows in it either)
        self.versions: VersionCache[_VersionPages | None] = VersionCache(store, max_versions)

    def clear(self) -> None:
        """Forget the cached page multivectors (``Retriever.refresh``)."""
        self.versions.clear()

    def _version(self, version: tuple[str, str]) -> _VersionPages | None:
        """The version's page multivectors, read once per version stamp."""
        return self.versions.get(*version, lambda: self._read(version))

    def _read(self, version: tuple[str, str]) -> _VersionPages | None:
        loaded = load_page_vectors(self.store, version)
        if loaded is None:
            return None
        rids, pages, mats = loaded
        return _VersionPages(rids, pages, PageMatrix(mats))

    def search(
        self, query: str, scope: Scope, limit: int, *, extra_pages: Iterable[tuple[str, str, int]] = ()
    ) -> list[Candidate]:
        """Best pages by exact MaxSim among sketch candidates and ``extra_pages`` (doc, version, page)."""
        if scope.kinds is not None and "page" not in scope.kinds:
            return []
        q = self.model.encode_query(query)
        extra: dict[tuple[str, str], set[int]] = {}
        for d, v, p in extra_pages:
            extra.setdefault((d, v), set()).add(p)
        out: list[Candidate] = []
        for key in scope.versions:
            vp = self._version(key)
            if vp is None or not vp.region_ids:
                continue
            want = extra.get(key, set())
            extra_idx = [i for i, p in enumerate(vp.pages) if p in want]
            if scope.pages is not None:
                idx = [i for i, p in enumerate(vp.pages) if p in scope.pages]
                pairs = list(zip(idx, vp.matrix.score_pages(q, idx).tolist(), strict=True))
            else:
                pairs = vp.matrix.search(q, candidates=self.candidates, extra=extra_idx)
            for i, s in pairs:
                out.append(Candidate(vp.region_ids[i], key[0], key[1], "page", vp.pages[i], s))
        out.sort(key=lambda c: (-c.score, c.region_id))
        return out[:limit]


# ----------------------------------------------------------------------------- the channel
# How many of each earlier list's best candidates ColPali also rescores (their pages).
COLPALI_SEEN_PER_LIST = 20


@dataclass
class ColPaliChannel:
    """Late-interaction page scoring (``ColPaliRetriever``); also rescores the pages earlier lists found."""

    colpali: ColPaliRetriever
    name: str = "colpali"
    table: str = PAGES_TABLE
    weight: float = 1.0

    def search(self, query: ChannelQuery) -> Ranking | None:
        seen = {(c.doc_id, c.version_id, c.page) for lst in query.found.values() for c in lst[:COLPALI_SEEN_PER_LIST]}
        return Ranking(self.colpali.search(query.text, query.scope, query.limit, extra_pages=seen))

    def clear(self) -> None:
        self.colpali.clear()

    def status(self) -> dict[str, Any] | None:
        return on_status(self.colpali.model.name, family=self.colpali.model.family)


def load_colpali(settings: Settings) -> tuple[ColPaliModel | None, dict[str, Any]]:
    """The configured ColPali-family model (shared) and its status entry."""
    name = settings.models.colpali_model
    if not name:
        return None, off_status("FOLIO_COLPALI_MODEL is not set", COLPALI_ENABLE_HINT)
    key = ("colpali", name)
    model = load_once(key, lambda: ColPaliModel(name))
    if model is None:
        return None, off_status(load_error(key), COLPALI_ENABLE_HINT, model=name)
    return model, on_status(
        model.name,
        family=model.family,
        dim=model.dim,
        pool_factor=settings.models.colpali_pool_factor,
    )


def _colpali_from_settings(settings: Settings) -> Configured:
    model, status = load_colpali(settings)
    return Configured({"colpali": model}, status)


def _colpali_indexer(settings: Settings) -> VersionIndexer | None:
    model = load_colpali(settings)[0]
    return ColPaliPageIndexer(model, pool_factor=settings.models.colpali_pool_factor) if model is not None else None


def _open_colpali(context: ChannelContext) -> Channel | None:
    model = context.options["colpali"]
    return ColPaliChannel(ColPaliRetriever(context.store, model)) if model else None


register(ChannelSpec("colpali", _open_colpali, {"colpali": None}, from_settings=_colpali_from_settings,
                     indexer=_colpali_indexer,
                     off=lambda: off_status("no ColPali model configured", COLPALI_ENABLE_HINT)))
