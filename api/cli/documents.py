"""``folio ingest | docs | export | delete | compact | check``: the commands that put documents into a store, list,
export, delete and maintain them. Each opens the service (``api.application.Folio``) on the data directory and
calls it; none opens the store itself. ``export`` asks a running server instead, as ``folio context`` does
(``common.remote_server``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from folio.api.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    ProgressBar,
    Remote,
    UsageError,
    add_command,
    add_data_arg,
    add_json_arg,
    add_server_arg,
    format_report,
    open_folio,
    print_versions,
    remote_server,
    say,
    settings_for,
)
from folio.kernel.errors import FolioError, InvalidRequest
from folio.kernel.printable import terminal_safe

# Function-level imports: each command imports what it runs, so that `folio --help` and the light commands start
# without loading torch, LanceDB or PyMuPDF.
if TYPE_CHECKING:
    from folio.ingest.options import IngestOptions
    from folio.settings import Settings


def cmd_ingest(args: argparse.Namespace) -> int:
    from folio.api.cli import remote_docs

    remote = remote_docs.ingest_server(args, remote_server)
    # On a server, two files of one doc id in a batch are the server's to refuse (this check needs the parser).
    paths = pdf_paths(args.paths, check_ids=remote is None)
    if args.doc_id and len(paths) != 1:
        say("folio: --doc-id needs exactly one PDF")
        return EXIT_USAGE
    args.metadata = ingest_metadata(args.meta, args.meta_json)
    if remote:  # uploaded to that server, which ingests them: a client-only install ingests so
        return remote_docs.ingest(args, remote, paths)
    from folio.api.application import Folio

    settings = settings_for(args)
    folio = Folio.open(settings)  # a new data directory becomes a store
    options = _ingest_options(args, settings)
    if args.ray:  # one Ray task per document (api/cli/ray_ingest.py)
        from folio.api.cli.ray_ingest import run as ingest_on_ray

        return ingest_on_ray(args, paths, settings, folio)
    from folio.ingest.embed import default_text_encoder  # FOLIO_EMBED_DEVICE=cuda without a GPU: one line, now

    default_text_encoder(settings.embedding)
    reports: list[dict[str, Any]] = []
    failures = 0
    for p in paths:
        bar = ProgressBar(
            p.name, enabled=None if not args.json else False, lines=not args.json or args.verbose, every=args.verbose
        )
        try:
            rep = folio.ingest_path(
                p,
                doc_id=args.doc_id,
                password=args.password,
                progress=bar,
                collection=args.collection,
                options=options,
                metadata=args.metadata,
            )
            out = {**rep.model_dump(mode="json"), "collection": args.collection}
        except FolioError as e:
            failures += 1
            out = {"filename": p.name, "status": "failed", "error": {"code": e.code, "message": str(e)}}
        finally:
            bar.close()
        reports.append(out)
        if not args.json:
            if out["status"] == "failed":
                say(f"{p.name}: failed: {out['error']['message']}")
            else:
                print(terminal_safe(format_report(out)), flush=True)  # each document's report when it is done
    if any(r["status"] != "unchanged" for r in reports):
        folio.maintain()  # compact what this run wrote (and older churn), keeping recent versions
    if args.json:
        print(terminal_safe(json.dumps({"data": reports, "count": len(reports)}, indent=2, ensure_ascii=False)))
    return EXIT_FAILED if failures else 0


_NUMBER = re.compile(r"\A-?\d+(\.\d+)?([eE][-+]?\d+)?\Z")


def meta_value(text: str) -> int | float | str:
    """A ``--meta key=value`` value, typed: an integer or a float when it reads as one, else the string (a
    ``YYYY-MM-DD`` string is a date wherever metadata is read: ``folio.kernel.metadata``).

    >>> meta_value("2021"), meta_value("3.5"), meta_value("2021-03-01"), meta_value("nan")
    (2021, 3.5, '2021-03-01', 'nan')
    """
    if _NUMBER.match(text):
        return float(text) if any(c in text for c in ".eE") else int(text)
    return text


def ingest_metadata(pairs: Sequence[str] | None, as_json: str | None) -> dict[str, Any]:
    """The metadata of ``--meta-json`` with each ``--meta key=value`` on top, checked now (a ``UsageError``,
    exit 2, before anything is ingested)."""
    from folio.kernel.metadata import check_metadata, parse_metadata_json

    try:
        meta: dict[str, Any] = dict(parse_metadata_json(as_json))
        for pair in pairs or ():
            key, sep, value = pair.partition("=")
            if not sep:
                raise UsageError(f"--meta takes key=value, got {pair!r}")
            meta[key.strip()] = meta_value(value)
        return check_metadata(meta)
    except InvalidRequest as e:
        raise UsageError(f"bad metadata: {e}") from e


def _ingest_options(args: argparse.Namespace, settings: Settings) -> IngestOptions:
    """The settings' ingest options with the command's flags: ``--redo-degraded``, ``--no-ocr`` and
    ``--page-timeout`` (0: no limit)."""
    from folio.ingest.options import IngestOptions

    options = IngestOptions.from_settings(settings.ingest, redo_degraded=args.redo_degraded)
    if args.no_ocr:
        options = replace(options, ocr=False)
    if args.page_timeout is not None:
        page_timeout_s = args.page_timeout if args.page_timeout > 0 else None
        options = replace(options, limits=replace(options.limits, page_timeout_s=page_timeout_s))
    return options


def pdf_paths(raw_paths: Sequence[str], *, check_ids: bool = True) -> list[Path]:
    """The PDFs named on the command line: files as given, folders searched recursively for ``*.pdf``
    (sorted). A missing path, a folder without PDFs, or (``check_ids``) two PDFs in one folder tree that would get
    the same document id (``a/report.pdf`` and ``b/report.pdf``: the second would become a new version of
    the first) is a ``UsageError``."""
    paths: list[Path] = []
    for raw in raw_paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(q for q in p.rglob("*") if q.suffix.lower() == ".pdf" and q.is_file())
            if not found:
                raise UsageError(f"no PDF files in {raw} (searched its subfolders too)")
            if check_ids:
                _one_file_per_doc_id(found)
            paths.extend(found)
        elif p.exists():
            paths.append(p)
        else:
            raise UsageError(f"no such file: {raw}")
    return paths


def _one_file_per_doc_id(found: list[Path]) -> None:
    from folio.ingest.pipeline import doc_id_from_filename

    by_id: dict[str, Path] = {}
    for p in found:
        doc_id = doc_id_from_filename(p.name)
        seen = by_id.setdefault(doc_id, p)
        if seen != p:
            raise UsageError(f"{seen} and {p} would both be document {doc_id!r}: ingest them one by one with --doc-id")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def cmd_compact(args: argparse.Namespace) -> int:
    from datetime import timedelta

    result = open_folio(args).compact(timedelta(seconds=args.older_than), reindex=args.reindex)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    before, after = result["before"], result["after"]
    for name in sorted(set(before) | set(after)):
        print(f"{name:12} {_mb(before.get(name, 0)):>10} -> {_mb(after.get(name, 0)):>10}")
    if args.reindex:
        print(f"rebuilt {len(result['reindexed'])} indexes: {', '.join(result['reindexed']) or 'none'}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    folio = open_folio(args)
    result = folio.check(repair=args.repair)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0 if result["ok"] else EXIT_FAILED
    v = result["versions"]
    print(f"{folio.uri}: {v['ready']} ready versions, {v['writing']} being written, {v['pending']} pending")
    for name, n in result["rows"].items():
        print(f"  {name:12} {n:>9} rows")
    for name, n in result["sizes"].items():
        print(f"  {name:12} {_mb(n):>13}")
    for item in result["finished"]:
        print(f"finished: {item} (a re-parse whose writer died before removing the rows it replaced)")
    for item in result["repaired"]:
        print(f"repaired: {item}")
    for p in result["problems"]:
        print("problem: " + ", ".join(f"{k}={val}" for k, val in p.items()))
    if result["ok"]:
        print("ok")
    elif not args.repair:
        say("run `folio check --repair` to remove what dead writers left behind")
    return 0 if result["ok"] else EXIT_FAILED


def cmd_docs(args: argparse.Namespace) -> int:
    remote = remote_server(args)
    if remote:
        from folio.api.cli import remote_docs

        return remote_docs.docs(args, remote)
    folio = open_folio(args)
    versions = folio.versions(args.doc_id)
    if args.doc_id and not versions:
        say(f"folio: no such document: {args.doc_id}")
        return EXIT_FAILED
    meta = folio.versions_metadata(versions)
    rows = [{**v.model_dump(mode="json"), "metadata": meta.get((v.doc_id, v.version_id), {})} for v in versions]
    print_versions(rows, as_json=args.json, empty=f"no documents in {folio.uri}")
    return 0


EXPORT_FORMATS = ("markdown", "json")
"""``api.service.export.EXPORT_FORMATS``, for argparse's choices without importing the service (pydantic)."""


