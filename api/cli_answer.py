"""``folio ask``: a cited answer from the configured LLM, in-process (the ``POST /v1/answer`` path).

The answer streams to stdout as it arrives, then the citations (region, page, box) and the check;
``--json`` prints the ``AnswerResponse`` instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from api.settings import Settings
    from ingest.store import Store
    from retrieval.search import Retriever

EXIT_USAGE = 2
EXIT_FAILED = 1


def _settings(args: argparse.Namespace) -> Any:
    from api.settings import Settings

    settings = Settings()
    return settings.model_copy(update={"data": args.data}) if args.data else settings


def _store_and_retriever(settings: Settings) -> tuple[Store, Retriever]:
    from ingest.store import Store
    from ingest.torchfix import ensure_torchvision

    ensure_torchvision()
    from retrieval.search import Retriever

    store = Store(settings.data)
    return store, Retriever.from_settings(store, settings)


def cmd_ask(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from api.answer import Prepared, answer_events, prepare
    from api.answer_schemas import AnswerRequest
    from api.chat import client_from_settings

    settings = _settings(args)
    body: dict[str, Any] = {"query": args.question, "k": args.k, "max_tokens": args.max_tokens,
                            "timeout_s": args.timeout}
    if args.budget:
        body["budget"] = args.budget
    if args.doc:
        body["doc_ids"] = args.doc
    if args.strategy:
        body["strategy"] = args.strategy
    if args.structured:
        body["response_format"] = "json"
    if args.schema:
        try:
            body["json_schema"] = json.loads(Path(args.schema).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            print(f"folio: --schema {args.schema}: {e}", file=sys.stderr)
            return EXIT_USAGE
    try:
        req = AnswerRequest.model_validate(body)
    except ValidationError as e:
        first = e.errors()[0]
        print(f"folio: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}", file=sys.stderr)
        return EXIT_USAGE
    client_from_settings(settings)  # no endpoint: say how to configure one before loading any model
    store, retriever = _store_and_retriever(settings)
    prep: Prepared = prepare(store, retriever, req, settings)
    done: dict[str, Any] | None = None
    streamed = not args.json
    for event, data in answer_events(prep):
        if event == "delta" and streamed:
            sys.stdout.write(data["text"])
            sys.stdout.flush()
        elif event == "done":
            done = data
        elif event == "error":
            if streamed:
                print()
            print(f"folio: {data['error']['message']}", file=sys.stderr)
            return EXIT_FAILED
    assert done is not None
    if args.json:
        if req.include_package:
            done["package"] = prep.package.model_dump(mode="json")
        print(json.dumps(done, indent=2, ensure_ascii=False))
        return 0
    print("\n")
    print(format_check(done))
    return 0


def format_check(done: dict[str, Any]) -> str:
    """The citations, the check and the token accounting under a streamed answer."""
    lines = []
    if done["citations"]:
        lines.append("citations:")
    for c in done["citations"]:
        loc = c["locators"][0] if c["locators"] else None
        b = loc["bbox"] if loc else None
        xs = [b["x0"], b["y0"], b["x1"], b["y1"]] if isinstance(b, dict) else (b or [])
        box = f" bbox [{', '.join(f'{x:.0f}' for x in xs)}]" if xs else ""
        pages = ",".join(str(p) for p in c["pages"])
        lines.append(f"  [{c['citation_id']}] {c['filename']} p.{pages}{box}  {c['region_id']}")
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
    p = sub.add_parser("ask", help="answer a question with the configured LLM, citations checked")
    p.add_argument("question")
    p.add_argument("--budget", type=int, default=None, help="token limit of the prompt (default $FOLIO_DEFAULT_BUDGET)")
    p.add_argument("--doc", action="append", default=None, metavar="ID", help="restrict to a document (repeatable)")
    p.add_argument("--strategy", default=None, help="expansion: auto, raw, window, parent, neighbors, page")
    p.add_argument("-k", type=int, default=50, help="hits to retrieve before assembly")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--structured", action="store_true", help="ask for {answer, citations, insufficient} JSON")
    g.add_argument("--schema", default=None, metavar="FILE", help="ask for JSON valid against this JSON schema")
    p.add_argument("--max-tokens", type=int, default=1024, help="completion token limit")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the endpoint")
    p.add_argument("--json", action="store_true", help="print the AnswerResponse JSON (as POST /v1/answer)")
    p.add_argument("--data", metavar="DIR", default=None,
                   help="data directory (default: $FOLIO_DATA or ~/.local/share/folio)")
    p.set_defaults(func=cmd_ask)
