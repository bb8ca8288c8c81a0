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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from folio.api.cli.common import (
    EXIT_FAILED,
    EXIT_REFUSED,
    EXIT_USAGE,
    ProgressBar,
    Remote,
    UsageError,
    add_command,
    add_data_arg,
    add_filter_args,
    add_json_arg,
    add_server_arg,
    remote_server,
    request_fields,
    say,
    settings_for,
)
from folio.kernel.errors import FolioError
from folio.kernel.printable import terminal_safe

# Function-level imports: each command imports what it runs, so that `folio --help` and the light commands start
# without loading torch, LanceDB or PyMuPDF.
if TYPE_CHECKING:
    from collections.abc import Callable

    from folio.api.application import Folio
    from folio.api.http.startup import Hooks, Startup
    from folio.settings import Settings

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
# The values of assembly's ``Strategy`` and the kernel's ``RetrievalStrategy``, for argparse's choices: importing
# those modules (pydantic models) would cost a command that asks a server a third of its time. The API checks
# the same values; tests/api/cli/test_cli_ux.py keeps these equal to the Literals.
STRATEGIES = ("auto", "raw", "window", "parent", "neighbors", "page")
RETRIEVAL_STRATEGIES = ("hybrid", "bm25", "dense", "summary")
REMOTE_TIMEOUT_S = 120.0  # folio.Client's: an ingest or a cold server may take that long (in all, not per read)
MAX_REMOTE_BYTES = 256 << 20  # a package at the largest budget is a few MB
CONTEXT_FIELDS = ("k", "budget", "doc_ids", "strategy", "retrieval_strategy", "tokenizer", "filter", "collection")
SEARCH_FIELDS = ("k", "doc_ids", "strategy", "filter", "collection")
"""The fields of ``ContextRequest`` and ``SearchRequest`` that ``folio context`` and ``folio search`` set
(``request_fields``: each flag's ``dest`` is its field; ``--retrieval`` is a search's ``strategy``); the
request model validates them in-process, the server when one is asked. tests/api/cli/test_cli_ux.py keeps
them fields of the models."""
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
    """Serve the API. The port opens at once (``/v1/health`` answers ``starting``); the store, the models and
    the query workers load behind it, and "ready" goes to stdout when a query will be fast (``api.http.startup``).
    A ready server announces itself in its data directory (``api.cli.discovery``), so that commands there ask it."""
    import uvicorn

    from folio.api.http.app import create_app
    from folio.api.http.protocol import header_deadline_protocol
    from folio.settings import default_concurrency

    settings = settings_for(args)
    host = args.host or settings.server.host
    port = args.port or settings.server.port
    processes = settings.server.query_processes
    if processes is None:  # the server's default: query Python on every core (README "Serving")
        processes = default_concurrency()
    settings = settings.model_copy(update={"host": host, "port": port, "query_processes": processes})
    if not is_loopback(host) and not settings.security.api_key and not settings.security.keys_file:
        say(
            f"folio: WARNING: listening on {host} without API keys: anyone who can reach this port can "
            "read and delete documents. Set FOLIO_KEYS_FILE (see `folio keys add`)."
        )
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{shown}:{port}"
    say(
        f"folio: starting on {url}/ with {settings.storage.data}: /v1/health answers now, /v1/ready once the "
        "models are loaded"
    )
    # One access-log line per request (api.http.middleware), also without --verbose.
    logging.getLogger("folio.api.http.middleware").setLevel(logging.INFO)
    lifecycle = _ServeLifecycle(settings.storage.data, url)
    config = uvicorn.Config(
        create_app(settings, lifecycle.hooks()),
        # HTTP_IMPL (h11) with a deadline on request headers; the event loop stays "auto": uvloop (a
        # dependency) where it installs
        http=header_deadline_protocol(settings.server.header_timeout_s),
        host=host,
        port=port,
        log_level="warning" if not args.verbose else "info",
        access_log=False,  # api.http.middleware logs each request, with its id
        # Longer than clients keep idle connections (httpx: 5 s, uvicorn's default too): a server that
        # closes an idle connection just as the client reuses it resets that request.
        timeout_keep_alive=settings.server.keep_alive_s,
    )
    server = uvicorn.Server(config)
    lifecycle.stop = lambda: setattr(server, "should_exit", True)
    server.run()
    if lifecycle.failed or not server.started:  # loading failed, or the port could not be opened
        return EXIT_FAILED
    return 0


