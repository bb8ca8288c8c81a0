"""Ingestion end to end: check → claim → parse → embed and index → commit, with progress and a report.

One typed job and one carrier, in the style of docling's pipeline: ``IngestJob.check`` opens and validates the
PDF and checks the doc id and collection once (``IngestSource``: the checked PDF with its facts, the page count,
size and version id), beside the ``IngestOptions``; that job is what every runner hands in (a thread of the
REST job runner, the CLI, a Ray task: it is plain data). ``ingest`` passes an ``Ingestion`` (the job and what
the stages add) through the stages (``_parse``, ``_write``), and none of them re-derives what an earlier one
knew, checks the PDF again or reads a setting. ``ingest_bytes`` / ``ingest_path`` are the doors for bytes and
files (scripts and tests).

Optional visual indexers (CLIP figure vectors, ColPali page multivectors) live in the retrieval
layer; the caller passes them in as ``VersionIndexer``s so that ``ingest`` never imports
``retrieval``. They run before the commit, so a version is visible only with all its vectors.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import tempfile
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, Unpack

import numpy as np

from folio.ingest.embed import TextEncoder, default_text_encoder
from folio.ingest.options import IngestOptions
from folio.ingest.parse_supervisor import IngestLimits
from folio.ingest.row_units import row_units
from folio.ingest.storage.interface import StoreWriter
from folio.ingest.storage.recovery import RETIRE_AFTER_S
from folio.ingest.storage.sql import DEFAULT_COLLECTION, SEARCH_KINDS, check_collection
from folio.ingest.unit_budget import Budgeted, budget_units
from folio.kernel.errors import IngestTimeout, InvalidRequest, VersionNotFound
from folio.kernel.metadata import MetaValue, check_metadata
from folio.kernel.model import PARSER_VERSION, IngestReport, Region
from folio.kernel.printable import display_name
from folio.settings import IngestSettings

if TYPE_CHECKING:
    from folio.ingest.pdf.parse import ParsedDocument
    from folio.ingest.pdf.tables.base import TableMode
    from folio.ingest.pdf.validate import CheckedPdf

logger = logging.getLogger(__name__)

# (stage, done, total): stage is "parse", "embed", "index:<name>" or "commit".
Progress = Callable[[str, int, int], None]

class VersionIndexer(Protocol):
    """Something that adds rows for a freshly parsed version (e.g. CLIP figure vectors)."""

    name: str

    def index_version(self, store: StoreWriter, parsed: ParsedDocument) -> int: ...


def doc_id_from_filename(filename: str) -> str:
    """A readable, stable, always valid doc id from a file name: ``"R Data (v2).pdf"`` → ``"r-data-v2"``.

    Two different names must never become one document (the second a silent new version of the first),
    so a name with characters outside ASCII is transliterated (``anyascii``: Cyrillic, Greek, CJK, Arabic,
    accents) and always gets ``-`` plus 12 hex digits of the SHA-256 of its NFC form: ``"отчёт.pdf"`` and
    ``"отчет.pdf"`` transliterate alike but stay two documents, and ``"报告.pdf"`` no longer slugs to
    nothing. The same name always gives the same id, so an upload of it again is a new version.

    A name whose slug is not a valid id (over 128 characters, or starting with ``_``) keeps a
    prefix of its slug and gets the hash of the full slug: still readable, still stable for the same
    name, and distinct for names that differ only past the prefix. Only an id the client sends can be
    refused (``check_doc_id``).

    >>> doc_id_from_filename("Reportlab UserGuide.PDF")
    'reportlab-userguide'
    >>> doc_id_from_filename("Q3 отчёт.pdf")[:-13], doc_id_from_filename("报告.pdf")[:-13]
    ('q3-otchet', 'baogao')
    >>> doc_id_from_filename("отчёт.pdf") != doc_id_from_filename("отчет.pdf")
    True
    >>> long = doc_id_from_filename("a" * 200 + ".pdf")
    >>> len(long), long[:4], long[-13]
    (128, 'aaaa', '-')
    """
    stem = unicodedata.normalize("NFC", Path(filename).stem)
    if stem.isascii():
        return _bounded_slug(_slug(stem), hashed=False)
    # function-level: the transliteration tables load for non-ASCII names only
    from anyascii import anyascii

    return _bounded_slug(_slug(anyascii(stem)), hashed=True, name=stem)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")


def _bounded_slug(slug: str, *, hashed: bool, name: str = "") -> str:
    """``slug`` as a valid id; with ``hashed`` (or when it is no valid id by itself) a hash suffix of ``name``
    (or of the slug) keeps distinct names distinct."""
    if not hashed and _DOC_ID_RE.match(slug):
        return slug
    if not slug and not hashed:
        return "document"
    digest = hashlib.sha256((name or slug).encode()).hexdigest()[:DERIVED_HASH_CHARS]
    prefix = slug[: MAX_DOC_ID - DERIVED_HASH_CHARS - 1].strip("-._")
    return f"{prefix}-{digest}" if prefix else f"document-{digest}"


MAX_DOC_ID = 128
DERIVED_HASH_CHARS = 12  # 48 bits of the full slug: a shortened derived id stays unique
_DOC_ID_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")  # \Z: "$" would accept a trailing newline


def check_doc_id(doc_id: str) -> str:
    if not _DOC_ID_RE.match(doc_id):
        raise InvalidRequest(
            f"invalid doc_id {doc_id!r}: use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return doc_id


class SourceArgs(TypedDict, total=False):
    """What names one document besides its bytes and file name (``IngestSource.check``): its ``doc_id``
    (default: from the file name), its ``collection`` (default: ``default``), the ``password`` of an encrypted
    PDF; ``upload``: the bytes came over the API, not from a local file (an empty file's message names none)."""

    doc_id: str | None
    collection: str
    password: str | None
    upload: bool
    metadata: dict[str, Any] | None


@dataclass(frozen=True)
class IngestSource:
    """One PDF to ingest, checked once (docling's ``InputDocument``): its bytes opened and validated
    (``ingest.pdf.validate.CheckedPdf``, which also knows the page count, the size and the version id), the doc id
    and the collection name checked, the file name made safe to show (``kernel.printable.display_name``: stored
    and shown, never obeyed). Every later stage takes these as they are; bad input never gets this far."""

    pdf: CheckedPdf
    filename: str
    doc_id: str
    collection: str
    metadata: dict[str, MetaValue] = field(default_factory=dict)
    """The version's user metadata, checked (``folio.kernel.metadata.check_metadata``): written with it."""

    @classmethod
    def check(cls, data: bytes, *, filename: str, options: IngestOptions, **source: Unpack[SourceArgs]) -> IngestSource:
        """Check an upload (an ``InvalidDocument`` or ``InvalidRequest`` otherwise): its doc id (default: from the
        file name), the PDF within ``options.max_bytes`` / ``max_pages``, then its collection's name."""
        # function-level: PyMuPDF loads on the first ingest, not when the api imports check_doc_id
        from folio.ingest.pdf.validate import CheckedPdf

        filename = display_name(filename)
        doc_id = check_doc_id(source.get("doc_id") or doc_id_from_filename(filename))
        pdf = CheckedPdf.check(
            data,
            password=source.get("password"),
            max_bytes=options.max_bytes,
            max_pages=options.max_pages,
            filename=None if source.get("upload") else filename,
        )
        collection = check_collection(source.get("collection", DEFAULT_COLLECTION))
        return cls(pdf, filename, doc_id, collection, check_metadata(source.get("metadata")))

    @property
    def version_id(self) -> str:
        return self.pdf.version_id


@dataclass(frozen=True)
class IngestJob:
    """One ingest as it was asked for, checked once (``IngestJob.check``): the ``IngestSource`` (the PDF and its
    facts, the doc id, the collection) and the ``IngestOptions``. Whoever takes the upload or the file builds it
    (the door: ``api.application.Folio.check_upload`` and ``check_file``; ``ingest_bytes``) and hands it as it
    is to a runner: a thread of the REST job runner, the CLI's loop, a Ray task (plain data: it pickles).
    Nothing downstream validates it again."""

    source: IngestSource
    options: IngestOptions
    received_name: str = ""
    """The file name as it was received (what a job lists); the source keeps it made safe to show."""

    @classmethod
    def check(cls, data: bytes, *, filename: str, options: IngestOptions, **source: Unpack[SourceArgs]) -> IngestJob:
        """The job of ``data`` with ``options`` (``IngestSource.check``'s errors)."""
        return cls(IngestSource.check(data, filename=filename, options=options, **source), options, filename)

    @property
    def doc_id(self) -> str:
        return self.source.doc_id

    @property
    def collection(self) -> str:
        return self.source.collection

    @property
    def filename(self) -> str:
        return self.source.filename

    def with_metadata(self, metadata: dict[str, Any] | None) -> IngestJob:
        """The same job writing ``metadata`` (checked here: ``InvalidRequest`` when it is out of bounds)."""
        return replace(self, source=replace(self.source, metadata=check_metadata(metadata)))

    def with_options(self, **changes: Any) -> IngestJob:
        """The same source with some fields of its options changed (``reparse_outdated=False``, ...)."""
        return replace(self, options=replace(self.options, **changes))


@dataclass
class Ingestion:
    """One ingest on its way through the stages (docling's ``ConversionResult``): the checked source, the
    options, what the stages need from the caller, and what they add (``parsed``). Each stage reads what an
    earlier one put here and re-derives nothing."""

    store: StoreWriter
    source: IngestSource
    options: IngestOptions
    encoder: TextEncoder | None  # None: the process's MiniLM, loaded when first needed
    indexers: Sequence[VersionIndexer]
    progress: Progress
    started: float  # time.perf_counter() when the ingest began
    parsed: ParsedDocument | None = None

    def timed(self, report: IngestReport) -> IngestReport:
        return report.model_copy(update={"seconds": round(time.perf_counter() - self.started, 3)})


def ingest(
    store: StoreWriter,
    job: IngestJob,
    *,
    encoder: TextEncoder | None = None,
    indexers: Sequence[VersionIndexer] = (),
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest one checked PDF: claim → parse → embed and index → commit. Identical bytes under the same doc id
    are a no-op (``unchanged``), unless an older parser wrote them (``options.reparse_outdated``: parsed again
    and replaced) or ``options.redo_degraded`` and that version has degraded pages (parsed again and replaced
    if fewer pages come out degraded; ``_redo``). ``CollectionConflict`` when the doc id lives in another
    collection (checked under the claim; for a version already stored, before it is reported). A failure after
    the claim removes this version's rows and re-raises. The parse runs within ``options.limits``, the
    embedding within ``limits.timeout_s`` from the parse's end, the text index within ``ingest.unit_budget``."""
    source, options = job.source, job.options
    run = Ingestion(store, source, options, encoder, tuple(indexers), progress or _no_progress, time.perf_counter())
    doc_id, version_id = source.doc_id, source.version_id
    if store.has_ready(doc_id, version_id):
        store.check_collection_free(doc_id, source.collection)  # a doc_id lives in one collection
        return _stored(run)
    # Claims the version (and checks the collection, race-safe); waits while another live writer holds it.
    # False: that writer (same bytes) committed meanwhile, so this ingest is a no-op too.
    if not store.begin_version(
        doc_id, version_id, source.filename, len(source.pdf.data), PARSER_VERSION, collection=source.collection
    ):
        return _unchanged(run)
    try:
        report = _write(run, _parse(run, store.assets_root))
    except BaseException:
        # KeyboardInterrupt included: leave nothing half-written behind.
        logger.warning("ingest of %s failed; removing version %s@%s", source.filename, doc_id, version_id)
        store.abort_version(doc_id, version_id)
        raise
    return run.timed(report)


def _stored(run: Ingestion) -> IngestReport:
    """The same bytes are stored already: parsed again when an older parser wrote them
    (``reparse_outdated``) or, with ``redo_degraded``, when pages came out degraded; else ``unchanged``."""
    store, options, doc_id, version_id = run.store, run.options, run.source.doc_id, run.source.version_id
    stored = store.get_version(doc_id, version_id).parser_version
    if options.reparse_outdated and stored != PARSER_VERSION:
        note = f"parsed again: stored by parser {stored}, this folio's parser is {PARSER_VERSION}"
        logger.warning("%s@%s %s", doc_id, version_id, note)
        report = _redo(run, keep_unless_fewer_degraded=False)
        return report.model_copy(update={"warnings": (*report.warnings, note)})
    if options.redo_degraded and store.version_report(doc_id, version_id).get("degraded_pages"):
        return _redo(run, keep_unless_fewer_degraded=True)
    return _unchanged(run)


class IngestArgs(SourceArgs, total=False):
    """``ingest_bytes``' keywords besides the file name: the source's (``SourceArgs``), the ``options`` (None:
    from the process's settings), what ``ingest`` takes (``encoder``, ``indexers``, ``progress``), and fields of
    the options to change for this call (``ocr=False``, ``max_pages=…``, ``limits=…``, ...)."""

    options: IngestOptions | None
    encoder: TextEncoder | None
    indexers: Sequence[VersionIndexer]
    progress: Progress | None
    ocr: bool | None
    max_bytes: int | None
    max_pages: int | None
    render_scale: float
    limits: IngestLimits
    word_tables: TableMode
    row_units: bool
    redo_degraded: bool
    reparse_outdated: bool


_SOURCE_KEYS = ("doc_id", "collection", "password", "upload", "metadata")
_INGEST_KEYS = ("encoder", "indexers", "progress")


def ingest_bytes(store: StoreWriter, data: bytes, *, filename: str, **args: Unpack[IngestArgs]) -> IngestReport:
    """Check one PDF's bytes (``IngestJob.check``: bad input raises before anything is written) and ingest
    them (``ingest``); ``args``: see ``IngestArgs``.

    ``options=None``: the defaults, with the parse's limits and the word tables of the process's settings, read
    here: the one place the pipeline reads settings, for a caller that hands none in."""
    fields: dict[str, Any] = dict(args)
    options = fields.pop("options", None)
    if options is None:
        settings = IngestSettings()
        options = IngestOptions(limits=IngestLimits.from_settings(settings), word_tables=settings.word_tables)
    source = {k: fields.pop(k) for k in _SOURCE_KEYS if k in fields}
    call = {k: fields.pop(k) for k in _INGEST_KEYS if k in fields}
    job = IngestJob.check(data, filename=filename, options=replace(options, **fields), **source)
    return ingest(store, job, **call)


def _no_progress(stage: str, done: int, total: int) -> None:
    """No one is told (the caller passed no ``progress``)."""


def _parse(run: Ingestion, assets_dir: Path) -> ParsedDocument:
    """The parse stage: the checked PDF parsed within the limits, its renders into ``assets_dir`` (a remote store
    stages them there and uploads them)."""
    # function-level: PyMuPDF loads on the first ingest (the supervisor's forkserver preloads it)
    from folio.ingest.parse_supervisor import parse_with_limits

    source, options = run.source, run.options
    return parse_with_limits(
        source.pdf,
        limits=options.limits,
        doc_id=source.doc_id,
        filename=source.filename,
        assets_dir=assets_dir,
        ocr=options.ocr,
        render_scale=options.render_scale,
        progress=lambda d, t: run.progress("parse", d, t),
        word_tables=options.word_tables,
    )


@dataclass(frozen=True)
class _Deadline:
    """The embedding's deadline (``time.monotonic()``; None: none), checked after each batch."""

    at: float | None = None
    timeout_s: float | None = None

    @classmethod
    def starting(cls, timeout_s: float | None) -> _Deadline:
        """``timeout_s`` from now (None: none)."""
        return cls(time.monotonic() + timeout_s if timeout_s is not None else None, timeout_s)

    def check(self, done: int, total: int) -> None:
        if self.at is not None and time.monotonic() > self.at:
            raise IngestTimeout(
                f"ingest timeout: embedding took longer than {self.timeout_s:g} s "
                f"(FOLIO_INGEST_TIMEOUT_S), stopped after embedding {done} of {total} units"
            )


def _write(
    run: Ingestion, parsed: ParsedDocument, created_at: float | None = None,
    metadata: dict[str, MetaValue] | None = None,
) -> IngestReport:
    """The embed, index and commit stages: the parsed version written under this writer's claim and made
    visible. ``created_at`` (default: now) orders a document's versions; a version parsed again keeps its own,
    and its own ``metadata`` (default: the source's)."""
    run.parsed = parsed
    encoder = run.encoder or default_text_encoder()
    budgeted = budget_units([r for r in parsed.regions if r.kind in SEARCH_KINDS and r.text.strip()])
    # the embedding's own FOLIO_INGEST_TIMEOUT_S from here: on top of the parse's, so that a long filing parsed
    # close to its limit on a busy machine is not refused for the embedding that follows
    deadline = _Deadline.starting(run.options.limits.timeout_s)
    chunks = ChunkIndexer(encoder, run.progress, run.options.row_units, budgeted.units, deadline)
    _write_version(run.store, parsed, chunks, run.indexers, run.progress)
    run.store.add_metadata(parsed.doc_id, parsed.version_id, run.source.metadata if metadata is None else metadata)
    report = _report(parsed, budgeted)
    run.progress("commit", 0, 1)
    run.store.commit_version(
        parsed.doc_id,
        parsed.version_id,
        pages=len(parsed.pages),
        regions=len(parsed.regions),
        report=report.model_dump(mode="json"),
        created_at=created_at,
    )
    run.progress("commit", 1, 1)
    return report


def _redo(run: Ingestion, *, keep_unless_fewer_degraded: bool) -> IngestReport:
    """Parse a stored version again (within the limits now in force) and put the new parse in its place: same
    ids, same creation time (a newer version of the document stays the latest), same collection. With
    ``keep_unless_fewer_degraded`` (``redo_degraded``) only when fewer pages come out degraded; without (a
    version stored by an older parser) always.

    The parse renders into a staging folder, so the stored version is untouched until it is known
    to be replaced. The new rows are then written beside the old ones under a claim to replace them
    (``Store.begin_version(replacing=True)``) and swapped in by one commit: a reader sees the old
    version or the new one, never neither (issue 31: it was absent for about a second). The old rows
    go ``RETIRE_AFTER_S`` later. A failure before the swap removes what was written and leaves the old
    version as it was (its images may already be the new renders, which show the same pages)."""
    store, doc_id, version_id = run.store, run.source.doc_id, run.source.version_id
    old = store.get_version(doc_id, version_id)
    kept = check_metadata(store.version_metadata([(doc_id, version_id)]).get((doc_id, version_id), {}))
    before = tuple(store.version_report(doc_id, version_id).get("degraded_pages", ()))
    staging = Path(tempfile.mkdtemp(prefix="folio-redo-")) / store.assets_root.name  # same name: same image paths
    try:
        parsed = _parse(run, staging)
        if keep_unless_fewer_degraded and set(parsed.degraded_pages) >= set(before):
            logger.warning("%s@%s: pages %s are still degraded; the stored version is kept", doc_id, version_id, before)
            return _unchanged(run)
        logger.warning("%s@%s: replacing the stored parse (degraded pages: %s)", doc_id, version_id, before)
        replaced = store.version_stamp(doc_id, version_id)
        if not store.begin_version(
            doc_id, version_id, old.filename, len(run.source.pdf.data), PARSER_VERSION,
            collection=run.source.collection, replacing=True,
        ):
            raise VersionNotFound(f"document {doc_id} has no version {version_id} (deleted while it was parsed again)")
        try:
            _merge_renders(staging / f"{doc_id}@{version_id}", store.assets_root / f"{doc_id}@{version_id}")
            report = _write(run, parsed, created_at=old.created_at, metadata=kept)
        except BaseException:
            logger.warning("re-doing %s@%s failed; removing what was written", doc_id, version_id)
            store.abort_version(doc_id, version_id)
            raise
    finally:
        shutil.rmtree(staging.parent, ignore_errors=True)
    time.sleep(RETIRE_AFTER_S)
    store.retire_rows(doc_id, version_id, replaced)
    return run.timed(report)


def _merge_renders(rendered: Path, live: Path) -> None:
    """Put a new parse's images in the version's image folder one file at a time, each by a rename in that
    folder (atomic): a reader of the version, old or new, finds every image whole. The names are the same
    in both parses, and a page renders the same in both."""
    if not rendered.exists():
        return
    for src in sorted(p for p in rendered.rglob("*") if p.is_file()):
        dst = live / src.relative_to(rendered)
        dst.parent.mkdir(parents=True, exist_ok=True)
        part = dst.with_name(f".{dst.name}.{os.getpid()}.part")
        shutil.copyfile(src, part)  # the staging folder may be on another file system
        os.replace(part, dst)


def _unchanged(run: Ingestion) -> IngestReport:
    """The report of a version that was already stored: its counts as recorded when it was written."""
    store, doc_id, version_id = run.store, run.source.doc_id, run.source.version_id
    v = store.get_version(doc_id, version_id)
    prior = store.version_report(doc_id, version_id)
    return IngestReport(
        doc_id=doc_id,
        version_id=version_id,
        filename=v.filename,
        pages=v.pages,
        regions_by_kind=prior.get("regions_by_kind", {}),
        tables=prior.get("tables", 0),
        figures=prior.get("figures", 0),
        ocr_pages=prior.get("ocr_pages", 0),
        seconds=time.perf_counter() - run.started,
        status="unchanged",
        degraded_pages=tuple(prior.get("degraded_pages", ())),
    )


@dataclass(frozen=True)
class ChunkIndexer:
    """``VersionIndexer`` of the text channels (``retrieval.channels``: ``bm25`` and ``dense``): the
    searchable small units of a version with their text vectors, into ``chunks``. Every ingest runs it,
    before the other indexers: text search is always on. Progress goes to the ``embed`` stage, and the
    document's deadline is checked after each batch. ``units``: those ``ingest.unit_budget`` let through
    (None: every searchable unit of the version)."""

    encoder: TextEncoder
    progress: Progress
    row_units: bool = False  # also a chunk per body row of each long table (``row_unit_chunks``)
    units: Sequence[Region] | None = None
    deadline: _Deadline = _Deadline()
    name = "chunks"

    def _embedded(self, done: int, total: int) -> None:
        self.progress("embed", done, total)
        self.deadline.check(done, total)

    def index_version(self, store: StoreWriter, parsed: ParsedDocument) -> int:
        searchable = (
            list(self.units)
            if self.units is not None
            else [r for r in parsed.regions if r.kind in SEARCH_KINDS and r.text.strip()]
        )
        vectors = self.encoder.encode([r.text for r in searchable], progress=self._embedded)
        if self.row_units:
            rows, row_vectors = row_unit_chunks(searchable, self.encoder, progress=self.deadline.check)
            if rows:
                searchable, vectors = [*searchable, *rows], np.concatenate([np.asarray(vectors), row_vectors])
        store.add_chunks(searchable, vectors)
        return len(searchable)


def row_unit_chunks(
    searchable: Sequence[Region], encoder: TextEncoder, *, progress: Callable[[int, int], None] | None = None
) -> tuple[list[Region], np.ndarray]:
    """The row units of the tables among ``searchable`` (``folio.ingest.row_units``) with their text
    vectors: extra chunks that carry their table's region id. Encoded apart from the regions' own
    chunks, so a version without long tables is written exactly as before."""
    rows = [u for r in searchable for u in row_units(r)]
    if not rows:
        return [], np.zeros((0, 0), np.float32)
    return rows, np.asarray(encoder.encode([u.text for u in rows], progress=progress), dtype=np.float32)


def _write_version(
    store: StoreWriter,
    parsed: ParsedDocument,
    chunks: ChunkIndexer,
    indexers: Sequence[VersionIndexer],
    report_progress: Progress,
) -> None:
    """The claimed version's rows: regions, searchable chunks with their text vectors (``ChunkIndexer``),
    then each other indexer's rows (figure and page vectors, summaries)."""
    store.add_regions(parsed.regions)
    chunks.index_version(store, parsed)
    for indexer in indexers:
        n = indexer.index_version(store, parsed)
        report_progress(f"index:{indexer.name}", n, n)


def _report(parsed: ParsedDocument, budgeted: Budgeted) -> IngestReport:
    """What an ingest reports (and stores with the version): counts, warnings and page issues, those of
    the text index's budget (``ingest.unit_budget``) included."""
    by_kind: dict[str, int] = {}
    for r in parsed.regions:
        by_kind[r.kind] = by_kind.get(r.kind, 0) + 1
    return IngestReport(
        doc_id=parsed.doc_id,
        version_id=parsed.version_id,
        filename=parsed.filename,
        pages=len(parsed.pages),
        regions_by_kind=by_kind,
        tables=by_kind.get("table", 0),
        figures=by_kind.get("figure", 0),
        ocr_pages=parsed.ocr_pages,
        warnings=(*parsed.warnings, *budgeted.warnings),
        issues=(*parsed.issues, *budgeted.issues),
        seconds=0.0,
        status="partial"
        if parsed.issues or parsed.degraded_pages or budgeted.issues or budgeted.warnings
        else "created",
        degraded_pages=tuple(parsed.degraded_pages),
    )


def ingest_path(store: StoreWriter, path: str | Path, **args: Unpack[IngestArgs]) -> IngestReport:
    """``ingest_bytes`` of one PDF file, named by its file name."""
    p = Path(path)
    return ingest_bytes(store, p.read_bytes(), filename=p.name, **args)
