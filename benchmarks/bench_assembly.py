"""Assembly latency: p50/p99 for 50, 200 and 1,000 candidates per strategy, against a naive peer.

Synthetic but realistic corpus (built in-process, no PDF): 4 document versions x 30 sections x
3 paragraphs x 4 sentences (~1,440 sentences), a table and a figure every third section, one page
region per page. Hits: 70% sentences, 10% tables, 10% figures, 10% pages, random scores.

- ``warm``: steady state; the process-wide token-count cache already holds the region texts
  (what a running service sees after its first queries).
- ``cold``: the cache is cleared before every call (first query after start-up).
- ``naive``: the peer measured in the same run: raw top-k concatenation by score, tokenized once
  and cut at the budget (no expansion, dedupe, citations or images).

Run: ``.venv/bin/python benchmarks/bench_assembly.py`` (prints a Markdown table, writes
``benchmarks/results/assembly.json``). ``--server-path DATA [QUESTIONS]``: 200 real candidates per
question through the server's code path over an ingested store (see ``server_path``).
"""

from __future__ import annotations

import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from folio.assembly import AssemblyOptions, assemble  # noqa: E402
from folio.assembly.budget import get_counter  # noqa: E402
from folio.kernel.index import RegionIndex  # noqa: E402
from folio.kernel.tokens import get_tokenizer  # noqa: E402
from tests.assembly.builders import hit, make_doc  # noqa: E402

WORDS = ("pump valve pressure limit deadline incident outage manager invoice refund power mass model board "
         "wiring exception maintenance response target minutes voltage current torque sensor housing seal "
         "bearing flow rate temperature alarm reset procedure step warning caution operator").split()
BUDGET = 8000


def corpus(seed: int = 7) -> list:
    rnd = random.Random(seed)

    def sent() -> str:
        return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(8, 24))).capitalize() + "."

    regions = []
    for d in range(4):
        secs = []
        for s in range(30):
            blocks: list = [[sent() for _ in range(4)] for _ in range(3)]
            if s % 3 == 0:
                blocks.append(("table", ["Item", "Value", "Unit"],
                               [[rnd.choice(WORDS), str(rnd.randint(1, 999)), "bar"] for _ in range(8)]))
            if s % 3 == 1:
                blocks.append(("figure", "Figure: " + sent()))
            secs.append((f"{d}.{s} {rnd.choice(WORDS).title()}", blocks))
        regions += make_doc(f"manual{d}", secs, version_id=f"{d:016x}")
    return regions


def hits_for(regions: list, n: int, seed: int) -> list:
    rnd = random.Random(seed)
    by = {k: [r for r in regions if r.kind == k] for k in ("sentence", "table", "figure", "page")}
    out = []
    for i in range(n):
        k = rnd.choices(["sentence", "table", "figure", "page"], [70, 10, 10, 10])[0]
        out.append(hit(rnd.choice(by[k]), rnd.random(), i + 1))
    out.sort(key=lambda h: -h.score)
    return [h.model_copy(update={"rank": i + 1}) for i, h in enumerate(out)]


