"""folio's application layer: one ``Folio`` object, opened once from the settings, that every interface
calls: the REST routes (through ``api.deps``), the query worker processes, ``folio context | search | ask |
demo``, the MCP tools and ``folio.local.LocalFolio``.

``Folio.open(settings)`` opens the store, the retriever (with the configured tokenizers registered) and,
lazily, the LLM client and the ingest indexers. Its methods take a validated request and the caller's
collections (None: all) and return the pydantic response models the REST API serializes, so every
interface gives the same answer in the same shape:

    ingest          submit_ingest (a job on the ``JobRunner``), ingest_path (a file, here)
    search          SearchResponse              context    ContextPackage
    verify          VerifyReport                answer     AnswerResponse (prepare_answer: the streamed form)
    documents       DocumentList                document / version    DocumentDetail
    pages           PageList                    delete_document / delete_version    DeleteResponse
    region          RegionOut                   page_image / region_image    the PNG (bytes or a path)
    health          HealthOut                   counts     the store's counts

Layers (pyproject ``[tool.importlinter]``): the interfaces import this module; it imports the
request-level work (``api.service``, ``api.answer``, ``api.jobs``) and the stages below them, never an
interface. It is a module of its own, not grown out of ``api.service``, because ``api.answer`` builds its
package with ``api.service.build_context`` while ``Folio`` calls ``api.answer``: one module for both would
be an import circle.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from folio.api.answer import Prepared, answer, prepare
from folio.api.chat import require_llm
from folio.api.errors import AssetNotFound
from folio.api.highlight import highlighted_png
from folio.api.jobs import IngestSpec, JobHandle, JobRunner, LocalJobRunner
from folio.api.model_calls import ModelCalls
from folio.api.schemas import (
    ContextRequest,
    DeleteResponse,
    DocumentDetail,
    DocumentList,
    DocumentOut,
    HealthOut,
    HitOut,
    PageList,
    PageOut,
    RegionLocatorOut,
    RegionOut,
    SearchResponse,
    SourceOut,
    VersionOut,
)
from folio.api.service import (
    build_context,
    page_image_url,
    region_image_url,
    search_hits,
    version_filenames,
    visible_region,
    visible_version,
)
from folio.assembly import verify_answer
from folio.assembly.types import ContextPackage, VerifyReport
from folio.ingest.storage.sql import DEFAULT_COLLECTION
from folio.ingest.storage.store import Store
from folio.kernel.errors import FolioError, InvalidRequest
from folio.kernel.model import PARSER_VERSION, IngestReport
from folio.kernel.tokens import get_tokenizer, register_tokenizer

if TYPE_CHECKING:
    from folio.api.answer_schemas import AnswerRequest, AnswerResponse
    from folio.api.schemas import SearchRequest, VerifyRequest
    from folio.api.settings import Settings
    from folio.assembly.compress import Compressor
    from folio.ingest.pipeline import VersionIndexer
    from folio.retrieval.llm import ChatClient
    from folio.retrieval.search import Retriever

logger = logging.getLogger(__name__)

Collections = Collection[str] | None
SEARCH_TEXT_CHARS = 500
"""How much of a hit's region text a search hit carries (REST, CLI and MCP alike)."""


