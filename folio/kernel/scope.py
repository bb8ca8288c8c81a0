"""``Scope``: which document versions a query may see, with optional page and kind filters.

A plain value that retrieval resolves from a request (``folio.retrieval.scope.resolve_scope``) and hands
to the store, which turns it into its own filters (``folio.ingest.storage.sql.scope_filter``): retrieval never
writes a query string, the store never parses a request.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scope:
    """A set of (doc_id, version_id) pairs plus optional page and kind filters."""

    versions: tuple[tuple[str, str], ...]
    pages: frozenset[int] | None = None
    kinds: frozenset[str] | None = None
    regions: int = 0  # regions stored for these versions: a cheap size estimate

    @property
    def empty(self) -> bool:
        return not self.versions

    def contains(self, doc_id: str, version_id: str) -> bool:
        return (doc_id, version_id) in self._pairs

    @property
    def _pairs(self) -> frozenset[tuple[str, str]]:
        return frozenset(self.versions)

    def accepts(self, doc_id: str, version_id: str, page: int, kind: str | None = None) -> bool:
        if (doc_id, version_id) not in self._pairs:
            return False
        if self.pages is not None and page not in self.pages:
            return False
        return not (self.kinds is not None and kind is not None and kind not in self.kinds)
