"""The scale benchmark (issue 47, item 3): one store grown to 10⁴, 10⁵, ... pages, measured at each size.

    PYTHONPATH=. .venv/bin/python benchmarks/scale.py --pages 10000 100000 --out /tmp/folio-scale

At each size in ``--pages`` (measured in that order, the store only grows):

1. **grow**: copies of the real parsed documents of ``--sources`` (the evaluation stores, read only) appended in
   the store's own row format until the store holds that many pages (``benchmarks/scale_grow.py``: text varied,
   vectors perturbed by calibrated noise, pending → ready versions rows); then the full-text index built whole
   and one maintenance pass (``bulk``: what a bulk load costs, reported as rows/s);
2. **ingest**: each PDF of ``--docs`` through the real path (``Folio.ingest_path``, as ``folio ingest``) under a
   new doc id; parse + embed and commit timed apart (the pipeline's ``commit`` progress marks), medians reported;
3. **maintenance**: the store's maintenance entry point after those commits (``maintenance``: an adapter; today
   ``Store.compact``);
4. **queries**: a real ``folio serve`` on loopback, ``/v1/context`` with questions of ``--questions``, scoped to
   one document (a copy of the question's document) and unscoped over the collection: ``--warmup`` queries first
   (not counted), then ``--queries`` of each, one at a time; p50 and p99; the server's RSS with its query
   processes (psutil), after the queries;
5. **disk**: bytes of the LanceDB tables per page, after a cleanup of old table versions (images not counted).

Sizes in ``--extrapolate`` get rows computed from the measured ones (a power law through the two largest sizes
measured; disk linear in pages; a latency only from sizes of at least ``MIN_FIT_QUERIES`` queries each, and
never a p50 above its p99), marked ``extrapolated``. Results: ``benchmarks/results/scale.json`` and
``scale.md`` (rewritten after each size, so a run cut short keeps what it measured) and a Markdown table on stdout.
``--grow-only``: only step 1 for the largest size (the test and a store to poke at).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EVAL = Path("/work/data/eval")
SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared").exists() else Path("/work/shared")
DEFAULT_SOURCES = [EVAL / n / "folio" for n in ("mmlb", "wide", "finance")]
DEFAULT_DOCS = [ROOT / "sample_pdfs" / n for n in ("support-policy-v1.pdf", "support-policy-v2.pdf",
                                                     "federal-register-2020-17221.pdf")]
RESULTS = ROOT / "benchmarks" / "results"
# Maintenance entry points of the store, tried in order: the first one the store has runs; ``compact`` otherwise
# (``Store.compact``: LanceDB ``optimize`` of every table, which on branch i47-index also builds the indexes the
# table's size calls for and folds new rows into them).
MAINTENANCE_ENTRY_POINTS = ("maintain_indexes", "update_indexes", "optimize_indexes")


def maintenance(store: Any, name: str = "auto") -> tuple[str, float]:
    """Run the store's index maintenance once: ``name`` (a ``Store`` method), or with ``auto`` the first of
    ``MAINTENANCE_ENTRY_POINTS`` the store has, else ``compact``; which one ran and its seconds."""
    names = MAINTENANCE_ENTRY_POINTS if name == "auto" else (name,)
    chosen = next((n for n in names if callable(getattr(store, n, None))), "compact")
    t0 = time.perf_counter()
    getattr(store, chosen)()
    return chosen, round(time.perf_counter() - t0, 2)


def build_indexes(store: Any) -> float:
    """The indexes built after a bulk load that bypassed the writer: ``Store.ensure_indexes`` where the store has
    it (the incremental-index work: full-text, scope BTREEs, ANN past its size), else the full-text index
    rebuilt whole over every chunk (``main`` before that work)."""
    t0 = time.perf_counter()
    if callable(getattr(store, "ensure_indexes", None)):
        store.ensure_indexes()
    else:
        store.chunk_table.fts_dirty = True
        store.ensure_fts()
    return round(time.perf_counter() - t0, 2)


# ------------------------------------------------------------------ ingest through the real path
def measure_ingest(folio: Any, docs: list[Path], tag: str) -> dict[str, Any]:
    """Each PDF ingested as a new document (doc id ``scale-<stem>-<tag>-<i>``: a PDF may come twice) through
    ``Folio.ingest_path``: parse + embed and commit seconds per document (the pipeline's ``commit`` progress
    marks), and their medians."""
    rows = []
    for i, path in enumerate(docs):
        marks: dict[str, float] = {}

        def progress(stage: str, done: int, total: int, marks: dict[str, float] = marks) -> None:
            if stage == "commit":
                marks["commit_end" if done else "commit_start"] = time.perf_counter()

        doc_id = re.sub(r"[^a-z0-9-]+", "-", f"scale-{path.stem.lower()}-{tag}-{i}")
        t0 = time.perf_counter()
        report = folio.ingest_path(path, doc_id=doc_id, progress=progress)
        end = time.perf_counter()
        start = marks.get("commit_start", end)
        rows.append({"doc_id": doc_id, "pages": report.pages, "status": report.status,
                     "parse_embed_s": round(start - t0, 2), "commit_s": round(marks.get("commit_end", end) - start, 2),
                     "total_s": round(end - t0, 2)})
    return {"docs": rows, "parse_embed_s": statistics.median(r["parse_embed_s"] for r in rows),
            "commit_s": statistics.median(r["commit_s"] for r in rows)}


# ------------------------------------------------------------------ queries against a real server
def load_questions(paths: list[Path], filename_to_doc: dict[str, str]) -> list[tuple[str, str | None]]:
    """(question, source doc id of its document or None), interleaved across the files (an even mix of sets)."""
    per_file = []
    for p in paths:
        rows = [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
        per_file.append([(r["question"], filename_to_doc.get(r.get("doc", ""))) for r in rows])
    out: list[tuple[str, str | None]] = []
    for i in range(max((len(f) for f in per_file), default=0)):
        out += [f[i] for f in per_file if i < len(f)]
    return out


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(data: Path, timeout_s: float = 600) -> tuple[subprocess.Popen[bytes], str]:
    """``folio serve`` on loopback in a session of its own, once ``/v1/ready`` answers 200."""
    import httpx

    port = _port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FOLIO_API_KEY": "", "FOLIO_KEYS_FILE": ""}
    cmd = [sys.executable, "-c", "import sys; from folio._cli import main; sys.exit(main())",
           "serve", "--data", str(data), "--port", str(port)]
    with (data / "serve.log").open("ab") as log:  # the server's own log, beside the store
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=log, stderr=log, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"folio serve exited with {proc.returncode}")
        try:
            if httpx.get(f"{base}/v1/ready", timeout=5).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    stop_server(proc)
    raise RuntimeError(f"folio serve was not ready within {timeout_s:.0f} s")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's own process group (it and its query processes), SIGKILL after 30 s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    except ProcessLookupError:
        pass


def server_memory(pid: int) -> dict[str, float]:
    """Memory (MB) of the server: its process's RSS, and the proportional set size (PSS: shared pages split
    between the processes sharing them) of it with its children (query processes), which a sum of RSS overstates."""
    import psutil

    main = psutil.Process(pid)
    rss, pss = main.memory_info().rss, 0
    for proc in [main, *main.children(recursive=True)]:
        try:
            pss += proc.memory_full_info().pss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return {"server_rss_mb": round(rss / 2**20), "server_tree_pss_mb": round(pss / 2**20)}


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))] if s else float("nan")


class MemoryGuard(threading.Thread):
    """Stops the server (its process group) when the machine's available memory falls under ``floor_mb``, so that
    a store too large for this machine's memory ends the queries, not other processes (the OOM killer)."""

    def __init__(self, proc: subprocess.Popen[bytes], floor_mb: int) -> None:
        super().__init__(daemon=True)
        self.proc, self.floor_mb, self.tripped, self.done = proc, floor_mb, False, threading.Event()

    def run(self) -> None:
        import psutil

        while not self.done.wait(0.5):
            if psutil.virtual_memory().available < self.floor_mb * 2**20:
                self.tripped = True
                stop_server(self.proc)
                return


