"""Optional models, each loaded once per process, and the status entries the channels give for ``/v1/health``.

Without CLIP or ColPali weights folio runs with the retrievers it has; the channels that use them
(``channels.clip.load_clip``, ``channels.colpali.load_colpali``, called from their registrations) load them
through ``load_once`` and say which are off, why, and how to turn them on. Loaded models are shared per
process (the API and an in-process ingest must not each load a copy); a model that failed to load is not
tried again, and ``load_error`` says why it failed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from folio.kernel.errors import ModelUnavailable

logger = logging.getLogger(__name__)

_MODELS: dict[tuple[str, ...], Any] = {}
_ERRORS: dict[tuple[str, ...], str] = {}
_LOCK = threading.Lock()


def load_once(key: tuple[str, ...], factory: Callable[[], Any]) -> Any:
    """The model of ``key`` (its family first), made by ``factory`` the first time it is asked for; None when it
    is unavailable (``ModelUnavailable``, logged once; ``load_error`` gives the reason)."""
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


def load_error(key: tuple[str, ...]) -> str:
    """Why the model of ``key`` did not load."""
    return _ERRORS.get(key, "failed to load")


def on_status(model: str, **extra: Any) -> dict[str, Any]:
    return {"enabled": True, "model": model, "reason": None, "enable": None, **extra}


def off_status(reason: str, hint: str, *, model: str | None = None) -> dict[str, Any]:
    return {"enabled": False, "model": model, "reason": reason, "enable": hint}
