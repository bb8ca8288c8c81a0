"""Fuzz the ingest path: every PDF in some folders, plus generated odd ones, each in its own process.

    .venv/bin/python benchmarks/fuzz_ingest.py [DIR_OR_PDF ...] [--timeout S] [--no-generated]

Without arguments it runs ``/work/shared/corpus`` and ``/work/shared/eval/wide/pdfs`` (those that
exist) and the files of ``benchmarks/odd_pdfs.py`` (truncated, zero-byte, garbage, encrypted,
image bomb, ...), written to a temporary folder. Each file is ingested by ``ingest_bytes`` into a
fresh store in a child process, with the ingest limits of the environment (``FOLIO_INGEST_*``,
see ``ingest/parse_supervisor.py``) and OCR as configured (on when Tesseract is installed). Outcomes:

- ``ingested``: a report came back (``created`` or ``partial``; warnings counted);
- ``clean error``: a ``FolioError`` with its code (what the API returns as a 4xx);
- ``server error``: any other exception (a 500 in the API: our bug);
- ``timeout``: the child ran past ``--timeout`` and was killed (the limits should fire first);
- ``crash``: the child died on a signal.

Peak memory is the largest summed RSS of the child's process tree (the ingest process, its parse
child and Tesseract), sampled every 50 ms. The embedding stage uses a deterministic hashing
encoder (``--real-encoder`` loads MiniLM in every child instead, ~10 s each here): the parser,
the limits and the store are what is fuzzed. Results go to ``benchmarks/results/fuzz.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIRS = [Path("/work/shared/corpus"), Path("/work/shared/eval/wide/pdfs")]
RESULTS = ROOT / "benchmarks" / "results" / "fuzz.md"


class HashEncoder:
    """A deterministic fake text encoder (384-d, from SHA-256 of the text): no model to load."""

    dim: int = 384
    name: str = "fuzz-sha256-hash"

    def encode(self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(t.encode("utf-8", "replace")).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        if progress:
            progress(len(texts), len(texts))
        return out


def run_one(path: Path, data_dir: Path, real_encoder: bool) -> dict[str, Any]:
    """In the child: ingest one file, return what happened (never raises)."""
    from folio.api.errors import status_for
    from folio.ingest.pipeline import ingest_bytes
    from folio.ingest.storage.store import Store
    from folio.kernel.errors import FolioError

    try:
        store = Store(data_dir)
        rep = ingest_bytes(
            store,
            path.read_bytes(),
            filename=path.name,
            encoder=None if real_encoder else HashEncoder(),
        )
        return {
            "outcome": "ingested",
            "status": rep.status,
            "pages": rep.pages,
            "warnings": len(rep.warnings),
            "issues": len(rep.issues),
            "kinds": rep.regions_by_kind,
            "repaired": any(w.startswith("repaired:") for w in rep.warnings),
        }
    except FolioError as exc:
        return {"outcome": "clean error", "code": exc.code, "http": status_for(exc), "message": str(exc)[:200]}
    except Exception as exc:  # noqa: BLE001 - the harness records our bugs, it does not hide them
        return {"outcome": "server error", "code": type(exc).__name__, "message": str(exc)[:200]}


@dataclass
class Result:
    name: str
    source: str
    size: int
    outcome: str
    code: str
    seconds: float
    peak_mb: float
    detail: str


def _tree_rss(proc: Any) -> float:
    import psutil

    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total / (1024 * 1024)


def _descendants_of_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def fuzz_file(path: Path, source: str, timeout: float, real_encoder: bool) -> Result:
    import psutil

    with tempfile.TemporaryDirectory(prefix="fuzz-store-") as tmp:
        out_file = Path(tmp) / "result.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--one", str(path), "--data", str(Path(tmp) / "data")]
        cmd += ["--result", str(out_file)] + (["--real-encoder"] if real_encoder else [])
        started = time.perf_counter()
        child = subprocess.Popen(
            cmd,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        ps = psutil.Process(child.pid)
        peak = 0.0
        timed_out = False
        try:
            while child.poll() is None:
                peak = max(peak, _tree_rss(ps))
                if time.perf_counter() - started > timeout:
                    timed_out = True
                    break
                time.sleep(0.05)
        finally:  # timed out, or the harness itself interrupted: the child's whole session goes
            if child.poll() is None:
                _descendants_of_group(child.pid)
        child.wait()
        seconds = time.perf_counter() - started
        # The parse child leads its own group: anything left of the tree goes too.
        err = child.stderr.read().decode(errors="replace") if child.stderr else ""
        size = path.stat().st_size
        if timed_out:
            return Result(path.name, source, size, "timeout", "", seconds, peak, f"killed after {timeout:g} s")
        if child.returncode < 0:
            sig = signal.Signals(-child.returncode).name
            return Result(path.name, source, size, "crash", sig, seconds, peak, err.strip()[-160:])
        if not out_file.exists():
            detail = err.strip().splitlines()[-1][:160] if err.strip() else f"exit {child.returncode}"
            return Result(path.name, source, size, "server error", "no result", seconds, peak, detail)
        res = json.loads(out_file.read_text())
        if res["outcome"] == "ingested":
            kinds = res["kinds"]
            detail = f"{res['status']}, {res['pages']} p, {sum(kinds.values())} regions"
            detail += f", {res['warnings']} warnings" if res["warnings"] else ""
            detail += f", {res['issues']} page issues" if res["issues"] else ""
            detail += ", repaired" if res["repaired"] else ""
            if "paragraph" not in kinds and res["pages"]:
                detail += ", no paragraphs"
            return Result(path.name, source, size, "ingested", res["status"], seconds, peak, detail)
        return Result(path.name, source, size, res["outcome"], res["code"], seconds, peak, res.get("message", ""))


def collect(args: argparse.Namespace, tmp: Path) -> list[tuple[Path, str]]:
    files: list[tuple[Path, str]] = []
    if not args.no_generated:
        sys.path.insert(0, str(ROOT))
        from benchmarks.odd_pdfs import GENERATORS

        gen = tmp / "generated"
        gen.mkdir()
        for name, build in GENERATORS.items():
            (gen / name).write_bytes(build())
            files.append((gen / name, "generated"))
    dirs = [Path(d) for d in args.paths] if args.paths else [d for d in DEFAULT_DIRS if d.exists()]
    for d in dirs:
        found = [d] if d.is_file() else sorted(p for p in d.iterdir() if p.suffix.lower() == ".pdf")
        for p in found:
            if args.max_mb and p.stat().st_size > args.max_mb * 1024 * 1024:
                print(f"skipping {p.name}: over --max-mb", file=sys.stderr)
                continue
            files.append((p, str(d.parent if d.is_file() else d)))
    return files


def table(results: list[Result]) -> str:
    by = Counter(r.outcome for r in results)
    order = ["ingested", "clean error", "server error", "timeout", "crash"]
    lines = ["| outcome | files |", "|---|---|"]
    lines += [f"| {o} | {by.get(o, 0)} |" for o in order]
    codes = Counter(r.code for r in results if r.outcome == "clean error")
    if codes:
        lines += ["", "| clean error code | files |", "|---|---|"]
        lines += [f"| `{c}` | {n} |" for c, n in sorted(codes.items())]
    lines += ["", "| file | source | KB | outcome | code | s | peak RSS MB | detail |", "|---" * 8 + "|"]
    for r in results:
        detail = r.detail.replace("|", "\\|").replace("\n", " ")
        lines.append(
            f"| {r.name} | {Path(r.source).name} | {r.size // 1024} | {r.outcome} | {r.code} | {r.seconds:.1f} "
            f"| {r.peak_mb:.0f} | {detail} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("paths", nargs="*", help="folders of PDFs or single PDFs (default: the shared corpus)")
    ap.add_argument("--timeout", type=float, default=400.0, help="seconds per file before the harness kills it")
    ap.add_argument("--no-generated", action="store_true", help="skip the generated odd PDFs")
    ap.add_argument("--max-mb", type=float, default=0.0, help="skip files larger than this (0: none)")
    ap.add_argument("--real-encoder", action="store_true", help="embed with MiniLM (slow: a model load per file)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        res = run_one(args.one, args.data, args.real_encoder)
        args.result.write_text(json.dumps(res))
        return 0
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        files = collect(args, Path(tmp))
        results: list[Result] = []
        for path, source in files:
            r = fuzz_file(path, source, args.timeout, args.real_encoder)
            line = f"{r.outcome:12s} {r.code:22s} {r.seconds:6.1f}s {r.peak_mb:6.0f} MB  {r.name}  {r.detail}"
            print(line, flush=True)
            results.append(r)
    limits = {k: v for k, v in os.environ.items() if k.startswith(("FOLIO_INGEST", "FOLIO_PAGE", "FOLIO_OCR"))}
    head = (
        f"# Ingest fuzzing\n\n{len(results)} files, harness timeout {args.timeout:g} s per file, limits "
        f"{limits or 'default'}, {'MiniLM' if args.real_encoder else 'hashing'} encoder, "
        f"`{' '.join(sys.argv[1:]) or '(defaults)'}`.\n\n"
    )
    text = head + table(results) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print("\n" + table(results).split("\n\n| file")[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