def timed_queries(base: str, bodies: list[dict[str, Any]], warmup: int) -> dict[str, Any]:
    """``/v1/context`` with each body, one at a time; the first ``warmup`` not counted; p50/p99 ms, errors. A
    server gone (stopped by the ``MemoryGuard``) ends the run: ``stopped`` says after how many queries."""
    import httpx

    times: list[float] = []
    errors: list[str] = []
    stopped = None
    with httpx.Client(base_url=base, timeout=300) as client:
        for i, body in enumerate(bodies):
            t0 = time.perf_counter()
            try:
                r = client.post("/v1/context", json=body)
            except httpx.HTTPError as e:
                stopped = {"after_queries": i, "error": f"{type(e).__name__}: {e}"[:160]}
                break
            dt = time.perf_counter() - t0
            if r.status_code != 200:
                errors.append(f"HTTP {r.status_code}: {r.text[:160]}")
            elif i >= warmup:
                times.append(dt)
    return {"queries": len(times), "errors": len(errors), "error_samples": errors[:3], "stopped": stopped,
            "p50_ms": round(_pct(times, 0.5) * 1000, 1), "p99_ms": round(_pct(times, 0.99) * 1000, 1),
            "max_ms": round(max(times) * 1000, 1) if times else None,
            "mean_ms": round(statistics.fmean(times) * 1000, 1) if times else None}


