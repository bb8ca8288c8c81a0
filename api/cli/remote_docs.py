"""``folio ingest | docs | delete`` against a running server, through ``folio.Client``: what a client-only install
(``pip install folio-context``, no server extras) can do with documents.

The server is ``--server URL``, else ``$FOLIO_URL`` (without ``--data``), else a ``folio serve`` that serves the
data directory (``common.remote_server``). ``ingest`` uploads the PDFs in batches (``POST /v1/documents/batch``,
at most ``BATCH_FILES`` files and about ``BATCH_BYTES`` bytes a request; with ``--doc-id`` the one PDF through
``POST /v1/documents``) and follows the jobs' server-sent events (``GET /v1/jobs/events``): one progress line
per stage on stderr, as an ingest here prints (a bar on a terminal), and each document's report on stdout when
it is done. Exit codes as in-process: 0 when every file was ingested, 1 when one was refused or failed (or the
server could not be reached), 2 for a wrong command line or an option the server refuses (422).

Nothing here imports the server's parts (torch, LanceDB, PyMuPDF, FastAPI).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from folio.api.cli.common import EXIT_FAILED, ProgressBar, Remote, UsageError, format_report, print_versions, say
from folio.client import Client
from folio.errors import APIError, ClientError, NotFound
from folio.kernel.errors import FolioError
from folio.kernel.printable import terminal_safe

if TYPE_CHECKING:
    from folio.client import JobEvent

BATCH_FILES = 20  # the server's limit (api.http.routes.batch.MAX_BATCH_FILES)
BATCH_BYTES = 64 * 1024 * 1024  # a request's files in all; one larger file goes alone
EVENTS_TIMEOUT_S = 3600.0  # the longest the server keeps one event stream open
QUIET_STAGES = ("queued", "starting", "done")  # a job's states around the pipeline's stages: no line of their own
LOCAL_ONLY = ("password", "no_ocr", "page_timeout", "ray")  # ``folio ingest`` options that run here only


class RemoteError(FolioError):
    """The server could not be reached, or refused (``main`` exits 1 with the message)."""

    code = "server_error"


@contextmanager
def _client(remote: Remote) -> Iterator[Client]:
    """A ``folio.Client`` on ``remote`` (its key, or none); its errors as the CLI's: a 422 is a ``UsageError``
    (exit 2), anything else a ``RemoteError`` (exit 1), each with the server's message."""
    try:
        with Client(remote.url, api_key=remote.api_key or "", timeout=120.0) as client:
            yield client
    except APIError as e:
        if e.status == 422:
            raise UsageError(f"{remote.url}: {e.message}") from None
        raise RemoteError(f"{remote.url}: {e.status} {e.message}") from None
    except ClientError as e:
        raise RemoteError(f"{remote.url}: no answer from the server ({e})") from None


def ingest_server(
    args: argparse.Namespace, remote_server: Callable[[argparse.Namespace], Remote | None]
) -> Remote | None:
    """The server ``folio ingest`` uploads to (``remote_server``), or None to ingest here: options that run only
    here (``LOCAL_ONLY``) ingest here, and with ``--server`` too are a ``UsageError``; so are options for this
    process with ``--ray``."""
    if args.ray and (args.redo_degraded or args.page_timeout is not None):
        raise UsageError("--redo-degraded and --page-timeout run here, not on Ray")
    here = [f"--{name.replace('_', '-')}" for name in LOCAL_ONLY if getattr(args, name, None) not in (None, False)]
    if here and args.server:
        raise UsageError(f"{', '.join(here)} run here, not on a server: leave out --server")
    return None if here else remote_server(args)


def batches(paths: Sequence[Path]) -> list[list[Path]]:
    """``paths`` in request-sized groups: at most ``BATCH_FILES`` files and ``BATCH_BYTES`` bytes each."""
    out: list[list[Path]] = []
    size = 0
    for p in paths:
        n = p.stat().st_size
        if not out or len(out[-1]) >= BATCH_FILES or size + n > BATCH_BYTES:
            out.append([])
            size = 0
        out[-1].append(p)
        size += n
    return out


def ingest(args: argparse.Namespace, remote: Remote, paths: Sequence[Path]) -> int:
    """``folio ingest`` on the server: the reports (``--json``: ``{data, count}``); 1 when any file failed."""
    reports: list[dict[str, Any]] = []
    with _client(remote) as client:
        for group in batches(paths) if not args.doc_id else [list(paths)]:
            jobs = _submit(client, args, group, reports)
            if jobs:
                _follow(client, args, jobs, reports)
    if args.json:
        print(terminal_safe(json.dumps({"data": reports, "count": len(reports)}, indent=2, ensure_ascii=False)))
    return EXIT_FAILED if any(r["status"] == "failed" for r in reports) else 0


