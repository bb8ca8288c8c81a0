"""Optional models from settings: each loaded once per process, with its status entry for ``/v1/health``.

Without CLIP or ColPali weights folio runs with the retrievers it has; :func:`load_clip` and
:func:`load_colpali` say which are off, why, and how to turn them on. Loaded models are shared per
process (the API and an in-process ingest must not each load a copy). The channels that use them
(``retrieval.channels``) call these from their registrations.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from folio.kernel.errors import ModelUnavailable
from folio.retrieval.clip import CLIP_ENABLE_HINT, ClipModel
from folio.retrieval.colpali import COLPALI_ENABLE_HINT, ColPaliModel
from folio.settings import Settings

logger = logging.getLogger(__name__)

_MODELS: dict[tuple[str, ...], Any] = {}
_ERRORS: dict[tuple[str, ...], str] = {}
_LOCK = threading.Lock()


def _load(key: tuple[str, ...], factory: Any) -> Any:
    with _LOCK:
        if key in _MODELS:
            return _MODELS[key]
        if key in _ERRORS:
            return None
        try:
            model = factory()
        except ModelUnavailable as exc:
            logger.warning("%s is off: %s", key[0], exc)
            _ERRORS[key] = str(exc)
            return None
        _MODELS[key] = model
        return model


def load_clip(settings: Settings) -> tuple[ClipModel | None, dict[str, Any]]:
    """The configured CLIP model (shared) and its status entry."""
    name, pretrained = settings.models.clip_model, settings.models.clip_pretrained
    if not name:
        return None, off_status("FOLIO_CLIP_MODEL is not set", CLIP_ENABLE_HINT)
    key = ("clip", name, pretrained or "")
    model = _load(key, lambda: ClipModel(name, pretrained))
    if model is None:
        return None, off_status(_ERRORS.get(key, "failed to load"), CLIP_ENABLE_HINT, model=name)
    return model, on_status(model.name, dim=model.dim)


def load_colpali(settings: Settings) -> tuple[ColPaliModel | None, dict[str, Any]]:
    """The configured ColPali-family model (shared) and its status entry."""
    name = settings.models.colpali_model
    if not name:
        return None, off_status("FOLIO_COLPALI_MODEL is not set", COLPALI_ENABLE_HINT)
    key = ("colpali", name)
    model = _load(key, lambda: ColPaliModel(name))
    if model is None:
        return None, off_status(_ERRORS.get(key, "failed to load"), COLPALI_ENABLE_HINT, model=name)
    return model, on_status(
        model.name,
        family=model.family,
        dim=model.dim,
        pool_factor=settings.models.colpali_pool_factor,
    )


def on_status(model: str, **extra: Any) -> dict[str, Any]:
    return {"enabled": True, "model": model, "reason": None, "enable": None, **extra}


def off_status(reason: str, hint: str, *, model: str | None = None) -> dict[str, Any]:
    return {"enabled": False, "model": model, "reason": reason, "enable": hint}
