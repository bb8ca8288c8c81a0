"""Building a context package: the request's scope and retrieval call (``search_hits``), its assembly
options (``context_options``: the one place a request's unset budget and tokenizer take the server's), the
file names and visibility checks every read shares. Plain functions over explicit resources (no FastAPI
types); the door (``api.application.Folio``) calls them with its one store, retriever and LLM client, so
``folio context`` runs the exact code path of ``POST /v1/context`` in-process."""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Collection
from typing import TYPE_CHECKING

from folio.api.errors import capped_list
from folio.api.schemas import assembly_options
from folio.api.service.compress_llm import llm_compressor
from folio.assembly import assemble
from folio.assembly.options import AssemblyOptions
from folio.assembly.package import ContextPackage
from folio.kernel.errors import DocumentNotFound, RegionNotFound, VersionNotFound
from folio.kernel.model import DocumentVersion, Region
from folio.kernel.scope import Scope
from folio.retrieval.query import SearchQuery
from folio.retrieval.scope import ScopeFilter, resolve_scope

if TYPE_CHECKING:
    from folio.api.schemas import ContextRequest, RetrievalOptions
    from folio.api.service.llm import ChatClient
    from folio.assembly.packing.compress import Compressor
    from folio.ingest.storage.interface import ServiceStore
    from folio.retrieval.search import Retriever, SearchResult
    from folio.settings import Settings

logger = logging.getLogger(__name__)


_FILENAMES: weakref.WeakKeyDictionary[ServiceStore, dict[tuple[int, frozenset[str] | None], dict[str, str]]] = (
    weakref.WeakKeyDictionary()
)
_FILENAMES_LOCK = threading.Lock()


def version_filenames(store: ServiceStore, collections: Collection[str] | None = None) -> dict[str, str]:
    """version_id → file name, over every ready version (old versions can be queried too) of
    ``collections`` (None: all). Same bytes in two collections share a version id, so the
    filter matters: the other collection's file name must not show.

    Asked on every context request: kept per store while its versions table is at the same
    LanceDB version (a commit or delete moves it): the request's (``Store.pinned_versions``:
    ``build_context`` reads it once for scope, sources and file names), else read here. Callers must
    not mutate the result."""
    key = (store.versions_version(), frozenset(collections) if collections is not None else None)
    with _FILENAMES_LOCK:
        per_store = _FILENAMES.setdefault(store, {})
        hit = per_store.get(key)
    if hit is not None:
        return hit
    names = {v.version_id: v.filename for v in store.list_versions(collections=collections)}
    with _FILENAMES_LOCK:
        if any(k[0] != key[0] for k in per_store):
            per_store.clear()  # an older table version: never asked again
        per_store[key] = names
    return names


def visible_version(
    store: ServiceStore, doc_id: str, version_id: str | None = None, *, collections: Collection[str] | None = None
) -> DocumentVersion:
    """``store.get_version``, where a document outside ``collections`` (an API key's; None: all)
    raises exactly what an unknown doc id raises, so a key cannot learn that it exists."""
    if collections is not None:
        collection = store.collection_of(doc_id)
        if collection is None or collection not in collections:
            raise DocumentNotFound(f"no such document: {doc_id}")
    return store.get_version(doc_id, version_id)


def visible_region(store: ServiceStore, region_id: str, *, collections: Collection[str] | None = None) -> Region:
    """A region of a ready version in ``collections``; any other id is the same ``RegionNotFound``."""
    try:
        region = store.get_region(region_id)
    except VersionNotFound as e:
        raise RegionNotFound(f"no such region: {region_id}") from e
    if collections is not None and store.collection_of(region.doc_id) not in collections:
        raise RegionNotFound(f"no such region: {region_id}")
    return region


def page_image_url(doc_id: str, version_id: str, page: int) -> str:
    return f"/v1/documents/{doc_id}/versions/{version_id}/pages/{page}/image"


def region_image_url(region_id: str) -> str:
    return f"/v1/regions/{region_id}/image"


