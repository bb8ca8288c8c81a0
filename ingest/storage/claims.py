"""Who may write a version: writer liveness and LanceDB commit-conflict retries (``ingest/storage/store.py``).

A pending versions row names its writer by a random id, pid, host, process start time and
heartbeat. On this host the writer is live exactly while that process is (the start time tells a
reused pid apart; a killed, unreaped child counts as dead); from another host it is live while its
heartbeat is younger than ``LEASE``.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

# A claim from another host is live while its heartbeat is younger than this; writers refresh it
# from their writes. (On this host a claim is live exactly while its process is.)
LEASE = timedelta(minutes=30)

HOST = socket.gethostname()


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = _proc_stat(pid)
    return not (stat and stat[0] == "Z")  # a killed child not yet reaped is dead too


def _proc_stat(pid: int) -> list[str] | None:
    """Fields of ``/proc/<pid>/stat`` after the command name (state first), or None off Linux."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()


def _proc_start(pid: int) -> int:
    """The process start time in clock ticks since boot (0 when unknown): with the pid, it tells a
    live writer from a later process that reused its pid."""
    stat = _proc_stat(pid)
    return int(stat[19]) if stat and len(stat) > 19 else 0


PROCESS_START = _proc_start(os.getpid())
# Writer ids of claims held by Store objects of this process.
LIVE_WRITERS: set[str] = set()
# Writer ids known to be dead although their heartbeat is fresh: a Ray task's retry learns the ids
# of its earlier, dead attempts from the job board (``api/cluster/board.py``), also across hosts.
DEAD_WRITERS: set[str] = set()


def claim_alive(row: dict[str, Any], *, now: float | None = None) -> bool:
    """Whether the writer named in a pending versions row may still be writing."""
    writer = row.get("writer") or ""
    if writer and writer in LIVE_WRITERS:
        return True
    if writer and writer in DEAD_WRITERS:
        return False
    pid = int(row.get("writer_pid") or 0)
    host = row.get("writer_host") or ""
    if host in ("", HOST):
        if pid == os.getpid():
            return False  # this process, but no Store here holds it: a leftover
        if not _pid_alive(pid):
            return False
        start = int(row.get("writer_start") or 0)
        return not start or _proc_start(pid) in (0, start)
    beat = float(row.get("heartbeat") or row.get("created_at") or 0.0)
    return (now or time.time()) - beat < LEASE.total_seconds()


def _is_conflict(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "conflict" in text or "concurrent" in text


def retry_conflicts(op: Callable[[], Any], *, attempts: int = 8) -> Any:
    """Run one LanceDB write, retrying when a concurrent commit from another process conflicts.

    LanceDB commits optimistically and rebases most concurrent writes itself; what it cannot
    rebase (e.g. two rewrites of one fragment) it reports as a commit conflict, and the right
    answer is to run the operation again against the new table version.
    """
    delay = 0.05
    for attempt in range(attempts):
        try:
            return op()
        except (OSError, RuntimeError, ValueError) as exc:
            if attempt == attempts - 1 or not _is_conflict(exc):
                raise
            logger.info("LanceDB commit conflict, retrying: %s", exc)
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
    raise AssertionError("unreachable")
