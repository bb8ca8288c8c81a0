"""The proofs a ``folio serve`` gives a command on its data directory before the command sends it anything.

Both sides compute them: the server (``GET /v1/health/proof``) and the command's discovery
(``folio.api.cli.discovery``). Each is an HMAC-SHA256 over a fresh nonce of the command's, under a label of its
own, so one proof never stands for another:

- ``instance_proof(secret, nonce)``: the server holds the ``secret`` of the server file it wrote (the file is
  readable by its user only, and the secret never crosses the wire);
- ``key_tag(sha256, nonce)``: the command names its key without sending it (servers store only the sha256 of a
  key, so the tag is made from that);
- ``key_proof(sha256, nonce)``: the server holds the key the tag names.

Standard library only: a command that asks a server imports nothing heavy.

>>> n = "00" * 32
>>> instance_proof("s", n) == instance_proof("s", n) != instance_proof("t", n)
True
>>> key_tag(sha256_hex("k"), n) != key_proof(sha256_hex("k"), n)
True
"""

from __future__ import annotations

import hashlib
import hmac

_INSTANCE = b"folio-instance-proof\0"
_KEY_TAG = b"folio-key-tag\0"
_KEY_PROOF = b"folio-key-proof\0"
NONCE_PATTERN = r"^[0-9a-f]{64}$"
"""A nonce: 256 bits in lower-case hex (``secrets.token_hex(32)``); tags and proofs have the same form."""


def sha256_hex(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def instance_proof(secret: str, nonce: str) -> str:
    return hmac.new(secret.encode(), _INSTANCE + nonce.encode(), hashlib.sha256).hexdigest()


def key_tag(key_sha256: str, nonce: str) -> str:
    return hmac.new(bytes.fromhex(key_sha256), _KEY_TAG + nonce.encode(), hashlib.sha256).hexdigest()


def key_proof(key_sha256: str, nonce: str) -> str:
    return hmac.new(bytes.fromhex(key_sha256), _KEY_PROOF + nonce.encode(), hashlib.sha256).hexdigest()
