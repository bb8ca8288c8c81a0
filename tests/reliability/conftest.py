"""Reliability fixtures: the API suite's ingested data dir (shared with ``tests/api``)."""

from __future__ import annotations

from tests.api.conftest import api_master, client, data_copy, register_excerpt

__all__ = ["api_master", "client", "data_copy", "register_excerpt"]