def measure_queries(data: Path, questions: list[tuple[str, str | None]], present: set[str],
                    counts: tuple[int, int, int]) -> dict[str, Any]:
    """Scoped (a copy of the question's document: ``<doc>-c0``) and unscoped ``/v1/context`` latency on a fresh
    server, and its memory after each mode. ``counts``: (warm-up queries, measured queries per mode, the
    available memory in MB under which the server is stopped: ``MemoryGuard``)."""
    warmup, n, floor_mb = counts
    unscoped = [{"query": q, "budget": 1500} for q, _ in questions[: warmup + n]]
    scoped = [{"query": q, "budget": 1500, "doc_ids": [f"{d[:110]}-c0"]}
              for q, d in questions if d is not None and f"{d[:110]}-c0" in present][: warmup + n]
    proc, base = start_server(data)
    guard = MemoryGuard(proc, floor_mb)
    guard.start()
    try:
        out: dict[str, Any] = {"scoped": timed_queries(base, scoped, warmup)}
        out.update({**server_memory(proc.pid), "memory_after": "scoped"} if proc.poll() is None else {})
        out["unscoped"] = timed_queries(base, unscoped, warmup)
        if proc.poll() is None and not guard.tripped:
            out.update({**server_memory(proc.pid), "memory_after": "unscoped"})
    finally:
        guard.done.set()
        stop_server(proc)
    out["stopped_low_memory"] = guard.tripped
    return out


# ------------------------------------------------------------------ one size
def disk(store: Any, pages: int) -> dict[str, Any]:
    """Bytes of the LanceDB tables (old table versions cleaned up first; images not counted) per page."""
    from folio.ingest.storage.compaction import sizes

    store.compact(timedelta(0))
    s = sizes(store)
    tables = s.get("total", 0) - s.get("assets", 0)
    return {"disk_bytes": tables, "disk_bytes_per_page": round(tables / max(pages, 1))}


def store_size(store: Any) -> dict[str, int]:
    versions = store.list_versions()
    return {"pages": sum(v.pages for v in versions), "documents": len({v.doc_id for v in versions}),
            "chunks": store.chunks.count_rows(), "regions": store.regions.count_rows()}


def measure_size(ctx: dict[str, Any], target: int) -> dict[str, Any]:
    """Grow the store to ``target`` pages, then every measurement of one row (module docstring)."""
    store, grower, args = ctx["store"], ctx["grower"], ctx["args"]
    have = store_size(store)["pages"]
    row: dict[str, Any] = {"target_pages": target, "status": "measured"}
    row["bulk"] = grower.grow_by(max(target - have, 0))
    row["bulk"]["fts_build_s"] = build_indexes(store)
    row["bulk"]["maintenance"], row["bulk"]["maintenance_s"] = maintenance(store, args.maintenance)
    row["ingest"] = measure_ingest(ctx["folio"], args.docs, str(target))
    row["maintenance"], row["maintenance_s"] = maintenance(store, args.maintenance)
    row.update(store_size(store))
    present = {v.doc_id for v in store.list_versions()}
    counts = (args.warmup, args.queries, args.memory_floor_mb)
    row["queries"] = measure_queries(args.out, ctx["questions"], present, counts)
    row.update(disk(store, row["pages"]))
    return row


# ------------------------------------------------------------------ extrapolation and the table
METRICS = (("ingest", "parse_embed_s"), ("ingest", "commit_s"), ("maintenance_s",), ("queries", "scoped", "p50_ms"),
           ("queries", "scoped", "p99_ms"), ("queries", "unscoped", "p50_ms"), ("queries", "unscoped", "p99_ms"),
           ("queries", "server_rss_mb"), ("queries", "server_tree_pss_mb"), ("chunks",))


