"""The cores this process may use: one count for the embedder's threads, the OCR lanes, the parse limits
and ``folio serve``'s default query processes. It lives in ``folio.settings`` (the query processes' default
is a setting, and the settings import nothing of folio); ingest asks here."""

from __future__ import annotations

from folio.settings import usable_cpus

__all__ = ["usable_cpus"]
