"""How a command finds a ``folio serve`` already serving its data directory: the server file, and why it trusts it.

A ready server writes ``server.json`` into its (local) data directory: its URL, its process id, its ``instance``
(a random id of this start) and a ``secret`` (256 random bits of this start, ``api.http.startup``), readable by
its user only, and removes it when it stops. A query command (``folio context``, ``search``, ``ask``) on that
directory reads the file and asks the server instead of loading the store and models itself.

A data directory is shared, copied and downloaded, so the file is input from outside, and whoever writes it
chooses everything in it. A command forwards a question only when all of this holds (``find_server``):

1. the file is owned by the command's user and no one else may read or write it (``folio serve`` writes it
   ``0600``; a file that came out of an archive or a shared folder does not pass);
2. its URL is ``http://`` to a loopback address literal (``127.0.0.0/8``, ``[::1]``, ``localhost``) with a port,
   and nothing else (no user, path or query): a question never leaves the machine on a file's word;
3. its process id is a live process of the command's user that holds the listening socket of that port
   (``/proc``; where there is no ``/proc`` nothing is forwarded);
4. the server proves it is the one that wrote the file without the secret crossing the wire: the command
   sends a fresh nonce to ``GET /v1/health/proof`` and checks ``HMAC(secret, nonce)``; an older server, another
   program on the port or a stand-in that never saw the secret fails here;
5. ``$FOLIO_API_KEY`` goes only to a server that proved it holds that key (``HMAC(sha256(key), nonce)``, asked
   with a tag made the same way, ``folio.kernel.handshake``, so the key itself never leaves before the proof).
   A server with keys that cannot prove the command's key is passed over (the data directory's owner needs no
   key in-process); a server without keys never receives the key.

Every exchange has a total deadline (not one per read: a server that drips a byte a second is given up on),
and a malformed file (a huge or negative pid, deep nesting, a non-object) is passed over, never a traceback.
Only the standard library is used, so a command that finds a server stays as light as ``folio --help``.
"""

from __future__ import annotations

import contextlib
import hmac
import http.client
import ipaddress
import json
import logging
import os
import secrets
import signal
import stat
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folio.kernel.handshake import instance_proof, key_proof, key_tag, sha256_hex

logger = logging.getLogger(__name__)

SERVER_FILE = "server.json"
PROBE_TIMEOUT_S = 1.0
MAX_FILE_BYTES = 4096
MAX_PID = 1 << 22  # Linux's pid_max ceiling
PROOF_PATH = "/v1/health/proof"


@dataclass(frozen=True)
class Found:
    """A server a command may ask: its URL, and whether it proved it holds the command's key (only then is the
    key sent)."""

    url: str
    send_key: bool


def server_file(data: str) -> Path | None:
    """Where the server file of the data directory ``data`` is; None for an object-store URI (no folder)."""
    uri = data.removeprefix("file://")
    if "://" in uri:
        return None
    return Path(uri) / SERVER_FILE


def announce(data: str, url: str, instance: str, secret: str) -> Path | None:
    """Write the server file (atomically: a reader never sees half of it; ``0600``: its secret is the user's);
    where it went, or None when the directory takes no file (an object store, a read-only folder: commands then
    run in-process, as before)."""
    path = server_file(data)
    if path is None:
        return None
    body = json.dumps({"url": url, "pid": os.getpid(), "instance": instance, "secret": secret})
    tmp = path.with_name(f".{SERVER_FILE}.{os.getpid()}.tmp")
    try:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(body)
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


# ------------------------------------------------------------------------------------------- finding
def find_server(data: str, *, api_key: str | None, timeout: float = PROBE_TIMEOUT_S) -> Found | None:
    """The ready server on the data directory ``data`` that a command may ask, or None (no file or an untrusted
    one, see the module's rules; a server that fails its proof, is still starting, or has keys and cannot prove
    ``api_key``): the command then runs in-process."""
    path = server_file(data)
    if path is None:
        return None
    found = _read_trusted(path)
    url, pid, secret = found.get("url"), found.get("pid"), found.get("secret")
    where = loopback_address(url)
    if where is None or not isinstance(secret, str) or not secret or not _serves(pid, where[1]):
        return None
    assert isinstance(url, str)
    nonce = secrets.token_hex(32)
    query = {"nonce": nonce}
    if api_key:
        query["key_tag"] = key_tag(sha256_hex(api_key), nonce)
    answer = _get_json(where, f"{PROOF_PATH}?{urllib.parse.urlencode(query)}", timeout)
    proof = answer.get("instance_proof")
    if not isinstance(proof, str) or not hmac.compare_digest(proof, instance_proof(secret, nonce)):
        return None
    if answer.get("state") != "ready":
        return None
    if not answer.get("auth"):
        return Found(url, send_key=False)
    proved = answer.get("key_proof")
    if not (api_key and isinstance(proved, str)):
        return None
    if not hmac.compare_digest(proved, key_proof(sha256_hex(api_key), nonce)):
        return None
    return Found(url, send_key=True)


