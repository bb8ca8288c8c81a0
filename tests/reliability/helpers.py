"""Shared pieces of the reliability tests: a paused ingest in a child process, row counts."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_pdfs" / "support-policy-v1.pdf"
DOC = "policy"

# A child that ingests argv[2] into argv[1] as doc id "policy" and, at the point named by argv[3],
# prints PAUSED and sleeps argv[4] seconds (the parent kills it there, or lets it go on):
#   embed  - regions written, embedding under way
#   rows   - every row written, just before the commit
#   commit - inside commit_version: rows checked and FTS rebuilt, the versions row not yet flipped
#   none   - no pause (prints PAUSED at the start of the claim instead)
CHILD = r"""
import sys, time
from folio.ingest.pipeline import ingest_path
from folio.ingest.storage.store import Store

data, pdf, point, pause = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
store = Store(data)

def stop():
    print("PAUSED", flush=True)
    time.sleep(pause)

def progress(stage, done, total):
    if point == "embed" and stage == "embed" and done > 0:
        stop()
    if point == "rows" and stage == "commit" and done == 0:
        stop()

if point == "commit":
    original = Store.ensure_fts
    def ensure_fts(self):
        original(self)
        if self._claims:
            stop()
    Store.ensure_fts = ensure_fts
if point == "none":
    original_begin = Store.begin_version
    def begin_version(self, *a, **k):
        print("PAUSED", flush=True)
        return original_begin(self, *a, **k)
    Store.begin_version = begin_version

rep = ingest_path(store, pdf, doc_id="policy", ocr=False, progress=progress)
print("STATUS", rep.status, flush=True)
"""


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def start_child(data: Path, point: str, pause: float, pdf: Path = SAMPLE) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(data), str(pdf), point, str(pause)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env(),
    )


def wait_for(proc: subprocess.Popen[bytes], marker: bytes, timeout: float = 240.0) -> bytes:
    """Read the child's stdout until a line containing ``marker``; fail if it exits or stalls first."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    seen = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        line = proc.stdout.readline()
        seen += line
        if marker in line:
            return line
        if not line:
            break
    proc.kill()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    raise AssertionError(f"child never printed {marker!r}; stdout={seen!r}; stderr tail={err[-2000:]}")


def counts(data: Path) -> dict[str, Any]:
    """Ready versions and rows per table, read without writing (the way any reader opens the store)."""
    from folio.ingest.storage.store import Store

    store = Store(data)
    out: dict[str, Any] = {"versions": sorted((v.doc_id, v.version_id) for v in store.list_versions())}
    for t in ("regions", "chunks"):
        table = store.table(t)
        rows = table.search().select(["region_id"]).limit(None).to_arrow().to_pylist() if table is not None else []
        ids = [r["region_id"] for r in rows]
        out[t] = len(ids)
        out[t + "_unique"] = len(set(ids))
    return out


def table_versions(data: Path) -> dict[str, int]:
    """The LanceDB version of every table: unchanged exactly when nothing was written."""
    import lancedb

    db = lancedb.connect(str(data / "lancedb"))
    names = sorted(p.name.removesuffix(".lance") for p in (data / "lancedb").glob("*.lance"))
    return {name: db.open_table(name).version for name in names}
