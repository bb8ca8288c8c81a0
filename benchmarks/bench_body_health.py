"""``/v1/health`` while one large ``/v1/verify`` body is handled, with query threads (issue 44, item 10).

``folio serve`` with ``FOLIO_QUERY_PROCESSES=0`` (search, context and verify on threads of the server process)
on a fresh data dir with the support policy ingested. One client sends the body of the row again and again
(a 6 MB ``/v1/verify`` body: a real ``/v1/context`` package of the store, its items repeated; valid, with an
unknown top-level field, or with a bad value in its last item; and a dense one, 470,000 JSON values, valid or
with 300,000 bad values: ``package_bodies``) while another asks ``/v1/health`` every 50 ms,
``--probes`` times; the first row is the same probe on the idle server.

    .venv/bin/python benchmarks/bench_body_health.py [--probes 20] [--rounds 2] [--server-tree ../folio-old]

Prints a Markdown table (api-bodies.md, "One 6 MB body with query threads").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
HEADERS = {"Content-Type": "application/json"}


def package_bodies(base: str, size: int) -> dict[str, bytes]:
    """``/v1/verify`` bodies of about ``size`` bytes from a real package: its items repeated (at most 2,000);
    the same with an unknown top-level field, and with a page of its last item that is not a number; a dense
    one (every item with 40 line boxes, about 470,000 JSON values: just under the limit), and that one with
    words for every box's numbers (about 250,000 errors)."""
    with httpx.Client(base_url=base, timeout=300) as c:
        r = c.post("/v1/context", json={"query": "How fast is a priority-one incident acknowledged?", "k": 200,
                                        "budget": 1_000_000, "max_items": 1000})  # fmt: skip
        r.raise_for_status()
        package = r.json()
    items = package["items"]
    one = len(json.dumps(items).encode()) / len(items)
    n = min(2000, int(size / one))
    valid: dict[str, Any] = {"answer": "A priority-one incident is acknowledged within 15 minutes [S1].",
                             "package": {**package, "items": (items * (n // len(items) + 1))[:n]}}  # fmt: skip
    last = valid["package"]["items"]
    bad = {**valid, "package": {**valid["package"], "items": [*last[:-1], {**last[-1], "pages": ["x"]}]}}
    return {
        "valid": json.dumps(valid).encode(),
        "unknown field": json.dumps({**valid, "x": 1}).encode(),
        "bad last item": json.dumps(bad).encode(),
        "dense": dense_body(valid, size, [72.0245, 101.3371, 540.2219, 112.8874]),
        "dense, boxes not numbers": dense_body(valid, size, ["x0", "y0", "x1", "y1"]),
    }


def dense_body(valid: dict[str, Any], size: int, box: list[Any], boxes: int = 40, items: int = 1600) -> bytes:
    """``valid`` with ``items`` copies of its first item, each with ``boxes`` line boxes ``box`` and its text
    padded to make the body about ``size`` bytes."""
    first = valid["package"]["items"][0]
    item = {**first, "trigger_ids": first["trigger_ids"][:3], "text": first["text"][:200],
            "locators": [{**first["locators"][0], "line_boxes": [box] * boxes}]}  # fmt: skip
    rest = len(json.dumps({**valid, "package": {**valid["package"], "items": []}}).encode())
    item["text"] += " " * max(0, (size - rest) // items - len(json.dumps(item).encode()))
    return json.dumps({**valid, "package": {**valid["package"], "items": [item] * items}}).encode()


def health_during(base: str, body: bytes | None, probes: int, interval: float) -> dict[str, Any]:
    """``probes`` GETs of ``/v1/health``, ``interval`` s apart, while one client posts ``body`` to
    ``/v1/verify`` again and again (None: idle)."""
    stop = threading.Event()
    statuses: dict[int, int] = {}
    took: list[float] = []

    def send() -> None:
        with httpx.Client(base_url=base, timeout=300) as c:
            while not stop.is_set():
                t0 = time.perf_counter()
                status = c.post("/v1/verify", content=body, headers=HEADERS).status_code
                took.append(time.perf_counter() - t0)
                statuses[status] = statuses.get(status, 0) + 1

    sender = threading.Thread(target=send) if body is not None else None
    if sender:
        sender.start()
        time.sleep(0.05)
    latencies: list[float] = []
    with httpx.Client(base_url=base, timeout=60) as c:
        for _ in range(probes):
            t0 = time.perf_counter()
            c.get("/v1/health").raise_for_status()
            latencies.append(time.perf_counter() - t0)
            time.sleep(interval)
    stop.set()
    if sender:
        sender.join()
    return {"p50_ms": round(statistics.median(latencies) * 1000, 1), "max_ms": round(max(latencies) * 1000, 1),
            "statuses": statuses, "s_per_body": round(statistics.fmean(took), 2) if took else None}  # fmt: skip


def serve(tree: str, data: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``folio serve`` of ``tree`` on a free loopback port with query threads, once it is ready."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {**os.environ, "FOLIO_DATA": str(data), "FOLIO_OCR": "0", "FOLIO_QUERY_PROCESSES": "0",
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": tree}  # fmt: skip
    log = open(data / "server.log", "wb")  # noqa: SIM115 - the server's, closed with it
    server = subprocess.Popen([sys.executable, "-m", "folio.api.cli", "serve", "--host", "127.0.0.1", "--port",
                               str(port)], cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            if httpx.get(f"{base}/v1/ready", timeout=2).status_code == 200:
                return server, base
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise RuntimeError(f"server did not start; see {data / 'server.log'}")
        time.sleep(0.3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probes", type=int, default=20)
    ap.add_argument("--interval", type=float, default=0.05, help="seconds between health probes")
    ap.add_argument("--size", type=int, default=6_000_000, help="bytes of each /v1/verify body")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--server-tree", default=str(ROOT), help="run the server from this checkout")
    args = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="folio-bench-body-"))
    server, base = serve(str(Path(args.server_tree).resolve()), data)
    try:
        with httpx.Client(base_url=base, timeout=300) as c:
            pdf = (ROOT / "sample_pdfs" / "support-policy-v1.pdf").read_bytes()
            c.post("/v1/documents", files={"file": ("support-policy-v1.pdf", pdf)}, data={"doc_id": "support-policy"})
        bodies = package_bodies(base, args.size)
        print("| /v1/verify body, sent again and again | health probes | p50 ms | max ms | answers | s per body |")
        print("|---|---:|---:|---:|---|---:|")
        for _ in range(args.rounds):
            for name, body in [("none (idle)", None), *bodies.items()]:
                r = health_during(base, body, args.probes, args.interval)
                label = f"{name} {len(body) / 1e6:.1f} MB" if body else name
                answers = ", ".join(f"{k}: {v}" for k, v in sorted(r["statuses"].items())) or "-"
                took = r["s_per_body"] or "-"
                print(f"| {label} | {args.probes} | {r['p50_ms']} | {r['max_ms']} | {answers} | {took} |")
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