def _failed(args: argparse.Namespace, reports: list[dict[str, Any]], filename: str, code: str, message: str) -> None:
    reports.append({"filename": filename, "status": "failed", "error": {"code": code, "message": message}})
    if not args.json:
        say(f"{filename}: failed: {message}")


def _submit(
    client: Client, args: argparse.Namespace, group: list[Path], reports: list[dict[str, Any]]
) -> dict[str, str]:
    """Upload ``group``: ``{job id: file name}`` of the accepted files; a refused one is reported failed."""
    if args.doc_id:  # one PDF under the id given: the single upload
        job = client.upload(
            group[0], doc_id=args.doc_id, collection=args.collection, metadata=args.metadata or None, wait=False
        )
        return {job.job_id: group[0].name}
    batch = client.upload_many(
        group, collection=args.collection, metadata=args.metadata or None, redo_degraded=args.redo_degraded
    )
    jobs: dict[str, str] = {}
    for item in batch.data:
        if item.job_id is not None:
            jobs[item.job_id] = item.filename
        else:
            error = item.error
            _failed(args, reports, item.filename, error.code if error else "refused", error.message if error else "")
    return jobs


def _follow(client: Client, args: argparse.Namespace, jobs: dict[str, str], reports: list[dict[str, Any]]) -> None:
    """The jobs' events until each has finished: a progress line per stage, each report when it is done."""
    bars = {
        job_id: ProgressBar(name, enabled=None if not args.json else False, lines=not args.json or args.verbose)
        for job_id, name in jobs.items()
    }
    unfinished = set(jobs)
    try:
        for event in client.job_events(list(jobs), timeout=EVENTS_TIMEOUT_S):
            _show(event, args, bars, reports)
            if event.event in ("done", "failed") and event.job is not None:
                unfinished.discard(event.job.job_id)
            elif event.event == "error":
                unfinished.discard(str(event.data.get("job_id")))
                _failed(args, reports, jobs.get(str(event.data.get("job_id")), "?"), "job_not_found",
                        str(event.data.get("error", {}).get("message", "")))
    finally:
        for bar in bars.values():
            bar.close()
    for job_id in sorted(unfinished, key=list(jobs).index):
        _failed(args, reports, jobs[job_id], "unfinished", f"still running on the server (job {job_id})")


def _show(
    event: JobEvent, args: argparse.Namespace, bars: dict[str, ProgressBar], reports: list[dict[str, Any]]
) -> None:
    job = event.job
    if job is None:
        return
    if event.event == "progress" and job.progress.stage not in QUIET_STAGES:
        bars[job.job_id](job.progress.stage, job.progress.done, job.progress.total)
    elif event.event == "failed":
        bars[job.job_id].close()
        err = job.error
        _failed(args, reports, job.filename or job.job_id, err.code if err else "failed", err.message if err else "")
    elif event.event == "done" and job.result is not None:
        bars[job.job_id].close()
        out = {**job.result.report, "status": job.result.status, "collection": job.result.collection}
        reports.append(out)
        if not args.json:
            print(terminal_safe(format_report(out)), flush=True)


def docs(args: argparse.Namespace, remote: Remote) -> int:
    """``folio docs`` on the server: every version of every document the key sees (or of one), newest first."""
    with _client(remote) as client:
        try:
            if args.doc_id:
                versions = [v.model_dump(mode="json") for v in client.get_document(args.doc_id).versions]
            else:
                versions = [v for d in client.list_documents().data for v in _versions(client, d)]
        except NotFound:
            say(f"folio: no such document: {args.doc_id}")
            return EXIT_FAILED
    print_versions(versions, as_json=args.json, empty=f"no documents on {remote.url}")
    return 0


def _versions(client: Client, document: Any) -> list[dict[str, Any]]:
    """A listed document's versions: the one listed, or (when it has more) every one, newest first."""
    if document.versions <= 1:
        return [document.model_dump(mode="json", exclude={"versions"})]
    return [v.model_dump(mode="json") for v in client.get_document(document.doc_id).versions]


def delete(args: argparse.Namespace, remote: Remote) -> int:
    """``folio delete`` on the server (a write key's), printing what the in-process command prints."""
    with _client(remote) as client:
        removed = client.delete(args.doc_id, args.version).deleted_versions
    if args.version:
        print(f"deleted {args.doc_id}@{args.version}")
    else:
        print(f"deleted {args.doc_id} ({len(removed)} version{'s' if len(removed) != 1 else ''})")
    return 0
