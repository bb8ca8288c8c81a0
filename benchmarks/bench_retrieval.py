"""Retrieval benchmark: page recall per retriever, text latency at scale, MaxSim cost, encoder cost.

    .venv/bin/python benchmarks/bench_retrieval.py            # everything; prints Markdown, writes JSON
    .venv/bin/python benchmarks/bench_retrieval.py --only recall,latency --no-ingest

The corpus (``../shared/corpus``) is ingested once into ``--data`` (default /tmp/folio-bench-retrieval)
and reused; ``--no-ingest`` evaluates only the documents already there and says which questions
were skipped. Scaled copies for the latency runs (10x, 100x: the corpus' chunk rows replicated as
extra documents, vectors copied, not re-encoded) live beside it and are reused too.
JSON goes to benchmarks/results/retrieval.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"
RESULTS = ROOT / "benchmarks" / "results"


def pct(xs: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(xs), p)) if xs else float("nan")


# --------------------------------------------------------------------------- corpus
def ensure_corpus(data: Path, corpus: Path, ingest: bool) -> Any:
    from folio.ingest.pipeline import doc_id_from_filename, ingest_path
    from folio.ingest.storage.store import Store
    from folio.retrieval.routing.summary import SummaryIndexer

    # Without ingest the data dir may belong to a live writer (another benchmark): open it without
    # recovery so nothing of theirs is touched; only ready versions are read.
    store = Store(data, recover=ingest)
    have = {v.doc_id for v in store.list_versions()}
    for pdf in sorted(corpus.glob("*.pdf")):
        if doc_id_from_filename(pdf.name) in have or not ingest:
            continue
        t = time.perf_counter()
        r = ingest_path(store, pdf, indexers=[SummaryIndexer()])
        print(f"ingested {pdf.name}: {r.pages} pages in {time.perf_counter() - t:.0f}s", file=sys.stderr)
    return store


def distinct_pages(hits: list[Any], n: int) -> list[int]:
    out: list[int] = []
    for h in hits:
        for p in h.pages:
            if p not in out:
                out.append(p)
        if len(out) >= n:
            break
    return out[:n]


def bench_recall(store: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    from folio.ingest.pipeline import doc_id_from_filename
    from folio.retrieval.query import SearchQuery
    from folio.retrieval.search import Retriever

    r = Retriever(store)
    have = {v.doc_id for v in store.list_versions()}
    strategies = ["bm25", "dense", "summary", "hybrid"]
    rows: list[dict[str, Any]] = []
    skipped = []
    for q in questions:
        doc = doc_id_from_filename(q["doc"])
        if doc not in have:
            skipped.append(q["id"])
            continue
        gold = set(q["gold_pages"])
        row: dict[str, Any] = {"id": q["id"], "kind": q["evidence_kind"], "lang": q["lang"]}
        for s in strategies:
            hits = r.search(SearchQuery(q["question"], doc_ids=[doc], k=50, strategy=s))
            for k in (5, 10):
                got = set(distinct_pages(hits, k))
                row[f"{s}@{k}"] = len(gold & got) / len(gold)
        rows.append(row)
    summary: dict[str, Any] = {"questions": len(rows), "skipped": skipped, "by_kind": {}}
    groups = {"all": rows}
    for kind in sorted({r["kind"] for r in rows}):
        groups[kind] = [r for r in rows if r["kind"] == kind]
    for name, grp in groups.items():
        summary["by_kind"][name] = {
            "n": len(grp),
            **{
                f"{s}@{k}": round(statistics.mean(r[f"{s}@{k}"] for r in grp), 3)
                for s in strategies
                for k in (5, 10)
            },
        }
    summary["per_question"] = rows
    return summary


# -------------------------------------------------------------------------- latency
def build_scaled(base: Any, factor: int, data: Path) -> Any:
    """A store whose chunks are the base corpus' chunks ``factor`` times (as extra doc ids)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from folio.ingest.storage.schema import VERSIONS_SCHEMA
    from folio.ingest.storage.store import Store

    store = Store(data)
    if store.list_versions():
        return store
    chunks = base.chunks.to_arrow()
    versions = [v for v in base.list_versions() if v.latest]
    rows = []
    for i in range(factor):
        suffix = f"~r{i}" if i else ""
        t = chunks
        if suffix:
            doc = pc.binary_join_element_wise(t.column("doc_id"), pa.scalar(suffix), "")
            ver = pc.binary_join_element_wise(t.column("version_id"), pa.scalar(f"r{i}"), "")
            rid = pc.binary_join_element_wise(t.column("region_id"), pa.scalar(suffix), "")
            t = t.set_column(t.schema.get_field_index("doc_id"), "doc_id", doc)
            t = t.set_column(t.schema.get_field_index("version_id"), "version_id", ver)
            t = t.set_column(t.schema.get_field_index("region_id"), "region_id", rid)
        store.chunks.add(t)
        for v in versions:
            rows.append(
                {
                    "doc_id": v.doc_id + suffix,
                    "version_id": v.version_id + (f"r{i}" if i else ""),
                    "filename": v.filename,
                    "pages": v.pages,
                    "size_bytes": v.size_bytes,
                    "parser_version": v.parser_version,
                    "created_at": time.time(),
                    "regions": v.regions,
                    "status": "ready",
                    "writer_pid": 0,
                    "report": "{}",
                }
            )
    store.versions.add(pa.Table.from_pylist(rows, schema=VERSIONS_SCHEMA))
    store.reindex()  # the full-text indexes over every row, as a store that grew by ingest has after maintenance
    from folio.retrieval.text import ensure_scalar_indexes

    ensure_scalar_indexes(store)
    return store


