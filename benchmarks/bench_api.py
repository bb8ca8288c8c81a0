"""REST API under load: concurrent ``POST /v1/context`` over real HTTP, idle vs. during an ingest.

A uvicorn subprocess serves a fresh data dir on loopback (the support policy and a Federal
Register excerpt ingested first). A thread pool of httpx clients sends context requests for a
fixed time in two phases: *idle*, then *ingest* (a multi-page PDF is uploaded with ``wait=false``
and re-uploaded under new doc ids until the phase ends). Reports throughput, p50/p99 latency and
errors per phase, and the ratio ingest p99 / idle p99 (target < 4, zero errors).

    .venv/bin/python benchmarks/bench_api.py [--seconds 20] [--concurrency 4]
    .venv/bin/python benchmarks/bench_api.py --scaling 1,4,16,64 --health-clients 100 --seconds 15
    .venv/bin/python benchmarks/bench_api.py --scaling 16 --server-tree ../folio-f4cc2a4   # an older server
    .venv/bin/python benchmarks/bench_api.py --bodies --seconds 15 --health-clients 50    # large bodies

Writes benchmarks/results/api.json and prints a Markdown table. ``--bodies`` measures ``/v1/health`` while
one client sends large bodies, one after another (issue 31, item 5): the report's 9.3 MB object of 500,000
keys to ``/v1/answer``, ``/v1/search`` and ``/v1/verify``, a 9 MB package to ``/v1/verify`` and a nested
body; alone, beside ``--health-clients`` context clients, and those clients alone (api-bodies.md).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_pdfs"
QUESTIONS = [
    "How fast must a priority-one incident be acknowledged?",
    "Who is the incident escalated to after the team lead?",
    "What does the rule say about the effective date?",
    "Which agency issued this document?",
    "When are incidents reported outside business hours acknowledged?",
]


def _excerpt(path: Path, pages: int) -> bytes:
    import pymupdf

    src = pymupdf.open(path)
    out = pymupdf.open()
    out.insert_pdf(src, from_page=0, to_page=pages - 1)
    return bytes(out.tobytes(garbage=3, deflate=True))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def run_phase(base: str, seconds: float, concurrency: int, max_requests: int) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    shed: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    counter = iter(range(max_requests))

    def worker(n: int) -> None:
        with httpx.Client(base_url=base, timeout=60) as client:
            i = n
            while time.monotonic() < stop:
                with lock:
                    if next(counter, None) is None:
                        return
                q = QUESTIONS[i % len(QUESTIONS)]
                i += 1
                t0 = time.perf_counter()
                try:
                    r = client.post("/v1/context", json={"query": q, "budget": 1500})
                    if r.status_code == 503 and "retry-after" in r.headers:  # deliberate load shedding
                        with lock:
                            shed.append(time.perf_counter() - t0)
                        time.sleep(min(float(r.headers["retry-after"]), 1.0) / 10)
                        continue
                    ok = r.status_code == 200 and "items" in r.json()
                    err = None if ok else f"HTTP {r.status_code}: {r.text[:120]}"
                except httpx.HTTPError as e:
                    err = f"{type(e).__name__}: {e}"
                dt = time.perf_counter() - t0
                with lock:
                    if err:
                        errors.append(err)
                    else:
                        latencies.append(dt)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(worker, range(concurrency)))
    wall = time.perf_counter() - t0
    return {
        "requests": len(latencies) + len(errors) + len(shed),
        "errors": len(errors),
        "shed_503": len(shed),
        "error_samples": errors[:3],
        "throughput_rps": round(len(latencies) / wall, 2),
        "p50_ms": round(_pct(latencies, 0.50) * 1000, 1),
        "p99_ms": round(_pct(latencies, 0.99) * 1000, 1),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 1) if latencies else None,
        "seconds": round(wall, 1),
    }


def _probe(base: str, start_at: float, stop_at: float, conn: Any) -> None:
    """The probe process: GET /v1/health every 20 ms from ``start_at`` to ``stop_at`` (``time.time()``);
    sends back (latencies, failures)."""
    probes: list[float] = []
    failures: list[str] = []
    with httpx.Client(base_url=base, timeout=60) as c:
        time.sleep(max(0.0, start_at - time.time()))
        while time.time() < stop_at:
            t0 = time.perf_counter()
            r = c.get("/v1/health")
            probes.append(time.perf_counter() - t0)
            if r.status_code != 200:
                failures.append(f"HTTP {r.status_code}")
            time.sleep(0.02)
    conn.send((probes, failures))
    conn.close()


def health_phase(base: str, seconds: float, clients: int, max_requests: int) -> dict[str, Any]:
    """``/v1/health`` latency from one probe (every 20 ms) while ``clients`` load ``/v1/context``
    (``clients`` = 0: the same probe on an idle server, the baseline).

    The probe runs in its own process: in the process of the load's client threads it would also
    time its own wait for that process's interpreter lock, not only the server's answer."""
    ctx = multiprocessing.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    start = time.time() + 2.0  # the probe process's start-up, and the load's first second
    prober = ctx.Process(target=_probe, args=(base, start, start + seconds - 1.5, send))
    prober.start()
    time.sleep(1.0)
    load = run_phase(base, seconds, clients, max_requests) if clients else None
    if not clients:
        time.sleep(seconds)
    probes, failures = recv.recv()
    prober.join()
    return {
        "clients": clients,
        "probes": len(probes),
        "failures": len(failures),
        "health_p50_ms": round(_pct(probes, 0.50) * 1000, 1),
        "health_p99_ms": round(_pct(probes, 0.99) * 1000, 1),
        "context": load,
    }


def scaling(base: str, seconds: float, levels: list[int], health_clients: int) -> dict[str, Any]:
    """``/v1/context`` at each client count, then ``/v1/health`` idle and under ``health_clients``."""
    rows = [dict(clients=n, **run_phase(base, seconds, n, 100_000)) for n in levels]
    health = [health_phase(base, seconds, 0, 0), health_phase(base, seconds, health_clients, 100_000)]
    return {"context": rows, "health": health}


def scaling_table(res: dict[str, Any]) -> str:
    rows, (idle, loaded) = res["context"], res["health"]
    first = rows[0]
    lines = [
        "| clients | requests | 200 | 503 (shed) | errors | req/s | req/s vs first row | p50 ms | p99 ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ok = r["requests"] - r["errors"] - r["shed_503"]
        lines.append(
            f"| {r['clients']} | {r['requests']} | {ok} | {r['shed_503']} | {r['errors']} | {r['throughput_rps']} | "
            f"{r['throughput_rps'] / first['throughput_rps']:.2f}x | {r['p50_ms']} | {r['p99_ms']} |"
        )
    ctx = loaded["context"]
    lines += [
        "",
        "| /v1/health probe | probes | failures | p50 ms | p99 ms | p99 vs idle |",
        "|---|---:|---:|---:|---:|---:|",
        f"| idle server | {idle['probes']} | {idle['failures']} | {idle['health_p50_ms']} | "
        f"{idle['health_p99_ms']} | 1.00x |",
        f"| {loaded['clients']} context clients ({ctx['throughput_rps']} req/s, {ctx['shed_503']} shed, "
        f"{ctx['errors']} errors) | {loaded['probes']} | {loaded['failures']} | {loaded['health_p50_ms']} | "
        f"{loaded['health_p99_ms']} | {loaded['health_p99_ms'] / max(idle['health_p99_ms'], 1e-9):.2f}x |",
    ]
    return "\n".join(lines)


def many_keys(n: int = 500_000) -> bytes:
    """The report's body: ``{"query": "q", "json_schema": {n keys}}`` (9.3 MB for 500,000)."""
    return b'{"query":"q","json_schema":{' + ",".join(f'"k{i:06d}":{i}' for i in range(n)).encode() + b"}}"


