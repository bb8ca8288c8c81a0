"""What retrieval derives from one document version, kept per version stamp.

A version's rows change only when the version is replaced as a whole, and then its stamp changes
(``StoreReader.version_stamp``). So whatever a retriever derives from them (a page lexicon, the statement
pages, the label index, the page multivectors, the section summaries) is kept under ``(doc, version,
stamp)`` and never goes stale: new rows give a new key, and the least recently used entries leave once more
than ``size`` are kept. ``Retriever.refresh`` only frees memory (``clear``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from folio.ingest.storage.interface import StoreReader

T = TypeVar("T")


class VersionCache(Generic[T]):
    """An LRU of ``size`` values derived from one version each, keyed by doc, version and stamp. Thread-safe;
    two threads that miss the same key at once both build it (the values are equal) and one is kept."""

    def __init__(self, store: StoreReader, size: int) -> None:
        self.store = store
        self.size = size
        self._values: OrderedDict[tuple[str, str, str], T] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._values)

    def get(self, doc_id: str, version_id: str, build: Callable[[], T]) -> T:
        """The value of this version's current rows: kept, else ``build()`` (called without the lock)."""
        key = (doc_id, version_id, self.store.version_stamp(doc_id, version_id))
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = build()
        with self._lock:
            self._values[key] = value
            while len(self._values) > self.size:
                self._values.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget every value (``Retriever.refresh``: frees memory, never needed for correctness)."""
        with self._lock:
            self._values.clear()
