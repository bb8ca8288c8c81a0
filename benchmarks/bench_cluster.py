"""folio on a cluster, measured on this machine (issue 10): ``python benchmarks/bench_cluster.py``.

Everything runs on loopback, started here (``api/cluster/local.py``): moto's S3 server and Ray
clusters of a head (no CPUs) plus 1 or 2 worker nodes of one CPU each.

1. **Ingest throughput** on a corpus slice (the first ``--pages`` pages of ``--docs`` documents of
   ``../shared/corpus``, OCR off), in the same run:
   - ``in-process, local disk``: today's ``folio ingest`` (one process, models warm);
   - ``in-process, s3``: the same into the S3 server;
   - ``ray, 1 worker node`` / ``ray, 2 worker nodes``: ``folio ingest --ray`` into S3, one task
     per document. Ray workers start cold (they load MiniLM on their first document), which the
     wall time includes: that is what a user sees.
2. **Query latency**: ``POST /v1/context``'s code path (``api.service.context.build_context``, budget 1500,
   warm) over the same documents on local disk and on S3, and one image read (``Store.read_asset``).
3. **Where images live**: the page renders of the slice written as rows of a Lance table in one
   commit (what folio does) vs one S3 object each (boto3 ``put_object``), and one image read back.

Writes ``benchmarks/results/cluster.json`` and prints the Markdown table for the README. On a
machine with two cores shared with other work the absolute numbers are noisy; ratios within one
run are the point.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"
OUT = ROOT / "benchmarks" / "results" / "cluster.json"
QUESTIONS = [
    "How do I read a CSV file?",
    "What does the rule require?",
    "How is colour management configured?",
    "How do I set the plot title?",
    "Which options control the page layout?",
]


def corpus_slice(docs: int, pages: int, into: Path) -> list[Path]:
    """The first ``pages`` pages of the ``docs`` smallest corpus PDFs (scans left out: OCR is off)."""
    import pymupdf

    pdfs = sorted((p for p in CORPUS.glob("*.pdf") if "scan" not in p.name), key=lambda p: p.stat().st_size)
    out = []
    for p in pdfs[:docs]:
        src = pymupdf.open(p)
        dst = pymupdf.open()
        dst.insert_pdf(src, from_page=0, to_page=min(pages, src.page_count) - 1)
        path = into / p.name
        dst.save(path)
        out.append(path)
    return out


def ingest_in_process(uri: str, paths: list[Path]) -> dict[str, Any]:
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    store = Store(uri)
    started = time.perf_counter()
    pages = 0
    for p in paths:
        pages += ingest_path(store, p, ocr=False).pages
    wall = time.perf_counter() - started
    return {"docs": len(paths), "pages": pages, "wall_s": round(wall, 1), "pages_per_s": round(pages / wall, 2)}


def ingest_on_ray(uri: str, paths: list[Path], workers: int) -> dict[str, Any]:
    import ray

    from folio.api.cluster.board import board, connect, job_spec
    from folio.api.cluster.local import start_ray
    from folio.ingest.options import IngestOptions
    from folio.ingest.pipeline import IngestJob
    from folio.ingest.storage.store import Store
    from folio.settings import Settings

    cluster = start_ray(workers=workers, cpus_per_worker=1)
    try:
        connect(cluster.address)
        store = Store(uri)
        jobs = board(cluster.address)
        settings = Settings(ocr=False)
        started = time.perf_counter()
        options = IngestOptions.from_settings(settings.ingest)
        submitted = [
            ray.get(
                jobs.submit.remote(
                    job_spec(store, IngestJob.check(p.read_bytes(), filename=p.name, options=options), settings),
                    {"filename": p.name},
                )
            )
            for p in paths
        ]
        while True:
            snaps = [ray.get(jobs.get.remote(j["job_id"])) for j in submitted]
            if all(s["status"] in ("done", "failed") for s in snaps):
                break
            time.sleep(0.2)
        wall = time.perf_counter() - started
        failed = [s["error"] for s in snaps if s["status"] != "done"]
        if failed:
            raise RuntimeError(f"ray ingest failed: {failed}")
        pages = sum(s["result"]["pages"] for s in snaps)
        return {"docs": len(paths), "pages": pages, "wall_s": round(wall, 1), "pages_per_s": round(pages / wall, 2)}
    finally:
        ray.shutdown()
        cluster.shutdown()


def query_latency(uri: str, n: int) -> dict[str, Any]:
    from folio.api.schemas import ContextRequest
    from folio.api.service.context import build_context
    from folio.ingest.storage.store import Store
    from folio.retrieval.search import Retriever
    from folio.settings import Settings

    store = Store(uri)
    settings = Settings(data=uri)
    retriever = Retriever.from_settings(store, settings)
    build_context(store, retriever, ContextRequest(query="warm up", budget=1500), settings)
    times = []
    for i in range(n):
        req = ContextRequest(query=QUESTIONS[i % len(QUESTIONS)], budget=1500)
        t = time.perf_counter()
        build_context(store, retriever, req, settings)
        times.append((time.perf_counter() - t) * 1000)
    v = store.list_versions()[0]
    page = store.region_index(v.doc_id, v.version_id).of_kind(v.doc_id, v.version_id, "page")[0]
    image = page.meta_get("image") or ""
    reads = []
    for _ in range(10):
        t = time.perf_counter()
        store.read_asset(image)
        reads.append((time.perf_counter() - t) * 1000)
    times.sort()
    return {
        "queries": n,
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
        "image_read_ms": round(statistics.median(reads), 1),
    }


def image_storage(paths: list[Path], s3: Any) -> dict[str, Any]:
    """Page renders as rows of a Lance table (one commit) vs one S3 object each."""
    import boto3
    import lancedb
    import pyarrow as pa
    import pymupdf

    from folio.api.cluster.local import KEY_ID, REGION, SECRET
    from folio.ingest.storage.objstore import storage_options
    from folio.ingest.storage.schema import ASSETS
    from folio.settings import StorageSettings

    pngs: list[tuple[str, bytes]] = []
    for p in paths:
        doc = pymupdf.open(p)
        for i, page in enumerate(doc):
            pngs.append(
                (f"assets/{p.stem}@x/page-{i + 1}.png", page.get_pixmap(matrix=pymupdf.Matrix(1.5, 1.5)).tobytes("png"))
            )
    total = sum(len(b) for _, b in pngs)
    options = storage_options("s3://folio/imgbench", StorageSettings())
    db = lancedb.connect("s3://folio/imgbench", storage_options=options)
    rows = pa.Table.from_pylist(
        [{"doc_id": "d", "version_id": "x", "path": k, "data": b} for k, b in pngs], schema=ASSETS.schema
    )
    t = time.perf_counter()
    table = db.create_table("assets", schema=ASSETS.schema, mode="overwrite")
    table.add(rows)
    lance_write = time.perf_counter() - t
    client = boto3.client(
        "s3", endpoint_url=s3.endpoint, aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET, region_name=REGION
    )
    t = time.perf_counter()
    for k, b in pngs:
        client.put_object(Bucket="folio", Key="objbench/" + k, Body=b)
    obj_write = time.perf_counter() - t
    key = pngs[len(pngs) // 2][0]
    lance_reads, obj_reads = [], []
    for _ in range(10):
        t = time.perf_counter()
        table.search().where(f"path = '{key}'").select(["data"]).limit(1).to_arrow()
        lance_reads.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        client.get_object(Bucket="folio", Key="objbench/" + key)["Body"].read()
        obj_reads.append((time.perf_counter() - t) * 1000)
    return {
        "images": len(pngs),
        "mb": round(total / 1e6, 1),
        "lance_table": {"write_s": round(lance_write, 2), "read_ms": round(statistics.median(lance_reads), 1)},
        "s3_objects": {"write_s": round(obj_write, 2), "read_ms": round(statistics.median(obj_reads), 1)},
    }


def table(results: dict[str, Any]) -> str:
    ing = results["ingest"]
    n_pages = ing["in-process, local disk"]["pages"]
    lines = [
        f"Corpus slice: {results['docs']} documents x first {results['pages']} pages ({n_pages} pages), OCR off; "
        f"{results.get('cores')} cores, load average {results.get('load_average_1m_at_end')} at the end.",
        "",
        "| ingest | wall | pages/s |",
        "| --- | ---: | ---: |",
    ]
    for name, r in ing.items():
        lines.append(f"| {name} | {r['wall_s']} s | {r['pages_per_s']} |")
    lines += [
        "",
        "| query (`build_context`, budget 1500, warm) | p50 | p95 | one page image |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, r in results["query"].items():
        lines.append(f"| {name} | {r['p50_ms']} ms | {r['p95_ms']} ms | {r['image_read_ms']} ms |")
    im = results["images"]
    lines += [
        "",
        f"| {im['images']} page renders ({im['mb']} MB) on S3 | write | read one |",
        "| --- | ---: | ---: |",
        f"| rows of a Lance table (folio), one commit | {im['lance_table']['write_s']} s "
        f"| {im['lance_table']['read_ms']} ms |",
        f"| one S3 object each | {im['s3_objects']['write_s']} s | {im['s3_objects']['read_ms']} ms |",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=6)
    ap.add_argument("--pages", type=int, default=5)
    ap.add_argument("--queries", type=int, default=20)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from folio.api.cluster.local import LocalS3

    s3 = LocalS3().start()
    os.environ.update(s3.env())
    results: dict[str, Any] = {"docs": args.docs, "pages": args.pages, "ingest": {}, "query": {}}
    with tempfile.TemporaryDirectory() as tmp:
        paths = corpus_slice(args.docs, args.pages, Path(tmp))
        local = str(Path(tmp) / "local-store")
        # Warm the in-process models once (a tiny document into a throwaway store): the in-process
        # rows then measure ingest, not model loading.
        ingest_in_process(str(Path(tmp) / "warm"), paths[:1])
        results["ingest"]["in-process, local disk"] = ingest_in_process(local, paths)
        results["ingest"]["in-process, s3"] = ingest_in_process("s3://folio/inproc", paths)
        results["ingest"]["ray, 1 worker node, s3"] = ingest_on_ray("s3://folio/ray1", paths, 1)
        results["ingest"]["ray, 2 worker nodes, s3"] = ingest_on_ray("s3://folio/ray2", paths, 2)
        results["query"]["local disk"] = query_latency(local, args.queries)
        results["query"]["s3 (moto, loopback)"] = query_latency("s3://folio/inproc", args.queries)
        results["images"] = image_storage(paths, s3)
    s3.stop()
    results["cores"] = os.cpu_count()
    results["load_average_1m_at_end"] = round(os.getloadavg()[0], 1)
    results["date"] = time.strftime("%Y-%m-%d")
    OUT.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
