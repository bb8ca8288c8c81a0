"""Off-topic questions over a mixed store: how many does folio refuse, and how many tokens does it spend?

Each question of ``benchmarks/data/off_topic_questions.txt`` (general knowledge that no evaluation document
answers) is asked over every document of each store, unscoped, through the in-process path of
``POST /v1/context``, with ``document_focus`` on (the default) and off. A refusal spends only the fixed prompt.
The on-topic side of the same trade (coverage and answers when questions are unscoped) is
``eval_quality.py --unscoped``.

    python benchmarks/off_topic.py --store mmlb /work/data/eval/mmlb/folio --store wide ...
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.quality.folio_runs import FolioInProcess  # noqa: E402

QUESTIONS = Path(__file__).resolve().parent / "data" / "off_topic_questions.txt"
VARIANTS = {"focus": {"strategy": "auto"}, "no-focus": {"strategy": "auto", "document_focus": "off"}}


def load_questions(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [q.strip() for q in lines if q.strip() and not q.startswith("#")]


def run_store(name: str, data: str, questions: list[str], budgets: list[int]) -> list[dict[str, Any]]:
    folio = FolioInProcess(data, unscoped=True)
    docs = len({v.doc_id for v in folio.store.list_versions() if v.latest})
    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for q in questions:
        for key, (pkg, _) in folio.run(q, "", budgets, VARIANTS).items():
            results.setdefault(key, []).append(pkg)
    rows = []
    for (variant, budget), pkgs in sorted(results.items()):
        rows.append({
            "store": name, "docs": docs, "variant": variant, "budget": budget, "questions": len(pkgs),
            "refused": sum(1 for p in pkgs if p["refused"]),
            "tokens_mean": statistics.mean(p["budget"]["used"] for p in pkgs),
            "docs_mean": statistics.mean(len({it["doc_id"] for it in p["items"]}) for p in pkgs),
        })
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", nargs=2, action="append", metavar=("NAME", "DATA_DIR"), required=True,
                    help="a folio data directory holding several documents")
    ap.add_argument("--budgets", type=int, nargs="+", default=[1000, 2000, 4000])
    ap.add_argument("--questions", default=str(QUESTIONS))
    args = ap.parse_args(argv)
    questions = load_questions(Path(args.questions))
    print("| store | docs | variant | budget | refused | tokens mean | documents per package |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name, data in args.store:
        for r in run_store(name, data, questions, args.budgets):
            print(f"| {r['store']} | {r['docs']} | {r['variant']} | {r['budget']} | {r['refused']}/{r['questions']} "
                  f"| {r['tokens_mean']:.0f} | {r['docs_mean']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
