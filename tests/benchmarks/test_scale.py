"""The scale benchmark's grower (``benchmarks/scale.py --grow-only``): a store grown from an ingested one holds
distinct copies (their own doc ids, varied text and vectors) that folio searches like any document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _folio(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "import sys; from folio._cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.fixture(scope="module")
def grown(ingested_readonly: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scale") / "store"
    run = subprocess.run(
        [sys.executable, "benchmarks/scale.py", "--grow-only", "--pages", "60", "--sigma", "0.03",
         "--sources", str(ingested_readonly), "--out", str(out)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["pages"] >= 60
    return out


def _rows(data: Path, doc_id: str) -> dict[str, dict[str, object]]:
    """The chunks of a document's latest version by region id without its doc@version prefix."""
    from folio.ingest.storage.store import Store

    store = Store(data)
    version = store.get_version(doc_id)
    rows = store.scan_versions("chunks", [(doc_id, version.version_id)], ["region_id", "text", "vector"])
    assert rows is not None
    return {r["region_id"].split(":", 1)[1]: r for r in rows.to_pylist()}


def test_copies_are_distinct_documents_with_varied_text_and_vectors(grown: Path, ingested_readonly: Path) -> None:
    source = _rows(ingested_readonly, "r-data-import-export")
    c0, c1 = _rows(grown, "r-data-import-export-c0"), _rows(grown, "r-data-import-export-c1")
    assert source.keys() == c0.keys() == c1.keys()  # the same regions, under each copy's own ids
    differ = [k for k in source if len({source[k]["text"], c0[k]["text"], c1[k]["text"]}) == 3]
    assert len(differ) > len(source) / 4  # a quarter of the chunks or more read differently in every copy
    assert all(len(str(source[k]["text"])) == len(str(c1[k]["text"])) for k in source)  # offsets stay valid
    s, a, b = (np.array([rows[k]["vector"] for k in source]) for rows in (source, c0, c1))
    to_source, between = np.sum(s * b, axis=1), np.sum(a * b, axis=1)
    assert np.all(between < 0.999)  # never the same vector twice
    assert 0.8 < np.mean(to_source) < 0.95  # still the source's neighbourhood (--sigma 0.03: cos ≈ 0.86)


def test_a_copy_answers_a_query_with_its_own_doc_id(grown: Path) -> None:
    c1 = _rows(grown, "r-data-import-export-c1")
    text = max((str(r["text"]) for r in c1.values()), key=len)[:300]
    scoped = _folio("search", text, "--doc", "r-data-import-export-c1", "--json", "-k", "5", "--no-server",
                    "--data", str(grown), cwd=grown.parent)
    assert scoped.returncode == 0, scoped.stderr[-2000:]
    hits = json.loads(scoped.stdout)["data"]
    assert hits and {h["doc_id"] for h in hits} == {"r-data-import-export-c1"}
    unscoped = _folio("search", text, "--retrieval", "bm25", "--json", "-k", "3", "--no-server", "--data",
                      str(grown), cwd=grown.parent)
    assert unscoped.returncode == 0, unscoped.stderr[-2000:]
    assert json.loads(unscoped.stdout)["data"][0]["doc_id"] == "r-data-import-export-c1"
