"""The door: one ``Folio`` object, opened once from the settings, through which every interface reaches the
store: the REST routes (through ``api.http.deps``), the query worker processes, every ``folio`` command (ingest,
docs, delete, compact, check, context, search, ask, demo, ``--ray``), the MCP tools and
``folio.local.LocalFolio``. No other room of the api imports the store but the service room behind the door
(``tests/test_layers.py``).

``Folio.open(settings)`` opens the store and registers the configured tokenizers; the retriever and its
models, the LLM client's first call and the ingest indexers load when a method first needs them, so a light
command (``folio docs``) never imports torch or the embedder. It holds the store as a
``ingest.storage.interface.ServiceStore`` (a ``StoreWriter`` that also deletes, compacts and checks): ``open``
opens the concrete ``folio.ingest.storage.store.Store``, and nothing here needs more of it (no cast down). Its
methods take a validated request and the caller's collections (None: all) and return the pydantic response
models the REST API serializes, so every interface gives the same answer in the same shape:

    ingest          check_upload (the upload's IngestJob), submit_ingest (it, as a job), ingest_path (a file, here)
    search          SearchResponse              context    ContextPackage
    verify          VerifyReport                answer     AnswerResponse (prepare_answer: the streamed form)
    documents       DocumentList                document / version    DocumentDetail; versions (the CLI's list)
    pages           PageList                    delete_document / delete_version    DeleteResponse
    export          Markdown (a str) or DocumentExport
    region          RegionOut                   page_image / region_image    the PNG (bytes or a path)
    health          HealthOut                   counts     the store's counts; compact / check the files

Layers (pyproject ``[tool.importlinter]``): the interfaces import this module; it imports the service room
(``api.service``) and the stages below it, never an interface. ``api.service.answer`` builds its package with
``api.service.context.build_context`` while ``Folio`` calls both: the door is a module of its own, above them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from folio.api.errors import AssetNotFound, NoStore
from folio.api.schemas import (
    ContextRequest,
    DeleteResponse,
    DocumentDetail,
    DocumentExport,
    DocumentList,
    DocumentOut,
    HealthOut,
    PageList,
    PageOut,
    SearchResponse,
    VersionOut,
)
from folio.api.service.chat import require_llm
from folio.api.service.context import (
    build_context,
    page_image_url,
    search_hits,
    version_filenames,
    visible_region,
    visible_version,
)
from folio.api.service.export import check_size, export_format, reading_order, to_markdown
from folio.api.service.jobs import Ingester, JobHandle, JobRunner, LocalJobRunner
from folio.api.service.llm import ChatClient, client_from_settings
from folio.api.service.model_calls import ModelCalls
from folio.api.service.responses import hit_out, region_out
from folio.assembly import verify_answer
from folio.assembly.package import ContextPackage, VerifyReport
from folio.ingest.storage.indexes import index_options
from folio.ingest.storage.objstore import storage_options
from folio.ingest.storage.sql import DEFAULT_COLLECTION, check_collection
from folio.ingest.storage.store import Store
from folio.kernel.errors import FolioError, InvalidRequest
from folio.kernel.model import PARSER_VERSION, IngestReport
from folio.kernel.tokens import get_tokenizer, register_tokenizer

if TYPE_CHECKING:
    from datetime import timedelta

    from folio.api.schemas import RegionOut, SearchRequest, VerifyRequest
    from folio.api.service.answer import Prepared
    from folio.api.service.answer_schemas import AnswerRequest, AnswerResponse
    from folio.assembly.packing.compress import Compressor
    from folio.ingest.options import IngestOptions
    from folio.ingest.pipeline import IngestJob, SourceArgs, VersionIndexer
    from folio.ingest.storage.interface import ServiceStore
    from folio.kernel.model import DocumentVersion
    from folio.retrieval.search import Retriever
    from folio.settings import Settings

__all__ = ["DEFAULT_COLLECTION", "Folio", "LazyFolio", "check_collection", "register_tokenizers", "store_counts"]
# DEFAULT_COLLECTION and check_collection: the collection names every interface checks, from the door, so that
# none of them imports the store for them.

logger = logging.getLogger(__name__)

Collections = Collection[str] | None
SEARCH_TEXT_CHARS = 500
"""How much of a hit's region text a search hit carries (REST, CLI and MCP alike)."""


