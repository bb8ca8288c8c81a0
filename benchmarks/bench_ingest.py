"""Ingest throughput on the whole corpus: folio's parser vs bare ``get_text("dict")`` and pymupdf4llm.

    python benchmarks/bench_ingest.py [--corpus DIR] [--files a.pdf ...] [--sample-pages 15]
    python benchmarks/bench_ingest.py --pipeline [--files a.pdf ...]   # end to end, old path vs new
    python benchmarks/bench_ingest.py --pipeline --old-tree ../folio-d7fe022  # old path = that checkout
    python benchmarks/bench_ingest.py --parse-ratio                    # structure parse / get_text, old vs new

Per document, each in its own subprocess:

- ``dict``: ``page.get_text("dict")`` on every page (the floor: PyMuPDF's own text extraction).
- ``structure``: ``parse_pdf(assets_dir=None, ocr=False)``, whole document. Its peak RSS is read
  right after it, before torch or pymupdf4llm are imported, so it is the parser's own.
- ``ocr``: ``parse_pdf(ocr=True)``, whole document (only pages with scans or large text images
  are OCRed; ``ocr pages`` says how many).
- ``embed``: structure parse + MiniLM encoding of every child region (sentences, tables,
  figures), on the first ``--sample-pages`` pages.
- ``pymupdf4llm``: ``to_markdown(doc, pages=range(sample))`` on the same first pages (it runs at
  ~0.5 pages/s here, so the whole corpus would take most of an hour).

Memory: peak RSS of parsing the first 25 %, 50 % and 100 % of the longest document with page
renders on (PNG files streamed to a temporary directory), in a subprocess that never imports
torch (PyMuPDF's ``find_tables`` does import pymupdf4llm's layout package and onnxruntime, so
those are part of the parser's footprint). Flat numbers mean memory does not grow with page count.

Timings are single runs on a shared machine; ratios come from the same process and run.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _subset(data: bytes, n: int) -> bytes:
    import pymupdf

    src = pymupdf.open(stream=data, filetype="pdf")
    out = pymupdf.open()
    out.insert_pdf(src, from_page=0, to_page=min(n, src.page_count) - 1)
    return bytes(out.tobytes())


def measure(path: str, sample: int) -> dict[str, Any]:
    import pymupdf

    from folio.ingest.pdf.parse import parse_pdf
    from folio.kernel.tokens import get_tokenizer

    get_tokenizer().count("warm up")
    data = pathlib.Path(path).read_bytes()
    name = pathlib.Path(path).name
    doc = pymupdf.open(stream=data, filetype="pdf")
    n = doc.page_count
    t = time.perf_counter()
    for p in doc:
        p.get_text("dict")
    dict_s = time.perf_counter() - t
    t = time.perf_counter()
    parsed = parse_pdf(data, doc_id="b", filename=name, assets_dir=None, ocr=False)
    parse_s = time.perf_counter() - t
    out: dict[str, Any] = {
        "file": name,
        "pages": n,
        "dict_pps": n / dict_s,
        "parse_pps": n / parse_s,
        "parse_rss_mb": _rss_mb(),
        "regions": len(parsed.regions),
    }
    t = time.perf_counter()
    ocrd = parse_pdf(data, doc_id="b", filename=name, assets_dir=None, ocr=True)
    out.update(ocr_pps=n / (time.perf_counter() - t), ocr_pages=ocrd.ocr_pages)
    del ocrd
    k = min(sample, n)
    sub = _subset(data, k)
    from folio.ingest.embed import default_text_encoder

    enc = default_text_encoder()
    enc.encode(["warm up"])
    t = time.perf_counter()
    part = parse_pdf(sub, doc_id="b", filename=name, assets_dir=None, ocr=False)
    texts = [r.text for r in part.regions if r.kind in ("sentence", "table", "figure")]
    enc.encode(texts)
    out.update(embed_pps=k / (time.perf_counter() - t), embed_texts=len(texts), sample_pages=k)
    import pymupdf4llm
    from pymupdf4llm.ocr import OCRMode

    t = time.perf_counter()
    pymupdf4llm.to_markdown(doc, pages=list(range(k)), show_progress=False, use_ocr=OCRMode.NEVER)
    out["p4llm_pps"] = k / (time.perf_counter() - t)
    # Structure parse on the same sample, for a like-for-like ratio against pymupdf4llm.
    t = time.perf_counter()
    parse_pdf(sub, doc_id="b", filename=name, assets_dir=None, ocr=False)
    out["parse_sample_pps"] = k / (time.perf_counter() - t)
    return out


def rss_only(path: str, fraction: float) -> dict[str, Any]:
    """Peak RSS of a structure parse with page renders of the first ``fraction`` of ``path``."""
    from folio.ingest.pdf.parse import parse_pdf

    data = pathlib.Path(path).read_bytes()
    import pymupdf

    n = max(1, round(pymupdf.open(stream=data, filetype="pdf").page_count * fraction))
    sub = _subset(data, n)
    with tempfile.TemporaryDirectory() as td:
        t = time.perf_counter()
        parse_pdf(sub, doc_id="b", filename="x.pdf", assets_dir=pathlib.Path(td) / "assets", ocr=False)
        secs = time.perf_counter() - t
    # PyMuPDF's find_tables itself imports pymupdf4llm's layout package and onnxruntime (even with
    # use_layout=False), so they count as the parser's footprint; torch must not be there.
    assert "torch" not in sys.modules
    return {"pages": n, "fraction": fraction, "peak_rss_mb": _rss_mb(), "render_pps": n / secs}


# ------------------------------------------------------------------ end to end: new vs old path
OLD_PATH_ENV = {"FOLIO_EMBED_BACKEND": "torch"}  # and --tables-baseline (use_tables_baseline)
NEW_PATH_ENV = {"FOLIO_EMBED_BACKEND": "onnx-int8"}


def use_tables_baseline() -> None:
    """The table path before issue 9 (``find_page_tables(baseline=True)``) for every parse in this process.
    The parse must then run here, not in the forkserver child of ``ingest.parse_supervisor``, which would not see it."""
    from functools import partial

    from folio.ingest.pdf.tables import ruled

    ruled.find_page_tables = partial(ruled.find_page_tables, baseline=True)  # type: ignore[assignment]


def pipeline_run(files: list[str]) -> dict[str, Any]:
    """``folio ingest``'s work on ``files`` in one process (model loaded once, as the CLI does):
    validate, parse with OCR on, embed, write, commit, into a fresh store. Per file seconds."""
    from folio.ingest.embed import default_text_encoder
    from folio.ingest.parse_supervisor import IngestLimits
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store
    from folio.settings import IngestSettings

    t = time.perf_counter()
    default_text_encoder().encode(["warm up"])  # the model load, reported apart
    load_s = time.perf_counter() - t
    out: dict[str, Any] = {"load_s": load_s, "docs": []}
    with tempfile.TemporaryDirectory() as td:
        store = Store(pathlib.Path(td) / "data")
        for f in files:
            t = time.perf_counter()
            # in-process parses, old and new alike: the table switch only reaches a parse in this process
            limits = replace(IngestLimits.from_settings(IngestSettings()), isolate=False)
            rep = ingest_path(store, f, ocr=True, limits=limits)
            out["docs"].append(
                {"file": pathlib.Path(f).name, "pages": rep.pages, "ocr_pages": rep.ocr_pages,
                 "seconds": time.perf_counter() - t}
            )
    return out


def pipeline_table(files: list[str], old_tree: str | None = None) -> str:
    """Old path (fp32 torch MiniLM, PyMuPDF's own table character pass, every ruled page through
    find_tables) against the new one, in the same run; each in its own process. ``old_tree``: run
    the old path from that checkout instead (e.g. a worktree of the commit before issue 9), so
    everything this tree changed since, not only what the switches above turn off, is measured."""
    import os

    results = {}
    for name, env in (("old", OLD_PATH_ENV), ("new", NEW_PATH_ENV)):
        flags = ["--tables-baseline"] if name == "old" else []
        if name == "old" and old_tree:
            env = {**env, "PYTHONPATH": str(pathlib.Path(old_tree).resolve())}
            flags = []  # that checkout's own table path
        r = subprocess.run(
            [sys.executable, __file__, *flags, "--pipeline-one", *files],
            capture_output=True, text=True, cwd=ROOT, check=True, env={**os.environ, **env},
        )
        results[name] = json.loads(r.stdout.strip().splitlines()[-1])
        print(f"pipeline {name}: done", file=sys.stderr, flush=True)
    old, new = results["old"], results["new"]
    lines = [
        "| file | pages | OCR pages | old s | new s | old p/s | new p/s | new/old |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for o, n in zip(old["docs"], new["docs"], strict=True):
        lines.append(
            f"| {o['file']} | {o['pages']} | {o['ocr_pages']} | {o['seconds']:.1f} | {n['seconds']:.1f} | "
            f"{o['pages'] / o['seconds']:.2f} | {n['pages'] / n['seconds']:.2f} | {o['seconds'] / n['seconds']:.2f}x |"
        )
    pages = sum(d["pages"] for d in old["docs"])
    so, sn = sum(d["seconds"] for d in old["docs"]), sum(d["seconds"] for d in new["docs"])
    lines.append(
        f"| TOTAL | {pages} | {sum(d['ocr_pages'] for d in old['docs'])} | {so:.1f} | {sn:.1f} | "
        f"{pages / so:.2f} | {pages / sn:.2f} | **{so / sn:.2f}x** |"
    )
    lines.append(
        f"| with model load | | | {so + old['load_s']:.1f} | {sn + new['load_s']:.1f} | "
        f"{pages / (so + old['load_s']):.2f} | {pages / (sn + new['load_s']):.2f} | "
        f"{(so + old['load_s']) / (sn + new['load_s']):.2f}x |"
    )
    return "\n".join(lines)


def parse_ratio_one(path: str) -> dict[str, Any]:
    """Bare ``get_text("dict")`` and the structure parse (no OCR, no renders) of one document,
    each the best of two alternating runs in this process."""
    import pymupdf

    from folio.ingest.pdf.parse import parse_pdf

    data = pathlib.Path(path).read_bytes()
    doc = pymupdf.open(stream=data, filetype="pdf")
    d_s, p_s = [], []
    for _ in range(2):
        t = time.perf_counter()
        for p in doc:
            p.get_text("dict")
        d_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        parse_pdf(data, doc_id="b", filename=pathlib.Path(path).name, assets_dir=None, ocr=False)
        p_s.append(time.perf_counter() - t)
    return {"file": pathlib.Path(path).name, "pages": doc.page_count, "dict_s": min(d_s), "parse_s": min(p_s)}


def parse_ratio_table(files: list[str]) -> str:
    """Structure parse / bare get_text("dict") per document, new table path and old, same run."""
    import os

    lines = [
        "| file | pages | dict s | structure s (new) | new / dict | structure s (old) | old / dict | old / new |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for f in files:
        res = {}
        for name, flags in (("old", ["--tables-baseline"]), ("new", [])):
            r = subprocess.run(
                [sys.executable, __file__, *flags, "--parse-one", f], capture_output=True, text=True, cwd=ROOT,
                check=True, env={**os.environ, "FOLIO_INGEST_ISOLATE": "0"},
            )
            res[name] = json.loads(r.stdout.strip().splitlines()[-1])
        o, n = res["old"], res["new"]
        d = min(o["dict_s"], n["dict_s"])  # the floor, from either process
        lines.append(
            f"| {n['file']} | {n['pages']} | {d:.2f} | {n['parse_s']:.2f} | {n['parse_s'] / d:.1f}x | "
            f"{o['parse_s']:.2f} | {o['parse_s'] / d:.1f}x | {o['parse_s'] / n['parse_s']:.2f}x |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def _child(args: list[str]) -> dict[str, Any]:
    r = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, cwd=ROOT, check=True
    )
    result: dict[str, Any] = json.loads(r.stdout.strip().splitlines()[-1])
    return result


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    ap.add_argument("--files", nargs="*")
    ap.add_argument("--sample-pages", type=int, default=15)
    ap.add_argument("--one")
    ap.add_argument("--rss")
    ap.add_argument("--fraction", type=float, default=1.0)
    ap.add_argument("--pipeline", action="store_true", help="end-to-end ingest, old path vs new, same run")
    ap.add_argument("--pipeline-one", nargs="*", help=argparse.SUPPRESS)
    ap.add_argument("--old-tree", help="with --pipeline: run the old path from this checkout")
    ap.add_argument("--parse-ratio", action="store_true", help="structure parse / get_text per document, old vs new")
    ap.add_argument("--parse-one", help=argparse.SUPPRESS)
    ap.add_argument("--tables-baseline", action="store_true", help="parse with the table path before issue 9")
    return ap


def main() -> None:
    a = _parser().parse_args()
    if a.tables_baseline:
        use_tables_baseline()
    if not _other_mode(a):
        _corpus_run(a)


def _other_mode(a: argparse.Namespace) -> bool:
    """Run the mode ``a`` asks for other than the corpus table (a child's one document, the parse ratio, the
    pipeline comparison), printing its result; False when it asks for none."""
    if a.parse_one:
        print(json.dumps(parse_ratio_one(a.parse_one)))
    elif a.parse_ratio:
        files = a.files or sorted(str(p) for p in pathlib.Path(a.corpus).glob("*.pdf"))
        print(parse_ratio_table(files))
    elif a.pipeline_one:
        print(json.dumps(pipeline_run(a.pipeline_one)))
    elif a.pipeline:
        files = a.files or sorted(str(p) for p in pathlib.Path(a.corpus).glob("*.pdf"))
        table = pipeline_table(files, a.old_tree)
        print(table)
        out = ROOT / "benchmarks" / "results"
        out.mkdir(parents=True, exist_ok=True)
        (out / "ingest-pipeline.md").write_text(table + "\n")
    elif a.one:
        print(json.dumps(measure(a.one, a.sample_pages)))
    elif a.rss:
        print(json.dumps(rss_only(a.rss, a.fraction)))
    else:
        return False
    return True


def _corpus_run(a: argparse.Namespace) -> None:
    """Every corpus file measured in a child process, then the peak RSS of the longest at three fractions:
    ``ingest.json`` and the table in ``ingest.md`` (``benchmarks/results``)."""
    files = a.files or sorted(str(p) for p in pathlib.Path(a.corpus).glob("*.pdf"))
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for f in files:
        rows.append(_child(["--one", f, "--sample-pages", str(a.sample_pages)]))
        print(f"measured {rows[-1]['file']}", file=sys.stderr, flush=True)
        (out / "ingest.partial.json").write_text(json.dumps(rows, indent=2))  # progress survives a crash
    longest = max(files, key=lambda f: next(r["pages"] for r in rows if r["file"] == pathlib.Path(f).name))
    rss = [_child(["--rss", longest, "--fraction", str(fr)]) for fr in (0.25, 0.5, 1.0)]
    total = _total(rows)
    table = "\n".join(_corpus_table(rows, total, rss, a.sample_pages, pathlib.Path(longest).name))
    print(table)
    (out / "ingest.partial.json").unlink(missing_ok=True)
    (out / "ingest.json").write_text(json.dumps({"documents": rows, "total": total, "rss": rss}, indent=2))
    (out / "ingest.md").write_text(table + "\n")


def _total(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The TOTAL row: rates over all pages (pages / total seconds), counts summed, the highest peak RSS."""

    def tot(key: str, n_key: str = "pages") -> float:  # pages / total seconds
        return float(sum(r[n_key] for r in rows) / sum(r[n_key] / r[key] for r in rows))

    return {
        "file": "TOTAL",
        "pages": sum(r["pages"] for r in rows),
        "sample_pages": sum(r["sample_pages"] for r in rows),
        "dict_pps": tot("dict_pps"),
        "parse_pps": tot("parse_pps"),
        "ocr_pps": tot("ocr_pps"),
        "ocr_pages": sum(r["ocr_pages"] for r in rows),
        "embed_pps": tot("embed_pps", "sample_pages"),
        "p4llm_pps": tot("p4llm_pps", "sample_pages"),
        "parse_sample_pps": tot("parse_sample_pps", "sample_pages"),
        "parse_rss_mb": max(r["parse_rss_mb"] for r in rows),
    }