def bench_latency(
    base: Any, data_root: Path, questions: list[dict[str, Any]], factors: list[int]
) -> dict[str, Any]:
    from folio.ingest.pipeline import doc_id_from_filename
    from folio.retrieval.query import SearchQuery
    from folio.retrieval.search import Retriever

    have = {v.doc_id for v in base.list_versions()}
    qs = [
        (q["question"], doc_id_from_filename(q["doc"]))
        for q in questions
        if doc_id_from_filename(q["doc"]) in have
    ]
    out: dict[str, Any] = {}
    for f in factors:
        store = base if f == 1 else build_scaled(base, f, data_root / f"scale-{f}x")
        r = Retriever(store)
        in_store = {v.doc_id for v in store.list_versions()}
        qs_f = [(text, doc) for text, doc in qs if doc in in_store]
        n_chunks = store.chunks.count_rows()
        res: dict[str, Any] = {"chunks": n_chunks, "versions": len(store.list_versions())}
        for scope in ("doc", "all"):
            if scope == "all" and f > 10:
                continue  # every document at 100x: see the ANN note in retrieval/text.py
            times: list[float] = []
            for rnd in range(4):
                for text, doc in qs_f:
                    t = time.perf_counter()
                    r.search(SearchQuery(text, doc_ids=[doc] if scope == "doc" else None, k=20, strategy="hybrid"))
                    if rnd:  # round 0 warms caches (vectors per version, query embeddings)
                        times.append((time.perf_counter() - t) * 1000)
            res[f"{scope}_p50_ms"] = round(pct(times, 50), 2)
            res[f"{scope}_p99_ms"] = round(pct(times, 99), 2)
        enc = []
        for text, _ in qs[:10]:
            t = time.perf_counter()
            r.text.embed_query(text + " (uncached)")
            enc.append((time.perf_counter() - t) * 1000)
        res["query_embed_p50_ms"] = round(pct(enc, 50), 2)
        out[f"{f}x"] = res
        print(f"latency {f}x: {res}", file=sys.stderr)
    return out


# --------------------------------------------------------------------------- maxsim
def bench_maxsim(pages: int = 10_000, per_page: int = 1000, dim: int = 128, nq: int = 20) -> dict[str, Any]:
    from folio.retrieval.channels.maxsim import PageMatrix, flat_maxsim, pool_mean

    rng = np.random.default_rng(0)
    full = np.empty((pages * per_page, dim), dtype=np.float32)
    step = 200_000
    for i in range(0, len(full), step):
        blk = rng.standard_normal((min(step, len(full) - i), dim)).astype(np.float32)
        full[i : i + step] = blk / np.linalg.norm(blk, axis=1, keepdims=True)
    lens = np.full(pages, per_page)
    q = rng.standard_normal((nq, dim)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)

    def timed(fn: Any, reps: int = 3) -> float:
        fn()
        ts = []
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            ts.append((time.perf_counter() - t) * 1000)
        return statistics.median(ts)

    res: dict[str, Any] = {"pages": pages, "vectors_per_page": per_page, "dim": dim, "query_tokens": nq}
    sub = full[: 1000 * per_page].astype(np.float32)
    offs = np.arange(1000) * per_page
    res["exact_fp32_per_1000_pages_ms"] = round(timed(lambda: flat_maxsim(q, sub, offs)), 1)
    pooled = np.concatenate([pool_mean(sub[o : o + per_page], 3) for o in offs[:1000]])
    plen = len(pooled) // 1000
    res["pooled3_fp32_per_1000_pages_ms"] = round(
        timed(lambda: flat_maxsim(q, pooled, np.arange(1000) * plen)), 1
    )
    t = time.perf_counter()
    m = PageMatrix.from_flat(full, lens, sketch_size=16)
    res["sketch_build_s"] = round(time.perf_counter() - t, 1)
    res["two_stage_10000_pages_ms"] = round(timed(lambda: m.search(q, candidates=100)), 1)
    res["two_stage_10000_pages_200cand_ms"] = round(timed(lambda: m.search(q, candidates=200)), 1)
    res["exact_10000_pages_ms_extrapolated"] = round(res["exact_fp32_per_1000_pages_ms"] * 10, 1)
    print(f"maxsim: {res}", file=sys.stderr)
    return res