def big_package(base: str, size: int = 9_000_000) -> bytes:
    """A ``/v1/verify`` body of about ``size`` bytes: a real package, its items repeated (at most 2,000)."""
    with httpx.Client(base_url=base, timeout=300) as c:
        r = c.post("/v1/context", json={"query": QUESTIONS[0], "k": 500, "budget": 2_000_000, "max_items": 1000})
        r.raise_for_status()
        package = r.json()
    one = len(json.dumps(package["items"]).encode()) / max(len(package["items"]), 1)
    package["items"] = (package["items"] * (int(size / one) // len(package["items"]) + 1))[: min(2000, int(size / one))]
    return json.dumps({"answer": "The incident is acknowledged [S1].", "package": package}).encode()


def _send_bodies(base: str, path: str, body: bytes, stop_at: float, out: dict[str, Any]) -> None:
    """POST ``body`` to ``path`` again and again until ``stop_at`` (``time.time()``): statuses and seconds."""
    statuses: dict[int, int] = {}
    took: list[float] = []
    with httpx.Client(base_url=base, timeout=300) as c:
        while time.time() < stop_at:
            t0 = time.perf_counter()
            status = c.post(path, content=body, headers={"Content-Type": "application/json"}).status_code
            took.append(time.perf_counter() - t0)
            statuses[status] = statuses.get(status, 0) + 1
    out.update(statuses=statuses, mean_s=round(statistics.fmean(took), 2) if took else None)


def body_phase(base: str, seconds: float, clients: int, body: tuple[str, bytes] | None) -> dict[str, Any]:
    """``/v1/health`` from one probe process (every 20 ms) while one client sends ``body`` (path, bytes)
    over and over and ``clients`` load ``/v1/context``."""
    ctx = multiprocessing.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    start = time.time() + 2.0
    stop = start + seconds - 1.5
    prober = ctx.Process(target=_probe, args=(base, start, stop, send))
    prober.start()
    sent: dict[str, Any] = {}
    sender = threading.Thread(target=_send_bodies, args=(base, *body, stop, sent)) if body else None
    time.sleep(1.0)
    if sender:
        sender.start()
    load = run_phase(base, seconds, clients, 100_000) if clients else None
    if not clients:
        time.sleep(seconds)
    probes, failures = recv.recv()
    prober.join()
    if sender:
        sender.join()
    return {"body": f"{body[0]} {len(body[1]) / 1e6:.1f} MB" if body else "none", "clients": clients,
            "probes": len(probes), "failures": len(failures), "health_p50_ms": round(_pct(probes, 0.50) * 1000, 1),
            "health_p99_ms": round(_pct(probes, 0.99) * 1000, 1), "health_max_ms": round(max(probes) * 1000, 1),
            "bodies": sent, "context": load}  # fmt: skip


def bodies(base: str, seconds: float, clients: int) -> list[dict[str, Any]]:
    """``body_phase`` for each large body, alone and beside ``clients`` context clients."""
    keys = many_keys()
    nested = b'{"query": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    sends: list[tuple[str, bytes] | None] = [
        None, ("/v1/answer", keys), ("/v1/search", keys), ("/v1/verify", keys), ("/v1/verify", big_package(base)),
        ("/v1/search", nested),
    ]
    rows = [body_phase(base, seconds, 0, b) for b in sends]
    rows += [body_phase(base, seconds, clients, b) for b in (None, ("/v1/answer", keys), sends[4])]
    return rows


def bodies_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| large body, sent again and again | context clients | health probes | failed | p50 ms | p99 ms | max ms "
        "| body answers (status: count) | s per body | context req/s (503) |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        sent = r["bodies"]
        answers = ", ".join(f"{k}: {v}" for k, v in sorted(sent.get("statuses", {}).items())) or "-"
        ctx = r["context"]
        load = f"{ctx['throughput_rps']} ({ctx['shed_503']})" if ctx else "-"
        lines.append(
            f"| {r['body']} | {r['clients']} | {r['probes']} | {r['failures']} | {r['health_p50_ms']} | "
            f"{r['health_p99_ms']} | {r['health_max_ms']} | {answers} | {sent.get('mean_s', '-')} | {load} |"
        )
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--max-requests", type=int, default=2000, help="cap per phase")
    ap.add_argument(
        "--ingest-pages", type=int, default=6, help="pages of the PDF ingested during the load phase"
    )
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "api.json"))
    ap.add_argument("--scaling", default="", help="client counts, e.g. 1,4,16,64: context scaling + health under load")
    ap.add_argument("--health-clients", type=int, default=100)
    ap.add_argument("--bodies", action="store_true", help="/v1/health while large bodies are sent (api-bodies.md)")
    ap.add_argument(
        "--server-tree", default=str(ROOT), help="run the server from this checkout (e.g. a worktree of an old commit)"
    )
    return ap


