"""What one document's commit costs on a grown store: the sample PDFs ingested into it, ``commit_version`` timed.

Run on a store ``benchmarks/scale.py`` grew (a scratch store: this writes the sample PDFs into it, under fresh doc
ids)::

    python benchmarks/commit_cost.py --data /tmp/folio-scale
    # the baseline: this file copied into a checkout of an earlier commit, run from there the same way

Prints the chunks table's size, its full-text index's indexed and unindexed rows before and after, and per PDF the
ingest and commit seconds, then the median commit. The ANN index is left out (``ann_min_rows=0``): training it
on a large table is maintenance, not a commit.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SAMPLES = ("support-policy-v1.pdf", "support-policy-v2.pdf", "linnsequencer-brochure-scan.pdf")


def fts_state(store: Any) -> list[dict[str, Any]] | str:
    if not hasattr(store, "index_status"):  # a checkout from before the index work (the baseline)
        return "not reported"
    return [s for s in store.index_status() if s["table"].startswith("chunks_text")]


def main() -> int:
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="a scratch store (written to)")
    args = ap.parse_args()
    store = Store(args.data, compact_every=0)
    if hasattr(store, "configure_indexes"):  # absent in the baseline checkout, which has no ANN index to skip
        from folio.ingest.storage.indexes import IndexOptions

        store.configure_indexes(IndexOptions(ann_min_rows=0))
    commit = store.commit_version
    times: list[float] = []

    def timed(*a: Any, **k: Any) -> None:
        t0 = time.perf_counter()
        commit(*a, **k)
        times.append(time.perf_counter() - t0)

    store.commit_version = timed  # type: ignore[method-assign]
    print(f"chunks: {store.chunk_table.table.count_rows():,}; full-text index before: {fts_state(store)}")
    for i, name in enumerate(SAMPLES):
        t0 = time.perf_counter()
        ingest_path(store, ROOT / "sample_pdfs" / name, doc_id=f"commit-cost-{time.time_ns()}-{i}", ocr=False)
        print(f"{name}: ingest {time.perf_counter() - t0:.2f} s, commit {times[-1]:.2f} s")
    print(f"commit median {statistics.median(times):.2f} s; full-text index after: {fts_state(store)}")
    return 0


if __name__ == "__main__":  # the parser's forkserver imports this module again: run only as the main script
    sys.exit(main())