def _corpus_table(
    rows: list[dict[str, Any]], total: dict[str, Any], rss: list[dict[str, Any]], sample_pages: int, longest: str
) -> list[str]:
    """The Markdown of ``ingest.md``: one row per file and the total, then the peak RSS of ``longest``."""
    lines = [
        "| file | pages | dict p/s | structure p/s | dict/structure | OCR-on p/s (OCR pages) | "
        f"embed p/s (first {sample_pages}) | pymupdf4llm p/s (first {sample_pages}) | "
        "structure/pymupdf4llm | structure peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in [*rows, total]:
        lines.append(
            f"| {r['file']} | {r['pages']} | {r['dict_pps']:.1f} | {r['parse_pps']:.1f} | "
            f"{r['dict_pps'] / r['parse_pps']:.1f}x | {r['ocr_pps']:.2f} ({r['ocr_pages']}) | "
            f"{r['embed_pps']:.2f} | {r['p4llm_pps']:.2f} | {r['parse_sample_pps'] / r['p4llm_pps']:.0f}x | "
            f"{r['parse_rss_mb']:.0f} |"
        )
    lines += [
        "",
        f"pymupdf4llm and the embedding column run on the first {sample_pages} pages of each document "
        "(pymupdf4llm runs at ~0.5 pages/s here); structure/pymupdf4llm compares folio's structure parse on "
        "those same pages. OCR-on = the whole document with OCR enabled (scanned pages and large text images "
        "only). Embed = structure parse + MiniLM over sentences, tables and figures. Single runs on a shared "
        "2-core machine.",
        "",
        f"Peak RSS, structure parse with page renders streamed to disk, {longest} "
        "(no torch in the process; PyMuPDF's find_tables imports pymupdf4llm.layout and onnxruntime itself):",
        "",
        "| pages parsed | peak RSS MB | pages/s with renders |",
        "|---|---|---|",
        *[
            f"| {r['pages']} ({r['fraction']:.0%}) | {r['peak_rss_mb']:.0f} | {r['render_pps']:.1f} |"
            for r in rss
        ],
    ]
    return lines

if __name__ == "__main__":
    main()