def main() -> int:
    args = _parser().parse_args()
    tree = str(Path(args.server_tree).resolve())

    data = Path(tempfile.mkdtemp(prefix="folio-bench-api-"))
    port = _port()
    env = dict(
        os.environ,
        FOLIO_DATA=str(data),
        FOLIO_OCR="false",
        HF_HUB_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONPATH=tree,
    )
    log = open(data / "server.log", "w")  # noqa: SIM115 - closed in finally
    server = subprocess.Popen(
        [sys.executable, "-m", "folio.api.cli", "serve", "--port", str(port), "--data", str(data)],
        cwd=tree,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, server, data)
        _load_samples(base)
        if _other_phases(args, base):
            return 0
        idle, busy, ingests = _under_ingest(args, base)
    finally:
        server.terminate()
        server.wait(30)
        log.close()
        shutil.rmtree(data, ignore_errors=True)
    return _report(args, idle, busy, ingests)


def _wait_ready(base: str, server: subprocess.Popen[bytes], data: Path) -> None:
    """Until the server at ``base`` says it is ready (at most 180 s; one that exits fails at once)."""
    deadline = time.monotonic() + 180
    while True:
        try:
            health = httpx.get(f"{base}/v1/health", timeout=2)
            # ready: a server that says so (state), or an older one that answers only once loaded
            if health.status_code == 200 and health.json().get("state", "ready") == "ready":
                break
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"server did not start; see {data / 'server.log'}")
        time.sleep(0.3)


