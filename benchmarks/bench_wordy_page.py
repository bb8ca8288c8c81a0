"""What one page of 60,000 words costs a running server: seconds to ingest, and the server's memory.

Issue 31 (item 3): a 137 KB one-page PDF of 60,000 words took 118 s to ingest and raised ``folio serve``
from 1.16 to 2.91 GB, where it stayed. This builds such a file with PyMuPDF (``odd_pdfs.wordy_page``:
the page of 60,000 words and an ordinary second page), starts ``folio serve`` from each checkout given
(query threads, so that the server process is the one measured), uploads the file and then a second one
like it (other words), and reads the server's resident memory (``/proc/<pid>/status``) before, after each
upload and 10 s later, and its peak::

    python benchmarks/bench_wordy_page.py                                    # this checkout
    python benchmarks/bench_wordy_page.py --server-tree ../folio-old --server-tree .   # before and after

Prints a Markdown table (and writes benchmarks/results/wordy-page.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.odd_pdfs import wordy_page  # noqa: E402


def _status_mb(pid: int, field: str) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def measure(tree: Path, pdfs: list[bytes]) -> dict[str, Any]:
    """One server from ``tree``, an upload of each of ``pdfs`` in turn: seconds, reports and memory."""
    data = Path(tempfile.mkdtemp(prefix="folio-wordy-"))
    port = _port()
    env = {**os.environ, "FOLIO_DATA": str(data), "FOLIO_OCR": "0", "FOLIO_QUERY_PROCESSES": "0",
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(tree)}  # fmt: skip
    log = open(data / "server.log", "w")  # noqa: SIM115 - closed in finally
    server = subprocess.Popen([sys.executable, "-m", "folio.api.cli", "serve", "--port", str(port)],
                              cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"{base}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start; see {data / 'server.log'}")
            time.sleep(0.5)
        time.sleep(2)
        rss = [_status_mb(server.pid, "VmRSS")]
        uploads = []
        for n, pdf in enumerate(pdfs, 1):
            started = time.perf_counter()
            r = httpx.post(f"{base}/v1/documents", files={"file": (f"wordy-{n}.pdf", pdf)}, timeout=1800)
            body = r.json()
            uploads.append({"http": r.status_code, "status": body.get("status") or body.get("error", {}).get("code"),
                            "seconds": round(time.perf_counter() - started, 1),
                            "issues": [i["message"] for i in body.get("report", {}).get("issues", [])]})  # fmt: skip
            rss.append(_status_mb(server.pid, "VmRSS"))
        time.sleep(10)
        rss.append(_status_mb(server.pid, "VmRSS"))
        return {"tree": str(tree), "uploads": uploads, "rss_mb": [round(m) for m in rss],
                "peak_mb": round(_status_mb(server.pid, "VmHWM"))}  # fmt: skip
    finally:
        server.terminate()
        server.wait(30)
        log.close()
        shutil.rmtree(data, ignore_errors=True)


def table(rows: list[dict[str, Any]], pdfs: list[bytes]) -> str:
    sizes = " and ".join(f"{len(p) / 1024:.0f} KB" for p in pdfs)
    lines = [
        f"Two uploads ({sizes}), each a page of 60,000 words and an ordinary page; server RSS in MB.",
        "",
        "| server tree | HTTP, status | seconds | RSS before | after 1st | after 2nd | 10 s later | peak | issues |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        ups = r["uploads"]
        statuses = ", ".join(f"{u['http']} {u['status']}" for u in ups)
        seconds = " / ".join(str(u["seconds"]) for u in ups)
        rss = " | ".join(map(str, r["rss_mb"]))
        issues = "; ".join(dict.fromkeys(i for u in ups for i in u["issues"])) or "-"
        lines.append(f"| {r['tree']} | {statuses} | {seconds} | {rss} | {r['peak_mb']} | {issues} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server-tree", action="append", default=[], help="a checkout to run the server from")
    ap.add_argument("--words", type=int, default=60_000)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "wordy-page.md"))
    args = ap.parse_args()
    pdfs = [wordy_page(args.words, seed=1), wordy_page(args.words, seed=2)]
    rows = [measure(Path(t).resolve(), pdfs) for t in (args.server_tree or [str(ROOT)])]
    out = table(rows, pdfs)
    Path(args.out).write_text(out + "\n")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