def loopback_address(url: object) -> tuple[str, int] | None:
    """``(host, port)`` of ``http://<loopback literal>:<port>[/]``, else None: any other scheme, host, a name
    that would need DNS, user info, a path, a query or a fragment.

    >>> loopback_address("http://127.0.0.1:8000/"), loopback_address("http://[::1]:9"), loopback_address("http://192.0.2.2:8796")
    (('127.0.0.1', 8000), ('::1', 9), None)
    """
    if not isinstance(url, str) or len(url) > 100:
        return None
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if parts.scheme != "http" or host is None or port is None or parts.username is not None:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment or "@" in parts.netloc:
        return None
    if host != "localhost":
        try:
            if not ipaddress.ip_address(host).is_loopback:
                return None
        except ValueError:
            return None
    return host, port


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            return {}
        found = json.loads(raw)
    except (OSError, ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def _read_trusted(path: Path) -> dict[str, Any]:
    """The file's fields when this user owns it and no one else may read or write it, else nothing."""
    try:
        st = path.lstat()
    except OSError:
        return {}
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return {}
    return _read(path)


def _serves(pid: object, port: int) -> bool:
    """Whether ``pid`` is a live process of this user that holds a socket listening on ``port``."""
    if not isinstance(pid, int) or isinstance(pid, bool) or not 1 < pid <= MAX_PID:
        return False
    proc = Path("/proc") / str(pid)
    try:
        if proc.stat().st_uid != os.getuid():
            return False
        sockets = _listening_sockets(port)
        if not sockets:
            return False
        return any(os.readlink(proc / "fd" / fd) in sockets for fd in os.listdir(proc / "fd"))
    except OSError:
        return False


def _listening_sockets(port: int) -> set[str]:
    """``socket:[inode]`` of every TCP socket of this user listening on ``port`` (IPv4 and IPv6)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table, encoding="ascii") as f:
            next(f, None)
            for line in f:
                fields = line.split()
                if len(fields) < 10 or fields[3] != "0A":  # 0A: LISTEN
                    continue
                local_port = fields[1].rpartition(":")[2]
                if int(local_port, 16) == port and fields[7] == str(os.getuid()):
                    found.add(f"socket:[{fields[9]}]")
    return found


# ------------------------------------------------------------------------------------------- HTTP
class DeadlineExpired(TimeoutError):
    pass


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise ``DeadlineExpired`` in this block after ``seconds`` of wall time, whatever it waits on (a timeout
    per read lets a server that sends a byte now and then hold a command forever). A real-time alarm, so only
    in the main thread of a process that has not set one; elsewhere the block runs with its own timeouts."""
    usable = threading.current_thread() is threading.main_thread() and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    if not usable:
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise DeadlineExpired(f"no complete answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _get_json(where: tuple[str, int], path: str, timeout: float) -> dict[str, Any]:
    """``GET path`` at ``where`` (a ``loopback_address``) as JSON within ``timeout`` seconds in all; ``{}`` on any
    failure."""
    connection = http.client.HTTPConnection(where[0], where[1], timeout=timeout)
    try:
        with deadline(timeout):
            connection.request("GET", path, headers={"Accept": "application/json"})
            response = connection.getresponse()
            if response.status != 200:  # noqa: PLR2004
                return {}
            raw = response.read(1 << 20)
        found = json.loads(raw)
    except (OSError, ValueError, RecursionError, http.client.HTTPException):
        return {}
    finally:
        connection.close()
    return found if isinstance(found, dict) else {}