def _load_samples(base: str) -> None:
    """The two sample documents ingested, then one context request per question (warm-up)."""
    with httpx.Client(base_url=base, timeout=300) as c:
        for name, doc_id, blob in [
            ("support-policy-v1.pdf", "support-policy", (SAMPLES / "support-policy-v1.pdf").read_bytes()),
            ("register.pdf", "register", _excerpt(SAMPLES / "federal-register-2020-17221.pdf", 3)),
        ]:
            r = c.post("/v1/documents", files={"file": (name, blob)}, data={"doc_id": doc_id})
            r.raise_for_status()
        for q in QUESTIONS:  # warm-up
            c.post("/v1/context", json={"query": q, "budget": 1500}).raise_for_status()


def _other_phases(args: argparse.Namespace, base: str) -> bool:
    """``--bodies`` or ``--scaling``: run it, write its files beside ``--out`` and print its table; False when
    neither is asked for."""
    if args.bodies:
        table = bodies_table(bodies(base, args.seconds, args.health_clients))
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).with_name("api-bodies.md").write_text(table + "\n")
        print(table)
        return True
    if args.scaling:
        res = scaling(base, args.seconds, [int(n) for n in args.scaling.split(",")], args.health_clients)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).with_name("api-scaling.json").write_text(json.dumps(res, indent=2) + "\n")
        table = scaling_table(res)
        Path(args.out).with_name("api-scaling.md").write_text(table + "\n")
        print(table)
        return True
    return False


def _under_ingest(
    args: argparse.Namespace, base: str
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """The context phase idle, then again while a thread ingests a PDF over and over: (idle, busy, ingests)."""
    idle = run_phase(base, args.seconds, args.concurrency, args.max_requests)

    ingest_pdf = _excerpt(SAMPLES / "federal-register-2020-17221.pdf", args.ingest_pages)
    stop_ingest = threading.Event()
    ingests: list[dict[str, Any]] = []

    def ingest_loop() -> None:
        with httpx.Client(base_url=base, timeout=600) as c:
            n = 0
            while not stop_ingest.is_set():
                n += 1
                t0 = time.perf_counter()
                r = c.post(
                    "/v1/documents",
                    files={"file": ("load.pdf", ingest_pdf)},
                    data={"doc_id": f"load-{n}"},
                )
                ingests.append({"status": r.status_code, "seconds": round(time.perf_counter() - t0, 1)})

    loader = threading.Thread(target=ingest_loop)
    loader.start()
    time.sleep(1.0)  # let the job get into parsing
    busy = run_phase(base, args.seconds, args.concurrency, args.max_requests)
    stop_ingest.set()
    loader.join()
    return idle, busy, ingests


def _report(
    args: argparse.Namespace, idle: dict[str, Any], busy: dict[str, Any], ingests: list[dict[str, Any]]
) -> int:
    """``--out`` written and the table printed; 0 when the target is met, else 1."""
    ratio = busy["p99_ms"] / idle["p99_ms"] if idle["p99_ms"] else float("nan")
    result = {
        "benchmark": "api_context_under_ingest",
        "concurrency": args.concurrency,
        "phase_seconds": args.seconds,
        "cpu_count": os.cpu_count(),
        "idle": idle,
        "during_ingest": busy,
        "ingests": ingests,
        "p99_ratio": round(ratio, 2),
        "target": "zero errors; p99 during ingest < 4x idle p99",
        "target_met": idle["errors"] == 0 and busy["errors"] == 0 and ratio < 4,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print("| phase | requests | errors | throughput (req/s) | p50 (ms) | p99 (ms) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in (("idle", idle), ("during ingest", busy)):
        print(
            f"| {name} | {r['requests']} | {r['errors']} | {r['throughput_rps']} | {r['p50_ms']} | {r['p99_ms']} |"
        )
    print(
        f"\np99 during ingest / idle p99 = {result['p99_ratio']} (target < 4); "
        f"{len(ingests)} ingests of {args.ingest_pages} pages ran; target met: {result['target_met']}"
    )
    return 0 if result["target_met"] else 1

if __name__ == "__main__":
    raise SystemExit(main())