# -------------------------------------------------------------------------- encoders
def bench_encoders(page_png: Path | None) -> dict[str, Any]:
    from PIL import Image

    from folio.ingest.torchfix import ensure_torchvision
    from folio.retrieval.threads import torch_single_thread

    ensure_torchvision()
    import open_clip
    import torch

    res: dict[str, Any] = {"threads": torch.get_num_threads()}
    img = Image.open(page_png).convert("RGB") if page_png else Image.new("RGB", (1240, 1754), "white")
    model, _, pre = open_clip.create_model_and_transforms("ViT-B-32", pretrained=None)
    model.eval()
    crops = [img.crop((0, 0, 600, 400))] * 8
    with torch.inference_mode():
        model.encode_image(torch.stack([pre(c) for c in crops[:2]]))
        t = time.perf_counter()
        model.encode_image(torch.stack([pre(c) for c in crops]))
        res["clip_vit_b32_ms_per_figure"] = round((time.perf_counter() - t) * 1000 / len(crops), 1)
        tok = open_clip.get_tokenizer("ViT-B-32")
        model.encode_text(tok(["warm-up"]))
        t = time.perf_counter()
        with torch_single_thread():  # as the service encodes queries
            model.encode_text(tok(["a wiring diagram of the pump"]))
        res["clip_vit_b32_ms_per_query"] = round((time.perf_counter() - t) * 1000, 1)
    res["clip_vit_b32_params_m"] = round(sum(p.numel() for p in model.parameters()) / 1e6, 1)
    del model
    res.update(_bench_colmodernvbert(img))
    print(f"encoders: {res}", file=sys.stderr)
    return res


def _bench_colmodernvbert(img: Any) -> dict[str, Any]:
    """ColModernVBert at the published size (ModernBERT-base + SigLIP-base/16, 512 px), random weights."""
    import tempfile

    import torch
    from colpali_engine.models import ColModernVBert, ColModernVBertProcessor
    from transformers import (
        AutoTokenizer,
        Idefics3ImageProcessor,
        ModernBertConfig,
        ModernVBertConfig,
        SiglipVisionConfig,
    )

    from folio.ingest.embed import minilm_path
    from folio.retrieval.threads import torch_single_thread

    tok = AutoTokenizer.from_pretrained(minilm_path())
    special = [
        "<fake_token_around_image>",
        "<image>",
        "<end_of_utterance>",
        "<global-img>",
        "<|begin_of_text|>",
    ]
    special += [f"<row_{i + 1}_col_{j + 1}>" for i in range(6) for j in range(6)]
    tok.add_special_tokens({"additional_special_tokens": special})
    ip = Idefics3ImageProcessor(size={"longest_edge": 2048}, max_image_size={"longest_edge": 512})
    proc = ColModernVBertProcessor(image_processor=ip, tokenizer=tok, image_seq_len=64)
    text = ModernBertConfig(
        vocab_size=len(tok),
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id,
        cls_token_id=tok.cls_token_id,
        sep_token_id=tok.sep_token_id,
    )
    vision = SiglipVisionConfig(image_size=512, patch_size=16)
    cfg = ModernVBertConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        pixel_shuffle_factor=4,
    )
    model = ColModernVBert(cfg).eval()
    with tempfile.TemporaryDirectory() as d:
        proc.save_pretrained(d)
        proc = ColModernVBertProcessor.from_pretrained(d)
    params = sum(p.numel() for p in model.parameters()) / 1e6
    with torch.inference_mode():
        batch = proc.process_images([img])
        t = time.perf_counter()
        out = model(**batch)
        page_s = time.perf_counter() - t
        qb = proc.process_queries(["wiring diagram of the pump"])
        t = time.perf_counter()
        with torch_single_thread():
            model(**qb)
        q_ms = (time.perf_counter() - t) * 1000
    return {
        "colmodernvbert_params_m": round(params, 1),
        "colmodernvbert_s_per_page": round(page_s, 2),
        "colmodernvbert_vectors_per_page": int(out.shape[1]),
        "colmodernvbert_ms_per_query": round(q_ms, 1),
    }


