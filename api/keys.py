"""API keys scoped to collections and to read or write access, kept in a file.

``FOLIO_KEYS_FILE`` is a JSON list of keys::

    [{"id": "k1a2b3c4", "sha256": "<hex sha256 of the secret>", "collections": ["a", "b"], "access": "read"}]

``collections`` is a list of collection names, or ``["*"]`` for every collection; ``access`` is
``read`` (documents, regions, images, jobs, search, context, verify) or ``write`` (also upload and
delete). The file holds only hashes: a secret is shown once, by ``folio keys add``. The server
re-reads the file when its modification time, size or inode changes, so ``folio keys add`` /
``revoke`` (or any rewrite) take effect on the next request, without a restart. An unreadable or
invalid file fails closed (``KeysUnavailable``, 503): a broken rewrite never revives revoked keys.
The 503 does not name the file (its path is in the server log).

``FOLIO_API_KEY``, the older single key, still works and opens everything (every collection,
write access).

A secret is compared by its sha256 against every key's hash with ``hmac.compare_digest``, without
stopping at a match, so the time taken says nothing about which key (if any) was close.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import logging
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from folio.kernel.errors import FolioError, InvalidRequest
from folio.kernel.handshake import key_proof, key_tag

logger = logging.getLogger(__name__)

Access = Literal["read", "write"]
ALL_COLLECTIONS = "*"
SECRET_PREFIX = "folio_"


class KeysUnavailable(FolioError, RuntimeError):
    """The keys file cannot be read or is invalid: every keyed request fails until it is fixed."""

    code = "keys_unavailable"
    http_status = 503


class KeyRecord(BaseModel):
    """One key as stored in the keys file (never the secret itself)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="hex sha256 of the secret")
    collections: tuple[str, ...] = Field(min_length=1, max_length=1000)
    access: Access
    created_at: float | None = None

    @field_validator("collections")
    @classmethod
    def _names(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if ALL_COLLECTIONS in v:
            if len(v) != 1:
                raise ValueError('"*" stands alone: it already means every collection')
            return v
        # function-level: the door (the store's rule for collection names) loads when a key is read, not when
        # `folio mcp` or `folio keys --help` imports this module
        from folio.api.application import check_collection

        for name in v:
            check_collection(name)
        return v


_KEYS = TypeAdapter(list[KeyRecord])


@dataclass(frozen=True)
class Principal:
    """Who a request acts as: the key's id, its collections (None: every one) and its access."""

    key_id: str | None
    collections: frozenset[str] | None
    access: Access

    @property
    def can_write(self) -> bool:
        return self.access == "write"

    def sees(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    @classmethod
    def of(cls, key: KeyRecord) -> Principal:
        every = key.collections == (ALL_COLLECTIONS,)
        return cls(key.id, None if every else frozenset(key.collections), key.access)


# No keys configured (loopback default), or the legacy FOLIO_API_KEY: everything.
FULL_ACCESS = Principal(key_id=None, collections=None, access="write")


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret() -> str:
    """A fresh secret: 256 random bits, URL-safe, with a prefix that secret scanners can spot."""
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def read_keys(path: Path) -> list[KeyRecord]:
    """The keys in ``path`` (a missing file has none); ``KeysUnavailable`` when it is not valid."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise KeysUnavailable(f"cannot read the keys file: {exc.strerror}") from exc
    try:
        keys = _KEYS.validate_json(raw)
    except ValidationError as exc:
        raise KeysUnavailable(f"the keys file is not a valid list of keys: {exc.errors()[0]['msg']}") from exc
    ids = [k.id for k in keys]
    if len(set(ids)) != len(ids):
        raise KeysUnavailable("the keys file has duplicate key ids")
    return keys


def write_keys(path: Path, keys: Iterable[KeyRecord]) -> None:
    """Replace the file atomically (a reader sees the old or the new list, never half of one), mode 0600."""
    body = json.dumps([k.model_dump(mode="json") for k in keys], indent=2) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(body)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Serialize read-modify-write of the keys file between ``folio keys`` processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def add_key(path: Path, collections: Iterable[str], access: Access) -> tuple[KeyRecord, str]:
    """Create a key; returns its record and the secret (the only time the secret exists in clear)."""
    secret = new_secret()
    with _locked(path):
        keys = read_keys(path)
        taken = {k.id for k in keys}
        key_id = secrets.token_hex(4)
        while key_id in taken:
            key_id = secrets.token_hex(4)
        try:
            record = KeyRecord(
                id=key_id,
                sha256=hash_secret(secret),
                collections=tuple(dict.fromkeys(collections)),
                access=access,
                created_at=time.time(),
            )
        except ValidationError as exc:
            raise InvalidRequest(f"invalid key: {exc.errors()[0]['msg']}") from exc
        write_keys(path, [*keys, record])
    return record, secret


def revoke_key(path: Path, key_id: str) -> bool:
    """Remove a key; False when there was no key with that id."""
    with _locked(path):
        keys = read_keys(path)
        kept = [k for k in keys if k.id != key_id]
        if len(kept) == len(keys):
            return False
        write_keys(path, kept)
    return True


class KeyRing:
    """The keys a server accepts: the keys file (re-read when it changes) and the legacy key.

    ``enabled`` is False only when neither is configured; then every request acts with
    ``FULL_ACCESS`` (the loopback default, guarded by the Host/Origin checks)."""

    def __init__(self, path: str | os.PathLike[str] | None, legacy_key: str | None = None) -> None:
        self.path = Path(path) if path else None
        self.legacy_key = legacy_key or None
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._keys: list[KeyRecord] = []

    @property
    def enabled(self) -> bool:
        return self.path is not None or self.legacy_key is not None

    def keys(self) -> list[KeyRecord]:
        """The current keys, re-read when the file's mtime, size or inode changed since the last read."""
        if self.path is None:
            return []
        try:
            st = self.path.stat()
            stamp: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = None
        except OSError as exc:
            logger.error("keys file %s: %s", self.path, exc.strerror)
            raise KeysUnavailable(f"cannot read the keys file: {exc.strerror}") from exc
        with self._lock:
            if stamp != self._stamp:
                try:
                    keys = read_keys(self.path) if stamp is not None else []
                except KeysUnavailable as exc:  # the path is for the operator's log, not the client's reply
                    logger.error("keys file %s: %s", self.path, exc)
                    raise
                logger.info("keys file %s: %d keys", self.path, len(keys))
                self._keys, self._stamp = keys, stamp
            return self._keys

    def prove(self, nonce: str, tag: str) -> str | None:
        """``key_proof`` of the key that ``tag`` names (``folio.kernel.handshake``), or None: how a server shows
        a command on its data directory that it holds the command's key before the command sends it. Every
        key is tried (no early exit)."""
        hashes = [key.sha256 for key in self.keys()]
        if self.legacy_key is not None:
            hashes.append(hash_secret(self.legacy_key))
        found: str | None = None
        for digest in hashes:
            if hmac.compare_digest(key_tag(digest, nonce), tag) and found is None:
                found = key_proof(digest, nonce)
        return found

    def authenticate(self, secret: str) -> Principal | None:
        """The principal a secret stands for, or None. Every hash is compared (no early exit)."""
        found: Principal | None = None
        if self.legacy_key is not None and hmac.compare_digest(secret.encode(), self.legacy_key.encode()):
            found = FULL_ACCESS
        digest = hash_secret(secret).encode()
        for key in self.keys():
            if hmac.compare_digest(digest, key.sha256.encode()) and found is None:
                found = Principal.of(key)
        return found
