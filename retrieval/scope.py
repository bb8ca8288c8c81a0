"""Which document versions a query may see, and the SQL prefilter that enforces it.

Only ready versions are ever searched, and only in the collections the caller's key sees. By
default each document contributes its latest ready version; an older version is searched only
when the caller names it in ``versions``. The scope is resolved from the store's ``versions``
table at query time, so a version being written (pending) or deleted is invisible without any
cache invalidation.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from folio.ingest.store import Store, sql_in
from folio.kernel.errors import DocumentNotFound, InvalidRequest, VersionNotFound
from folio.kernel.hit import Modality

MODALITY_BY_KIND: dict[str, Modality] = {
    "sentence": "text",
    "paragraph": "text",
    "section": "text",
    "table": "table",
    "figure": "figure",
    "page": "page",
}
KNOWN_KINDS = frozenset(MODALITY_BY_KIND)


def modality_of(kind: str) -> Modality:
    return MODALITY_BY_KIND.get(kind, "text")


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

    def where(self, *, page_column: str = "page", kind_column: str | None = "kind") -> str:
        """SQL prefilter for a version-scoped table. ``version_id`` goes first: it is the selective,
        indexed column; ``doc_id`` is added because one file ingested under two doc ids shares a hash.
        """
        parts = [
            sql_in("version_id", (v for _, v in self.versions)),
            sql_in("doc_id", (d for d, _ in self.versions)),
        ]
        if self.pages is not None:
            parts.append(
                f"{page_column} IN ({', '.join(str(p) for p in sorted(self.pages))})"
                if self.pages
                else "false"
            )
        if self.kinds is not None and kind_column:
            parts.append(sql_in(kind_column, self.kinds))
        return " AND ".join(parts)

    def accepts(self, doc_id: str, version_id: str, page: int, kind: str | None = None) -> bool:
        if (doc_id, version_id) not in self._pairs:
            return False
        if self.pages is not None and page not in self.pages:
            return False
        return not (self.kinds is not None and kind is not None and kind not in self.kinds)


def resolve_scope(
    store: Store,
    *,
    doc_ids: Sequence[str] | None = None,
    versions: Mapping[str, str] | None = None,
    pages: Iterable[int] | None = None,
    kinds: Iterable[str] | None = None,
    collections: Collection[str] | None = None,
) -> Scope:
    """Turn request filters into a :class:`Scope`.

    - ``doc_ids`` None: every document; otherwise exactly those (unknown ids raise ``DocumentNotFound``).
    - ``versions`` ``{doc_id: version_id}`` pins a document to a version (``VersionNotFound`` when that
      version is not ready). With ``doc_ids`` None and pins given, only the pinned documents are
      searched; with ``doc_ids`` given, a pin for a document outside them is an ``InvalidRequest``.
    - ``collections`` (an API key's): documents of other collections do not exist for this query;
      naming one is the same ``DocumentNotFound`` as naming an unknown id.
    """
    if isinstance(doc_ids, str):
        raise InvalidRequest("doc_ids must be a list of document ids, not a string")
    pins = dict(versions or {})
    ready = store.list_versions(collections=collections)
    size = {(v.doc_id, v.version_id): v.regions for v in ready}
    newest = {v.doc_id: v.version_id for v in ready if v.latest}
    if doc_ids is not None:
        wanted = list(dict.fromkeys(doc_ids))
        outside = sorted(set(pins) - set(wanted))
        if outside:
            raise InvalidRequest(f"versions given for documents not in doc_ids: {', '.join(outside)}")
        unknown = sorted(set(wanted) - set(newest))
        if unknown:
            raise DocumentNotFound(f"no such document: {', '.join(unknown)}")
        latest = {d: newest[d] for d in wanted}
    elif pins:
        latest = {}
    else:
        latest = dict(newest)
    for doc_id, version_id in pins.items():
        if doc_id not in newest:
            raise DocumentNotFound(f"no such document: {doc_id}")
        if (doc_id, version_id) not in size:
            raise VersionNotFound(f"document {doc_id} has no version {version_id}")
        latest[doc_id] = version_id
    page_set: frozenset[int] | None = None
    if pages is not None:
        try:
            page_set = frozenset(int(p) for p in pages)
        except (TypeError, ValueError) as exc:
            raise InvalidRequest(f"pages must be integers: {exc}") from exc
        if any(p < 1 for p in page_set):
            raise InvalidRequest("pages are 1-based")
    kind_set: frozenset[str] | None = None
    if kinds is not None:
        kind_set = frozenset(kinds)
        unknown = sorted(kind_set - KNOWN_KINDS)
        if unknown:
            raise InvalidRequest(
                f"unknown region kinds: {', '.join(unknown)} (known: {', '.join(sorted(KNOWN_KINDS))})"
            )
    pairs = tuple(sorted(latest.items()))
    return Scope(versions=pairs, pages=page_set, kinds=kind_set, regions=sum(size.get(p, 0) for p in pairs))
