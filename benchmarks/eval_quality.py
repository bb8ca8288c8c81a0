"""Quality of folio's retrieval + assembly against peer pipelines, on both development sets in one run.

    python benchmarks/eval_quality.py            # the manuals set and the wide set under ../shared/eval
    python benchmarks/eval_quality.py --set NAME QUESTIONS.jsonl PDF_DIR [--set ...] \\
        [--budgets 1000 2000 4000] [--data DIR] [--server URL] [--only ...] [--variants ...]

For every question (restricted to its own document) and every system and budget it records:

* ``recall@5`` / ``recall@10``: share of gold pages on the first 5/10 retrieval hits, before assembly.
* ``coverage``: share of gold pages on any packed item's pages, after assembly; ``all_covered``: 1 if all.
* ``answer_exact``: normalised reference answer is a substring of the packed text (only questions with
  ``answer_in_text_layer`` true); ``answer_exact_rare``: the same, only where the answer occurs on 1-3 pages
  of the document's text layer (so ``"2"`` cannot match by accident).
* ``key_recall``: share of the answer's key terms (numbers, identifiers, content words; see
  ``metrics.answer_keys``) found whole-token in the packed text, counting only keys that occur on 1-3 pages
  of the document's text layer (paraphrase words and ubiquitous tokens drop out). Text-layer answers only.
* ``iou`` / ``iog``: best IoU and best intersection-over-gold of any packed locator box with each gold box
  on the same page (folio only; peers return page text without boxes).
* ``tokens``: folio: ``budget.used`` (the whole rendered prompt: system text, citation contract, question,
  block wrappers and citation tags). Peers: ``count(question + "\\n\\n" + context)`` where context is the
  retrieved texts joined by blank lines, token-truncated so the total fits the budget (no system text
  is counted for peers, which favours them). ``over``: prompts above the budget.
* ``natural_tokens`` (peers): the same count with the uncut k=8 output; how often it exceeds each budget.
* readability (``benchmarks/quality/readability.py``), folio and peers alike: ``statement_items`` (packed items that
  hold a financial statement), ``statement_rows`` (those as rows with a unit and a period),
  ``statement_one_per_line`` (those with figures one per line); ``contents_tokens``: tokens packed from contents
  pages of the text layer (None when the question asks for contents); ``answer_cut``: 1 when a specific answer's
  gold page is packed but the answer is not (the ids per set, half and budget under ``readability``).
* ``latency``: per question, retrieval + assembly (folio) or retrieval + post-processing (peers); index
  building is excluded. In ``--server`` mode folio's latency is the HTTP round trip.

Results go to ``benchmarks/results/quality.json.gz`` (every record) and ``quality.md``. This file is the command;
its parts are in ``benchmarks/quality/`` (the question sets, folio's and the peers' runs, the records, the
metrics and the report).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gzip
import json
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.quality import metrics as M  # noqa: E402
from benchmarks.quality.folio_runs import FOLIO_K, FOLIO_VARIANTS, run_folio  # noqa: E402
from benchmarks.quality.peer_runs import PEER_HARNESS_VERSION, run_peers  # noqa: E402
from benchmarks.quality.questions import (  # noqa: E402
    answer_info,
    default_sets,
    load_questions,
    report_groups,
    set_questions,
)
from benchmarks.quality.readability import contents_pages, readability_summary  # noqa: E402
from benchmarks.quality.records import SetRun  # noqa: E402
from benchmarks.quality.report import HEADLINE as HEADLINE_VARIANT  # noqa: E402
from benchmarks.quality.report import SetReport, render_headline, render_markdown, summarize  # noqa: E402

logger = logging.getLogger("eval_quality")

SHARED = Path(os.environ.get("FOLIO_SHARED") or ROOT.parent / "shared")


ANSWER_TEXT = frozenset({"answer", "keys", "rare_keys"})
"""Fields that hold a question's answer or its words: the output is committed (benchmarks/results) and the question
sets are not (mmlb and finance are CC BY-NC, for evaluation only), so they are never written out."""


def without_answer_text(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ANSWER_TEXT}


@dataclass(frozen=True)
class Plan:
    """What every question set is run with: the budgets, folio's variants (name -> ``AssemblyOptions``
    overrides), the command line's arguments and the tokenizer peers count with."""

    budgets: list[int]
    variants: dict[str, dict[str, Any]]
    args: argparse.Namespace
    tok: Any


