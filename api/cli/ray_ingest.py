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
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


def run(args: argparse.Namespace, paths: list[Path], settings: Settings, folio: Folio) -> int:  # noqa: C901
    """Submit ``paths`` to the cluster at ``args.ray``; print reports; exit code like ``folio ingest``."""
    from folio.api.cli.common import EXIT_FAILED, ProgressBar, format_report, say
    from folio.api.cluster.board import board, connect, job_spec
    from folio.kernel.printable import terminal_safe

    connect(args.ray)
    ray = sys.modules["ray"]
    jobs_board = board(args.ray)
    submitted: list[dict[str, Any]] = []
    for p in paths:
        spec = job_spec(
            folio.store,
            filename=p.name,
            doc_id=args.doc_id,
            collection=args.collection,
            settings=settings.model_copy(update={"ocr": False} if args.no_ocr else {}),
            password=args.password,
        )
        meta = {"filename": p.name, "doc_id": args.doc_id, "collection": args.collection}
        submitted.append(ray.get(jobs_board.submit.remote(spec, p.read_bytes(), meta)))
    bar = ProgressBar(f"{len(paths)} documents on Ray", enabled=None if not args.json else False)
    pending = {j["job_id"] for j in submitted}
    order = [j["job_id"] for j in submitted]
    latest: dict[str, dict[str, Any]] = {j["job_id"]: j for j in submitted}
    reports: dict[str, dict[str, Any]] = {}
    try:
        while pending:
            for job in ray.get(jobs_board.list.remote()):
                if job["job_id"] in latest:
                    latest[job["job_id"]] = job
            stage, finished, total = _overall([latest[j] for j in order])
            bar(stage, finished, total)
            for job_id in [j for j in order if j in pending and latest[j]["status"] in ("done", "failed")]:
                pending.discard(job_id)
                job = latest[job_id]
                if job["status"] == "done":
                    out = {**job["result"]["report"], "collection": job["result"]["collection"]}
                else:
                    out = {"filename": job["filename"], "status": "failed", "error": job["error"]}
                out["attempts"] = job.get("attempts", 1)
                reports[job_id] = out
                if not args.json:
                    bar.close()
                    if out["status"] == "failed":
                        say(f"{out['filename']}: failed: {out['error']['message']}")
                    else:
                        print(terminal_safe(format_report(out)))  # file names and PDF text: shown, never obeyed
            if pending:
                time.sleep(POLL_S)
    finally:
        bar.close()
    ordered = [reports[j] for j in order]
    if any(r["status"] not in ("unchanged", "failed") for r in ordered):
        folio.maintain()  # compact what this run wrote, as a local `folio ingest` does
    if args.json:
        print(terminal_safe(json.dumps({"data": ordered, "count": len(ordered)}, indent=2, ensure_ascii=False)))
    return EXIT_FAILED if any(r["status"] == "failed" for r in ordered) else 0