class Folio:
    """The service: one store, one retriever (opened on first use), one LLM client, one job runner (``jobs``:
    in-process unless one is given, e.g. the Ray cluster's; ``start``/``close`` start and stop it), one bound
    on model calls (``model_calls``). Safe to share between threads (the store and retriever are; the
    retriever and the ingest indexers open once, under a lock)."""

    def __init__(
        self,
        settings: Settings,
        store: ServiceStore,
        *,
        retriever: Retriever | None = None,
        llm: ChatClient | None = None,
        jobs: JobRunner | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.llm_or_none = llm
        """The one LLM client (answers, ``compress="llm"``, the reranker and LLM summaries), if configured."""
        self.jobs: JobRunner = jobs if jobs is not None else LocalJobRunner()
        # answers' model calls: at most FOLIO_LLM_CONCURRENCY at once and FOLIO_LLM_QUEUE waiting
        self.model_calls = ModelCalls(settings.llm.concurrency, settings.llm.queue)
        self._retriever = retriever
        self._indexers: list[VersionIndexer] | None = None  # the ingest-time indexers, loaded with the first ingest
        self._lock = threading.Lock()

    @classmethod
    def open(cls, settings: Settings, *, jobs: JobRunner | None = None, must_exist: bool = False) -> Folio:
        """The store at ``settings.storage.data`` (``must_exist``: ``NoStore`` when a local directory holds
        none, for the commands that read one), the configured LLM client, and every ``FOLIO_TOKENIZERS`` entry
        registered (a request may name one, whichever interface it came through). The retriever and its
        models open with the first query (``retriever``)."""
        if must_exist:
            require_store(settings.storage.data)
        register_tokenizers(settings)
        data = settings.storage.data
        store = Store(data, storage_options=storage_options(data, settings.storage))
        store.configure_indexes(index_options(settings.storage))
        return cls(settings, store, llm=client_from_settings(settings), jobs=jobs)

    def warm(self) -> Folio:
        """Load now what the first request would otherwise wait for (the server's startup and each query
        worker's): the query encoder (and, on a machine's first start, its ONNX export), the tokenizers, and
        what one query opens and caches (the tables, the full-text index, the region sources), by asking one.
        A server says it is ready only after this (``api.http.startup``); the first query after it is as fast as
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
    def retriever(self) -> Retriever:
        """The retriever with the models the settings name, opened on first use: what a query needs and a
        ``folio docs`` does not (the query encoder; CLIP, ColPali and torch when configured)."""
        with self._lock:
            if self._retriever is None:
                # function-level: the retrieval models load with the first query, not when a Folio opens
                from folio.retrieval.search import Retriever

                self._retriever = Retriever.from_settings(self.store, self.settings, llm=self.llm_or_none)
            return self._retriever

    @property
    def llm(self) -> ChatClient:
        """The LLM client; none configured is ``LLMNotConfigured`` (503) with how to configure one."""
        return require_llm(self.settings, self.llm_or_none)

    @property
    def indexers(self) -> Sequence[VersionIndexer]:
        """The ingest-time indexers (section summaries; CLIP and ColPali when configured), loaded once."""
        with self._lock:
            if self._indexers is None:
                from folio.retrieval.visual import indexers_from_settings  # function-level: ingest's models

                self._indexers = indexers_from_settings(self.settings, llm=self.llm_or_none)
            return self._indexers

    @property
    def uri(self) -> str:
        """Where the store is: a local directory or an object-store URI."""
        return self.store.uri

    def start(self) -> None:
        self.jobs.start()

    def close(self) -> None:
        self.jobs.stop()

    def refresh(self) -> None:
        """See documents ingested since the retriever last looked (after ``ingest_path``)."""
        if self._retriever is not None:  # one not opened yet will see them when it opens
            self._retriever.refresh()

    # ------------------------------------------------------------------ queries
    def search(self, req: SearchRequest, *, collections: Collections = None) -> SearchResponse:
        """``POST /v1/search``: ranked hits with their first ``SEARCH_TEXT_CHARS`` characters."""
        store = self.store
        with store.pinned_versions():  # the hits' texts too: the regions of the versions the hits came from
            found = search_hits(store, self.retriever, req, collections=collections)
            names = version_filenames(store, collections)
            regions = [store.region_index(h.doc_id, h.version_id).get(h.region_id) for h in found.hits]
        data = [
            hit_out(h, names.get(h.version_id), region.text[:SEARCH_TEXT_CHARS] if region else None)
            for h, region in zip(found.hits, regions, strict=True)
        ]
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
        """The package and messages of an answer, before the model is called (``api.service.answer``'s steps)."""
        from folio.api.service.answer import prepare  # function-level: a context or a listing never loads it

        return prepare(self.store, self.retriever, req, self.settings, collections=collections, client=self.llm)

    def answer(self, req: AnswerRequest, *, collections: Collections = None) -> AnswerResponse:
        """``POST /v1/answer`` without streaming: retrieve, assemble, ask the model, check the citations."""
        from folio.api.service.answer import answer  # function-level: see prepare_answer

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
        meta = self.store.version_metadata((v.doc_id, v.version_id) for v in versions if v.latest)
        data = [
            DocumentOut(
                **v.model_dump(), versions=counts[v.doc_id], collection=of.get(v.doc_id, DEFAULT_COLLECTION),
                metadata=meta.get((v.doc_id, v.version_id), {}),
            )
            for v in versions
            if v.latest
        ]
        return DocumentList(data=data, count=len(data))

    def versions(self, doc_id: str | None = None) -> list[DocumentVersion]:
        """Every ready version (of ``doc_id``), newest last per document (``folio docs``)."""
        return self.store.list_versions(doc_id)

    def versions_metadata(self, versions: Sequence[DocumentVersion]) -> dict[tuple[str, str], dict[str, Any]]:
        """The user metadata of these versions ({(doc_id, version_id): {key: value}}; none: absent)."""
        return self.store.version_metadata((v.doc_id, v.version_id) for v in versions)

    def _collection(self, doc_id: str) -> str:
        return self.store.collection_of(doc_id) or DEFAULT_COLLECTION

    def document(self, doc_id: str, *, collections: Collections = None) -> DocumentDetail:
        """A document's latest version with all its versions."""
        latest = visible_version(self.store, doc_id, collections=collections)
        collection = self._collection(doc_id)
        every = self.store.list_versions(doc_id)
        meta = self.store.version_metadata((v.doc_id, v.version_id) for v in every)
        return DocumentDetail(
            **latest.model_dump(),
            collection=collection,
            metadata=meta.get((doc_id, latest.version_id), {}),
            versions=[
                VersionOut(**v.model_dump(), collection=collection, metadata=meta.get((doc_id, v.version_id), {}))
                for v in every
            ],
            report=self.store.version_report(doc_id, latest.version_id),
        )

    def version(self, doc_id: str, version_id: str, *, collections: Collections = None) -> DocumentDetail:
        """One version and its ingest report."""
        v = visible_version(self.store, doc_id, version_id, collections=collections)
        collection = self._collection(doc_id)
        meta = self.store.version_metadata([(doc_id, version_id)]).get((doc_id, version_id), {})
        return DocumentDetail(
            **v.model_dump(),
            collection=collection,
            metadata=meta,
            versions=[VersionOut(**v.model_dump(), collection=collection, metadata=meta)],
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

    def export(
        self, doc_id: str, fmt: str = "markdown", version_id: str | None = None, *, collections: Collections = None
    ) -> str | DocumentExport:
        """``GET /v1/documents/{doc_id}/export``: a version (default: the latest) as Markdown (a str) or as its
        regions with their locators (``fmt="json"``), in reading order (``api.service.export``). An unknown
        format is ``InvalidRequest`` (422); a document too large to export whole ``LimitExceeded`` (413)."""
        form = export_format(fmt)
        v = visible_version(self.store, doc_id, version_id, collections=collections)
        regions = reading_order(self.store.region_index(doc_id, v.version_id).regions())
        check_size(regions)
        if form == "markdown":
            return to_markdown(regions, v.pages)
        collection = self._collection(doc_id)
        data = [region_out(r, collection, v.filename) for r in regions]
        meta = self.store.version_metadata([(doc_id, v.version_id)]).get((doc_id, v.version_id), {})
        return DocumentExport(**v.model_dump(), collection=collection, metadata=meta, data=data, count=len(data))

    def region(self, region_id: str, *, collections: Collections = None) -> RegionOut:
        """``GET /v1/regions/{id}``: what a citation points at (a region elsewhere is a 404)."""
        r = visible_region(self.store, region_id, collections=collections)
        filename = next((v.filename for v in self.store.list_versions(r.doc_id) if v.version_id == r.version_id), None)
        return region_out(r, self._collection(r.doc_id), filename)

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
        """The render of one of the region's pages with ``highlight``'s boxes painted (``api.service.highlight``)."""
        from folio.api.service.highlight import highlighted_png  # function-level: the viewer asks, a command never

        r = visible_region(self.store, region_id, collections=collections)
        return highlighted_png(self.store, r, highlight, page)

    # ------------------------------------------------------------------ ingest and maintenance
    @property
    def ingester(self) -> Ingester:
        """Where this door's ingests write and with what: its store, settings and indexers (``Ingester.run``)."""
        return Ingester(self.store, self.settings, self.indexers)

    def ingest_options(self, **changes: Any) -> IngestOptions:
        """The settings' ``IngestOptions`` (``IngestOptions.from_settings``), with ``changes`` (fields) on top."""
        from folio.ingest.options import IngestOptions  # function-level: PyMuPDF loads for ingest only

        return IngestOptions.from_settings(self.settings.ingest, **changes)

    def check_upload(
        self, data: bytes, *, filename: str, doc_id: str | None, collection: str, redo_degraded: bool = False
    ) -> IngestJob:
        """An upload checked once, before it is queued, so even ``wait=false`` gets an immediate 4xx: the doc id
        (the request's, or one derived from the file name), the PDF (within the size and page limits) and a doc
        id of another collection (409; the ingest checks again under its claim). Returns the job that
        ``submit_ingest`` runs, with the settings' options (``redo_degraded`` on top)."""
        # function-level: PyMuPDF loads on the first upload, not at server start
        from folio.ingest.pipeline import IngestJob, doc_id_from_filename

        job = IngestJob.check(
            data,
            filename=filename,
            options=self.ingest_options(redo_degraded=redo_degraded),
            doc_id=doc_id or doc_id_from_filename(filename),
            collection=collection,
            upload=True,
        )
        self.store.check_collection_free(job.doc_id, collection)
        return job

    def submit_ingest(self, job: IngestJob) -> JobHandle:
        """A checked upload (``check_upload``) as a job on the runner (in-process, or the Ray cluster's)."""
        return self.jobs.submit_ingest(job, self.ingester)

    def check_file(
        self, path: Path, *, options: IngestOptions | None = None, **source: Unpack[SourceArgs]
    ) -> IngestJob:
        """A PDF file checked once (``IngestJob.check``) with ``options`` (default: the settings'
        ``ingest_options()``): the job ``ingest_path`` runs here and ``folio ingest --ray`` hands to a Ray task.
        ``source``: the doc id, collection and password (``ingest.pipeline.SourceArgs``)."""
        from folio.ingest.pipeline import IngestJob  # function-level: PyMuPDF loads for ingest only

        options = options if options is not None else self.ingest_options()
        return IngestJob.check(path.read_bytes(), filename=path.name, options=options, **source)

    def ingest_path(
        self,
        path: Path,
        *,
        progress: Callable[[str, int, int], None] | None = None,
        options: IngestOptions | None = None,
        **source: Unpack[SourceArgs],
    ) -> IngestReport:
        """One PDF file ingested here (``folio ingest``, ``folio demo``): ``check_file``'s job, run with the
        settings' embedder (``Ingester.run``): the pipeline reads no setting."""
        return self.ingester.run(self.check_file(path, options=options, **source), progress)

    def maintain(self) -> None:
        """Compact what ingest wrote (and older churn), keeping recent table versions (after ``folio ingest``)."""
        self.store.maintain()

    def compact(self, older_than: timedelta, *, reindex: bool = False) -> dict[str, Any]:
        """``folio compact``: every table compacted (new rows folded into the indexes), versions older than
        ``older_than`` removed; sizes. ``reindex``: the chunks' indexes rebuilt whole first (``Store.reindex``)."""
        return self.store.compact(older_than, reindex=reindex)

    def check(self, *, repair: bool = False) -> dict[str, Any]:
        """``folio check``: complete versions, no orphan rows or assets (``repair``: removed first); sizes."""
        return self.store.check(repair=repair)

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


def require_store(data: str) -> None:
    """Raise ``NoStore`` when the local directory ``data`` holds no folio store (no versions table:
    nothing was ever ingested or served there). Object-store URIs are not checked here."""
    from folio.ingest.storage.objstore import is_local  # function-level: only the commands that need a store ask

    uri = data.removeprefix("file://")
    if is_local(uri) and not (Path(uri) / "lancedb" / "versions.lance").is_dir():
        raise NoStore(
            f"no folio store in {uri}: check --data (or $FOLIO_DATA), or ingest PDFs there first "
            f"(folio ingest --data {uri} FILE.pdf)"
        )


def store_counts(store: ServiceStore) -> dict[str, int]:
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