def run_set(
    name: str, questions: list[dict[str, Any]], pdf_dir: Path, data: Path, plan: Plan
) -> tuple[list[dict[str, Any]], list[str], dict[str, Any]]:
    """Every system on one question set (PDFs in ``pdf_dir``, stores and caches in ``data``): (records, peer
    names, answer info per question)."""
    from benchmarks.quality.peers import page_texts

    for q in questions:
        q["_set"] = name
    docs = sorted({q["doc"] for q in questions})
    data.mkdir(parents=True, exist_ok=True)
    pages = {d: page_texts(pdf_dir / d) for d in docs}
    norm_pages = {d: [M.normalize(t) for t in ps] for d, ps in pages.items()}
    contents = {d: contents_pages(ps) for d, ps in pages.items()}
    infos = {q["id"]: {**answer_info(q, norm_pages[q["doc"]], pages[q["doc"]]), "contents_pages": contents[q["doc"]]}
             for q in questions}  # fmt: skip
    run = SetRun(questions, infos, pdf_dir, data, plan.budgets)
    args = plan.args
    recs: list[dict[str, Any]] = []
    if not args.no_folio:
        recs.extend(run_folio(run, plan.variants, args))
    peer_names: list[str] = []
    if not args.no_peers:
        peer_recs, peer_names = run_peers(run, pages, plan.tok, args.peers)
        recs.extend(peer_recs)
    gold = {q["id"]: ",".join(str(p) for p in q["gold_pages"]) for q in questions}
    for r in recs:
        r["gold"] = gold[r["id"]]
    return recs, peer_names, infos


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument(
        "--set",
        nargs=3,
        action="append",
        metavar=("NAME", "QUESTIONS", "PDFS"),
        help="a question set (repeatable); default: mmlb, finance, wide and the manuals under ../shared/eval",
    )
    ap.add_argument("--sets", nargs="+", default=None, help="only these default sets (mmlb finance wide manuals)")
    ap.add_argument(
        "--shared", default=str(SHARED), help="folder with eval/ and corpus/ (default: ../shared or $FOLIO_SHARED)"
    )
    ap.add_argument("--half", choices=["A", "B"], default=None, help="only this half of a halved set (mmlb, finance)")
    ap.add_argument("--questions", default=None, help="one question set (with --pdfs), named 'dev'")
    ap.add_argument("--pdfs", default=None)
    ap.add_argument("--budgets", type=int, nargs="+", default=[1000, 2000, 4000])
    ap.add_argument(
        "--data", default=str(ROOT / "data" / "eval-quality"),
        help="folio stores and peer caches: <data>/<set>/folio, <data>/<set>/peer-cache, <data>/<set>/peer-records",
    )
    ap.add_argument("--server", default=None, help="run folio through this REST server instead of in-process")
    ap.add_argument(
        "--unscoped", action="store_true",
        help="folio searches every document of the set's store (a mixed store), not only the question's; "
        "folio only (use with --no-peers)",
    )
    ap.add_argument(
        "--keep-stored", action="store_true",
        help="documents an older parser stored are used as stored, not parsed again: compares assembly or "
        "retrieval changes on existing stores in minutes (figures are then not the current parser's)",
    )
    ap.add_argument("--only", nargs="*", default=None, help="question ids or document-name substrings")
    ap.add_argument("--peers", nargs="*", default=None, help="peer names (default: all)")
    ap.add_argument("--no-peers", action="store_true", help="folio only (peer figures are cached anyway)")
    ap.add_argument("--no-folio", action="store_true")
    ap.add_argument(
        "--variants", nargs="*", default=None,
        help=f"folio variants, or 'all' (default: {HEADLINE_VARIANT}; all: {list(FOLIO_VARIANTS)})",
    )
    ap.add_argument(
        "--extra-variants",
        default=None,
        help='JSON {"name": {AssemblyOptions overrides}} to evaluate beside the built-in folio variants',
    )
    ap.add_argument(
        "--retriever-options", default=None, help='JSON Retriever keyword arguments, e.g. {"page_order": false}'
    )
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    return ap, ap.parse_args(argv)