def naive(query: str, hits: list, texts: dict[str, str], budget: int) -> str:
    tok = get_tokenizer("cl100k_base")
    body = "\n\n".join(texts[h.region_id] for h in sorted(hits, key=lambda h: -h.score))
    ids = tok.encode(f"{query}\n\n{body}")
    return tok.decode(ids[:budget])


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def time_calls(fn, runs: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    regions = corpus()
    idx = RegionIndex(regions)
    texts = {r.region_id: r.text for r in regions}
    counter = get_counter("cl100k_base")
    query = "What is the maximum pump pressure during maintenance?"
    rows = []
    for n in (50, 200, 1000):
        hits = hits_for(regions, n, seed=n)
        runs = 40 if n < 1000 else 15
        nv = time_calls(lambda: naive(query, hits, texts, BUDGET), runs)  # noqa: B023
        for strategy in ("auto", "raw", "window", "parent", "neighbors", "page"):
            opts = AssemblyOptions(budget=BUDGET, strategy=strategy)
            pkg = assemble(query, hits, idx, opts)  # warm-up fills the cache
            warm = time_calls(lambda: assemble(query, hits, idx, opts), runs)  # noqa: B023
            cold = []
            if strategy in ("auto", "window"):
                for _ in range(max(5, runs // 4)):
                    counter._cache.clear()
                    t0 = time.perf_counter()
                    assemble(query, hits, idx, opts)
                    cold.append((time.perf_counter() - t0) * 1000)
            rows.append({
                "candidates": n, "strategy": strategy, "items": len(pkg.items), "used": pkg.budget.used,
                "warm_p50_ms": round(statistics.median(warm), 3), "warm_p99_ms": round(pct(warm, 0.99), 3),
                "cold_p50_ms": round(statistics.median(cold), 3) if cold else None,
                "naive_p50_ms": round(statistics.median(nv), 3), "naive_p99_ms": round(pct(nv, 0.99), 3),
                "warm_vs_naive": round(statistics.median(warm) / statistics.median(nv), 2),
            })
    cpu = platform.processor() or platform.machine()
    print(f"Assembly latency, budget {BUDGET} tokens, cl100k_base, {cpu}\n")
    print("| candidates | strategy | items | used | warm p50 ms | warm p99 ms | cold p50 ms | naive p50 ms "
          "| naive p99 ms | warm / naive |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        cold = "" if r["cold_p50_ms"] is None else f"{r['cold_p50_ms']:.2f}"
        print(f"| {r['candidates']} | {r['strategy']} | {r['items']} | {r['used']} | "
              f"{r['warm_p50_ms']:.2f} | "
              f"{r['warm_p99_ms']:.2f} | {cold} | {r['naive_p50_ms']:.2f} | {r['naive_p99_ms']:.2f} | "
              f"{r['warm_vs_naive']:.2f} |")
    out = ROOT / "benchmarks" / "results" / "assembly.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"budget": BUDGET, "tokenizer": "cl100k_base", "rows": rows,
                               "python": sys.version.split()[0]}, indent=2))


def server_path(data: str, questions: str, n: int = 200, reps: int = 7, limit: int = 12) -> None:
    """Assembly at ``n`` candidates through the server's code path (``api.service.context.build_context``
    after retrieval): one read of the versions table's version, ``Retriever.source_for`` +
    ``version_filenames`` + ``assemble`` over a real store, against the per-request path the server had
    before issue 9 (a new ``MergedSource`` and a fresh file-name listing on every call, so assembly's
    per-source caches never survived).
    Retrieval runs once per question, outside the timing; old and new alternate call by call."""
    from folio.api.service.context import version_filenames
    from folio.ingest.pipeline import doc_id_from_filename
    from folio.ingest.storage.store import Store
    from folio.kernel.index import MergedSource
    from folio.retrieval.query import SearchQuery
    from folio.retrieval.search import Retriever

    store = Store(data, recover=False)
    retriever = Retriever(store)
    have = {v.doc_id for v in store.list_versions()}
    qs = [json.loads(line) for line in Path(questions).read_text().splitlines() if line.strip()]
    qs = [q for q in qs if doc_id_from_filename(q["doc"]) in have][:limit]
    opts = AssemblyOptions(budget=1500, tokenizer="cl100k_base")
    old: list[float] = []
    new: list[float] = []
    sizes: list[int] = []
    for q in qs:
        hits = retriever.search(SearchQuery(q["question"], doc_ids=[doc_id_from_filename(q["doc"])], k=n))
        sizes.append(len(hits))

        def before() -> None:
            src = MergedSource([store.region_index(h.doc_id, h.version_id)  # noqa: B023
                                for h in {(h.doc_id, h.version_id): h for h in hits}.values()])  # noqa: B023
            names = {v.version_id: v.filename for v in store.list_versions()}
            assemble(q["question"], hits, src, opts, filenames=names)  # noqa: B023

        def after() -> None:  # as build_context: the versions table's version read once for both caches
            with store.pinned_versions():
                source, names = retriever.source_for(hits), version_filenames(store)  # noqa: B023
            assemble(q["question"], hits, source, opts, filenames=names)  # noqa: B023

        before()
        after()  # warm-up: tokenizer, region indexes
        for _ in range(reps):
            for fn, into in ((before, old), (after, new)):
                t0 = time.perf_counter()
                fn()
                into.append((time.perf_counter() - t0) * 1000)
    print(f"Assembly through the server path, {len(qs)} questions x {reps} calls, "
          f"{statistics.median(sizes):.0f} candidates (median), budget 1500, cl100k_base\n")
    print("| path | p50 ms | p99 ms | p50 vs per-request |")
    print("|---|---:|---:|---:|")
    for name, xs in (("per-request source (before)", old), ("cached source (server now)", new)):
        print(f"| {name} | {statistics.median(xs):.2f} | {pct(xs, 0.99):.2f} | "
              f"{statistics.median(xs) / statistics.median(old):.2f}x |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--server-path":
        server_path(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else str(ROOT.parent / "shared" / "eval" /
                                                                             "dev_questions.jsonl"))
    else:
        main()
