"""What an unscoped question costs the query process on a grown store: time and memory, per question.

Run on a store ``benchmarks/scale.py`` grew (read only here)::

    python benchmarks/unscoped_cost.py --data /tmp/folio-scale
    # the baseline: this file copied into a checkout of an earlier commit, run from there the same way

Opens the store as ``folio serve`` does (``Folio.open``, default settings) in this one process and asks
``--questions`` questions of the development sets (``../shared/eval/*/questions.jsonl``, every document of the store
in scope) through ``Folio.context`` at ``--budget`` tokens, one at a time; prints per question the seconds and the
process's RSS after it, then the median and the worst. The first question is the cold one (nothing cached); the
others show what the caches hold on to. Wall time is this machine's at the time: compare runs made one after the
other (the baseline first), not with figures from another day.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared").exists() else Path("/work/shared")


def questions(shared: Path, n: int) -> list[str]:
    """``n`` questions taken in turn from each development set (the sets' orders kept)."""
    sets = []
    for name in ("mmlb", "finance", "wide"):
        path = shared / "eval" / name / "questions.jsonl"
        if path.exists():
            sets.append([json.loads(line)["question"] for line in path.read_text().splitlines() if line.strip()])
    out: list[str] = []
    for i in range(max((len(s) for s in sets), default=0)):
        out.extend(s[i] for s in sets if i < len(s))
    return out[:n]


def main() -> int:
    import psutil

    from folio.api.application import Folio
    from folio.api.schemas import ContextRequest
    from folio.settings.tree import Settings

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="a grown store (benchmarks/scale.py --out)")
    ap.add_argument("--shared", type=Path, default=SHARED)
    ap.add_argument("--questions", type=int, default=6)
    ap.add_argument("--budget", type=int, default=1500)
    args = ap.parse_args()
    asked = questions(args.shared, args.questions)
    if not asked:
        print(f"no questions under {args.shared}/eval", file=sys.stderr)
        return 2
    proc = psutil.Process()
    folio = Folio.open(Settings(data=args.data), must_exist=True)
    print(f"store {args.data}: opened, RSS {proc.memory_info().rss >> 20} MB")
    print("| # | question | s | items | RSS MB |\n| ---: | --- | ---: | ---: | ---: |")
    times = []
    for i, q in enumerate(asked):
        t = time.perf_counter()
        package = folio.context(ContextRequest(query=q, budget=args.budget))
        times.append(time.perf_counter() - t)
        print(f"| {i + 1} | {q[:60]} | {times[-1]:.2f} | {len(package.items)} | {proc.memory_info().rss >> 20} |")
    print(f"\ncold {times[0]:.2f} s; warm median {statistics.median(times[1:] or times):.2f} s, worst "
          f"{max(times[1:] or times):.2f} s; RSS after {proc.memory_info().rss >> 20} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
