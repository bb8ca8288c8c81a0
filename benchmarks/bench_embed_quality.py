"""Page recall@10 with document vectors from another embedding backend, on both development sets.

    python benchmarks/bench_embed_quality.py --backend onnx-int8 [--data data/eval-quality] [--out DIR]
    python benchmarks/bench_embed_quality.py --speed ../shared/corpus/R-data-import-export.pdf

Copies each set's ingested store (``DATA/{manuals,wide}/folio``, written with fp32 torch vectors),
re-encodes every chunk's text with ``--backend`` into the copy, and measures gold-page recall of
the first 10 hits (``hybrid``, k=50, each question restricted to its document: the R@10 of
``eval_quality``) on the original store and on the copy, in the same run. Queries are encoded as
the server encodes them (``MiniLM.encode_queries``: fp32). Re-encoding ~51,000 chunks takes about
40 minutes on the busy 2-core machine.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SETS = {
    "manuals": ROOT.parent / "shared" / "eval" / "dev_questions.jsonl",
    "wide": ROOT.parent / "shared" / "eval" / "wide" / "questions.jsonl",
}


def reencode(src: Path, dst: Path, backend: str) -> float:
    """Copy the store at ``src`` to ``dst`` with every chunk vector re-encoded by ``backend``."""
    import lancedb
    import numpy as np
    import pyarrow as pa
    from lancedb.index import FTS

    from folio.ingest.embed import text_encoder
    from folio.ingest.storage.sql import TEXT_DIM

    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True)
    db = lancedb.connect(str(dst / "lancedb"))
    tb = db.open_table("chunks").to_arrow()
    t = time.perf_counter()
    vec = np.asarray(text_encoder(backend).encode(tb["text"].to_pylist()), dtype=np.float32)
    secs = time.perf_counter() - t
    col = pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel(), pa.float32()), TEXT_DIM)
    tb = tb.set_column(tb.schema.get_field_index("vector"), "vector", col)
    db.drop_table("chunks")
    db.create_table("chunks", tb).create_index("fts", config=FTS(with_position=True))
    return secs


def recall_at_10(store_dir: Path, questions: Path, strategy: str = "hybrid") -> dict[str, Any]:
    from benchmarks.quality.metrics import page_recall_at_k
    from folio.ingest.pipeline import doc_id_from_filename
    from folio.ingest.storage.store import Store
    from folio.retrieval.query import SearchQuery
    from folio.retrieval.search import Retriever

    retriever = Retriever(Store(store_dir, recover=False))
    per: dict[str, float] = {}
    for line in questions.read_text().splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        query = SearchQuery(q["question"], doc_ids=[doc_id_from_filename(q["doc"])], k=50, strategy=strategy)
        hits = retriever.search(query)
        r = page_recall_at_k([h.pages for h in hits], q["gold_pages"], 10)
        if r == r:  # questions without gold pages are NaN
            per[q["id"]] = r
    return {"r10": 100 * statistics.mean(per.values()), "n": len(per), "per": per}


def speed(pdf: Path, reps: int = 3) -> None:
    """Encoding time of one document's searchable units per backend: alternating runs, medians."""
    from folio.ingest.embed import BACKENDS, text_encoder
    from folio.ingest.pdf.parse import parse_pdf
    from folio.ingest.storage.sql import SEARCH_KINDS

    parsed = parse_pdf(pdf.read_bytes(), doc_id="b", filename=pdf.name, assets_dir=None, ocr=False)
    texts = [r.text for r in parsed.regions if r.kind in SEARCH_KINDS and r.text.strip()]
    encoders = {b: text_encoder(b) for b in BACKENDS}
    for enc in encoders.values():
        enc.encode(texts[:8])  # warm-up
    times: dict[str, list[float]] = {b: [] for b in BACKENDS}
    for _ in range(reps):
        for b, enc in encoders.items():
            t = time.perf_counter()
            enc.encode(texts)
            times[b].append(time.perf_counter() - t)
    base = statistics.median(times["torch"])
    print(f"{pdf.name}: {len(texts)} units, {len(parsed.pages)} pages, {reps} alternating runs\n")
    print("| backend | median s | units/s | speed-up vs fp32 torch |")
    print("|---|---:|---:|---:|")
    for b in BACKENDS:
        m = statistics.median(times[b])
        print(f"| {b} | {m:.2f} | {len(texts) / m:.0f} | {base / m:.2f}x |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="onnx-int8")
    ap.add_argument("--data", default=str(ROOT / "data" / "eval-quality"))
    ap.add_argument("--out", default="/tmp/folio-embed-quality")
    ap.add_argument("--strategy", default="hybrid")
    ap.add_argument("--reuse", action="store_true", help="keep re-encoded copies from an earlier run")
    ap.add_argument("--speed", help="a PDF: time the backends on its units instead")
    a = ap.parse_args()
    if a.speed:
        speed(Path(a.speed))
        return
    rows = []
    for name, questions in SETS.items():
        src, dst = Path(a.data) / name / "folio", Path(a.out) / a.backend / name / "folio"
        secs = None if a.reuse and dst.exists() else reencode(src, dst, a.backend)
        base, new = recall_at_10(src, questions, a.strategy), recall_at_10(dst, questions, a.strategy)
        changed = sorted(q for q in base["per"] if base["per"][q] != new["per"].get(q))
        rows.append((name, base, new, changed, secs))
    print(f"| set | questions | R@10 fp32 torch | R@10 {a.backend} | difference (points) | questions changed |")
    print("|---|---:|---:|---:|---:|---|")
    for name, base, new, changed, _ in rows:
        print(f"| {name} | {base['n']} | {base['r10']:.2f} | {new['r10']:.2f} | {new['r10'] - base['r10']:+.2f} | "
              f"{', '.join(changed) or '-'} |")


if __name__ == "__main__":
    main()
