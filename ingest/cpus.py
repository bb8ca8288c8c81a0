"""The cores this process may use: one count for the embedder's threads, the OCR lanes, the parse limits
and ``folio serve``'s default query processes. A module of its own (no folio imports) so that none of them
has to import another to ask."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """The cores this process may run on (its CPU affinity: a container's cpuset, ``taskset``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1
