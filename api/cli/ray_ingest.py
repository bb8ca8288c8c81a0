"""``folio ingest --ray ADDRESS PATH...``: one Ray task per document, progress and reports as in-process.

Each PDF becomes a job on the cluster's job board (``api/cluster/board.py``); this command polls the
board, shows one progress line for the whole run (documents finished, and the stage of each running
one) and prints each document's report as it finishes, in the format of a local ``folio ingest``.
The jobs belong to the cluster: interrupting the command leaves them running (``GET /v1/jobs`` on any
replica shows them).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from folio.kernel.errors import FolioError
from folio.kernel.printable import terminal_safe

# Function-level imports: each command imports what it runs, so that `folio --help` and the light commands start
# without loading torch, LanceDB or PyMuPDF.
if TYPE_CHECKING:
    from folio.api.application import Folio
    from folio.settings import Settings

POLL_S = 0.3


def _overall(jobs: list[dict[str, Any]]) -> tuple[str, int, int]:
    """(stage text, finished, total) for the progress line."""
    finished = sum(1 for j in jobs if j["status"] in ("done", "failed"))
    running = [j for j in jobs if j["status"] == "running"]
    stages = ", ".join(
        f"{j.get('filename', '?')[:16]}:{j['progress']['stage']} {j['progress']['done']}/{j['progress']['total']}"
        for j in running[:3]
    )
    return (stages or "queued"), finished, len(jobs)


def run(args: argparse.Namespace, paths: list[Path], settings: Settings, folio: Folio) -> int:
    """Submit ``paths`` to the cluster at ``args.ray``; print reports; exit code like ``folio ingest``."""
    from folio.api.cli.common import EXIT_FAILED
    from folio.api.cluster.board import board, connect

    connect(args.ray)
    jobs_board = board(args.ray)
    if args.no_ocr:
        settings = settings.model_copy(update={"ocr": False})
    submitted = [_submit(jobs_board, p, args, settings, folio) for p in paths]
    reports = _follow(jobs_board, submitted, args, len(paths))
    ordered = [reports[j["job_id"]] for j in submitted]
    if any(r["status"] not in ("unchanged", "failed") for r in ordered):
        folio.maintain()  # compact what this run wrote, as a local `folio ingest` does
    if args.json:
        print(terminal_safe(json.dumps({"data": ordered, "count": len(ordered)}, indent=2, ensure_ascii=False)))
    return EXIT_FAILED if any(r["status"] == "failed" for r in ordered) else 0


def _submit(jobs_board: Any, path: Path, args: argparse.Namespace, settings: Settings, folio: Folio) -> dict[str, Any]:
    """One PDF checked here, by the door (the typed job the task runs), and put on the board; its snapshot. A
    file the check refuses is a job that failed at once, reported as a failed task would be."""
    from folio.api.cluster.board import job_spec

    meta = {"filename": path.name, "doc_id": args.doc_id, "collection": args.collection}
    try:
        job = folio.check_file(
            path,
            options=folio.ingest_options(**({"ocr": False} if args.no_ocr else {})),
            doc_id=args.doc_id,
            collection=args.collection,
            password=args.password,
            metadata=args.metadata,
        )
    except FolioError as e:
        error = {"code": e.code, "message": str(e)}
        progress = {"stage": "failed", "done": 0, "total": 0}
        return {"job_id": f"checked-{uuid.uuid4().hex[:12]}", "status": "failed", "progress": progress,
                "error": error, "attempts": 1, **meta}
    ray = sys.modules["ray"]
    snapshot: dict[str, Any] = ray.get(jobs_board.submit.remote(job_spec(folio.store, job, settings), meta))
    return snapshot


def _follow(
    jobs_board: Any, submitted: list[dict[str, Any]], args: argparse.Namespace, n: int
) -> dict[str, dict[str, Any]]:
    """Poll the board until every job finished, with one progress line; each report (printed as it comes
    unless ``--json``) by job id."""
    from folio.api.cli.common import ProgressBar

    ray = sys.modules["ray"]
    bar = ProgressBar(f"{n} documents on Ray", enabled=None if not args.json else False, lines=not args.json)
    pending = {j["job_id"] for j in submitted}
    order = [j["job_id"] for j in submitted]
    latest: dict[str, dict[str, Any]] = {j["job_id"]: j for j in submitted}
    reports: dict[str, dict[str, Any]] = {}
    try:
        while pending:
            for job in ray.get(jobs_board.list.remote()):
                if job["job_id"] in latest:
                    latest[job["job_id"]] = job
            bar(*_overall([latest[j] for j in order]))
            for job_id in [j for j in order if j in pending and latest[j]["status"] in ("done", "failed")]:
                pending.discard(job_id)
                reports[job_id] = _report(latest[job_id])
                if not args.json:
                    bar.close()
                    _print(reports[job_id])
            if pending:
                time.sleep(POLL_S)
    finally:
        bar.close()
    return reports


def _report(job: dict[str, Any]) -> dict[str, Any]:
    """A finished job's report, as a local ``folio ingest`` gives it, with the task's ``attempts`` and where its
    text encoder ran (``embed_device``: ``cuda`` on the GPU a task reserves, ``FOLIO_RAY_GPUS_PER_DOC``)."""
    if job["status"] == "done":
        out = {**job["result"]["report"], "collection": job["result"]["collection"]}
    else:
        out = {"filename": job["filename"], "status": "failed", "error": job["error"]}
    out["attempts"] = job.get("attempts", 1)
    out["embed_device"] = (job.get("worker") or {}).get("embed_device")
    return out


def _print(out: dict[str, Any]) -> None:
    from folio.api.cli.common import format_report, say

    if out["status"] == "failed":
        say(f"{out['filename']}: failed: {out['error']['message']}")
    else:
        print(terminal_safe(format_report(out)))  # file names and PDF text: shown, never obeyed
