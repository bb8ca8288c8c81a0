"""Which document versions a query may see: request filters resolved into a ``Scope``.

Only ready versions are ever searched, and only in the collections the caller's key sees. By
default each document contributes its latest ready version; an older version is searched only
when the caller names it in ``versions``. The scope is resolved from the store's ``versions``
table at query time, so a version being written (pending) or deleted is invisible without any
cache invalidation. ``Scope`` itself is a kernel value; the store turns it into its own prefilter
(``folio.ingest.storage.sql.scope_filter``), so retrieval writes no query string.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from folio.ingest.storage.interface import StoreReader
from folio.kernel.errors import DocumentNotFound, InvalidRequest, VersionNotFound
from folio.kernel.hit import Modality
from folio.kernel.metadata import FilterAnd, FilterLeaf, FilterNode, FilterOr
from folio.kernel.scope import Scope

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
class ScopeFilter:
    """What a request narrows its search to (``resolve_scope``); every filter None: no narrowing."""

    doc_ids: Sequence[str] | None = None
    versions: Mapping[str, str] | None = None
    pages: Iterable[int] | None = None
    kinds: Iterable[str] | None = None
    collections: Collection[str] | None = None
    metadata: FilterNode | None = None


def resolve_scope(store: StoreReader, filters: ScopeFilter | None = None) -> Scope:
    """Turn request filters into a :class:`Scope` (None: no filters).

    - ``doc_ids`` None: every document; otherwise exactly those (unknown ids raise ``DocumentNotFound``).
    - ``versions`` ``{doc_id: version_id}`` pins a document to a version (``VersionNotFound`` when that
      version is not ready). With ``doc_ids`` None and pins given, only the pinned documents are
      searched; with ``doc_ids`` given, a pin for a document outside them is an ``InvalidRequest``.
    - ``collections`` (an API key's): documents of other collections do not exist for this query;
      naming one is the same ``DocumentNotFound`` as naming an unknown id.
    - ``metadata`` (a filter, ``folio.kernel.metadata``) applies last, to the version chosen for each document
      (its latest, or its pin): a document whose chosen version does not match is not searched (an older
      version that matches is not taken instead). Nothing matching is an empty scope, not an error.
    """
    if filters is None:
        filters = ScopeFilter()
    if isinstance(filters.doc_ids, str):
        raise InvalidRequest("doc_ids must be a list of document ids, not a string")
    ready = store.list_versions(collections=filters.collections)
    size = {(v.doc_id, v.version_id): v.regions for v in ready}
    newest = {v.doc_id: v.version_id for v in ready if v.latest}
    chosen = _chosen_versions(filters, size, newest)
    if filters.metadata is not None:
        matched = matching(store, filters.metadata, frozenset(chosen.items()))
        chosen = {d: v for d, v in chosen.items() if (d, v) in matched}
    page_set = _page_set(filters.pages)
    kind_set = _kind_set(filters.kinds)
    pairs = tuple(sorted(chosen.items()))
    return Scope(versions=pairs, pages=page_set, kinds=kind_set, regions=sum(size.get(p, 0) for p in pairs))


def _chosen_versions(filters: ScopeFilter, size: Mapping[tuple[str, str], int], newest: Mapping[str, str]
                     ) -> dict[str, str]:
    """The version of each document searched: the newest ready one of each document asked for (all, when
    ``doc_ids`` is None and nothing is pinned), then the pins."""
    pins = dict(filters.versions or {})
    if filters.doc_ids is not None:
        wanted = list(dict.fromkeys(filters.doc_ids))
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
    return latest


def matching(store: StoreReader, node: FilterNode, candidates: frozenset[tuple[str, str]]
             ) -> frozenset[tuple[str, str]]:
    """The ``candidates`` a filter holds for: each leaf is one store query (``StoreReader.metadata_matches``:
    LanceDB evaluates it), ``and``/``or``/``not`` are set operations over the candidates."""
    if not candidates:
        return candidates
    if isinstance(node, FilterLeaf):
        return candidates & frozenset(store.metadata_matches(node))
    if isinstance(node, FilterAnd):
        out = candidates
        for child in node.all_of:
            out = matching(store, child, out)
        return out
    if isinstance(node, FilterOr):
        return frozenset().union(*(matching(store, child, candidates) for child in node.any_of))
    return candidates - matching(store, node.negated, candidates)


def _page_set(pages: Iterable[int] | None) -> frozenset[int] | None:
    if pages is None:
        return None
    try:
        page_set = frozenset(int(p) for p in pages)
    except (TypeError, ValueError) as exc:
        raise InvalidRequest(f"pages must be integers: {exc}") from exc
    if any(p < 1 for p in page_set):
        raise InvalidRequest("pages are 1-based")
    return page_set


def _kind_set(kinds: Iterable[str] | None) -> frozenset[str] | None:
    if kinds is None:
        return None
    kind_set = frozenset(kinds)
    unknown = sorted(kind_set - KNOWN_KINDS)
    if unknown:
        raise InvalidRequest(
            f"unknown region kinds: {', '.join(unknown)} (known: {', '.join(sorted(KNOWN_KINDS))})"
        )
    return kind_set
