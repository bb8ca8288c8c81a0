"""Versions, visibility and failure behaviour of the store and the ingest pipeline, on real PDFs."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from folio.ingest.pipeline import doc_id_from_filename, ingest_bytes, ingest_path
from folio.ingest.storage.store import Store
from folio.kernel import errors
from folio.kernel.model import parse_region_id

ROOT = Path(__file__).resolve().parents[2]


def test_identical_bytes_are_a_noop(ingested_data: Path, samples: Path) -> None:
    store = Store(ingested_data)
    before = store.regions.count_rows()
    rep = ingest_path(store, samples / "support-policy-v2.pdf", doc_id="support-policy")
    assert rep.status == "unchanged"
    assert store.regions.count_rows() == before
    assert len(store.list_versions("support-policy")) == 2


def test_changed_bytes_add_a_version_and_latest_is_default(ingested_readonly: Path, samples: Path) -> None:
    store = Store(ingested_readonly)
    versions = store.list_versions("support-policy")
    assert len(versions) == 2
    v1 = (samples / "support-policy-v1.pdf").read_bytes()
    v2 = (samples / "support-policy-v2.pdf").read_bytes()
    from folio.kernel.model import version_id_for

    assert versions[0].latest and versions[0].version_id == version_id_for(v2)
    assert not versions[1].latest and versions[1].version_id == version_id_for(v1)
    assert store.get_version("support-policy").version_id == version_id_for(v2)
    latest = store.latest_versions(["support-policy"])
    assert [v.version_id for v in latest] == [version_id_for(v2)]


def test_region_ids_carry_the_version(ingested_readonly: Path) -> None:
    store = Store(ingested_readonly)
    for v in store.list_versions("support-policy"):
        index = store.region_index(v.doc_id, v.version_id)
        assert len(index) > 0
        for r in index.regions():
            doc, ver, page, _ = parse_region_id(r.region_id)
            assert (doc, ver) == (v.doc_id, v.version_id)
            assert page == r.first_page


def test_delete_one_version_keeps_the_other(ingested_data: Path) -> None:
    store = Store(ingested_data)
    new, old = store.list_versions("support-policy")
    store.delete_version("support-policy", old.version_id)
    remaining = store.list_versions("support-policy")
    assert [v.version_id for v in remaining] == [new.version_id]
    assert store.regions.count_rows(f"version_id = '{old.version_id}'") == 0
    assert store.chunks.count_rows(f"version_id = '{old.version_id}'") == 0
    assert store.regions.count_rows(f"version_id = '{new.version_id}'") > 0
    assert not (ingested_data / "assets" / f"support-policy@{old.version_id}").exists()
    with pytest.raises(errors.VersionNotFound):
        store.delete_version("support-policy", old.version_id)
    with pytest.raises(errors.DocumentNotFound):
        store.delete_document("no-such-doc")


def test_a_pinned_request_reads_one_snapshot_of_the_versions(ingested_data: Path) -> None:
    """``Store.pinned_versions``: inside the block the versions table's version is read once, so a
    delete committed by another handle (another process) meanwhile shows only after the block."""
    reader, writer = Store(ingested_data), Store(ingested_data)
    new, old = reader.list_versions("support-policy")
    with reader.pinned_versions() as pinned:
        writer.delete_version("support-policy", old.version_id)
        assert reader.versions_version() == pinned < int(writer.versions.version)
        assert [v.version_id for v in reader.list_versions("support-policy")] == [new.version_id, old.version_id]
    assert [v.version_id for v in reader.list_versions("support-policy")] == [new.version_id]
    assert reader.versions_version() > pinned


def _counts(store: Store) -> tuple[int, int, int]:
    return store.versions.count_rows(), store.regions.count_rows(), store.chunks.count_rows()


@pytest.mark.parametrize(
    "payload, error",
    [
        (b"", errors.NotAPDF),
        (b"hello, I am a text file\n" * 20, errors.NotAPDF),
        (b"%PDF-1.7\n1 0 obj\n<<", errors.CorruptPDF),
    ],
)
def test_bad_input_stores_nothing_and_damages_nothing(ingested_data: Path, payload: bytes, error: type) -> None:
    store = Store(ingested_data)
    before = _counts(store)
    with pytest.raises(error) as info:
        ingest_bytes(store, payload, filename="bad.pdf")
    assert "\n" not in str(info.value)
    assert _counts(store) == before
    assert store.list_versions("bad") == []


def test_truncated_pdf_is_rejected_without_writing(ingested_data: Path, samples: Path) -> None:
    store = Store(ingested_data)
    before = _counts(store)
    data = (samples / "R-data-import-export.pdf").read_bytes()
    with pytest.raises(errors.InvalidDocument):
        ingest_bytes(store, data[: len(data) // 3], filename="truncated.pdf")
    assert _counts(store) == before


def test_page_limit(ingested_data: Path, samples: Path) -> None:
    store = Store(ingested_data)
    with pytest.raises(errors.LimitExceeded):
        ingest_path(store, samples / "R-data-import-export.pdf", doc_id="too-long", max_pages=5)
    assert store.list_versions("too-long") == []


def test_failure_midway_rolls_back(ingested_data: Path, samples: Path) -> None:
    """An indexer that crashes after regions and chunks were written leaves no trace."""
    store = Store(ingested_data)
    before = _counts(store)

    class Boom:
        name = "boom"

        def index_version(self, store: Store, parsed: object) -> int:
            raise RuntimeError("indexer exploded")

    with pytest.raises(RuntimeError):
        ingest_path(store, samples / "linnsequencer-brochure-scan.pdf", doc_id="boom", indexers=[Boom()], ocr=False)
    assert _counts(store) == before
    assert not any(p.name.startswith("boom@") for p in (ingested_data / "assets").iterdir())


def test_doc_id_from_filename() -> None:
    assert doc_id_from_filename("R Data (Import).PDF") == "r-data-import"
    assert doc_id_from_filename("!!!.pdf") == "document"


def test_invalid_doc_id_is_rejected(ingested_data: Path, samples: Path) -> None:
    with pytest.raises(errors.InvalidRequest):
        ingest_path(Store(ingested_data), samples / "linnsequencer-brochure-scan.pdf", doc_id="../etc/passwd")


KILL_SCRIPT = r"""
import sys, time
from folio.ingest.storage.store import Store
from folio.ingest.pipeline import ingest_path

