"""The catalogue: the ``versions`` table, which versions exist and are ready, and the writers' claims.

Only ready versions are visible: every read resolves through the (small) versions table, cached per
LanceDB table version (``Catalogue.rows``). A writer claims a pending version by adding a row that names
it (``claim``), tags every row it writes with its writer id (``tagged``) and flips its own row to ready
(``flip_ready``); the protocol as a whole is described in ``folio.ingest.storage.store``.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any

import pyarrow as pa

from folio.ingest.storage.claims import HOST, LEASE, LIVE_WRITERS, PROCESS_START, claim_alive, retry_conflicts
from folio.ingest.storage.database import Database
from folio.ingest.storage.sql import COLLECTION_COLUMN, DEFAULT_COLLECTION, WRITER_FIELD, row_collection, writers_filter
from folio.ingest.storage.sql import sql_str as _sql_str
from folio.kernel.errors import ClaimLost, CollectionConflict, DocumentNotFound, VersionBusy, VersionNotFound
from folio.kernel.model import DocumentVersion

logger = logging.getLogger(__name__)
_PINNED_VERSION: ContextVar[tuple[Catalogue, int] | None] = ContextVar("folio_pinned_versions", default=None)


@dataclass
class Claim:
    """This Store's hold on one pending version: the writer id its rows carry, and what it wrote."""

    doc_id: str
    version_id: str
    writer: str
    collection: str = DEFAULT_COLLECTION
    replacing: bool = False  # the version is ready: this writer's rows are to take the place of its rows
    counts: dict[str, int] = field(default_factory=dict)
    heartbeat: float = field(default_factory=time.time)

    @property
    def key(self) -> str:
        return f"doc_id = {_sql_str(self.doc_id)} AND version_id = {_sql_str(self.version_id)}"

    @property
    def mine(self) -> str:
        return f"{self.key} AND writer = {_sql_str(self.writer)}"


@dataclass(frozen=True)
class ClaimRequest:
    """What a writer asks to claim: one version of a document (``Store.begin_version``), with what its pending
    row records (file name, size, parser), the collection it goes into (checked by the caller), and whether it
    is to replace a ready version's rows (``replacing``)."""

    doc_id: str
    version_id: str
    filename: str
    size_bytes: int
    parser_version: str
    collection: str = DEFAULT_COLLECTION
    replacing: bool = False


def version_key(doc_id: str, version_id: str) -> str:
    """The filter on one version's rows."""
    return f"doc_id = {_sql_str(doc_id)} AND version_id = {_sql_str(version_id)}"


def writer_key(doc_id: str, version_id: str, writer: str) -> str:
    """The filter on one writer's rows of one version (rows without a writer when ``writer`` is empty)."""
    return f"{version_key(doc_id, version_id)} AND " + (
        f"writer = {_sql_str(writer)}" if writer else "(writer IS NULL OR writer = '')"
    )