def cmd_export(args: argparse.Namespace) -> int:
    """A document version as Markdown or JSON (``GET /v1/documents/{doc_id}/export``), from a server
    (``remote_server``) or in-process, to ``--out`` (default ``-``: stdout)."""
    remote = remote_server(args)
    if remote:
        text = _remote_export(remote, args.doc_id, args.format, args.version)
    else:
        out = open_folio(args).export(args.doc_id, args.format, args.version)
        text = out if isinstance(out, str) else json.dumps(out.model_dump(mode="json"), indent=2, ensure_ascii=False)
    if args.format == "json":
        text = text.rstrip("\n") + "\n"
    if args.out in (None, "-"):
        sys.stdout.write(terminal_safe(text) if sys.stdout.isatty() else text)
        sys.stdout.flush()
        return 0
    Path(args.out).write_text(text, encoding="utf-8")
    say(f"folio: wrote {args.format} of {args.doc_id} to {args.out} ({len(text.encode())} bytes)")
    return 0


def _remote_export(remote: Remote, doc_id: str, fmt: str, version_id: str | None) -> str:
    """The server's export (Markdown, or its JSON indented as in-process): its errors as ``post_json``'s are
    (a 422: ``UsageError``; anything else: ``RemoteError`` with the server's message)."""
    import urllib.parse

    from folio.api.cli.query import ask_server

    def read(raw: bytes) -> str:
        text = raw.decode("utf-8")
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False) if fmt == "json" else text

    query = urllib.parse.urlencode({"format": fmt, **({"version_id": version_id} if version_id else {})})
    path = f"/v1/documents/{urllib.parse.quote(doc_id, safe='@:')}/export?{query}"
    out: str = ask_server(remote, path, read)
    return out


