"""``folio ask``: a cited answer from the configured LLM, in-process (the service ``POST /v1/answer``
calls, ``api.application.Folio``).

The answer streams to stdout as it arrives, then the citations (region, page, box) and the check;
``--json`` prints the ``AnswerResponse`` instead. The exit code is 1 when the citation check fails
(as ``folio verify``). With ``--server URL`` (or ``$FOLIO_URL`` and no ``--data``) the running
server answers (``folio.Client.answer_stream``): its LLM, its data, no model loaded here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from folio.api.cli.common import (
    Remote,
    add_command,
    add_filter_args,
    add_server_arg,
    remote_server,
    request_fields,
    say,
)
from folio.kernel.printable import terminal_safe

# Function-level imports: each command imports what it runs, so that `folio --help` and the light commands start
# without loading torch, LanceDB or PyMuPDF.
if TYPE_CHECKING:
    from folio.settings import Settings

EXIT_USAGE = 2
EXIT_FAILED = 1
ASK_FIELDS = ("k", "max_tokens", "timeout_s", "budget", "doc_ids", "strategy", "filter", "collection")
"""The fields of ``AnswerRequest`` that ``folio ask``'s flags set (``request_fields``), besides the answer's form."""


def _settings(args: argparse.Namespace) -> Any:
    from folio.settings import Settings

    settings = Settings()
    return settings.model_copy(update={"data": args.data}) if args.data else settings


def cmd_ask(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from folio.api.service.answer_schemas import AnswerRequest

    settings = _settings(args)
    fields: dict[str, Any] = {"query": args.question, **request_fields(args, ASK_FIELDS)}
    if not args.budget:  # --budget 0 takes the server's default budget, as an unset one
        fields.pop("budget", None)
    if args.structured:
        fields["response_format"] = "json"
    if args.schema:
        try:
            fields["json_schema"] = json.loads(Path(args.schema).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            say(f"folio: --schema {args.schema}: {e}")
            return EXIT_USAGE
    try:
        req = AnswerRequest.model_validate(fields)
    except ValidationError as e:
        first = e.errors()[0]
        say(f"folio: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}")
        return EXIT_USAGE
    remote = remote_server(args)
    if remote:  # the request as the model holds it, only the fields the command line set
        done = _remote_answer(remote, req.model_dump(mode="json", exclude_unset=True), not args.json)
    else:
        done = _local_answer(settings, req, not args.json)
    if done is None:
        return EXIT_FAILED
    if args.json:
        print(terminal_safe(json.dumps(done, indent=2, ensure_ascii=False)))
    else:
        print("\n")
        print(terminal_safe(format_check(done)))
    return 0 if done["check"]["ok"] else EXIT_FAILED  # as `folio verify`: a failed citation check is a failure


def _local_answer(settings: Settings, req: Any, streamed: bool) -> dict[str, Any] | None:
    """The answer in this process (``api.service.answer``), streamed to stdout; None after an error event."""
    from folio.api.application import Folio
    from folio.api.service.answer import Prepared, answer_events
    from folio.api.service.chat import require_llm

    require_llm(settings)  # no endpoint: say how to configure one before loading any model
    prep: Prepared = Folio.open(settings, must_exist=True).prepare_answer(req)
    done: dict[str, Any] | None = None
    for event, data in answer_events(prep):
        if event == "delta" and streamed:
            sys.stdout.write(terminal_safe(data["text"]))  # the model's text: shown, never obeyed
            sys.stdout.flush()
        elif event == "done":
            done = data
        elif event == "error":
            if streamed:
                print()
            say(f"folio: {data['error']['message']}")
            return None
    assert done is not None
    if req.include_package:
        done["package"] = prep.package.model_dump(mode="json")
    return done


def _remote_answer(remote: Remote, body: dict[str, Any], streamed: bool) -> dict[str, Any] | None:
    """The answer from the server ``remote`` (``POST /v1/answer`` as server-sent events); None after
    an error, which is printed."""
    from folio import Client
    from folio.errors import ClientError

    url = remote.url
    try:
        with Client(url, api_key=remote.api_key or "") as client:
            for ev in client.answer_stream(**body):
                if ev.event == "delta" and streamed:
                    sys.stdout.write(terminal_safe(str(ev.data.get("text", ""))))
                    sys.stdout.flush()
                elif ev.answer is not None:
                    return ev.answer.model_dump(mode="json", by_alias=True, exclude_none=False)
    except ClientError as e:
        if streamed:
            print()
        say(f"folio: {url}: {e}")
    return None


MAX_SHOWN_LINES = 4  # line boxes printed per citation and per supported sentence


def _box(b: Any) -> str:
    xs = [b["x0"], b["y0"], b["x1"], b["y1"]] if isinstance(b, dict) else (b or [])
    return f"[{', '.join(f'{x:.0f}' for x in xs)}]"


def _line_boxes(lines: list[dict[str, Any]]) -> str:
    """``p.1 [72, 301, 448, 316] [..]``: line boxes grouped by page, at most ``MAX_SHOWN_LINES``."""
    parts: list[str] = []
    page = None
    for ln in lines[:MAX_SHOWN_LINES]:
        if ln["page"] != page:
            page = ln["page"]
            parts.append(f"p.{page}")
        parts.append(_box(ln["bbox"]))
    more = len(lines) - MAX_SHOWN_LINES
    return " ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def _citation_line(c: dict[str, Any], item_lines: list[dict[str, Any]]) -> str:
    """A citation with the line boxes of what made its item relevant (``CitationOut.lines``); the
    locator's box when there are none (an image found as a whole)."""
    pages = ",".join(str(p) for p in c["pages"])
    if item_lines:
        return f"  [{c['citation_id']}] {c['filename']} p.{pages} lines {_line_boxes(item_lines)}  {c['region_id']}"
    loc = c["locators"][0] if c["locators"] else None
    box = f" bbox {_box(loc['bbox'])}" if loc else ""
    return f"  [{c['citation_id']}] {c['filename']} p.{pages}{box}  {c['region_id']}"