class Catalogue:
    """The ``versions`` table: reads through a per-table-version cache, and this process's claims."""

    def __init__(self, database: Database) -> None:
        # function-level: the row models import LanceDB, which loads when a store opens
        from folio.ingest.storage.schema import VERSIONS

        self.database = database
        self.table = database.open(VERSIONS.name, VERSIONS.schema)
        self.claims: dict[tuple[str, str], Claim] = {}
        self._claim_columns_ok = False
        # (table version, its rows, (doc_id, version_id) -> the writer of its ready row)
        self._cache: tuple[int, list[dict[str, Any]], dict[tuple[str, str], str]] | None = None
        self._cache_lock = threading.Lock()

    # ------------------------------------------------------------------ reads
    def version(self) -> int:
        """The versions table's LanceDB version: the one pinned for this request (``pinned``), else
        read now (a round trip that sees other processes' commits)."""
        pinned = _PINNED_VERSION.get()
        if pinned is not None and pinned[0] is self:
            return pinned[1]
        return int(self.table.version)

    @contextmanager
    def pinned(self) -> Iterator[int]:
        """Read the versions table's version once for a whole request: inside the block, scope
        resolution, file names and region sources all see that one snapshot (and skip the round trip)."""
        version = int(self.table.version)
        token = _PINNED_VERSION.set((self, version))
        try:
            yield version
        finally:
            _PINNED_VERSION.reset(token)

    def rows(
        self, *, doc_id: str | None = None, version_id: str | None = None, status: str | None = None
    ) -> list[dict[str, Any]]:
        """Rows of the (small) versions table, cached per LanceDB table version.

        Every query resolves its scope through here, so re-reading the table each time (~5 ms)
        would dominate warm query latency; checking the table version costs ~0.3 ms and still
        sees commits made by other processes (strong read consistency).
        """
        return [
            r
            for r in self._snapshot()[1]
            if (doc_id is None or r["doc_id"] == doc_id)
            and (version_id is None or r["version_id"] == version_id)
            and (status is None or r["status"] == status)
        ]

    def _snapshot(self) -> tuple[int, list[dict[str, Any]], dict[tuple[str, str], str]]:
        current = self.version()
        with self._cache_lock:
            cached = self._cache
        if cached is None or cached[0] != current:
            rows = self.rows_now()
            ready = {(r["doc_id"], r["version_id"]): r.get("writer") or "" for r in rows if r["status"] == "ready"}
            cached = (current, rows, ready)
            with self._cache_lock:
                self._cache = cached
        return cached

    def ready_writers(self, keys: Iterable[tuple[str, str]]) -> set[str]:
        """The writers of these versions' ready rows (``ready_writer``; versions that are not ready add none),
        from one read of the table's version."""
        ready = self._snapshot()[2]
        return {ready[k] for k in keys if k in ready}

    def ready_map(self) -> dict[tuple[str, str], str]:
        """(doc_id, version_id) → the writer of its ready row, for every ready version (callers must not mutate it)."""
        return self._snapshot()[2]

    def ready_writer(self, doc_id: str, version_id: str) -> str | None:
        """The writer of a ready version's rows: the only rows of it readers see (``""``: rows written
        before rows had writers; None: the version is not ready). A version whose rows are being replaced
        (``claim(replacing=True)``) has a second writer's rows as well until the swap."""
        return self._snapshot()[2].get((doc_id, version_id))

    def rows_now(self, where: str | None = None, table: Any | None = None) -> list[dict[str, Any]]:
        """Versions rows (those matching ``where``), read now rather than from the cache."""
        query = (table if table is not None else self.table).search()
        if where is not None:
            query = query.where(where)
        rows: list[dict[str, Any]] = query.limit(None).to_arrow().to_pylist()
        return rows

    def list_versions(
        self,
        doc_id: str | None = None,
        *,
        include_pending: bool = False,
        collections: Collection[str] | None = None,
    ) -> list[DocumentVersion]:
        """Ready versions (newest first within a document); ``latest`` marks each document's newest.

        ``collections``: only documents in these collections (None: every collection)."""
        rows = self.rows(doc_id=doc_id, status=None if include_pending else "ready")
        if collections is not None:
            rows = [r for r in rows if row_collection(r) in collections]
        rows.sort(key=lambda r: (r["doc_id"], -r["created_at"]))
        out: list[DocumentVersion] = []
        seen: set[str] = set()
        for r in rows:
            latest = r["doc_id"] not in seen and r["status"] == "ready"
            seen.add(r["doc_id"])
            out.append(
                DocumentVersion(
                    doc_id=r["doc_id"],
                    version_id=r["version_id"],
                    filename=r["filename"],
                    pages=r["pages"],
                    size_bytes=r["size_bytes"],
                    parser_version=r["parser_version"],
                    created_at=r["created_at"],
                    regions=r["regions"],
                    latest=latest,
                )
            )
        return out

    def collections(self) -> dict[str, str]:
        """doc_id → collection, over documents with a ready version."""
        return {r["doc_id"]: row_collection(r) for r in self.rows(status="ready")}

    def collection_of(self, doc_id: str) -> str | None:
        """The collection of a document with a ready version, else None."""
        rows = self.rows(doc_id=doc_id, status="ready")
        return row_collection(rows[0]) if rows else None

    def check_collection_free(self, doc_id: str, collection: str, rows: list[dict[str, Any]] | None = None) -> None:
        """Raise ``CollectionConflict`` when ``doc_id`` has a ready version, or a live claim, in
        another collection (``rows``: that document's versions rows, else read from the cache).

        One answer for every taken id, which says nothing about where it is taken nor by what (a document or an
        ingest under way): a key may not see the collection that holds it (issue 44). Doc ids are one name space
        (region ids and citations carry them), so the answer cannot hide that the id is taken."""
        rows = self.rows(doc_id=doc_id) if rows is None else rows
        for r in rows:
            if row_collection(r) != collection and (r["status"] == "ready" or claim_alive(r)):
                raise CollectionConflict(f"doc_id {doc_id} is taken: upload under another doc_id")

    def latest_versions(self, doc_ids: Sequence[str] | None = None) -> list[DocumentVersion]:
        vs = [v for v in self.list_versions() if v.latest]
        if doc_ids:
            wanted = set(doc_ids)
            missing = wanted - {v.doc_id for v in vs}
            if missing:
                raise DocumentNotFound(f"no such document: {', '.join(sorted(missing))}")
            vs = [v for v in vs if v.doc_id in wanted]
        return vs

    def get_version(self, doc_id: str, version_id: str | None = None) -> DocumentVersion:
        vs = self.list_versions(doc_id)
        if not vs:
            raise DocumentNotFound(f"no such document: {doc_id}")
        if version_id is None:
            return vs[0]
        for v in vs:
            if v.version_id == version_id:
                return v
        raise VersionNotFound(f"document {doc_id} has no version {version_id}")

    def version_report(self, doc_id: str, version_id: str) -> dict[str, Any]:
        rows = self.rows(doc_id=doc_id, version_id=version_id, status="ready")
        if not rows:
            raise VersionNotFound(f"document {doc_id} has no version {version_id}")
        report: dict[str, Any] = json.loads(rows[0]["report"] or "{}")
        return report

    def has_ready(self, doc_id: str, version_id: str) -> bool:
        return bool(self.rows(doc_id=doc_id, version_id=version_id, status="ready"))

    # ----------------------------------------------------------------- claims
    def ensure_claim_columns(self) -> None:
        """Give tables written by an older folio the claim columns (a writer-only migration)."""
        if self._claim_columns_ok:
            return
        with self.database.write_lock:
            from folio.ingest.storage.schema import CLAIM_FIELDS  # function-level: see __init__

            missing = [f for f in CLAIM_FIELDS if f.name not in self.table.schema.names]
            if missing:
                logger.warning("adding writer-claim columns to versions (data written by an older folio)")
                retry_conflicts(lambda: self.table.add_columns(missing))
            if COLLECTION_COLUMN not in self.table.schema.names:
                logger.warning("adding the collection column to versions (existing documents: %r)", DEFAULT_COLLECTION)
                retry_conflicts(lambda: self.table.add_columns({COLLECTION_COLUMN: _sql_str(DEFAULT_COLLECTION)}))
            for t in self.database.version_tables():
                if "writer" not in t.schema.names:
                    retry_conflicts(partial(t.add_columns, [WRITER_FIELD]))
            self._claim_columns_ok = True

    def claim(
        self, request: ClaimRequest, *, wait: timedelta, remove_claim: Callable[[str, str, str], None]
    ) -> bool:
        """Claim a version for writing (``Store.begin_version``); ``remove_claim(doc, version, writer)``
        removes a dead writer's pending version with its rows and assets. ``request.collection`` is checked by
        the caller.

        False when there is nothing to do: the version is ready, or, ``replacing``, it is not (a claim to
        replace a ready version's rows with a new parse of the same bytes: its pending row stands next to
        the ready one, and ``flip_ready`` swaps them in one commit)."""
        doc_id, version_id = request.doc_id, request.version_id
        deadline = time.monotonic() + wait.total_seconds()
        pause = 0.1
        with self.database.write_lock:
            if (doc_id, version_id) in self.claims:
                raise VersionBusy(f"{doc_id}@{version_id} is already being written by this store")
            while True:
                self.check_collection_free(doc_id, request.collection, self.rows_now(f"doc_id = {_sql_str(doc_id)}"))
                rows = self.rows_now(version_key(doc_id, version_id))
                if any(r["status"] == "ready" for r in rows) != request.replacing:
                    return False
                pending = [r for r in rows if r["status"] != "ready"]
                live = [r for r in pending if claim_alive(r)]
                for r in pending:
                    if r not in live:
                        remove_claim(doc_id, version_id, r.get("writer") or "")
                if not live:
                    claim = self._try_claim(request)
                    if claim is not None:
                        self.claims[(doc_id, version_id)] = claim
                        LIVE_WRITERS.add(claim.writer)
                        return True
                    continue  # lost the race: look again at once
                if time.monotonic() >= deadline:
                    raise VersionBusy(
                        f"{doc_id}@{version_id} is being written by another process "
                        f"(pid {live[0].get('writer_pid')} on {live[0].get('writer_host') or HOST})"
                    )
                time.sleep(pause)
                pause = min(pause * 1.5, 1.0)

    def _try_claim(self, request: ClaimRequest) -> Claim | None:
        """Insert a pending row for (doc, version) unless one exists (``replacing``: unless a pending one
        does), and win or withdraw.

        ``merge_insert`` skips the insert when it sees a row, but two processes racing can both
        insert. The claim goes to the earliest commit: a writer whose table version just before its
        own already held another live claim row withdraws its row.
        """
        claim = Claim(
            request.doc_id, request.version_id, uuid.uuid4().hex, request.collection, replacing=request.replacing
        )
        # Live from before its row exists: another Store of this process must not take it for a
        # leftover of this pid.
        LIVE_WRITERS.add(claim.writer)
        won = False
        try:
            won = self._insert_claim(claim, request)
        finally:
            if not won:
                LIVE_WRITERS.discard(claim.writer)
        return claim if won else None

    def _insert_claim(self, claim: Claim, request: ClaimRequest) -> bool:
        doc_id, version_id = claim.doc_id, claim.version_id
        now = time.time()
        from folio.ingest.storage.schema import VersionRow  # function-level: see __init__

        row = VersionRow(
            doc_id=doc_id,
            version_id=version_id,
            filename=request.filename,
            pages=0,
            size_bytes=request.size_bytes,
            parser_version=request.parser_version,
            created_at=now,
            regions=0,
            status="pending",
            writer_pid=os.getpid(),
            report="{}",
            writer=claim.writer,
            writer_host=HOST,
            writer_start=PROCESS_START,
            heartbeat=now,
            counts="{}",
            collection=request.collection,
        )
        data = pa.Table.from_pylist([row.model_dump()], schema=self.table.schema)
        on = ["doc_id", "version_id", "status"] if claim.replacing else ["doc_id", "version_id"]
        result = retry_conflicts(lambda: self.table.merge_insert(on).when_not_matched_insert_all().execute(data))
        if not result.num_inserted_rows:
            return False
        key = version_key(doc_id, version_id)
        others = [
            r
            for r in self.rows_now(key)
            if r.get("writer") != claim.writer and not (claim.replacing and r["status"] == "ready")
        ]
        if others:
            before = self.database.checkout("versions", result.version - 1)
            earlier = {r.get("writer") for r in self.rows_now(key, before) if claim_alive(r)}
            if earlier & {r.get("writer") for r in others} or any(r["status"] == "ready" for r in others):
                logger.info("claim race on %s@%s lost; waiting for the winner", doc_id, version_id)
                retry_conflicts(lambda: self.table.delete(claim.mine))
                return False
        return True

    def claim_for(self, doc_id: str, version_id: str) -> Claim:
        """This store's claim on a version (``ClaimLost`` when none), its heartbeat refreshed when due."""
        claim = self.claims.get((doc_id, version_id))
        if claim is None:
            raise ClaimLost(f"{doc_id}@{version_id} is not claimed by this writer (call begin_version first)")
        now = time.time()
        if now - claim.heartbeat > LEASE.total_seconds() / 4:
            retry_conflicts(lambda: self.table.update(where=claim.mine, values={"heartbeat": now}))
            claim.heartbeat = now
        return claim

    def tagged(self, table: Any, name: str, data: pa.Table) -> pa.Table:
        """``data`` with its ``writer`` column set from the claims on its (doc, version)s, cast to
        ``table``'s schema; counts the rows per claim for the commit-time check."""
        keys = list(zip(data.column("doc_id").to_pylist(), data.column("version_id").to_pylist(), strict=True))
        claims = {k: self.claim_for(*k) for k in set(keys)}
        for k in keys:
            claims[k].counts[name] = claims[k].counts.get(name, 0) + 1
        writers = pa.array([claims[k].writer for k in keys], pa.string())
        if "writer" in data.schema.names:
            data = data.set_column(data.schema.get_field_index("writer"), WRITER_FIELD, writers)
        else:
            data = data.append_column(WRITER_FIELD, writers)
        return data.select(table.schema.names).cast(table.schema)

    def check_written(self, claim: Claim) -> None:
        """Before a commit: the document is in no other collection (two writers racing to put one doc_id in
        two collections: neither commits), every table holds exactly the rows this writer wrote, and rows a
        dead or superseded writer left in this version are removed (they never become visible; a version
        being replaced keeps the rows of its ready writer, which readers see until the swap)."""
        others = [r for r in self.rows_now(f"doc_id = {_sql_str(claim.doc_id)}") if r.get("writer") != claim.writer]
        self.check_collection_free(claim.doc_id, claim.collection, others)
        for name, n in claim.counts.items():
            t = self.database.table(name)
            have = t.count_rows(claim.mine) if t is not None else 0
            if have != n:
                raise ClaimLost(f"{claim.doc_id}@{claim.version_id}: {name} has {have} rows of this writer, wrote {n}")
        shown = [r.get("writer") or "" for r in self.rows_now(claim.key) if r["status"] == "ready"]
        for t in self.database.version_tables():
            foreign = f"{claim.key} AND (writer IS NULL OR writer != {_sql_str(claim.writer)})"
            if shown:  # a replacement: the rows readers see until the swap stay
                foreign += f" AND NOT {writers_filter(shown)}"
            if t.count_rows(foreign):
                retry_conflicts(partial(t.delete, foreign))

    def flip_ready(
        self, claim: Claim, *, pages: int, regions: int, report: dict[str, Any], created_at: float | None
    ) -> None:
        """Make the claimed version ready in one commit, conditional on its writer, with what the ingest
        recorded (``created_at`` None: now), and read it back: ``ClaimLost`` when the claim was taken over or
        deleted meanwhile."""
        values = {
            "status": "ready",
            "pages": pages,
            "regions": regions,
            "report": json.dumps(report, ensure_ascii=False),
            "created_at": time.time() if created_at is None else created_at,
            "counts": json.dumps(claim.counts, sort_keys=True),
        }
        if claim.replacing:
            self._swap(claim, values)
        else:
            retry_conflicts(lambda: self.table.update(where=f"{claim.mine} AND status = 'pending'", values=values))
        ready = [r for r in self.rows_now(version_key(claim.doc_id, claim.version_id)) if r["status"] == "ready"]
        if [r.get("writer") for r in ready] != [claim.writer]:
            raise ClaimLost(f"{claim.doc_id}@{claim.version_id} was taken over by another writer before it committed")
        del self.claims[(claim.doc_id, claim.version_id)]
        LIVE_WRITERS.discard(claim.writer)

    def _swap(self, claim: Claim, values: dict[str, Any]) -> None:
        """A replacement's flip: in one commit, this writer's pending row becomes the version's ready row and
        the ready row it replaces goes, so a reader finds the old rows or the new ones, never neither.

        The new ready row names the writer whose rows it replaced (``retiring``) and when (``heartbeat``) until
        those rows are removed (``recovery.retire``): a writer killed before it removed them leaves that note,
        and the next store to open finishes the removal (``recovery.finish_retires``)."""
        rows = self.rows_now(claim.key)
        mine = [r for r in rows if r.get("writer") == claim.writer and r["status"] == "pending"]
        if not mine:
            raise ClaimLost(f"{claim.doc_id}@{claim.version_id} was taken over by another writer before it committed")
        old = [r.get("writer") or "" for r in rows if r["status"] == "ready" and r.get("writer") != claim.writer]
        replaced = f"{claim.key} AND status = 'ready' AND (writer IS NULL OR writer != {_sql_str(claim.writer)})"

        def swap() -> Any:  # the time of each try: a retried commit must not seem older than it is
            row = {**mine[0], **values, "heartbeat": time.time(), "retiring": old[0] if old else None}
            data = pa.Table.from_pylist([row], schema=self.table.schema)
            return (
                self.table.merge_insert(["doc_id", "version_id", "writer"])
                .when_matched_update_all()
                .when_not_matched_by_source_delete(replaced)
                .execute(data)
            )

        retry_conflicts(swap)

    def release(self, doc_id: str, version_id: str) -> Claim | None:
        """Give up this store's claim on a version (a failed ingest); its rows are the caller's to remove."""
        claim = self.claims.pop((doc_id, version_id), None)
        if claim is not None:
            LIVE_WRITERS.discard(claim.writer)
        return claim