def _get(row: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        row = row.get(key) if isinstance(row, dict) else None  # type: ignore[assignment]
    return row


def _put(row: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        row = row.setdefault(key, {})
    row[path[-1]] = value


MIN_FIT_QUERIES = 10  # measured queries per mode a latency needs at both sizes to be extrapolated


def extrapolate(measured: list[dict[str, Any]], pages: int) -> dict[str, Any]:
    """A row at ``pages`` from the measured rows: each metric on the power law through the two largest sizes
    measured (exponent at most 2; a metric that fell between them is left out), disk linear in pages; with one
    size measured, everything linear
    except parse + embed (a document's own cost) and latencies (left out: one point gives no slope)."""
    rows = sorted(measured, key=lambda r: r["pages"])[-2:]
    out: dict[str, Any] = {"target_pages": pages, "pages": pages, "status": "extrapolated", "exponents": {}}
    for path in METRICS:
        if path[0] == "queries" and len(path) == 3 and any(
                (_get(r, (*path[:2], "queries")) or 0) < MIN_FIT_QUERIES for r in rows):
            continue  # a latency from a handful of queries (a run stopped by the memory guard) gives no slope
        values = [_get(r, path) for r in rows]
        if any(not isinstance(v, int | float) or v <= 0 or math.isnan(v) for v in values):
            continue
        if len(rows) == 2 and rows[1]["pages"] > rows[0]["pages"]:
            b = math.log(values[1] / values[0]) / math.log(rows[1]["pages"] / rows[0]["pages"])
        elif path in (("chunks",), ("ingest", "parse_embed_s")):
            b = 1.0 if path == ("chunks",) else 0.0
        else:
            continue
        if b < 0:  # smaller at the larger size: load noise on this machine, no trend to extend
            continue
        b = min(b, 2.0)
        _put(out, path, round(values[-1] * (pages / rows[-1]["pages"]) ** b, 2))
        out["exponents"][".".join(path)] = round(b, 2)
    for mode in ("scoped", "unscoped"):  # two independent fits may cross: a p50 above its p99 is no estimate
        fit = out.get("queries", {}).get(mode, {})
        if fit.get("p50_ms", 0) > fit.get("p99_ms", math.inf):
            del out["queries"][mode]
    per_page = rows[-1]["disk_bytes_per_page"]
    out.update(disk_bytes_per_page=per_page, disk_bytes=per_page * pages)
    return out


def _fmt(v: Any, digits: int = 1) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| pages | status | chunks | bulk rows/s | parse+embed s | commit s | maintenance s "
            "| scoped p50 / p99 ms | unscoped p50 / p99 ms | server RSS / tree PSS MB | disk B/page | disk GB |\n"
            "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    lines = [head]
    for r in rows:
        q = r.get("queries", {})
        s, u = q.get("scoped", {}), q.get("unscoped", {})
        lines.append(
            f"| {_fmt(r['pages'])} | {r['status']} | {_fmt(r.get('chunks'), 0)} "
            f"| {_fmt(r.get('bulk', {}).get('rows_per_s') or None)} | {_fmt(_get(r, ('ingest', 'parse_embed_s')), 2)} "
            f"| {_fmt(_get(r, ('ingest', 'commit_s')), 2)} | {_fmt(r.get('maintenance_s'), 2)} "
            f"| {_fmt(s.get('p50_ms'), 0)} / {_fmt(s.get('p99_ms'), 0)} "
            f"| {_fmt(u.get('p50_ms'), 0)} / {_fmt(u.get('p99_ms'), 0)} "
            f"| {_fmt(q.get('server_rss_mb'), 0)} / {_fmt(q.get('server_tree_pss_mb'), 0)} "
            f"| {_fmt(r.get('disk_bytes_per_page'))} | {r.get('disk_bytes', 0) / 1e9:,.2f} |")
    return "\n".join(lines)


def write_results(result: dict[str, Any], results_dir: Path) -> str:
    """scale.json and scale.md (the table with the run's settings) under ``results_dir``; the table."""
    measured = [r for r in result["rows"] if r["status"] == "measured"]
    extra = [extrapolate(measured, p) for p in result["extrapolate"] if measured and p > measured[-1]["pages"]]
    result["extrapolated"] = extra
    text = table(measured + extra)
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / "scale.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    md = [f"# Scale benchmark ({result['date']})", "", f"`{result['command']}`", "", text, "",
          f"Code: {result['code']}. Machine: {result['machine']}.", "",
          f"Vectors: {json.dumps(result.get('calibration'))}. Queries per mode and size: see scale.json "
          f"(`queries.scoped.queries`), after {result['warmup']} warm-up queries."]
    (results_dir / "scale.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    return text


# ------------------------------------------------------------------ the run
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--pages", type=int, nargs="+", default=[10_000, 100_000, 1_000_000], help="sizes to measure")
    p.add_argument("--extrapolate", type=int, nargs="*", default=[1_000_000, 10_000_000],
                   help="sizes computed from the measured ones (those above the largest measured)")
    p.add_argument("--out", type=Path, default=Path("/tmp/folio-scale"), help="the grown store (never in the repo)")
    p.add_argument("--sources", type=Path, nargs="+", default=DEFAULT_SOURCES, help="folio stores to copy (read only)")
    p.add_argument("--docs", type=Path, nargs="+", default=DEFAULT_DOCS, help="PDFs ingested at each size")
    p.add_argument("--questions", type=Path, nargs="+",
                   default=sorted((SHARED / "eval").glob("*/questions.jsonl")), help="questions.jsonl files")
    p.add_argument("--queries", type=int, default=40, help="measured queries per mode and size")
    p.add_argument("--warmup", type=int, default=5, help="warm-up queries per mode (not counted)")
    p.add_argument("--maintenance", default="auto", help="the Store method that maintains indexes (auto: see code)")
    p.add_argument("--sigma", type=float, default=None, help="vector noise (default: calibrated by re-embedding)")
    p.add_argument("--results", type=Path, default=RESULTS, help="where scale.json and scale.md go")
    p.add_argument("--memory-floor-mb", type=int, default=1200,
                   help="stop the server when the machine's available memory falls under this (MB)")
    p.add_argument("--append", action="store_true", help="keep the rows of an earlier run's scale.json")
    p.add_argument("--grow-only", action="store_true", help="only grow the store to the largest --pages; no timing")
    args = p.parse_args(argv)
    if args.out.resolve().is_relative_to(ROOT):
        p.error(f"--out {args.out} is inside the repository; grow the store elsewhere (default /tmp/folio-scale)")
    if any(s.resolve() == args.out.resolve() for s in args.sources):
        p.error("--out must not be one of the --sources (they are read only)")
    missing = [str(s) for s in args.sources if not (s / "lancedb").is_dir()]
    if missing:
        p.error(f"not a folio store (no lancedb/ inside): {', '.join(missing)}")
    return args


def _code() -> str:
    out = subprocess.run(["git", "log", "-1", "--format=%h %s"], cwd=ROOT, capture_output=True, text=True,
                         check=False)
    return out.stdout.strip()[:100] or "unknown"


def setup(args: argparse.Namespace) -> dict[str, Any]:
    """The store at ``--out``, the sources, the vocabulary, the vector noise (calibrated unless ``--sigma``)."""
    from benchmarks import scale_grow as grow
    from folio.ingest.storage.store import Store

    docs = grow.load_sources(args.sources)
    vocab = grow.vocabulary(docs)
    calibration: dict[str, float] = {"sigma": args.sigma} if args.sigma is not None else {}
    if not calibration:
        from folio.ingest.embed import default_text_encoder

        encoder = default_text_encoder()
        encoder.encode(["load the model before the clock starts"])
        t0 = time.perf_counter()
        calibration = grow.calibrate(docs, vocab, encoder.encode)
        calibration["embed_chunks_per_s"] = round(2 * calibration["sample"] / (time.perf_counter() - t0), 1)
    store = Store(args.out)
    existing = {(v.doc_id, v.version_id) for v in store.list_versions()}  # resuming a store grown before
    grower = grow.Grower(store, docs, vocab, calibration["sigma"], existing=existing)
    filename_to_doc = {d.row["filename"]: d.row["doc_id"] for d in docs}
    return {"args": args, "store": store, "grower": grower, "calibration": calibration,
            "questions": load_questions(args.questions, filename_to_doc), "source_pages": sum(d.pages for d in docs)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ctx = setup(args)
    if args.grow_only:
        built = ctx["grower"].grow_by(max(args.pages) - store_size(ctx["store"])["pages"])
        build_indexes(ctx["store"])
        print(json.dumps({**built, **store_size(ctx["store"]), "calibration": ctx["calibration"]}))
        return 0
    from folio.api.application import Folio
    from folio.settings import Settings

    ctx["folio"] = Folio.open(Settings().model_copy(update={"data": str(args.out)}))
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/scale.py " + " ".join(sys.argv[1:]),
        "code": _code(), "machine": f"{os.cpu_count()} cores, shared with other work; no GPU",
        "calibration": ctx["calibration"], "source_pages": ctx["source_pages"], "warmup": args.warmup,
        "extrapolate": args.extrapolate, "rows": []}
    earlier = args.results / "scale.json"
    if args.append and earlier.exists():
        before = json.loads(earlier.read_text(encoding="utf-8"))
        result["rows"] = [r for r in before["rows"] if r["target_pages"] < min(args.pages)]
        result["earlier_runs"] = [*before.get("earlier_runs", []), {k: before[k] for k in ("command", "code")}]
    for target in sorted(args.pages):
        row = measure_size(ctx, target)
        result["rows"].append(row)
        text = write_results(result, args.results)
        print(f"\n{target:,} pages measured:\n{text}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
