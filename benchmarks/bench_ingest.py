"""Ingest throughput: folio's parser vs pymupdf4llm and bare get_text("dict"), plus OCR and embedding.

    python benchmarks/bench_ingest.py [--corpus DIR] [--files a.pdf b.pdf]

Each document is measured in its own subprocess, so ``ru_maxrss`` is that document's peak RSS.
Embedding: ``default_text_encoder().encode(sentences)`` against the floor = the model's forward
passes alone on the same length-sorted batches, tokenised beforehand (tokenisation is excluded
from the floor, so the ratio shows tokenizer + pooling + bookkeeping overhead).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def measure(path: str) -> dict[str, float]:
    import pymupdf

    from ingest.parse import parse_pdf

    data = pathlib.Path(path).read_bytes()
    doc = pymupdf.open(stream=data, filetype="pdf")
    n = doc.page_count
    t = time.perf_counter()
    for p in doc:
        p.get_text("dict")
    dict_s = time.perf_counter() - t
    t = time.perf_counter()
    parsed = parse_pdf(data, doc_id="b", filename=pathlib.Path(path).name, assets_dir=None, ocr=False)
    parse_s = time.perf_counter() - t
    scanned = [p.page for p in parsed.pages if p.scanned]
    out: dict[str, float] = {"pages": n, "dict_pps": n / dict_s, "parse_pps": n / parse_s, "scanned": len(scanned)}
    import pymupdf4llm

    t = time.perf_counter()
    pymupdf4llm.to_markdown(doc)
    out["p4llm_pps"] = n / (time.perf_counter() - t)
    if scanned:
        t = time.perf_counter()
        ocrd = parse_pdf(data, doc_id="b", filename="x", assets_dir=None, ocr=True)
        out["ocr_pps"] = ocrd.ocr_pages / max(time.perf_counter() - t, 1e-9)
    sents = [r.text for r in parsed.regions if r.kind == "sentence"][:2000]
    if sents:
        import torch

        from ingest.embed import default_text_encoder

        enc = default_text_encoder()
        enc.encode(sents[:8])
        t = time.perf_counter()
        enc.encode(sents)
        enc_s = time.perf_counter() - t
        order = sorted(range(len(sents)), key=lambda i: len(sents[i]))
        batches = [
            enc._tokenizer([sents[i] or " " for i in order[s : s + enc.batch_size]], padding=True, truncation=True,
                           max_length=enc.max_length, return_tensors="pt")
            for s in range(0, len(order), enc.batch_size)
        ]
        t = time.perf_counter()
        with torch.inference_mode():
            for b in batches:
                enc._model(**b)
        floor_s = time.perf_counter() - t
        out.update(embed_sps=len(sents) / enc_s, embed_ratio=enc_s / floor_s)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    ap.add_argument("--files", nargs="*")
    ap.add_argument("--one")
    a = ap.parse_args()
    if a.one:
        print(json.dumps(measure(a.one)))
        return
    files = a.files or sorted(str(p) for p in pathlib.Path(a.corpus).glob("*.pdf"))
    rows = []
    for f in files:
        r = subprocess.run([sys.executable, __file__, "--one", f], capture_output=True, text=True, cwd=ROOT, check=True)
        res = json.loads(r.stdout.strip().splitlines()[-1])
        res["file"] = pathlib.Path(f).name
        rows.append(res)
    pages = sum(r["pages"] for r in rows)

    def tot(key: str) -> float:  # pages / total seconds
        return pages / sum(r["pages"] / r[key] for r in rows)

    total = {"file": "TOTAL", "pages": pages, "parse_pps": tot("parse_pps"), "dict_pps": tot("dict_pps"),
             "p4llm_pps": tot("p4llm_pps"), "peak_rss_mb": max(r["peak_rss_mb"] for r in rows)}
    print("| file | pages | parse p/s | dict p/s | pymupdf4llm p/s | parse/4llm | dict/parse | OCR p/s | embed sent/s "
          "| embed/floor | peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in [*rows, total]:
        print(f"| {r['file']} | {r['pages']} | {r['parse_pps']:.1f} | {r['dict_pps']:.1f} | {r['p4llm_pps']:.1f} | "
              f"{r['parse_pps'] / r['p4llm_pps']:.1f}x | {r['dict_pps'] / r['parse_pps']:.1f}x | "
              f"{r.get('ocr_pps', float('nan')):.2f} | {r.get('embed_sps', float('nan')):.0f} | "
              f"{r.get('embed_ratio', float('nan')):.2f} | {r['peak_rss_mb']:.0f} |")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "ingest.json").write_text(json.dumps({"documents": rows, "total": total}, indent=2))


if __name__ == "__main__":
    main()
