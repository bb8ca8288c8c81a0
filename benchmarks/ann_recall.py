"""Recall@10 of the ANN path of dense search against exact search, on the development questions, unscoped.

    .venv/bin/python benchmarks/ann_recall.py                           # wide, mmlb, finance; IVF_PQ
    .venv/bin/python benchmarks/ann_recall.py --sets wide --index IVF_HNSW_SQ --nprobes 16 --refine-factor 5
    .venv/bin/python benchmarks/ann_recall.py --sets wide --keep --nprobes 64   # reuse the copy and its index

For each set, the chunks table of ``/work/data/eval/<set>/folio`` (read only) is copied to ``--work``
(default /tmp/folio-ann-recall), the ANN index built on the copy as maintenance builds it
(``folio.ingest.storage.indexes.build_ann``, the ``FOLIO_ANN_*`` options given here), and every question of
``../shared/eval/<set>/questions.jsonl`` asked unscoped (every document of the store) of the dense channel
twice: exact (the in-process brute force every scoped query takes) and through the index
(``TextRetriever`` with its scope threshold at 0). Recall@10 is the share of the exact top 10 regions the
ANN top 10 holds, averaged over questions; recall@10 by distance counts an ANN hit as found when its exact
similarity (the refine step computes it) is at least the exact 10th's less 1e-4: repeated text (a footer on
every page) gives many regions one vector, and the id recall then counts a tie as a miss. Prints a Markdown
table; ``--json`` writes it too.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"
if not (SHARED / "eval").exists():
    SHARED = Path("/work/shared")
STORES = Path("/work/data/eval")


def questions(name: str) -> list[str]:
    path = SHARED / "eval" / name / "questions.jsonl"
    return [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def copy_store(name: str, work: Path) -> Path:
    """A private copy of the set's LanceDB tables (the index is built on the copy, never on the eval store)."""
    src, dst = STORES / name / "folio", work / name
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    shutil.copytree(src / "lancedb", dst / "lancedb")
    return dst


def measure(name: str, args: argparse.Namespace) -> dict[str, Any]:
    from folio.ingest.storage.indexes import IndexOptions, build_ann
    from folio.ingest.storage.store import Store
    from folio.retrieval.scope import resolve_scope
    from folio.retrieval.text import TextRetriever

    data = Path(args.work) / name
    reuse = args.keep and (data / "lancedb" / "chunks.lance" / "_indices").exists()
    if not reuse:
        data = copy_store(name, Path(args.work))
    options = IndexOptions(ann_min_rows=1, ann_index=args.index, nprobes=args.nprobes, refine_factor=args.refine_factor)
    store = Store(data, compact_every=0).configure_indexes(options)
    rows = store.chunks.count_rows()
    t = time.perf_counter()
    if not (reuse and store.has_vector_index()):
        build_ann(store.chunks, options)
    build_s = time.perf_counter() - t
    from folio.ingest.embed import MiniLM

    encoder = MiniLM()
    exact = TextRetriever(store, encoder, ann_threshold=10**12)
    ann = TextRetriever(store, encoder, ann_threshold=0)
    scope = resolve_scope(store)
    recalls, tie_recalls, exact_ms, ann_ms = [], [], [], []
    qs = questions(name)[: args.limit or None]
    for q in qs:
        ann.embed_query(q)
        exact.embed_query(q)
        t = time.perf_counter()
        truth = exact.dense(q, scope, 10)
        exact_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        found = ann.dense(q, scope, 10)
        ann_ms.append((time.perf_counter() - t) * 1000)
        want, got = {c.region_id for c in truth}, {c.region_id for c in found}
        recalls.append(len(want & got) / max(len(want), 1))
        tenth = min((c.score for c in truth), default=0.0)
        tie_recalls.append(min(len(truth), sum(c.score >= tenth - 1e-4 for c in found)) / max(len(truth), 1))
    return {
        "set": name, "chunks": rows, "questions": len(qs), "index": args.index, "nprobes": args.nprobes,
        "refine_factor": args.refine_factor, "build_s": round(build_s, 1),
        "recall_at_10": round(statistics.fmean(recalls), 4), "min_recall": round(min(recalls), 2),
        "recall_at_10_by_distance": round(statistics.fmean(tie_recalls), 4),
        "exact_ms_p50": round(statistics.median(exact_ms), 1), "ann_ms_p50": round(statistics.median(ann_ms), 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default="wide,mmlb,finance", help="comma-separated development sets")
    ap.add_argument("--index", default="IVF_PQ", choices=["IVF_PQ", "IVF_HNSW_SQ"])
    ap.add_argument("--nprobes", type=int, default=64)
    ap.add_argument("--refine-factor", type=int, default=20)
    ap.add_argument("--limit", type=int, default=0, help="at most this many questions per set (0: all)")
    ap.add_argument("--work", default="/tmp/folio-ann-recall", help="where the copies go (removed at the end)")
    ap.add_argument("--keep", action="store_true", help="keep the copies, and reuse one that has its index")
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    results = []
    print("| set | chunks | questions | index | nprobes | refine | build s | recall@10 | min | by distance | "
          "exact p50 ms | ann p50 ms |")
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        r = measure(name, args)
        results.append(r)
        print(f"| {r['set']} | {r['chunks']} | {r['questions']} | {r['index']} | {r['nprobes']} | "
              f"{r['refine_factor']} | {r['build_s']} | {r['recall_at_10']:.3f} | {r['min_recall']:.1f} | "
              f"{r['recall_at_10_by_distance']:.3f} | "
              f"{r['exact_ms_p50']} | {r['ann_ms_p50']} |", flush=True)
        if not args.keep:
            shutil.rmtree(Path(args.work) / name, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