def search_hits(
    store: ServiceStore,
    retriever: Retriever,
    req: RetrievalOptions,
    *,
    collections: Collection[str] | None = None,
) -> SearchResult:
    """Run the retriever for a search, context or answer request: the one place their ``RetrievalOptions``
    become a retrieval call (same filters for every endpoint); the result's ``notes`` say what did not go
    as asked (a reranker that failed and kept the fused order).

    ``collections`` (an API key's; None: all) bounds the scope: documents elsewhere are unknown
    ids (404) when named, and never searched otherwise. The retriever is handed the resolved
    document list, and hits outside the scope are dropped as a second guard."""
    collections = within_collection(collections, req.collection)
    if req.doc_ids:  # unknown doc ids are a 404, not an empty result
        known = {v.doc_id for v in store.list_versions(collections=collections) if v.latest}
        missing = sorted(set(req.doc_ids) - known)
        if missing:
            raise DocumentNotFound(f"no such document: {capped_list(missing)}")
    doc_ids = req.doc_ids
    scope: Scope | None = None
    if collections is not None:
        scope = resolve_scope(store, ScopeFilter(doc_ids=req.doc_ids, versions=req.versions, collections=collections))
        doc_ids = [d for d, _ in scope.versions]
    result = retriever.search_detailed(SearchQuery(
        req.query,
        doc_ids=doc_ids,
        versions=req.versions,
        pages=req.pages,
        kinds=req.kinds,
        k=req.k,
        strategy=req.retrieval_strategy,
        quotas=req.quotas,
        rerank=req.rerank,
        metadata=req.metadata_filter(),
    ))
    if scope is not None:
        result.hits = [h for h in result.hits if scope.contains(h.doc_id, h.version_id)]
    return result


def within_collection(collections: Collection[str] | None, collection: str | None) -> Collection[str] | None:
    """The collections a request searches: the key's (None: all), narrowed to the one it names. A name the key
    does not see is the ``DocumentNotFound`` (404) of an unknown document; one that holds nothing is no hits."""
    if collection is None:
        return collections
    if collections is not None and collection not in collections:
        raise DocumentNotFound(f"no such collection: {collection}")
    return frozenset({collection})


def build_context(  # noqa: PLR0913
    store: ServiceStore,
    retriever: Retriever,
    req: ContextRequest,
    settings: Settings,
    *,
    collections: Collection[str] | None = None,
    compressor: Compressor | None = None,
    llm: ChatClient | None = None,
) -> ContextPackage:
    """Retrieve, then assemble: what ``POST /v1/context`` and ``folio context`` return (within
    ``collections``, see ``search_hits``). ``compress="llm"`` uses ``compressor``, else one on ``llm``
    (default: the configured LLM; ``api.service.compress_llm``; none configured: ``LLMNotConfigured``, 503)."""
    options = context_options(req, settings)
    if options.compress == "llm" and compressor is None:
        compressor = llm_compressor(settings, client=llm)  # before retrieval: no endpoint fails fast
    with store.pinned_versions():  # one read of the versions table's version for the whole request
        found = search_hits(store, retriever, req, collections=collections)
        source = retriever.source_for(found.hits)
        filenames = version_filenames(store, collections)
    package: ContextPackage = assemble(
        req.query, found.hits, source, options, filenames=filenames, retrieval_notes=found.notes,
        compressor=compressor,
    )
    return package


def context_options(req: ContextRequest, settings: Settings) -> AssemblyOptions:
    """The assembly options of a context (or answer) request: what it leaves unset takes the server's
    ``FOLIO_TOKENIZER`` and ``FOLIO_DEFAULT_BUDGET`` (whose default is ``folio.settings.DEFAULT_BUDGET``, the
    one assembly falls back to); a tokenizer it names must be one the server has configured. Retrieval's text
    channels go with them (``retrieval.search.text_retrievers``): assembly names no channel."""
    # function-level: the channel registry loads the retriever's modules, which ``folio docs`` never needs
    from folio.retrieval.search import text_retrievers

    return assembly_options(
        req,
        default_tokenizer=settings.context.tokenizer,
        default_budget=settings.context.default_budget,
        tokenizers=settings.request_tokenizers(),
    ).with_text_retrievers(text_retrievers())