class _ServeLifecycle:
    """What ``folio serve`` does around the app's start (``api.http.startup.Hooks``): the "ready" line on stdout
    and the server file when ready, stopping the server when loading failed, removing the file at the end."""

    def __init__(self, data: str, url: str) -> None:
        self.data, self.url = data, url
        self.failed = False
        self.stop: Callable[[], None] = lambda: None
        self._announced: tuple[Path, str] | None = None

    def hooks(self) -> Hooks:
        from folio.api.http.startup import Hooks

        return Hooks(background=True, on_ready=self.on_ready, on_failed=self.on_failed, on_stop=self.on_stop)

    def on_ready(self, startup: Startup) -> None:
        from folio.api.cli.discovery import announce

        path = announce(self.data, self.url, startup.instance, startup.secret)
        if path is not None:
            self._announced = (path, startup.instance)
        print(f"folio: ready at {self.url}/ after {startup.ready_after_s:.1f} s (viewer: {self.url}/viewer)",
              flush=True)

    def on_failed(self) -> None:
        self.failed = True
        self.stop()

    def on_stop(self) -> None:
        from folio.api.cli.discovery import withdraw

        if self._announced is not None:
            withdraw(*self._announced)


# ----------------------------------------------------------------------------------- context
def open_folio(settings: Settings) -> Folio:
    """The service on the local store (one that does not exist is ``NoStore``)."""
    from folio.api.application import Folio

    return Folio.open(settings, must_exist=True)


def format_package(pkg: dict[str, Any], *, prompt: bool = True, server: str = "") -> str:
    """Human-readable package: budget, packed items with citation ids, pages and viewer links (on ``server``'s
    viewer when the package came from one; else relative, for whichever ``folio serve`` holds the data),
    exclusions, prompt."""
    b = pkg["budget"]
    lines = [f"question: {pkg['query']}", f"budget:   {b['used']} / {b['limit']} tokens ({b['tokenizer']})"]
    if pkg.get("refused"):
        lines.append(f"refused:  {pkg.get('refusal_reason') or 'no usable evidence'}")
    for note in pkg["retrieval"].get("notes", []):
        lines.append(f"note:     {note}")
    items = sorted(pkg["items"], key=lambda it: _citation_number(it["citation_id"]))
    packed = f"packed:   {len(items)} items, {len(pkg['excluded'])} excluded"
    if items != pkg["items"]:  # the prompt's order (strongest first and last) is not the ids' order
        packed += f" (in the prompt: {', '.join(it['citation_id'] for it in pkg['items'])})"
    lines.append(packed)
    for it in items:
        lines.extend(_item_lines(it, server))
    if pkg["excluded"]:
        lines.append("excluded: " + exclusion_summary(pkg["excluded"], {it["citation_id"] for it in items}))
    if prompt and not pkg["prompt"]["messages"]:
        lines.append("prompt:   none (nothing is sent when nothing is packed)")
    elif prompt:
        lines.append("prompt:")
        for m in pkg["prompt"]["messages"]:
            content = m["content"]
            if isinstance(content, list):
                parts = [p.get("text", f"<{p.get('type')}>") for p in content]
                content = "\n".join(str(p) for p in parts)
            lines.append(f"--- {m['role']} ---")
            lines.append(str(content))
    return "\n".join(lines)


def _item_lines(it: dict[str, Any], server: str) -> list[str]:
    """One packed item: its id, file, pages, form, cost and region; the start of its text; its viewer link."""
    pages = ",".join(str(p) for p in it["pages"])
    text = " ".join(it["text"].split())
    text = text[:150] + ("…" if len(text) > 150 else "")
    out = [
        f"  [{it['citation_id']}] {it['filename']} p.{pages} {it['modality']}/{it['expansion']} "
        f"{it['tokens']} tok  {it['region_id']}"
    ]
    if text:
        out.append(f"        {text}")
    if it.get("viewer_url"):
        out.append(f"        viewer: {server}{it['viewer_url']}")
    return out


def _citation_number(cid: str) -> tuple[str, int]:
    """``P12`` as ``("P", 12)``: ids sort by kind, then numerically (P2 before P12)."""
    head = cid.rstrip("0123456789")
    return head, int(cid[len(head) :] or 0)


