"""Store upkeep: a consistency check of the store (``check``); compaction itself is ``compaction.compact``.

LanceDB appends a new table version (manifest plus data or deletion files) for every add, delete
and update, and keeps every old version and every deleted row until told to compact and clean
up. Without that, a store that re-ingests or survives kills grows without bound. ``compact``
merges small fragments (materialising deletions), updates indices and removes versions older
than ``older_than``; the latest version is always kept. Writers call it every ``COMPACT_EVERY``
commits (``Store.maintain``) and at the end of ``folio ingest``; ``folio compact`` runs it by hand.

``check`` verifies what the store promises: every ready version complete (its row counts match
what its versions row recorded at commit), no rows of unknown, dead or superseded writers, no
duplicated region ids within a version, no asset folder without a version. ``repair=True`` runs
the crash cleanup (``Store.recover``) first. A re-parse that a dead writer left after its swap is finished
first in any case (``Store.finish_retires``): it committed, and only the rows it replaced were left to go.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import Any, Protocol

from folio.ingest.storage.assets import Assets
from folio.ingest.storage.claims import claim_alive
from folio.ingest.storage.compaction import Compactable, sizes
from folio.ingest.storage.recovery import retiring

logger = logging.getLogger(__name__)

Key = tuple[str, str, str]  # (doc_id, version_id, writer or region id)


class Checkable(Compactable, Protocol):
    """What the check needs of a store (``folio.ingest.storage.store.Store`` is one): its versions table,
    its version-scoped tables and assets, and its crash cleanup."""

    versions: Any
    assets: Assets

    def finish_retires(self, *, wait: bool = False) -> list[tuple[str, str]]: ...

    def recover(self) -> list[tuple[str, str]]: ...

    def version_tables(self) -> list[Any]: ...


def check(store: Checkable, *, repair: bool = False) -> dict[str, Any]:
    """Verify the store; ``problems`` is empty when it is consistent. With ``repair``, crash cleanup
    (dead writers' claims and rows, orphan rows and assets) runs first and is listed in ``repaired``; re-parses
    that dead writers left after their swap are finished first in any case (``finished``)."""
    finished = store.finish_retires(wait=True)
    repaired = [f"{d}@{v}" for d, v in store.recover()] if repair else []
    # Rows first, then versions: a writer claims before its first row, so every row listed here
    # belongs to a claim the later versions read sees (no false orphans from a starting writer).
    present = {t.name: _rows(t) for t in store.version_tables()}
    asset_dirs = sorted(p.name for p in store.assets.folders())  # local stores' image folders
    versions: list[dict[str, Any]] = store.versions.search().limit(None).to_arrow().to_pylist()

    ready = {(r["doc_id"], r["version_id"]): r for r in versions if r["status"] == "ready"}
    pending = [r for r in versions if r["status"] == "pending"]
    live = [r for r in pending if claim_alive(r)]
    problems = _claim_problems(versions, pending, live)
    # The rows a live re-parse replaced are its own to remove (readers that resolved the version before its
    # swap may still read them), like a writer's rows before its commit (a new version, or new rows for a ready
    # one: redo_degraded): neither repeats an id that readers see.
    replaced = retiring(versions)
    known = {(r["doc_id"], r["version_id"], r.get("writer") or "") for r in versions} | replaced
    claimed = {(r["doc_id"], r["version_id"], r.get("writer") or "") for r in pending} | replaced
    for name, rows in present.items():
        problems += _table_problems(name, rows, ready, known, claimed)
    names = {f"{r['doc_id']}@{r['version_id']}" for r in versions}
    problems += [{"kind": "orphan_assets", "path": f"assets/{d}"} for d in asset_dirs if d not in names]
    return {
        "ok": not problems,
        "versions": {"ready": len(ready), "pending": len(pending), "writing": len(live)},
        "rows": {name: len(rows) for name, rows in present.items()},
        "sizes": sizes(store),
        "problems": problems,
        "repaired": repaired,
        "finished": [f"{d}@{v}" for d, v in finished],
    }


def _rows(table: Any) -> list[dict[str, Any]]:
    """A version-scoped table's rows: their version, writer and id (``region_id``; an assets row's ``path``)."""
    id_col = "region_id" if "region_id" in table.schema.names else "path"  # assets rows are keyed by path
    cols = ["doc_id", "version_id", id_col] + (["writer"] if "writer" in table.schema.names else [])
    return [{**p, "region_id": p[id_col]} for p in table.search().select(cols).limit(None).to_arrow().to_pylist()]


def _claim_problems(
    versions: list[dict[str, Any]], pending: list[dict[str, Any]], live: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Dead writers' claims, and versions with more than one ready row."""
    problems: list[dict[str, Any]] = [
        {"kind": "dead_claim", "version": f"{r['doc_id']}@{r['version_id']}", "writer": r.get("writer")}
        for r in pending
        if r not in live
    ]
    dup_ready = Counter((r["doc_id"], r["version_id"]) for r in versions if r["status"] == "ready")
    for key, n in dup_ready.items():
        if n > 1:
            problems.append({"kind": "duplicate_version_rows", "version": f"{key[0]}@{key[1]}", "rows": n})
    return problems


def _table_problems(
    name: str,
    rows: list[dict[str, Any]],
    ready: dict[tuple[str, str], dict[str, Any]],
    known: set[Key],
    claimed: set[Key],
) -> list[dict[str, Any]]:
    """One table's problems: rows of unknown writers, region ids repeated within a ready version, and ready
    versions whose rows are not the ones their commit counted."""
    problems: list[dict[str, Any]] = []
    per_key: Counter[Key] = Counter()
    ids: Counter[Key] = Counter()
    for p in rows:
        per_key[(p["doc_id"], p["version_id"], p.get("writer") or "")] += 1
        if (p["doc_id"], p["version_id"], p.get("writer") or "") not in claimed:
            ids[(p["doc_id"], p["version_id"], p["region_id"])] += 1
    for (doc, ver, writer), n in sorted(per_key.items()):
        if (doc, ver, writer) not in known:
            problems.append(
                {"kind": "orphan_rows", "table": name, "version": f"{doc}@{ver}", "writer": writer, "rows": n}
            )
    dups = Counter((d, v) for (d, v, _), n in ids.items() if n > 1 and (d, v) in ready)
    for (doc, ver), n in sorted(dups.items()):
        problems.append({"kind": "duplicate_ids", "table": name, "version": f"{doc}@{ver}", "ids": n})
    for (doc, ver), r in ready.items():
        recorded = _recorded_counts(r).get(name)
        if name == "regions" and recorded is None:
            recorded = int(r["regions"] or 0)
        if recorded is None:
            continue
        have = sum(n for (d, v, w), n in per_key.items() if (d, v) == (doc, ver) and w == (r.get("writer") or ""))
        if have != recorded:
            problems.append(
                {"kind": "incomplete", "table": name, "version": f"{doc}@{ver}", "rows": have, "expected": recorded}
            )
    return problems


def _recorded_counts(row: dict[str, Any]) -> dict[str, int]:
    raw = row.get("counts") or "{}"
    counts: dict[str, int] = json.loads(raw)
    return counts
