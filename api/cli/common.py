"""What every ``folio`` subcommand module shares: exit codes, ``--data``, settings, opening the service,
the progress bar, and turning the errors a command may raise into one line on stderr (``say``: every line the CLI
writes to stderr, escaped for the terminal).

``api.cli`` (the entry point and the document commands) and the subcommand modules
(``cli_query``, ``cli_keys``, ``cli_mcp``) import from here, never from each other.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, get_args

from folio.kernel.errors import FolioError
from folio.kernel.printable import terminal_safe
from folio.settings_light import client_api_key, client_url, data_dir

# Function-level imports: each command imports what it runs, so that `folio --help` and the light commands start
# without loading torch, LanceDB or PyMuPDF, and a command that asks a server loads no more than it needs to.
if TYPE_CHECKING:
    from pydantic import ValidationError

    from folio.api.application import Folio
    from folio.settings import Settings

EXIT_USAGE = 2
EXIT_FAILED = 1
EXIT_REFUSED = 3
"""``folio context`` packed nothing (the package is ``refused``: no evidence for the question, or a budget that
no evidence fits); the package is still printed, and why goes to stderr in one line."""


def say(line: str) -> None:
    """``line`` on stderr, as one line whatever it holds: each character a terminal would obey rather than show
    (ESC, which starts an escape sequence; a carriage return; a bidi override; a newline) written as its escape
    (``kernel.printable.terminal_safe``). Every message the CLI writes to stderr comes here: they carry text from
    outside (a server's error message, a file name from the command line, a PDF's text, a model's words), which
    is shown, never obeyed. Only the progress bar writes there itself (its label goes through ``terminal_safe``)."""
    print(terminal_safe(line, keep="\t"), file=sys.stderr, flush=True)


class ProgressBar:
    """Ingest progress on stderr: a one-line bar on a terminal; elsewhere (a log, a pipe, CI) plain lines, one
    when a stage starts and one when it ends (``parse 12/40 pages``, ``embed``, ``index:…``, ``commit``), so that
    a long parse is not minutes of silence; none with ``lines=False`` (``--json`` without ``-v``); with ``every``
    (``-v``) also one every ``LINE_EVERY_S`` seconds within a stage."""

    LINE_EVERY_S = 5.0

    def __init__(self, label: str, *, enabled: bool | None = None, lines: bool = True, every: bool = False) -> None:
        self.label = terminal_safe(label, keep="")  # a file name: shown, never obeyed (``say``)
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.lines = lines and not self.enabled
        self.every = every
        self._last = 0.0
        self._shown: tuple[str, int, int] | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.lines:
            self._line(stage, done, total)
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 24
        frac = done / total if total else 1.0
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        sys.stderr.write(f"\r{self.label[:32]:32} {stage:12} [{bar}] {done}/{total}   ")
        sys.stderr.flush()

    def _line(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        shown = self._shown
        new_stage = shown is None or shown[0] != stage
        ended = done >= total and (stage, done, total) != shown
        due = self.every and now - self._last >= self.LINE_EVERY_S
        if not (new_stage or ended or due):
            return
        self._shown, self._last = (stage, done, total), now
        unit = " pages" if stage == "parse" else ""
        sys.stderr.write(f"{self.label}: {stage} {done}/{total}{unit}\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 90 + "\r")
            sys.stderr.flush()


def add_command(sub: Any, name: str, summary: str, description: str, *examples: str) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` says what it does (``description``, wrapped) and shows ``examples``;
    ``summary`` is its line in ``folio --help``."""
    import textwrap

    return sub.add_parser(  # type: ignore[no-any-return]  # argparse's subparsers action is untyped here
        name,
        help=summary,
        description=textwrap.fill(description, 100),
        epilog="examples:\n" + "\n".join(f"  {e}" for e in examples),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_json_arg(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def add_data_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data", metavar="DIR", default=None, help="data directory (default: $FOLIO_DATA or ~/.local/share/folio)"
    )


def request_fields(args: argparse.Namespace, names: tuple[str, ...]) -> dict[str, Any]:
    """The fields ``names`` of a query request (``ContextRequest``, ``SearchRequest``, ``AnswerRequest``) that
    the command line sets, in that order: a flag's ``dest`` is the name of the request field it sets (``--doc``
    sets ``doc_ids``); a flag left unset (None) or given empty is not sent, so the server's default applies.
    Plain values, no request model: a command that asks a server loads no pydantic (the server validates).

    >>> request_fields(argparse.Namespace(k=5, doc_ids=None, strategy="", budget=0), ("k", "doc_ids", "budget"))
    {'k': 5, 'budget': 0}
    """
    return {name: value for name in names if (value := getattr(args, name)) is not None and value != ""}


def settings_for(args: argparse.Namespace) -> Settings:
    """``Settings`` from the environment, with ``--data`` when the command has it and it was given."""
    from folio.settings import Settings

    settings = Settings()
    data: str | None = getattr(args, "data", None)  # argparse namespaces: not every command has --data
    if data:
        settings = settings.model_copy(update={"data": data})
    return settings


def open_folio(args: argparse.Namespace) -> Folio:
    """The service (``api.application.Folio``) on the store a command reads or changes; one that does not
    exist is an error (``NoStore``), not a new empty store (a mistyped ``--data`` would otherwise answer
    "no documents"). Only the store opens here: the retriever and its models wait for a query."""
    from folio.api.application import Folio

    return Folio.open(settings_for(args), must_exist=True)


def json_object(text: str) -> dict[str, Any]:
    """An option's JSON object (``--filter``); anything else is argparse's usage error (exit 2)."""
    try:
        value = json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"not valid JSON: {e}") from e
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("give a JSON object")
    return value


def add_filter_args(p: argparse.ArgumentParser) -> None:
    """``--filter JSON`` (a metadata filter, docs/api.md "Filters") and ``--collection NAME``: the request
    fields ``filter`` and ``collection`` of search, context and answer."""
    p.add_argument(
        "--filter", type=json_object, default=None, metavar="JSON",
        help='only documents whose metadata match, e.g. \'{"company": "Acme", "year": {"gte": 2020}}\'',
    )
    p.add_argument("--collection", default=None, metavar="NAME", help="only this collection")


def add_server_arg(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--server",
        metavar="URL",
        default=None,
        help="ask this running folio server (default: $FOLIO_URL when set and --data is not given; else a "
        "`folio serve` that is serving the data directory, else in-process)",
    )
    where.add_argument(
        "--no-server",
        action="store_true",
        help="run in-process on the data directory, even when a `folio serve` is serving it",
    )


@dataclass(frozen=True)
class Remote:
    """The server a command asks, and the key it may send there (None: send none)."""

    url: str
    api_key: str | None


def remote_server(args: argparse.Namespace) -> Remote | None:
    """The server a query command sends its request to, or None to run it in-process: ``--server``, else
    ``$FOLIO_URL`` unless ``--data`` names a local store to read (``$FOLIO_API_KEY`` goes with either: the user
    named that server), else a ``folio serve`` on the data directory that proves itself (``api.cli.discovery``:
    the key goes there only when the server proved it holds it; one line on stderr says which server), unless
    ``--no-server``. A server answers in milliseconds what in-process costs a second of loading the store and
    the query encoder; the variables read here come from ``folio.settings_light``, so that asking a server never
    loads the settings tree (pydantic)."""
    if args.server:
        if args.data:
            raise UsageError("--server and --data exclude each other: the server reads its own data")
        return Remote(str(args.server), client_api_key())
    url = client_url()
    if not args.data and url:
        return Remote(url, client_api_key())
    if args.no_server:
        return None
    from folio.api.cli.discovery import find_server

    data = args.data or data_dir()
    key = client_api_key()
    found = find_server(data, api_key=key)
    if found is None:
        return None
    say(f"folio: asking the server at {found.url} (it serves {data}; --no-server runs here)")
    return Remote(found.url, key if found.send_key else None)


class UsageError(FolioError, ValueError):
    """A command line that cannot work; ``main`` exits 2 with its message."""

    code = "usage"


def add_verbose_everywhere(parser: argparse.ArgumentParser) -> None:
    """``-v`` after a subcommand too (``folio ingest -v DIR``), as before it (``folio -v ingest DIR``)."""
    for action in parser._actions:  # argparse has no public walk over subparsers
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                sub.add_argument(
                    "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log progress details"
                )
                add_verbose_everywhere(sub)


def format_report(r: dict[str, Any]) -> str:
    """One ingest report (``IngestReport`` fields plus ``status``) as the lines ``folio ingest`` prints."""
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(r["regions_by_kind"].items()))
    line = (
        f"{r['filename']}: {r['status']} {r['doc_id']}@{r['version_id']}  {r['pages']} pages, "
        f"{r['tables']} tables, {r['figures']} figures, {r['ocr_pages']} OCRed pages, {r['seconds']:.1f}s"
    )
    if kinds:
        line += f"\n    regions: {kinds}"
    for w in r.get("warnings", []):
        line += f"\n    warning: {w}"
    for issue in r.get("issues", []):
        line += f"\n    page {issue['page']}: {issue['message']}"
    if r.get("degraded_pages"):
        pages = ", ".join(str(p) for p in r["degraded_pages"])
        line += f"\n    degraded pages: {pages} (parse them again: folio ingest --redo-degraded --page-timeout SECONDS)"
    return line