def chosen_sets(ap: argparse.ArgumentParser, args: argparse.Namespace) -> list[tuple[str, Path, Path]]:
    """The sets to run; a default set missing on disk is skipped with a stated line."""
    if args.set:
        return [(n, Path(q), Path(p)) for n, q, p in args.set]
    if args.questions:
        if not args.pdfs:
            ap.error("--questions needs --pdfs")
        return [("dev", Path(args.questions), Path(args.pdfs))]
    sets = []
    for n, q, p in default_sets(Path(args.shared)):
        if args.sets and n not in args.sets:
            continue
        if not q.exists() or not p.is_dir():
            logger.warning("set %s skipped: %s or %s not found", n, q, p)
            print(f"set {n} skipped: {q} or {p} not found")
            continue
        sets.append((n, q, p))
    if not sets:
        ap.error(f"no question sets under {Path(args.shared) / 'eval'}; pass --set NAME QUESTIONS PDFS")
    return sets


def main(argv: Sequence[str] | None = None) -> int:
    ap, args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    for noisy in ("httpx", "llama_index", "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    from folio.kernel.tokens import get_tokenizer

    sets = chosen_sets(ap, args)
    tok = get_tokenizer("cl100k_base")
    budgets = list(args.budgets)
    if args.variants and "all" in args.variants:
        variants = dict(FOLIO_VARIANTS)
    else:
        wanted = args.variants or [HEADLINE_VARIANT]
        variants = {k: v for k, v in FOLIO_VARIANTS.items() if k in wanted}
    if args.extra_variants:
        variants.update(json.loads(args.extra_variants))
    command = "python benchmarks/eval_quality.py " + " ".join(sys.argv[1:] if argv is None else argv)
    payload: dict[str, Any] = {
        "command": command,
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "budgets": budgets,
        "peer_harness_version": PEER_HARNESS_VERSION,
        "sets": {},
    }
    md_parts, headline_parts = [], []
    data_root = Path(args.data)
    for name, qpath, pdf_dir in sets:
        questions = set_questions(name, qpath, args)
        if not questions:
            continue
        data = data_root if args.questions else data_root / name
        recs, peer_names, infos = run_set(name, questions, pdf_dir, data, Plan(budgets, variants, args, tok))
        systems = ([] if args.no_folio else list(variants)) + peer_names
        summary = summarize(recs, systems, budgets)
        groups = report_groups(name, recs)
        payload["sets"][name] = {
            "questions": str(qpath),
            "systems": systems,
            "peers": peer_names,
            "answer_info": {qid: without_answer_text(i) for qid, i in infos.items()},
            "summary": summary,
            "groups": {g: summarize(rs, systems, budgets) for g, rs in groups},
            "readability": readability_summary(groups, systems, budgets),  # answer-cut questions by id, no answers
            "records": [without_answer_text(r) for r in recs],  # (cached peer records may still carry it)
        }
        headline_parts.append(render_headline(groups, systems, budgets, qpath.parent / "REFERENCE.md"))
        md = render_markdown(
            SetReport(summary, recs, systems, peer_names, budgets, command, len(questions), name, FOLIO_K)
        )
        skipped = len(load_questions(str(qpath), None)) - len(questions)
        if skipped:
            md += f"\nNot evaluated in this run (filtered by --only/--half): {skipped} questions.\n"
        md_parts.append(md)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(payload, separators=(",", ":"), default=str).encode("utf-8")
    (out / "quality.json.gz").write_bytes(gzip.compress(raw, mtime=0))
    head = f"# folio quality evaluation\n\n```\n{command}\n```\n\n" + "\n".join(headline_parts)
    md = head + "\n# Details\n\n" + "\n".join(md_parts)
    (out / "quality.md").write_text(md, encoding="utf-8")
    print(head)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
