"""``folio serve | context | search | verify | demo``: the query side of the command line.

``folio context`` calls the service ``POST /v1/context`` calls (``api.application.Folio``), in-process, so
its ``--json`` output is the REST ContextPackage; ``folio search`` likewise prints ``POST /v1/search``'s
hits. With ``--server URL`` (or ``$FOLIO_URL`` and no ``--data``) both send the request to that running
server instead (``folio.Client``): no model loads in the command, and the answer is the server's.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from folio.api.cli_common import (
    EXIT_FAILED,
    EXIT_USAGE,
    ProgressBar,
    UsageError,
    add_data_arg,
    add_server_arg,
    choices,
    require_store,
    server_url,
    settings_for,
)
from folio.assembly.types import Strategy
from folio.kernel.errors import FolioError
from folio.kernel.hit import RetrievalStrategy
from folio.kernel.printable import terminal_safe

# Function-level imports: each command imports what it runs, so that `folio --help` and the light commands start
# without loading torch, LanceDB or PyMuPDF.
if TYPE_CHECKING:
    from folio.api.application import Folio
    from folio.api.settings import Settings

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent
DEMO_QUESTIONS = (
    "How do I read a CSV file into R?",
    "How fast must a priority-one incident be acknowledged?",
)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# ------------------------------------------------------------------------------------- serve
def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from folio.api.app import create_app
    from folio.api.http_protocol import header_deadline_protocol
    from folio.api.settings import default_concurrency

    settings = settings_for(args)
    host = args.host or settings.server.host
    port = args.port or settings.server.port
    processes = settings.server.query_processes
    if processes is None:  # the server's default: query Python on every core (README "Serving")
        processes = default_concurrency()
    settings = settings.model_copy(update={"host": host, "port": port, "query_processes": processes})
    if not is_loopback(host) and not settings.security.api_key and not settings.security.keys_file:
        print(
            f"folio: WARNING: listening on {host} without API keys: anyone who can reach this port can "
            "read and delete documents. Set FOLIO_KEYS_FILE (see `folio keys add`).",
            file=sys.stderr,
        )
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    print(
        f"folio: serving {settings.storage.data} at http://{shown}:{port}/ (viewer: http://{shown}:{port}/viewer)",
        file=sys.stderr,
    )
    # One access-log line per request (api.middleware), also without --verbose.
    logging.getLogger("folio.api.middleware").setLevel(logging.INFO)
    uvicorn.run(
        create_app(settings),
        # HTTP_IMPL (h11) with a deadline on request headers; the event loop stays "auto": uvloop (a
        # dependency) where it installs
        http=header_deadline_protocol(settings.server.header_timeout_s),
        host=host,
        port=port,
        log_level="warning" if not args.verbose else "info",
        access_log=False,  # api.middleware logs each request, with its id
        # Longer than clients keep idle connections (httpx: 5 s, uvicorn's default too): a server that
        # closes an idle connection just as the client reuses it resets that request.
        timeout_keep_alive=settings.server.keep_alive_s,
    )
    return 0


# ----------------------------------------------------------------------------------- context
def open_folio(settings: Settings) -> Folio:
    """The service on the local store (one that does not exist is ``NoStore``)."""
    from folio.api.application import Folio

    require_store(settings.storage.data)
    return Folio.open(settings)


def format_package(pkg: dict[str, Any], *, prompt: bool = True) -> str:
    """Human-readable package: budget, packed items with citation ids and pages, exclusions, prompt."""
    b = pkg["budget"]
    lines = [f"question: {pkg['query']}", f"budget:   {b['used']} / {b['limit']} tokens ({b['tokenizer']})"]
    if pkg.get("refused"):
        lines.append(f"refused:  {pkg.get('refusal_reason') or 'no usable evidence'}")
    for note in pkg["retrieval"].get("notes", []):
        lines.append(f"note:     {note}")
    lines.append(f"packed:   {len(pkg['items'])} items, {len(pkg['excluded'])} excluded")
    for it in pkg["items"]:
        pages = ",".join(str(p) for p in it["pages"])
        text = " ".join(it["text"].split())
        text = text[:150] + ("…" if len(text) > 150 else "")
        lines.append(
            f"  [{it['citation_id']}] {it['filename']} p.{pages} {it['modality']}/{it['expansion']} "
            f"{it['tokens']} tok  {it['region_id']}"
        )
        if text:
            lines.append(f"        {text}")
    reasons: dict[str, int] = {}
    for e in pkg["excluded"]:
        reasons[e["reason"]] = reasons.get(e["reason"], 0) + 1
    if reasons:
        lines.append("excluded: " + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items())))
    if prompt:
        lines.append("prompt:")
        for m in pkg["prompt"]["messages"]:
            content = m["content"]
            if isinstance(content, list):
                parts = [p.get("text", f"<{p.get('type')}>") for p in content]
                content = "\n".join(str(p) for p in parts)
            lines.append(f"--- {m['role']} ---")
            lines.append(str(content))
    return "\n".join(lines)


def cmd_context(args: argparse.Namespace) -> int:
    from folio.api.schemas import ContextRequest

    settings = settings_for(args)
    url = server_url(args)
    body: dict[str, Any] = {"query": args.question, "k": args.k}
    if args.budget is not None:
        body["budget"] = args.budget
    if args.doc:
        body["doc_ids"] = args.doc
    if args.strategy:
        body["strategy"] = args.strategy
    if args.retrieval:
        body["retrieval_strategy"] = args.retrieval
    if args.tokenizer:
        name = args.tokenizer
        if name.startswith("hf:") and url:
            raise UsageError("--tokenizer hf:<dir> is a local file: a server takes the names it has configured")
        if name.startswith("hf:"):  # the local user's own file: through the same named config as the server
            from folio.kernel.tokens import register_tokenizer

            name = "local"
            tokenizers = {**settings.context.tokenizers, name: args.tokenizer[3:]}
            settings = settings.model_copy(update={"tokenizers": tokenizers})
            try:
                register_tokenizer(name, args.tokenizer[3:])
            except ValueError as e:
                print(f"folio: --tokenizer: {e}", file=sys.stderr)
                return EXIT_USAGE
        body["tokenizer"] = name
        if not url:  # a FOLIO_TOKENIZERS name: usable here as on a server
            from folio.api.application import register_tokenizers

            register_tokenizers(settings)
    req = ContextRequest.model_validate(body)
    if url:
        pkg = remote(url, lambda client: client.context(**body))
    else:
        pkg = open_folio(settings).context(req).model_dump(mode="json")
    if args.json:
        print(terminal_safe(json.dumps(pkg, indent=2, ensure_ascii=False)))
    else:
        print(terminal_safe(format_package(pkg, prompt=not args.no_prompt)))
    return 0


def remote(url: str, call: Any) -> dict[str, Any]:
    """``call(client)`` with a ``folio.Client`` on ``url`` (key: ``$FOLIO_API_KEY``); its result's JSON
    form, as the REST API sent it. A client error becomes a ``FolioError`` (one line, exit 1)."""
    from folio import Client
    from folio.errors import ClientError

    try:
        with Client(url) as client:
            out: dict[str, Any] = call(client).model_dump(mode="json", by_alias=True)
    except ClientError as e:
        raise RemoteError(f"{url}: {e}") from e
    return out


class RemoteError(FolioError):
    code = "server_error"


# ------------------------------------------------------------------------------------ search
def cmd_search(args: argparse.Namespace) -> int:
    """Ranked hits (the ``POST /v1/search`` response), here or on a server."""
    from folio.api.schemas import SearchRequest

    body: dict[str, Any] = {"query": args.question, "k": args.k}
    if args.doc:
        body["doc_ids"] = args.doc
    if args.retrieval:
        body["strategy"] = args.retrieval
    req = SearchRequest.model_validate(body)
    url = server_url(args)
    if url:
        out = remote(url, lambda client: client.search(**body))
    else:
        out = open_folio(settings_for(args)).search(req).model_dump(mode="json")
    if args.json:
        print(terminal_safe(json.dumps(out, indent=2, ensure_ascii=False)))
        return 0
    for note in out.get("notes", []):
        print(f"note: {note}")
    for h in out["data"]:
        pages = ",".join(str(p) for p in h["pages"])
        text = " ".join((h.get("text") or "").split())
        where = f"{h['filename'] or h['doc_id']} p.{pages} {h['kind']}"
        print(terminal_safe(f"{h['rank']:>3}. {h['score']:.3f} {where}  {h['region_id']}"))
        if text:
            print(terminal_safe(f"     {text[:150]}{'…' if len(text) > 150 else ''}"))
    if not out["data"]:
        print("no hits")
    return 0


# ------------------------------------------------------------------------------------ verify
def cmd_verify(args: argparse.Namespace) -> int:
    from folio.assembly import verify_answer
    from folio.assembly.types import ContextPackage

    try:
        package = ContextPackage.model_validate_json(Path(args.package).read_text(encoding="utf-8"))
    except ValueError as e:
        print(f"folio: {args.package} is not a context package: {str(e).splitlines()[0]}", file=sys.stderr)
        return EXIT_USAGE
    answer = args.answer if args.answer is not None else Path(args.answer_file).read_text(encoding="utf-8")
    report = verify_answer(answer, package)
    if args.json:
        print(terminal_safe(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False)))
    else:
        print(f"ok: {report.ok}")
        print(f"kept ids:      {', '.join(report.kept_ids) or '-'}")
        print(f"invented ids:  {', '.join(report.invented_ids) or '-'}")
        if report.insufficient_evidence:
            print("the answer says the evidence is insufficient")
        for s in report.uncited_sentences:
            print(terminal_safe(f"uncited: {s}"))
    return 0 if report.ok else EXIT_FAILED


# -------------------------------------------------------------------------------------- demo
def cmd_demo(args: argparse.Namespace) -> int:
    from folio.api.application import Folio
    from folio.api.schemas import ContextRequest
    from folio.ingest.pipeline import doc_id_from_filename

    settings = settings_for(args)
    samples = Path(args.samples) if args.samples else ROOT / "sample_pdfs"
    pdfs = sorted(samples.glob("*.pdf"))
    if not pdfs:
        print(f"folio: no PDFs in {samples}", file=sys.stderr)
        return EXIT_USAGE
    folio = Folio.open(settings)
    print(f"data: {folio.store.uri}")
    for p in pdfs:
        bar = ProgressBar(p.name)
        # support-policy-v1.pdf and -v2.pdf are two versions of one document ("support-policy").
        doc_id = re.sub(r"-v\d+$", "", doc_id_from_filename(p.name))
        try:
            rep = folio.ingest_path(p, doc_id=doc_id, progress=bar)
        finally:
            bar.close()
        print(
            f"  {rep.status:9} {rep.doc_id}@{rep.version_id}  {rep.pages} pages, {rep.tables} tables, "
            f"{rep.figures} figures"
        )
    folio.refresh()
    versions = folio.store.list_versions("support-policy")
    if len(versions) > 1:
        print(
            "  support-policy has versions "
            + ", ".join(v.version_id + (" (latest, the default)" if v.latest else "") for v in versions)
        )
    for q in args.question or DEMO_QUESTIONS:
        req = ContextRequest.model_validate({"query": q, "budget": args.budget})
        pkg = folio.context(req).model_dump(mode="json")
        print()
        print(terminal_safe(format_package(pkg, prompt=False)))
    if args.serve:
        return cmd_serve(
            argparse.Namespace(data=settings.storage.data, host=args.host, port=args.port, verbose=args.verbose)
        )
    print(
        "\nnext: folio serve"
        + (f" --data {args.data}" if args.data else "")
        + "  → open http://127.0.0.1:8000/viewer"
    )
    return 0


def register(sub: Any) -> None:
    """Add ``serve``, ``context``, ``verify`` and ``demo`` to ``folio``'s subcommands."""
    p = sub.add_parser("serve", help="run the REST API and viewer (uvicorn)")
    p.add_argument("--host", default=None, help="default $FOLIO_HOST or 127.0.0.1")
    p.add_argument("--port", type=int, default=None, help="default $FOLIO_PORT or 8000")
    add_data_arg(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("context", help="retrieve and pack a cited context package for a question")
    p.add_argument("question")
    p.add_argument(
        "--budget",
        type=int,
        default=None,
        help="token limit of the whole prompt (default $FOLIO_DEFAULT_BUDGET)",
    )
    p.add_argument(
        "--doc", action="append", default=None, metavar="ID", help="restrict to a document (repeatable)"
    )
    p.add_argument("--strategy", default=None, choices=choices(Strategy), help="expansion (default auto)")
    p.add_argument(
        "--retrieval", default=None, choices=choices(RetrievalStrategy), help="retrieval strategy (default hybrid)"
    )
    p.add_argument(
        "--tokenizer", default=None, help="cl100k_base, o200k_base, a FOLIO_TOKENIZERS name or hf:<dir> (local)"
    )
    p.add_argument("-k", type=int, default=50, help="hits to retrieve before assembly")
    p.add_argument("--no-prompt", action="store_true", help="do not print the prompt messages")
    p.add_argument(
        "--json", action="store_true", help="print the ContextPackage as JSON (as POST /v1/context)"
    )
    add_data_arg(p)
    add_server_arg(p)
    p.set_defaults(func=cmd_context)

    p = sub.add_parser("search", help="ranked hits for a query (regions, pages, scores), before any packing")
    p.add_argument("question", metavar="QUERY")
    p.add_argument("-k", type=int, default=10, help="how many hits (default 10)")
    p.add_argument(
        "--doc", action="append", default=None, metavar="ID", help="restrict to a document (repeatable)"
    )
    p.add_argument(
        "--retrieval", default=None, choices=choices(RetrievalStrategy), help="retrieval strategy (default hybrid)"
    )
    p.add_argument("--json", action="store_true", help="print the hits as JSON (as POST /v1/search)")
    add_data_arg(p)
    add_server_arg(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("verify", help="check an answer's citations against a context package")
    p.add_argument(
        "--package", required=True, metavar="FILE", help="a ContextPackage JSON file (folio context --json)"
    )
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--answer", default=None, metavar="TEXT")
    g.add_argument("--answer-file", default=None, metavar="FILE")
    p.add_argument("--json", action="store_true")
    add_data_arg(p)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("demo", help="ingest sample_pdfs/, ask sample questions, print cited packages")
    p.add_argument(
        "--samples", default=None, metavar="DIR", help="PDF folder (default: the repo's sample_pdfs/)"
    )
    p.add_argument(
        "--question", action="append", default=None, help="ask this instead of the sample questions"
    )
    p.add_argument("--budget", type=int, default=800)
    p.add_argument("--serve", action="store_true", help="then start the server and print the viewer URL")
    p.add_argument("--host", default=None)
    p.add_argument("--port", type=int, default=None)
    add_data_arg(p)
    p.set_defaults(func=cmd_demo)
