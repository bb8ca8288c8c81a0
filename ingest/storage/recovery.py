"""Removing versions: a failed or dead writer's pending version, deleted versions, and crash leftovers.

Deleting flips visibility first: the versions row goes, then the rows and assets behind it
(``purge``). Crash cleanup runs in writers (dead writers' claims, before each claim) or explicitly
(``recover``, ``folio check --repair``); readers write nothing but the end of a re-parse whose writer died
after its swap (``finish_retires``, when a store opens): the swap is committed, so the rows it replaced only
wait to be removed.
"""

from __future__ import annotations

import logging
import shutil
import time
from functools import partial
from typing import Any, Protocol

from folio.ingest.storage.assets import Assets
from folio.ingest.storage.catalogue import Catalogue, version_key, writer_key
from folio.ingest.storage.chunks import ChunkTable
from folio.ingest.storage.claims import claim_alive, retry_conflicts
from folio.ingest.storage.database import Database
from folio.ingest.storage.regions import RegionTable
from folio.ingest.storage.sql import row_collection, sql_str
from folio.kernel.errors import DocumentNotFound

logger = logging.getLogger(__name__)

# Seconds the rows of a replaced version stay after the swap (``retire``), for the readers that resolved the
# version just before it and read its rows just after.
RETIRE_AFTER_S = 2.0


class StoreParts(Protocol):
    """What removal needs of a store (``folio.ingest.storage.store.Store`` is one): its parts and the commit
    counter (which triggers compaction). A removal rebuilds no index (LanceDB's deletion vectors hide removed
    rows); only a re-parse's ``retire`` rebuilds its collection's full-text index."""

    database: Database
    catalogue: Catalogue
    region_table: RegionTable
    chunk_table: ChunkTable
    assets: Assets

    def committed(self) -> None: ...


def remove_claim(store: StoreParts, doc_id: str, version_id: str, writer: str) -> None:
    """Remove one (dead or failed) writer's pending version: its rows, then its assets when no
    other claim or ready version shares them, then its versions row (which frees the version)."""
    key = version_key(doc_id, version_id)
    mine = writer_key(doc_id, version_id, writer)
    logger.warning("removing incomplete version %s@%s (writer %s)", doc_id, version_id, writer or "?")
    catalogue = store.catalogue
    with store.database.write_lock:
        for t in store.database.version_tables():
            if "writer" in t.schema.names:
                retry_conflicts(partial(t.delete, mine))
            else:
                retry_conflicts(partial(t.delete, key))
        others = [r for r in catalogue.rows_now(key) if (r.get("writer") or "") != writer]
        if not others:
            store.assets.remove(doc_id, version_id)
        where = mine if "writer" in catalogue.table.schema.names else key
        retry_conflicts(lambda: catalogue.table.delete(f"{where} AND status = 'pending'"))
        store.region_table.forget(doc_id, version_id)


def remove_dead_claims(store: StoreParts) -> list[tuple[str, str]]:
    """Crash cleanup a writer does before it claims: pending versions of dead writers (any
    document), with their rows and assets. Cheap: one read of the small versions table."""
    removed = []
    for r in store.catalogue.rows_now():
        if r["status"] == "pending" and not claim_alive(r):
            remove_claim(store, r["doc_id"], r["version_id"], r.get("writer") or "")
            removed.append((r["doc_id"], r["version_id"]))
    return removed


def delete_version(store: StoreParts, doc_id: str, version_id: str) -> None:
    store.catalogue.get_version(doc_id, version_id)  # raises when absent
    with store.database.write_lock:
        key = version_key(doc_id, version_id)
        retry_conflicts(lambda: store.catalogue.table.delete(key))
        purge(store, doc_id, version_id)


def delete_document(store: StoreParts, doc_id: str) -> list[str]:
    versions = [v.version_id for v in store.catalogue.list_versions(doc_id, include_pending=True)]
    if not versions:
        raise DocumentNotFound(f"no such document: {doc_id}")
    with store.database.write_lock:
        retry_conflicts(lambda: store.catalogue.table.delete(f"doc_id = {sql_str(doc_id)}"))
        for v in versions:
            purge(store, doc_id, v)
    return versions