class Folio:
    """The service: one store, one retriever, one LLM client, one job runner (``jobs``: in-process unless one
    is given, e.g. the Ray cluster's; ``start``/``close`` start and stop it), one bound on model calls
    (``model_calls``). Safe to share between threads (the store and retriever are; the ingest indexers load
    once, under a lock)."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        retriever: Retriever,
        *,
        jobs: JobRunner | None = None,
        indexers: Sequence[VersionIndexer] | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.retriever = retriever
        self.jobs: JobRunner = jobs if jobs is not None else LocalJobRunner()
        # answers' model calls: at most FOLIO_LLM_CONCURRENCY at once and FOLIO_LLM_QUEUE waiting
        self.model_calls = ModelCalls(settings.llm.concurrency, settings.llm.queue)
        self._indexers = list(indexers) if indexers is not None else None
        self._indexers_lock = threading.Lock()

    @classmethod
    def open(cls, settings: Settings, *, jobs: JobRunner | None = None) -> Folio:
        """The store at ``settings.storage.data``, the retriever and the models the settings name, and every
        ``FOLIO_TOKENIZERS`` entry registered (a request may name one, whichever interface it came through)."""
        # function-level: the store and the retrieval models load when a Folio opens, not when an interface
        # imports this module (`folio --help`, the MCP handshake, the client stay light). Torch loads only
        # for what needs it (CLIP, ColPali, ingest's indexers, the torch embedding backend): the default
        # query path is ONNX Runtime, and importing torch would cost a `folio context` most of its time.
        from folio.retrieval.search import Retriever

        register_tokenizers(settings)
        store = Store(settings.storage.data)
        return cls(settings, store, Retriever.from_settings(store, settings), jobs=jobs)

    def warm(self) -> Folio:
        """Load now what the first request would otherwise wait for (the server's startup and each query
        worker's): the query encoder (and, on a machine's first start, its ONNX export), the tokenizers, and
        what one query opens and caches (the tables, the full-text index, the region sources), by asking one.
        A server says it is ready only after this (``api.startup``); the first query after it is as fast as
        the next. A warm-up query that fails is logged, not fatal: real queries will say what is wrong."""
        self.retriever.text.embed_query("warm up")
        for name in self.settings.context.tokenizers:
            get_tokenizer(name)
        get_tokenizer(self.settings.context.tokenizer)
        try:
            self.context(ContextRequest(query="warm up"))
        except FolioError as e:
            logger.warning("the warm-up query failed: %s", e)
        return self

    # ------------------------------------------------------------------ the lazy parts
    @property
    def llm_or_none(self) -> ChatClient | None:
        """The one LLM client (the retriever's: rerank, answers and ``compress="llm"`` share it), if configured."""
        return self.retriever.llm

    @property
    def llm(self) -> ChatClient:
        """The LLM client; none configured is ``LLMNotConfigured`` (503) with how to configure one."""
        return require_llm(self.settings, self.llm_or_none)

    @property
    def indexers(self) -> Sequence[VersionIndexer]:
        """The ingest-time indexers (section summaries; CLIP and ColPali when configured), loaded once."""
        with self._indexers_lock:
            if self._indexers is None:
                from folio.retrieval.visual import indexers_from_settings  # function-level: ingest's models

                self._indexers = indexers_from_settings(self.settings)
            return self._indexers

    def start(self) -> None:
        self.jobs.start()

    def close(self) -> None:
        self.jobs.stop()

    def refresh(self) -> None:
        """See documents ingested since the retriever last looked (after ``ingest_path``)."""
        self.retriever.refresh()

    # ------------------------------------------------------------------ queries
    def search(self, req: SearchRequest, *, collections: Collections = None) -> SearchResponse:
        """``POST /v1/search``: ranked hits with their first ``SEARCH_TEXT_CHARS`` characters."""
        store = self.store
        with store.pinned_versions():  # the hits' texts too: the regions of the versions the hits came from
            found = search_hits(store, self.retriever, req, collections=collections)
            names = version_filenames(store, collections)
            regions = [store.region_index(h.doc_id, h.version_id).get(h.region_id) for h in found.hits]
        data = []
        for h, region in zip(found.hits, regions, strict=True):
            data.append(
                HitOut(
                    region_id=h.region_id,
                    doc_id=h.doc_id,
                    version_id=h.version_id,
                    kind=h.kind,
                    modality=h.modality,
                    pages=list(h.pages),
                    score=h.score,
                    rank=h.rank,
                    retriever=h.retriever,
                    sources=[SourceOut(**s.model_dump()) for s in h.sources],
                    filename=names.get(h.version_id),
                    text=region.text[:SEARCH_TEXT_CHARS] if region else None,
                )
            )
        return SearchResponse(data=data, count=len(data), notes=found.notes)

    def context(
        self, req: ContextRequest, *, collections: Collections = None, compressor: Compressor | None = None
    ) -> ContextPackage:
        """``POST /v1/context``: the cited package under the request's budget."""
        return build_context(
            self.store,
            self.retriever,
            req,
            self.settings,
            collections=collections,
            compressor=compressor,
            llm=self.llm_or_none,
        )

    def verify(self, req: VerifyRequest, *, collections: Collections = None) -> VerifyReport:
        """``POST /v1/verify``: an answer's citations checked against a package sent in or built here."""
        if req.package is not None:
            package = req.package
        elif req.context_request is not None:
            package = self.context(req.context_request, collections=collections)
        else:
            raise InvalidRequest("send either 'package' (a ContextPackage) or 'context_request'")
        return verify_answer(req.answer, package)

    def prepare_answer(self, req: AnswerRequest, *, collections: Collections = None) -> Prepared:
        """The package and messages of an answer, before the model is called (``api.answer``'s steps)."""
        return prepare(self.store, self.retriever, req, self.settings, collections=collections, client=self.llm)

    def answer(self, req: AnswerRequest, *, collections: Collections = None) -> AnswerResponse:
        """``POST /v1/answer`` without streaming: retrieve, assemble, ask the model, check the citations."""
        return answer(self.store, self.retriever, req, self.settings, collections=collections, client=self.llm)

    # ------------------------------------------------------------------ documents and regions
    def documents(self, *, collections: Collections = None, collection: str | None = None) -> DocumentList:
        """``GET /v1/documents``: the latest version of each document the caller sees (``collection``: one)."""
        allowed = frozenset(collections) if collections is not None else None
        if collection is not None:
            allowed = frozenset({collection}) & (allowed if allowed is not None else {collection})
        versions = self.store.list_versions(collections=allowed)
        of = self.store.collections()
        counts: dict[str, int] = {}
        for v in versions:
            counts[v.doc_id] = counts.get(v.doc_id, 0) + 1
        data = [
            DocumentOut(**v.model_dump(), versions=counts[v.doc_id], collection=of.get(v.doc_id, DEFAULT_COLLECTION))
            for v in versions
            if v.latest
        ]
        return DocumentList(data=data, count=len(data))

    def _collection(self, doc_id: str) -> str:
        return self.store.collection_of(doc_id) or DEFAULT_COLLECTION

    def document(self, doc_id: str, *, collections: Collections = None) -> DocumentDetail:
        """A document's latest version with all its versions."""
        latest = visible_version(self.store, doc_id, collections=collections)
        collection = self._collection(doc_id)
        return DocumentDetail(
            **latest.model_dump(),
            collection=collection,
            versions=[VersionOut(**v.model_dump(), collection=collection) for v in self.store.list_versions(doc_id)],
            report=self.store.version_report(doc_id, latest.version_id),
        )

    def version(self, doc_id: str, version_id: str, *, collections: Collections = None) -> DocumentDetail:
        """One version and its ingest report."""
        v = visible_version(self.store, doc_id, version_id, collections=collections)
        collection = self._collection(doc_id)
        return DocumentDetail(
            **v.model_dump(),
            collection=collection,
            versions=[VersionOut(**v.model_dump(), collection=collection)],
            report=self.store.version_report(doc_id, version_id),
        )

    def delete_document(self, doc_id: str, *, collections: Collections = None) -> DeleteResponse:
        visible_version(self.store, doc_id, collections=collections)
        return DeleteResponse(doc_id=doc_id, deleted_versions=self.store.delete_document(doc_id))

    def delete_version(self, doc_id: str, version_id: str, *, collections: Collections = None) -> DeleteResponse:
        visible_version(self.store, doc_id, version_id, collections=collections)
        self.store.delete_version(doc_id, version_id)
        return DeleteResponse(doc_id=doc_id, deleted_versions=[version_id])

    def pages(self, doc_id: str, version_id: str, *, collections: Collections = None) -> PageList:
        """A version's pages: sizes in points, image URLs."""
        visible_version(self.store, doc_id, version_id, collections=collections)
        out = []
        for r in self.store.region_index(doc_id, version_id).of_kind(doc_id, version_id, "page"):
            loc = r.locators[0]
            out.append(
                PageOut(
                    page=loc.page,
                    width=loc.page_width,
                    height=loc.page_height,
                    image_url=page_image_url(doc_id, version_id, loc.page) if r.meta_get("image") else None,
                    region_id=r.region_id,
                    ocr=r.meta_get("ocr") == "1",
                )
            )
        out.sort(key=lambda p: p.page)
        return PageList(data=out, count=len(out))

    def region(self, region_id: str, *, collections: Collections = None) -> RegionOut:
        """``GET /v1/regions/{id}``: what a citation points at (a region elsewhere is a 404)."""
        r = visible_region(self.store, region_id, collections=collections)
        filename = next((v.filename for v in self.store.list_versions(r.doc_id) if v.version_id == r.version_id), None)
        return RegionOut(
            region_id=r.region_id,
            doc_id=r.doc_id,
            collection=self._collection(r.doc_id),
            version_id=r.version_id,
            filename=filename,
            kind=r.kind,
            text=r.text,
            pages=r.pages,
            locators=[
                RegionLocatorOut(
                    page=loc.page,
                    bbox=loc.bbox,
                    page_width=loc.page_width,
                    page_height=loc.page_height,
                    line_boxes=list(loc.line_boxes),
                    char_start=loc.char_start,
                    char_end=loc.char_end,
                )
                for loc in r.locators
            ],
            heading_path=list(r.heading_path),
            parent_id=r.parent_id,
            section_id=r.section_id,
            level=r.level,
            tokens=r.tokens,
            meta=dict(r.meta),
            image_url=region_image_url(r.region_id),
        )

    # ------------------------------------------------------------------ images
    def image(self, relative: str | None, what: str) -> bytes | Path:
        """A stored PNG: its path (a local store) or its bytes (an object store); ``AssetNotFound`` if none."""
        if not relative:
            raise AssetNotFound(f"no stored image for {what}")
        if not self.store.local:  # object store: the PNG is a row of the assets table (ingest/storage/objstore.py)
            try:
                return self.store.read_asset(relative)
            except LookupError as e:
                raise AssetNotFound(f"no stored image for {what}") from e
        path = self.store.asset_path(relative)
        if not path.is_file():
            raise AssetNotFound(f"no stored image for {what}")
        return path

    def page_image(self, doc_id: str, version_id: str, page: int, *, collections: Collections = None) -> bytes | Path:
        visible_version(self.store, doc_id, version_id, collections=collections)
        region = self.store.region_index(doc_id, version_id).page(doc_id, version_id, page)
        if region is None:
            raise AssetNotFound(f"{doc_id}@{version_id} has no page {page}")
        return self.image(region.meta_get("image"), f"page {page} of {doc_id}@{version_id}")

    def region_image(self, region_id: str, *, collections: Collections = None) -> bytes | Path:
        """A figure's or page's own image; for text and tables the render of the region's first page."""
        r = visible_region(self.store, region_id, collections=collections)
        if r.kind in ("figure", "page") and r.meta_get("image"):
            return self.image(r.meta_get("image"), region_id)
        page = self.store.region_index(r.doc_id, r.version_id).page(r.doc_id, r.version_id, r.first_page)
        if page is None:
            raise AssetNotFound(f"no page image for {region_id}")
        return self.image(page.meta_get("image"), region_id)

    def highlighted_region_image(
        self, region_id: str, highlight: str, page: int | None = None, *, collections: Collections = None
    ) -> bytes:
        """The render of one of the region's pages with ``highlight``'s boxes painted (``api.highlight``)."""
        r = visible_region(self.store, region_id, collections=collections)
        return highlighted_png(self.store, r, highlight, page)

    # ------------------------------------------------------------------ ingest
    def submit_ingest(
        self,
        data: bytes,
        *,
        filename: str,
        doc_id: str | None,
        collection: str = DEFAULT_COLLECTION,
        redo_degraded: bool = False,
    ) -> JobHandle:
        """One upload as a job on the runner (in-process, or the Ray cluster's)."""
        spec = IngestSpec(
            self.store, self.settings, data, filename, doc_id, collection, redo_degraded, indexers=self.indexers
        )
        return self.jobs.submit_ingest(spec)

    def ingest_path(
        self, path: Path, *, doc_id: str | None = None, progress: Callable[[str, int, int], None] | None = None
    ) -> IngestReport:
        """One PDF file ingested here (``folio demo``), with the settings' OCR and limits."""
        from folio.ingest.pipeline import ingest_path  # function-level: PyMuPDF loads for ingest only

        return ingest_path(
            self.store,
            path,
            doc_id=doc_id,
            ocr=self.settings.ingest.ocr,
            indexers=self.indexers,
            progress=progress,
            max_pages=self.settings.ingest.max_pages,
            max_bytes=self.settings.ingest.max_upload_bytes,
        )

    # ------------------------------------------------------------------ status
    def counts(self) -> dict[str, int]:
        """Documents, versions, regions and pages in the store (a LanceDB read)."""
        return store_counts(self.store)

    def health(
        self, *, counts: dict[str, int] | None = None, version: str = "unknown", auth: bool = False
    ) -> HealthOut:
        """``GET /v1/health``: the counts (``counts``, else read now), jobs, retrievers and models."""
        return HealthOut(
            status="ok",
            version=version,
            parser_version=PARSER_VERSION,
            counts=counts if counts is not None else self.counts(),
            jobs=self.jobs.counts(),
            retrieval=self.retriever.status(),  # attribute reads only
            tokenizer=self.settings.context.tokenizer,
            auth=auth,
        )


def register_tokenizers(settings: Settings) -> None:
    """Make every ``FOLIO_TOKENIZERS`` entry usable by name (requests are validated against the registered
    names). The only tokenizer paths folio opens; a bad one is a ``ValueError``."""
    for name, path in settings.context.tokenizers.items():
        register_tokenizer(name, path)


def store_counts(store: Store) -> dict[str, int]:
    versions = store.list_versions()
    return {
        "documents": sum(1 for v in versions if v.latest),
        "versions": len(versions),
        "regions": sum(v.regions for v in versions),
        "pages": sum(v.pages for v in versions if v.latest),
    }


class LazyFolio:
    """A ``Folio`` opened on first use, once (``folio mcp``, ``LocalFolio``): the caller answers before the
    models load. ``warm()`` opens it on a background thread ahead of the first call."""

    def __init__(self, settings: Settings, *, on_open: Callable[[Folio], Any] | None = None) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._folio: Folio | None = None
        self._on_open = on_open

    def __call__(self) -> Folio:
        with self._lock:
            if self._folio is None:
                folio = Folio.open(self.settings)
                if self._on_open is not None:
                    self._on_open(folio)
                self._folio = folio
            return self._folio

    def warm(self) -> None:
        threading.Thread(target=self._warm, name="folio-warm", daemon=True).start()

    def _warm(self) -> None:
        try:
            self()
        except Exception:  # noqa: BLE001 - the first call raises it again, to its caller
            logger.exception("opening folio failed")
