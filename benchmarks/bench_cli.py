"""What a command costs a user: ``folio`` wall time and memory, cold and with a server, against ``curl``.

Each command runs as its own process, as a user types it (``folio._cli:main``, the console script's entry, on
this checkout), ``--runs`` times; the table gives the median and the slowest wall time, the median CPU time
(user + system, which the machine's other work changes little) and the largest resident memory of a run. Measured:

- ``folio --help`` and ``folio docs``: the light commands;
- ``folio context`` cold (``--no-server``: the store and the query encoder load in the command);
- ``folio serve`` start-to-live (``/v1/health`` answers) and start-to-ready (the "ready" line on stdout);
- ``folio context`` with that server running (it finds the server through the data directory: issue 34);
- ``curl`` on ``POST /v1/context`` with the same question, the floor of asking a server from a shell.

The machine is shared: the load average before and after is printed with the table.

    .venv/bin/python benchmarks/bench_cli.py [--runs 7] [--data DIR]

Without ``--data`` it ingests the support policy and the R manual into a temporary data directory first.
Writes benchmarks/results/cli.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_pdfs"
QUESTION = "How fast must a priority-one incident be acknowledged?"
FOLIO = [sys.executable, "-c", "from folio._cli import main; main()"]  # the console script, on this checkout


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FOLIO_URL", "FOLIO_API_KEY", "FOLIO_DATA")}
    return {**env, "PYTHONPATH": str(ROOT), "FOLIO_OCR": "false"}


def timed(argv: list[str]) -> tuple[float, float, float]:
    """Run ``argv`` to its end: wall seconds, CPU seconds (user + system: what the command cost, whatever else
    the machine runs) and its peak resident memory (MB); a failure stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err[-2000:]}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def measure(name: str, argv: list[str], runs: int) -> dict[str, Any]:
    results = [timed(argv) for _ in range(runs)]
    walls = sorted(w for w, _, _ in results)
    return {
        "command": name,
        "runs": runs,
        "p50_s": statistics.median(walls),
        "max_s": walls[-1],
        "cpu_p50_s": statistics.median(c for _, c, _ in results),
        "rss_mb": max(m for _, _, m in results),
    }


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(data: Path, out: Path) -> tuple[subprocess.Popen[bytes], str, float, float]:
    """``folio serve`` on ``data``: the process, its URL, seconds to live (health answers) and to ready (the
    "ready" line on stdout)."""
    import urllib.request

    port = _port()
    url = f"http://127.0.0.1:{port}"
    start = time.perf_counter()
    with out.open("wb") as log:
        proc = subprocess.Popen(
            [*FOLIO, "serve", "--data", str(data), "--port", str(port)],
            cwd=ROOT,
            env=_env(),
            stdout=log,
            stderr=subprocess.DEVNULL,
        )
    live = None
    while "folio: ready at" not in out.read_text():
        if proc.poll() is not None or time.perf_counter() - start > 300:
            proc.kill()
            raise SystemExit(f"folio serve did not get ready: {out.read_text()[-2000:]}")
        if live is None:
            try:
                with urllib.request.urlopen(f"{url}/v1/health", timeout=1):
                    live = time.perf_counter() - start
            except OSError:
                pass
        time.sleep(0.02)
    ready = time.perf_counter() - start
    return proc, url, live if live is not None else ready, ready


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()


def ingest(data: Path) -> None:
    pdfs = [SAMPLES / "support-policy-v2.pdf", SAMPLES / "R-data-import-export.pdf"]
    subprocess.run(
        [*FOLIO, "ingest", "--data", str(data), *map(str, pdfs)],
        cwd=ROOT,
        env=_env(),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def run(data: Path, runs: int, workdir: Path) -> list[dict[str, Any]]:
    context = [*FOLIO, "context", QUESTION, "--data", str(data), "--no-prompt"]
    rows = [
        measure("folio --help", [*FOLIO, "--help"], runs),
        measure("folio docs", [*FOLIO, "docs", "--data", str(data)], runs),
        measure("folio context, cold (--no-server)", [*context, "--no-server"], runs),
    ]
    lives, readies = [], []
    for i in range(max(1, runs // 2)):
        proc, url, live, ready = start_server(data, workdir / f"serve-{i}.out")
        lives.append(live)
        readies.append(ready)
        if i < max(1, runs // 2) - 1:
            stop_server(proc)
    try:
        body = json.dumps({"query": QUESTION})
        curl = [
            "curl",
            "-sf",
            "-o",
            "/dev/null",
            "-H",
            "Content-Type: application/json",
            "-d",
            body,
            f"{url}/v1/context",
        ]
        rows += [
            measure("folio context, with `folio serve` running", context, runs),
            measure("curl POST /v1/context", curl, runs),
        ]
    finally:
        stop_server(proc)
    for name, values in (("folio serve: start to /v1/health", lives), ("folio serve: start to ready", readies)):
        rows.append(
            {
                "command": name,
                "runs": len(values),
                "p50_s": statistics.median(values),
                "max_s": max(values),
                "cpu_p50_s": None,
                "rss_mb": None,
            }
        )
    return rows


def table(rows: list[dict[str, Any]], load: tuple[float, float]) -> str:
    lines = [
        f"`folio` commands, {os.cpu_count()} cores, load average {load[0]:.1f} before, {load[1]:.1f} after",
        "",
        "| command | runs | p50 s | slowest s | CPU s (p50) | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cpu = f"{r['cpu_p50_s']:.2f}" if r["cpu_p50_s"] is not None else "-"
        rss = f"{r['rss_mb']:.0f}" if r["rss_mb"] is not None else "-"
        lines.append(f"| {r['command']} | {r['runs']} | {r['p50_s']:.2f} | {r['max_s']:.2f} | {cpu} | {rss} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--data", type=Path, default=None, help="a data directory to query (default: ingest samples)")
    args = ap.parse_args()
    if shutil.which("curl") is None:
        raise SystemExit("the benchmark compares against curl: install it")
    workdir = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    try:
        data = args.data or workdir / "data"
        if args.data is None:
            ingest(data)
        before = os.getloadavg()[0]
        rows = run(data, args.runs, workdir)
        load = (before, os.getloadavg()[0])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    out = ROOT / "benchmarks" / "results" / "cli.json"
    out.write_text(json.dumps({"rows": rows, "load": load, "cores": os.cpu_count()}, indent=2) + "\n")
    print(table(rows, load))


if __name__ == "__main__":
    main()