def retire(store: StoreParts, doc_id: str, version_id: str, writer: str) -> None:
    """Remove the rows ``writer`` wrote of a version whose ready row now names another writer (its rows were
    replaced), rebuild the collection's full-text index without them (deletion vectors hide removed rows from an
    index, but BM25 counts every row it was built over: a re-parse, which replaces a whole version's rows, is
    the one write that rebuilds an index outside maintenance), then clear the ready row's note of them
    (``retiring``): a writer killed at any step leaves the note, and the next store to open does it all again
    (``finish_retires``). Nothing while ``writer``'s rows are the ready ones, or when the version is gone (its
    rows went with it). Assets are shared by name: the replacing writer already put its own in their place."""
    ready = [r for r in store.catalogue.rows_now(version_key(doc_id, version_id)) if r["status"] == "ready"]
    if not ready or any((r.get("writer") or "") == writer for r in ready):
        return
    mine = writer_key(doc_id, version_id, writer)
    with store.database.write_lock:
        for t in store.database.version_tables():
            if "writer" in t.schema.names:
                retry_conflicts(partial(t.delete, mine))
        store.chunk_table.rebuild_fts(row_collection(ready[0]))
        store.region_table.forget(doc_id, version_id)
        if "retiring" in store.catalogue.table.schema.names:
            noted = f"{version_key(doc_id, version_id)} AND status = 'ready' AND retiring = {sql_str(writer)}"
            retry_conflicts(lambda: store.catalogue.table.update(where=noted, values={"retiring": None}))
        store.committed()


def finish_retires(store: StoreParts, *, wait: bool = False) -> list[tuple[str, str]]:
    """Finish the re-parses whose writer died between its swap and removing the rows it replaced (``retire``):
    a store does it when it opens and before each claim, ``folio check`` first of all (``wait``: it sleeps out a
    dead writer's young swap instead of leaving it). A swap younger than ``RETIRE_AFTER_S`` is left (a reader
    may still read the rows it replaced), and so is one whose writer lives (it removes them itself). Cheap when
    there is nothing to do: one read of the small versions table, which readers make anyway."""
    if "retiring" not in store.catalogue.table.schema.names:
        return []  # no writer of this folio has written here yet
    done: list[tuple[str, str]] = []
    for r in store.catalogue.rows(status="ready"):
        if r.get("retiring") is None or claim_alive(r):
            continue
        left = RETIRE_AFTER_S - (time.time() - float(r.get("heartbeat") or 0.0))
        if left > 0:
            if not wait:
                continue
            time.sleep(left)
        logger.warning(
            "finishing the re-parse of %s@%s: its writer died before removing the rows it replaced (writer %s)",
            r["doc_id"], r["version_id"], r["retiring"] or "?",
        )  # fmt: skip
        retire(store, r["doc_id"], r["version_id"], r["retiring"])
        done.append((r["doc_id"], r["version_id"]))
    return done


def purge(store: StoreParts, doc_id: str, version_id: str) -> None:
    """Remove every row and asset of a version whose versions rows are already gone."""
    key = version_key(doc_id, version_id)
    for t in store.database.version_tables():
        retry_conflicts(partial(t.delete, key))
    store.assets.remove(doc_id, version_id)
    store.region_table.forget(doc_id, version_id)
    store.committed()


def recover(store: StoreParts) -> list[tuple[str, str]]:
    """Crash cleanup (writers and ``folio check --repair`` only): remove pending versions whose
    writer is dead, rows that belong to no versions row (or to another writer than the version's),
    and asset folders of no version.

    Rows and asset folders are listed *before* the versions table is read: a writer adds its
    claim before its first row, so anything listed belongs to a claim the later read sees.
    """
    with store.database.write_lock:
        store.catalogue.ensure_claim_columns()
        removed = finish_retires(store, wait=True)
        tables = store.database.version_tables()
        present = {
            id(t): t.search().select(["doc_id", "version_id", "writer"]).limit(None).to_arrow().to_pylist()
            for t in tables
        }
        asset_dirs = store.assets.folders()
        removed += remove_dead_claims(store)
        rows = store.catalogue.rows_now()
        known = {(r["doc_id"], r["version_id"], r.get("writer") or "") for r in rows}
        known |= retiring(rows)  # a live re-parse's replaced rows: readers may still read them; it removes them
        for t in tables:
            keys = {(p["doc_id"], p["version_id"], p.get("writer") or "") for p in present[id(t)]}
            for doc, ver, writer in keys - known:
                logger.warning("removing orphan rows of %s@%s (writer %s)", doc, ver, writer or "?")
                retry_conflicts(partial(t.delete, writer_key(doc, ver, writer)))
                removed.append((doc, ver))
        names = {f"{r['doc_id']}@{r['version_id']}" for r in rows}
        for child in asset_dirs:
            if child.name not in names:
                shutil.rmtree(child, ignore_errors=True)
    return removed


def retiring(rows: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(doc, version, writer) of the rows a re-parse replaced that are still to be removed (``retire``), from
    versions rows: no orphans, and no longer visible but to readers that resolved the version before the swap."""
    return {(r["doc_id"], r["version_id"], r["retiring"]) for r in rows if r.get("retiring") is not None}