def exclusion_summary(excluded: list[dict[str, Any]], packed: set[str]) -> str:
    """Why hits were left out, counted by reason. A hit merged into a candidate that was packed says which item
    carries it (``merged_into:P1``); one merged into a candidate that was itself left out names no id, since
    that id is nowhere in the package.

    >>> exclusion_summary([{"reason": "merged_into:P1"}, {"reason": "merged_into:P12"},
    ...                    {"reason": "weak_document"}, {"reason": "merged_into:P1"}], {"P1"})
    '2 merged_into:P1, 1 merged into a candidate not packed, 1 weak_document'
    """
    reasons: dict[str, int] = {}
    for e in excluded:
        reason = e["reason"]
        if reason.startswith("merged_into:") and reason.split(":", 1)[1] not in packed:
            reason = "merged into a candidate not packed"
        reasons[reason] = reasons.get(reason, 0) + 1
    carried = sorted((r for r in reasons if r.startswith("merged_into:")), key=lambda r: _citation_number(r[12:]))
    rest = sorted(r for r in reasons if not r.startswith("merged_into:"))
    return ", ".join(f"{reasons[r]} {r}" for r in carried + rest)


def cmd_context(args: argparse.Namespace) -> int:
    """The package, from a server (``remote_server``: then no settings, store or model loads here) or in-process.
    A refused package (nothing packed) is printed too, and exits ``EXIT_REFUSED`` with its reason on stderr."""
    remote = remote_server(args)
    body: dict[str, Any] = {"query": args.question, **request_fields(args, CONTEXT_FIELDS)}
    if args.tokenizer and args.tokenizer.startswith("hf:") and remote:
        raise UsageError("--tokenizer hf:<dir> is a local file: a server takes the names it has configured "
                         "(--no-server runs here)")
    if remote:  # the server validates the request (a bad option is its 422: exit 2)
        pkg = post_json(remote, "/v1/context", body)
    else:
        from folio.api.schemas import ContextRequest

        settings = settings_for(args)
        if args.tokenizer:
            with_tokenizer = _local_tokenizer(settings, body)
            if with_tokenizer is None:
                return EXIT_USAGE
            settings = with_tokenizer
        req = ContextRequest.model_validate(body)  # a bad option is a usage error before the store opens
        pkg = open_folio(settings).context(req).model_dump(mode="json")
    if args.json:
        print(terminal_safe(json.dumps(pkg, indent=2, ensure_ascii=False)))
    else:
        server = remote.url.rstrip("/") if remote else ""
        print(terminal_safe(format_package(pkg, prompt=not args.no_prompt, server=server)))
    if pkg.get("refused"):  # printed all the same (its manifest says what was found); the exit code says so
        say(f"folio: refused: {pkg.get('refusal_reason') or 'no usable evidence'}")
        return EXIT_REFUSED
    return 0


def _local_tokenizer(settings: Settings, body: dict[str, Any]) -> Settings | None:
    """``--tokenizer`` in-process: a ``FOLIO_TOKENIZERS`` name, usable here as on a server, or ``hf:<dir>``, the
    local user's own file, through the same named config as the server (``body`` then names it ``local``). The
    settings that know it; None after an unusable file (said on stderr)."""
    from folio.api.application import register_tokenizers

    name: str = body["tokenizer"]
    if name.startswith("hf:"):
        from folio.kernel.tokens import register_tokenizer

        body["tokenizer"] = "local"
        tokenizers = {**settings.context.tokenizers, "local": name[3:]}
        settings = settings.model_copy(update={"tokenizers": tokenizers})
        try:
            register_tokenizer("local", name[3:])
        except ValueError as e:
            say(f"folio: --tokenizer: {e}")
            return None
    register_tokenizers(settings)
    return settings