def _supporting(done: dict[str, Any]) -> list[str]:
    """``supported:`` one line per cited sentence and id: the lines of the item that share its words."""
    out: list[str] = []
    for s in done.get("supporting_lines") or []:
        shown = _line_boxes(s["lines"]) if s["lines"] else "no line shares its words"
        out.append(f"  sentence {s['sentence_index'] + 1} [{s['citation_id']}] support {s['support']:.2f}: {shown}")
    return (["supporting lines:"] + out) if out else []


def format_check(done: dict[str, Any]) -> str:
    """The citations (with their items' line boxes), the lines supporting each cited sentence, the check
    and the token accounting under a streamed answer."""
    lines = []
    if done["citations"]:
        lines.append("citations:")
    for c in done["citations"]:
        lines.append(_citation_line(c, c.get("lines") or []))
    lines += _supporting(done)
    chk = done["check"]
    lines.append(f"check: {'ok' if chk['ok'] else 'NOT ok'}; kept {', '.join(chk['kept_ids']) or '-'}; "
                 f"invented {', '.join(chk['invented_ids']) or '-'}")
    for s in chk["uncited_sentences"]:
        lines.append(f"  uncited: {s}")
    st = done.get("structured")
    if st:
        lines.append(f"structured ({st['schema_name']} schema): json {st['json_valid']}, schema valid "
                     f"{st['schema_valid']}, faithful {st['faithful']}"
                     + (f"; {'; '.join(st['errors'][:3])}" if st["errors"] else ""))
    u = done["usage"]
    comp = u["completion_tokens"] if u["completion_tokens"] is not None else "?"
    lines.append(f"tokens: prompt {u['prompt_tokens']} (folio, {u['tokenizer']}; schema {u['schema_tokens']}) "
                 f"of {u['budget_limit']}, completion {comp} (endpoint)"
                 + (" - refused, the model was not called" if done["refused"] else ""))
    for w in done.get("warnings", []):
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def register(sub: Any) -> None:
    p = add_command(
        sub, "ask", "answer a question with the configured LLM, citations checked",
        "Retrieve and pack the evidence, ask the OpenAI-compatible model configured with FOLIO_LLM_BASE_URL and "
        "FOLIO_LLM_MODEL, stream its answer and check its citations. Exit 1 when the check fails.",
        'folio ask "How fast must a P1 incident be acknowledged?" --data ./folio-data',
        'folio ask "Which targets changed?" --structured --json',
    )
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--budget", type=int, default=None, help="token limit of the prompt (default $FOLIO_DEFAULT_BUDGET)")
    p.add_argument("--doc", action="append", default=None, dest="doc_ids", metavar="ID",
                   help="restrict to a document (repeatable)")
    p.add_argument("--strategy", default=None, help="expansion: auto, raw, window, parent, neighbors, page")
    p.add_argument("-k", type=int, default=50, help="hits to retrieve before assembly")
    add_filter_args(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--structured", action="store_true", help="ask for {answer, citations, insufficient} JSON")
    g.add_argument("--schema", default=None, metavar="FILE", help="ask for JSON valid against this JSON schema")
    p.add_argument("--max-tokens", type=int, default=1024, help="completion token limit")
    p.add_argument("--timeout", type=float, default=60.0, dest="timeout_s", metavar="TIMEOUT",
                   help="seconds to wait for the endpoint")
    p.add_argument("--json", action="store_true", help="print the AnswerResponse JSON (as POST /v1/answer)")
    p.add_argument("--data", metavar="DIR", default=None,
                   help="data directory (default: $FOLIO_DATA or ~/.local/share/folio)")
    add_server_arg(p)
    p.set_defaults(func=cmd_ask)