def cmd_delete(args: argparse.Namespace) -> int:
    remote = remote_server(args)
    if remote:
        from folio.api.cli import remote_docs

        return remote_docs.delete(args, remote)
    folio = open_folio(args)
    if args.version:
        folio.delete_version(args.doc_id, args.version)
        print(f"deleted {args.doc_id}@{args.version}")
    else:
        removed = folio.delete_document(args.doc_id).deleted_versions
        print(f"deleted {args.doc_id} ({len(removed)} version{'s' if len(removed) != 1 else ''})")
    return 0


def register(sub: Any) -> None:
    """``ingest`` and the commands on a store's documents and files."""
    _register_ingest(sub)
    _register_documents(sub)


def _register_ingest(sub: Any) -> None:
    p = add_command(
        sub, "ingest", "ingest PDF files, or folders of PDFs (subfolders included)",
        "Parse PDFs into regions (sections, paragraphs, sentences, tables, figures, pages), index them and store "
        "them as a new version of their document (the same bytes again: unchanged). The document id comes from "
        "the file name unless --doc-id says otherwise. Prints one report per file; exit 1 if any failed. With "
        "--server URL (or $FOLIO_URL, or a `folio serve` on the data directory) the files are uploaded to that "
        "server, which ingests them (a client-only install can do this).",
        "folio ingest report.pdf --data ./folio-data",
        "folio ingest a.pdf b.pdf --server http://127.0.0.1:8000",
        "folio ingest ./pdfs --collection finance          # every PDF under ./pdfs",
        "folio ingest --redo-degraded --page-timeout 300 report.pdf",
        "folio ingest acme-10k.pdf --meta company=Acme --meta year=2021 --meta filed=2021-03-01",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="a PDF file, or a folder searched for *.pdf")
    p.add_argument("--doc-id", default=None, help="document id (default: from the file name)")
    p.add_argument(
        "--collection",
        default="default",
        help="collection to put the documents in (default: default); API keys are scoped to collections",
    )
    p.add_argument("--password", default=None, help="password for an encrypted PDF")
    p.add_argument(
        "--meta", action="append", metavar="KEY=VALUE",
        help="metadata of the new version (repeatable): integers and floats as numbers, YYYY-MM-DD as a date, "
        "else a string; filter on it with --filter (docs/api.md, Metadata)",
    )
    p.add_argument("--meta-json", metavar="JSON", default=None, help="metadata as a JSON object ({\"year\": 2021})")
    p.add_argument("--no-ocr", action="store_true", help="do not OCR scanned pages")
    p.add_argument(
        "--ray", metavar="ADDRESS", default=None, help="ingest on this Ray cluster, one task per document"
    )
    p.add_argument(
        "--redo-degraded",
        action="store_true",
        help="parse a stored version with degraded pages (past the page time limit) again, and replace it "
        "when fewer pages come out degraded; give it more time with --page-timeout",
    )
    p.add_argument(
        "--page-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="a page's time limit for its tables, figures and OCR (default: FOLIO_PAGE_TIMEOUT_S or 60; 0: none)",
    )
    add_json_arg(p, "the reports")
    add_server_arg(p)
    add_data_arg(p)
    p.set_defaults(func=cmd_ingest)