store = Store(sys.argv[1])

def progress(stage, done, total):
    if stage == "embed" and done > 0:
        print("EMBEDDING", flush=True)
        time.sleep(60)  # the parent kills us here, after regions were written

ingest_path(store, sys.argv[2], doc_id="killed", progress=progress, ocr=False)
"""


@pytest.mark.slow
def test_killed_ingest_leaves_nothing_visible_and_is_cleaned_up(tmp_path: Path, samples: Path) -> None:
    data = tmp_path / "data"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILL_SCRIPT, str(data), str(samples / "support-policy-v1.pdf")],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 300
    line = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 5.0)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        line = proc.stdout.readline()
        if b"EMBEDDING" in line or not line:
            break
    if b"EMBEDDING" not in line:
        proc.kill()
    assert b"EMBEDDING" in line, "ingest never reached the embedding stage"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)

    # Another reader that does not recover: the half-written version exists but is invisible.
    reader = Store(data, recover=False)
    assert reader.regions.count_rows("doc_id = 'killed'") > 0
    assert reader.list_versions() == []
    assert [v.doc_id for v in reader.list_versions(include_pending=True)] == ["killed"]

    # Opening the store is read-only: the pending rows stay until a writer cleans up.
    store = Store(data)
    assert store.regions.count_rows("doc_id = 'killed'") > 0
    store.recover()
    assert store.regions.count_rows() == 0
    assert store.chunks.count_rows() == 0
    assert store.versions.count_rows() == 0
    assert not any((data / "assets").glob("killed@*")) if (data / "assets").exists() else True

    # And a fresh ingest of the same file then works.
    rep = ingest_path(store, samples / "support-policy-v1.pdf", doc_id="killed", ocr=False)
    assert rep.status in ("created", "partial")
    assert [v.doc_id for v in store.list_versions()] == ["killed"]


def test_cli_ingest_and_docs_json(tmp_path: Path, samples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from folio.api.cli import main

    data = tmp_path / "cli-data"
    code = main(["ingest", str(samples / "linnsequencer-brochure-scan.pdf"), "--data", str(data), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["count"] == 1 and out["data"][0]["status"] in ("created", "partial")
    assert out["data"][0]["pages"] == 1
    code = main(["docs", "--data", str(data), "--json"])
    docs = json.loads(capsys.readouterr().out)
    assert code == 0 and docs["data"][0]["doc_id"] == "linnsequencer-brochure-scan"
    bad = tmp_path / "notes.pdf"
    bad.write_text("not a pdf")
    code = main(["ingest", str(bad), "--data", str(data)])
    err = capsys.readouterr().err
    assert code == 1 and "notes.pdf" in err and "Traceback" not in err
