"""Moved: the store is the package ``folio.ingest.storage`` (``folio.ingest.storage.store.Store``).

This module is kept for code written before the move (``docs/api.md`` documented ``folio.ingest.store.Store``):
each of its old names still imports, with a ``DeprecationWarning`` (``folio._migration``)."""

from __future__ import annotations

from typing import Any

from folio._migration import moved


def __getattr__(name: str) -> Any:
    return moved(__name__, name)
