"""How a command finds a ``folio serve`` already serving its data directory: the server file.

A ready server writes ``server.json`` into its (local) data directory: its URL, its process id and its
``instance`` (a random id of this start, ``api.http.startup``), and removes it when it stops. A query command
(``folio context``, ``search``, ``ask``) on that directory reads the file and asks the server instead of loading
the store and models itself, when the process is alive and ``GET /v1/health`` at the URL answers ``ready`` with
the same instance: a file left by a killed server, or another program now on its port, is passed over. The
file holds no secret (the command sends ``$FOLIO_API_KEY`` when the server has keys), and only the standard
library reads it, so a command that finds a server stays as light as ``folio --help``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

SERVER_FILE = "server.json"
PROBE_TIMEOUT_S = 1.0


def server_file(data: str) -> Path | None:
    """Where the server file of the data directory ``data`` is; None for an object-store URI (no folder)."""
    uri = data.removeprefix("file://")
    if "://" in uri:
        return None
    return Path(uri) / SERVER_FILE


def announce(data: str, url: str, instance: str) -> Path | None:
    """Write the server file (atomically: a reader never sees half of it); where it went, or None when the
    directory takes no file (an object store, a read-only folder: commands then run in-process, as before)."""
    path = server_file(data)
    if path is None:
        return None
    body = json.dumps({"url": url, "pid": os.getpid(), "instance": instance})
    tmp = path.with_name(f".{SERVER_FILE}.{os.getpid()}.tmp")
    try:
        tmp.write_text(body, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        logger.warning("cannot write %s (%s): commands on this data directory will not find this server", path, e)
        with contextlib.suppress(OSError):
            tmp.unlink()
        return None
    return path


def withdraw(path: Path, instance: str) -> None:
    """Remove the server file if it still names this start (a newer server on the same data keeps its own)."""
    if _read(path).get("instance") == instance:
        with contextlib.suppress(OSError):
            path.unlink()


def find_server(data: str, *, with_key: bool, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """The URL of a ready server on the data directory ``data``, or None (no file, a dead process, another
    instance or no answer at the URL, a server still starting, a server with keys when the command has none
    (``with_key``): the command then runs in-process, where the data directory's owner needs no key)."""
    path = server_file(data)
    if path is None or not path.is_file():
        return None
    found = _read(path)
    url, pid, instance = found.get("url"), found.get("pid"), found.get("instance")
    if not (isinstance(url, str) and url.startswith("http://") and isinstance(pid, int) and _alive(pid)):
        return None
    health = _get_json(f"{url.rstrip('/')}/v1/health", timeout)
    if not isinstance(instance, str) or health.get("instance") != instance or health.get("state") != "ready":
        return None
    if health.get("auth") and not with_key:
        return None
    return url


def _read(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return pid > 0


def _get_json(url: str, timeout: float) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            found = json.loads(response.read(1 << 20))
    except (OSError, ValueError, urllib.error.URLError):
        return {}
    return found if isinstance(found, dict) else {}