def post_json(remote: Remote, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST ``body`` to the folio server ``remote`` (with the key it may be sent); its JSON answer, within
    ``REMOTE_TIMEOUT_S`` in all (a server that drips its answer is given up on). A 422 (an option out of bounds)
    is a ``UsageError`` (exit 2), any other error or no answer a ``RemoteError`` (exit 1), each with the server's
    message. The standard library's HTTP client, not ``folio.Client``: with httpx and the client's models,
    asking took three times as long as the server took to answer."""
    out: dict[str, Any] = ask_server(remote, path, json.loads, body)
    return out


def ask_server(remote: Remote, path: str, read: Callable[[bytes], Any], body: dict[str, Any] | None = None) -> Any:
    """``read`` of the answer of the folio server ``remote`` to a GET of ``path`` (a POST of ``body`` when given),
    with ``post_json``'s deadline and errors (a ``ValueError`` of ``read`` is "no answer" too)."""
    import urllib.error
    import urllib.request

    from folio.api.cli.discovery import deadline

    url, key = remote.url, remote.api_key
    data = json.dumps(body).encode() if body is not None else None
    headers = {**({"Content-Type": "application/json"} if data else {}), **({"X-API-Key": key} if key else {})}
    request = urllib.request.Request(f"{url.rstrip('/')}{path}", data=data, headers=headers,
                                     method="POST" if body is not None else "GET")
    try:
        with deadline(REMOTE_TIMEOUT_S), urllib.request.urlopen(request, timeout=REMOTE_TIMEOUT_S) as response:
            return read(response.read(MAX_REMOTE_BYTES))
    except urllib.error.HTTPError as e:
        message = _error_message(e)
        if e.code == 422:
            raise UsageError(f"{url}: {message}") from None
        raise RemoteError(f"{url}: {e.code} {message}") from None
    except (OSError, ValueError) as e:  # refused, timed out, or not what the server sends
        reason = getattr(e, "reason", None) or e
        raise RemoteError(f"{url}: no answer from the server ({reason})") from None


def _error_message(e: Any) -> str:
    """The ``message`` of folio's error shape in an HTTP error's body, else its status line."""
    try:
        found = json.loads(e.read())
        return str(found["error"]["message"])
    except (OSError, ValueError, KeyError, TypeError):
        return str(e.reason)


class RemoteError(FolioError):
    code = "server_error"


# ------------------------------------------------------------------------------------ search
def cmd_search(args: argparse.Namespace) -> int:
    """Ranked hits (the ``POST /v1/search`` response), here or on a server."""
    body: dict[str, Any] = {"query": args.question, **request_fields(args, SEARCH_FIELDS)}
    remote = remote_server(args)
    if remote:
        out = post_json(remote, "/v1/search", body)
    else:
        from folio.api.schemas import SearchRequest

        out = open_folio(settings_for(args)).search(SearchRequest.model_validate(body)).model_dump(mode="json")
    if args.json:
        print(terminal_safe(json.dumps(out, indent=2, ensure_ascii=False)))
        return 0
    for note in out.get("notes", []):
        print(terminal_safe(f"note: {note}"))  # the server's words
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
    from folio.assembly.package import ContextPackage

    try:
        package = ContextPackage.model_validate_json(Path(args.package).read_text(encoding="utf-8"))
    except ValueError as e:
        say(f"folio: {args.package} is not a context package: {str(e).splitlines()[0]}")
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
        say(f"folio: no PDFs in {samples}")
        return EXIT_USAGE
    folio = Folio.open(settings)
    print(f"data: {folio.uri}")
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
    versions = folio.versions("support-policy")
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


def add_host_port_args(p: argparse.ArgumentParser, when: str = "") -> None:
    p.add_argument("--host", default=None, help=f"address to listen on{when} (default $FOLIO_HOST or 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help=f"port{when} (default $FOLIO_PORT or 8000)")


def register(sub: Any) -> None:
    """Add ``serve``, ``context``, ``search``, ``verify`` and ``demo`` to ``folio``'s subcommands."""
    p = add_command(
        sub, "context", "retrieve and pack a cited context package for a question",
        "Retrieve evidence for a question and pack it under a token budget: cited items (P pages, S text, "
        "T tables, F figures), what was left out and why, and the prompt messages. Asks a running server when "
        "one serves the data directory (or --server), else runs here.",
        'folio context "How fast must a P1 incident be acknowledged?" --data ./folio-data',
        'folio context "What changed in v2?" --doc support-policy --budget 600 --json > pkg.json',
    )
    p.add_argument("question", help="the question, in quotes")
    p.add_argument(
        "--budget",
        type=int,
        default=None,
        help="token limit of the whole prompt (default $FOLIO_DEFAULT_BUDGET)",
    )
    p.add_argument(
        "--doc", action="append", default=None, dest="doc_ids", metavar="ID",
        help="restrict to a document (repeatable)",
    )
    p.add_argument("--strategy", default=None, choices=STRATEGIES, help="expansion (default auto)")
    p.add_argument(
        "--retrieval", default=None, dest="retrieval_strategy", choices=RETRIEVAL_STRATEGIES,
        help="retrieval strategy (default hybrid)",
    )
    p.add_argument(
        "--tokenizer", default=None, help="cl100k_base, o200k_base, a FOLIO_TOKENIZERS name or hf:<dir> (local)"
    )
    p.add_argument("-k", type=int, default=50, help="hits to retrieve before assembly")
    p.add_argument("--no-prompt", action="store_true", help="do not print the prompt messages")
    add_filter_args(p)
    add_json_arg(p, "the ContextPackage (as POST /v1/context)")
    add_data_arg(p)
    add_server_arg(p)
    p.set_defaults(func=cmd_context)

    p = add_command(
        sub, "search", "ranked hits for a query (regions, pages, scores), before any packing",
        "Rank regions for a query (every retriever that found each hit, its rank and score) without expanding "
        "or packing them: what context would start from.",
        'folio search "escalation path" -k 5 --data ./folio-data',
    )
    p.add_argument("question", metavar="QUERY", help="the query, in quotes")
    p.add_argument("-k", type=int, default=10, help="how many hits (default 10)")
    p.add_argument(
        "--doc", action="append", default=None, dest="doc_ids", metavar="ID",
        help="restrict to a document (repeatable)",
    )
    p.add_argument(
        "--retrieval", default=None, dest="strategy", choices=RETRIEVAL_STRATEGIES,
        help="retrieval strategy (default hybrid)",
    )
    add_filter_args(p)
    add_json_arg(p, "the hits (as POST /v1/search)")
    add_data_arg(p)
    add_server_arg(p)
    p.set_defaults(func=cmd_search)

    p = add_command(
        sub, "verify", "check an answer's citations against a context package",
        "Check an answer's citations against the package it was written from: ids that were packed are kept, "
        "invented ids and sentences without a citation are reported. Exit 1 when the answer does not pass.",
        'folio verify --package pkg.json --answer "Within 30 minutes [P1]."',
        "folio verify --package pkg.json --answer-file answer.txt --json",
    )
    p.add_argument(
        "--package", required=True, metavar="FILE", help="a ContextPackage JSON file (folio context --json)"
    )
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--answer", default=None, metavar="TEXT", help="the answer to check, in quotes")
    g.add_argument("--answer-file", default=None, metavar="FILE", help="a file holding the answer")
    add_json_arg(p, "the check")
    add_data_arg(p)
    p.set_defaults(func=cmd_verify)
    _register_serve_and_demo(sub)


def _register_serve_and_demo(sub: Any) -> None:
    p = add_command(
        sub, "serve", "run the REST API, the viewer and /mcp (uvicorn)",
        "Serve the data directory over HTTP. /v1/health answers at once (state: starting); \"folio: ready at URL\" "
        "goes to stdout and /v1/ready turns 200 once the models are loaded and a query is fast. While it runs, "
        "folio context, search and ask on the same data directory ask it instead of loading the store "
        "themselves.",
        "folio serve --data ./folio-data                 # http://127.0.0.1:8000/viewer",
        "FOLIO_KEYS_FILE=keys.json folio serve --host 0.0.0.0 --port 8080",
    )
    add_host_port_args(p)
    add_data_arg(p)
    p.set_defaults(func=cmd_serve)

    p = add_command(
        sub, "demo", "ingest sample_pdfs/, ask sample questions, print cited packages",
        "Ingest the repository's sample PDFs (the support policy in two versions, a Federal Register rule, the R "
        "data manual, a scanned brochure) and print the packages of two sample questions.",
        "folio demo --data ./folio-data",
        'folio demo --question "Who approves exceptions?" --serve',
    )
    p.add_argument(
        "--samples", default=None, metavar="DIR", help="PDF folder (default: the repo's sample_pdfs/)"
    )
    p.add_argument(
        "--question", action="append", default=None, help="ask this instead of the sample questions"
    )
    p.add_argument("--budget", type=int, default=800, help="token limit of each package (default 800)")
    p.add_argument("--serve", action="store_true", help="then start the server and print the viewer URL")
    add_host_port_args(p, " (with --serve)")
    add_data_arg(p)
    p.set_defaults(func=cmd_demo)