def _register_documents(sub: Any) -> None:
    """``docs``, ``delete``, ``compact`` and ``check``: the commands on a store's documents and files."""
    p = add_command(
        sub, "docs", "list documents and their versions",
        "List every document's versions (the latest, which queries use by default, is marked *), or one "
        "document's. Asks a running server when one serves the data directory (or --server).",
        "folio docs --data ./folio-data",
        "folio docs support-policy --json",
    )
    p.add_argument("doc_id", nargs="?", default=None, help="only this document's versions")
    add_json_arg(p, "the versions")
    add_server_arg(p)
    add_data_arg(p)
    p.set_defaults(func=cmd_docs)

    p = add_command(
        sub, "export", "a document as Markdown or JSON (its regions with their locators)",
        "Write a document version (default: the latest) out in reading order: as Markdown (headings, paragraphs, "
        "tables, figure captions with their image links, a <!-- page N --> marker per page; running headers and "
        "footers left out) or as JSON (the version's facts and its regions with page, bbox, kind, text and "
        "heading path). Asks a running server when one serves the data directory (or --server), else runs here.",
        "folio export support-policy --out support-policy.md",
        "folio export support-policy --format json --version 96135b4e2c35d62a --out -",
    )
    p.add_argument("doc_id", help="the document (folio docs lists them)")
    p.add_argument("--format", choices=EXPORT_FORMATS, default="markdown", help="markdown (default) or json")
    p.add_argument("--version", default=None, metavar="VERSION_ID", help="this version (default: the latest)")
    p.add_argument("--out", default="-", metavar="FILE", help="write to FILE (default -: stdout)")
    add_server_arg(p)
    add_data_arg(p)
    p.set_defaults(func=cmd_export)

    p = add_command(
        sub, "delete", "delete a document, or one version of it",
        "Delete a document with all its versions, or with --version one version (the previous one becomes the "
        "latest). Citations of what was deleted no longer resolve. Asks a running server when one serves the data "
        "directory (or --server; deleting there needs a key with write access).",
        "folio delete support-policy",
        "folio delete support-policy --version 96135b4e2c35d62a",
    )
    p.add_argument("doc_id", help="the document (folio docs lists them)")
    p.add_argument("--version", default=None, metavar="VERSION_ID", help="delete only this version")
    add_server_arg(p)
    add_data_arg(p)
    p.set_defaults(func=cmd_delete)

    p = add_command(
        sub, "compact", "compact the store and remove old LanceDB versions; sizes before/after",
        "Merge the store's small files, fold the rows committed since into the indexes, and remove LanceDB "
        "table versions older than --older-than seconds; prints each table's size before and after. "
        "--reindex builds every index of the chunks again whole first (docs/scaling.md).",
        "folio compact --data ./folio-data",
        "folio compact --reindex                      # full-text, BTREE and ANN indexes rebuilt",
        "folio compact --older-than 0 --json          # only when nothing else uses the store",
    )
    p.add_argument(
        "--older-than",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="keep table versions younger than this (default 120; 0 only when nothing else uses the store)",
    )
    p.add_argument("--reindex", action="store_true", help="rebuild the chunks' indexes whole (docs/scaling.md)")
    add_json_arg(p, "the sizes")
    add_data_arg(p)
    p.set_defaults(func=cmd_compact)

    p = add_command(
        sub, "check", "verify the store: complete versions, no orphan rows or assets; sizes",
        "Check that every version is complete and nothing is left of writers that died (rows, assets, claims); "
        "prints counts and sizes. Exit 1 when there is a problem.",
        "folio check --data ./folio-data",
        "folio check --repair",
    )
    p.add_argument("--repair", action="store_true", help="remove what dead writers left behind first")
    add_json_arg(p, "the result")
    add_data_arg(p)
    p.set_defaults(func=cmd_check)