# ----------------------------------------------------------------------------- main
def render(results: dict[str, Any]) -> str:
    lines: list[str] = []
    rec = results.get("recall")
    if rec:
        lines += [
            f"### Page recall (distinct pages of the ranked hits; {rec['questions']} questions, "
            f"skipped {len(rec['skipped'])})",
            "",
            "| evidence | n | bm25@5 | dense@5 | summary@5 | fused@5 "
            "| bm25@10 | dense@10 | summary@10 | fused@10 |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for kind, g in rec["by_kind"].items():
            cells = [g[f"{s}@{k}"] for k in (5, 10) for s in ("bm25", "dense", "summary", "hybrid")]
            lines.append(f"| {kind} | {g['n']} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
        lines.append("")
    lat = results.get("latency")
    if lat:
        lines += [
            "### Warm hybrid text retrieval latency (ms; query embedding cached)",
            "",
            "| corpus | chunks | versions | doc p50 | doc p99 | all-docs p50 | all-docs p99 "
            "| ratio doc p99 vs 1x |",
            "|---|---|---|---|---|---|---|---|",
        ]
        base = lat.get("1x", {}).get("doc_p99_ms") or float("nan")
        for f, r in lat.items():
            lines.append(
                f"| {f} | {r['chunks']} | {r['versions']} | {r['doc_p50_ms']} | {r['doc_p99_ms']} | "
                f"{r.get('all_p50_ms', '-')} | {r.get('all_p99_ms', '-')} | {r['doc_p99_ms'] / base:.2f} |"
            )
        lines.append(
            f"\nQuery embedding (MiniLM, uncached) p50: {lat.get('1x', {}).get('query_embed_p50_ms')} ms\n"
        )
    ms = results.get("maxsim")
    if ms:
        lines += [
            f"### MaxSim ({ms['vectors_per_page']} vectors/page, dim {ms['dim']}, "
            f"{ms['query_tokens']} query tokens)",
            "",
            "| method | ms |",
            "|---|---|",
            f"| exact fp32, per 1,000 pages | {ms['exact_fp32_per_1000_pages_ms']} |",
            f"| pooled x3, per 1,000 pages | {ms['pooled3_fp32_per_1000_pages_ms']} |",
            f"| exact over 10,000 pages (extrapolated) | {ms['exact_10000_pages_ms_extrapolated']} |",
            f"| sketch candidates (100) + exact rerank, 10,000 pages | {ms['two_stage_10000_pages_ms']} |",
            f"| sketch candidates (200) + exact rerank, 10,000 pages "
            f"| {ms['two_stage_10000_pages_200cand_ms']} |",
            "",
        ]
    enc = results.get("encoders")
    if enc:
        lines += [
            "### Encoder cost on this CPU (random weights, real architectures)",
            "",
            "| what | value |",
            "|---|---|",
        ]
        lines += [f"| {k} | {v} |" for k, v in enc.items()]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="/tmp/folio-bench-retrieval", help="the store the benchmark ingests into")
    ap.add_argument("--corpus", default=str(SHARED / "corpus"))
    ap.add_argument("--questions", default=str(SHARED / "eval" / "dev_questions.jsonl"))
    ap.add_argument("--only", default="recall,latency,maxsim,encoders")
    ap.add_argument("--no-ingest", action="store_true", help="use only documents already in --data")
    ap.add_argument("--factors", default="1,10,100")
    ap.add_argument("--scaled", default="/tmp/folio-bench-retrieval-scaled", help="where scaled copies live")
    ap.add_argument("--maxsim-pages", type=int, default=10_000)
    args = ap.parse_args()
    parts = set(args.only.split(","))
    data = Path(args.data)
    questions = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
    results: dict[str, Any] = {}
    out_path = RESULTS / "retrieval.json"
    if out_path.exists():
        results = json.loads(out_path.read_text())
    store = None
    if parts & {"recall", "latency"}:
        store = ensure_corpus(data, Path(args.corpus), ingest=not args.no_ingest)
    if "recall" in parts:
        results["recall"] = bench_recall(store, questions)
    if "recall" in parts:
        RESULTS.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(results, indent=1))
    if "latency" in parts:
        results["latency"] = bench_latency(
            store, Path(args.scaled), questions, [int(f) for f in args.factors.split(",")]
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(results, indent=1))  # keep finished parts if a later one fails
    if "maxsim" in parts:
        results["maxsim"] = bench_maxsim(pages=args.maxsim_pages)
    if "encoders" in parts:
        pngs = sorted((data / "assets").glob("*/page-1.png")) if data.exists() else []
        results["encoders"] = bench_encoders(pngs[0] if pngs else None)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(results, indent=1))
    print(render(results))


if __name__ == "__main__":
    main()