def choices(literal: Any) -> tuple[str, ...]:
    """The values of a ``Literal`` type, for argparse ``choices`` (the API's 422 and the CLI's usage
    error come from the same list).

    >>> from typing import Literal
    >>> choices(Literal["a", "b"])
    ('a', 'b')
    """
    return tuple(str(v) for v in get_args(literal))


def validation_message(e: ValidationError) -> str:
    """A ``pydantic.ValidationError`` as one line: ``field: problem`` for each error.

    >>> from pydantic import BaseModel, ValidationError
    >>> class M(BaseModel):
    ...     k: int
    >>> try:
    ...     M(k="x")
    ... except ValidationError as e:
    ...     print(validation_message(e))
    k: Input should be a valid integer, unable to parse string as an integer
    """
    parts = []
    for err in e.errors():
        where = ".".join(str(p) for p in err["loc"])
        parts.append(f"{where}: {err['msg']}" if where else str(err["msg"]))
    return "; ".join(parts)


def os_error_message(e: OSError) -> str:
    """An ``OSError`` as one line: what went wrong and with which file (no traceback)."""
    what = e.strerror or str(e) or type(e).__name__
    return f"{what}: {e.filename}" if e.filename else what


def print_versions(versions: list[dict[str, Any]], *, as_json: bool, empty: str) -> None:
    """``folio docs``' listing of version rows (the REST ``VersionOut`` fields and their ``metadata``), read from a
    store or a server: JSON, or a table with the latest version starred and ``empty`` when there is none. Names and
    metadata pass through ``terminal_safe``: a name stored by an older folio may hold escapes."""
    if as_json:
        print(terminal_safe(json.dumps({"data": versions, "count": len(versions)}, indent=2, ensure_ascii=False)))
        return
    if not versions:
        print(empty)
        return
    print(f"{'doc_id':32} {'version':16} {'pages':>5} {'regions':>7}  created              file")
    for v in versions:
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(v["created_at"]))
        mark = "*" if v["latest"] else " "
        line = (f"{v['doc_id'][:32]:32} {v['version_id']}{mark}{v['pages']:>5} {v['regions']:>7}  {created}  "
                f"{v['filename']}")
        if v.get("metadata"):
            line += "  " + json.dumps(v["metadata"], ensure_ascii=False)
        print(terminal_safe(line))
    print("(* latest version: the default for queries)")
