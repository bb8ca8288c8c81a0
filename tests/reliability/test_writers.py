"""Writers of the same version: one claim, no duplicates, nothing lost; readers never write."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from folio.ingest.storage.store import Store
from folio.kernel import errors
from folio.kernel.model import version_id_for
from tests.reliability.helpers import DOC, ROOT, SAMPLE, counts, env, start_child, table_versions, wait_for

VER = "feedfacefeedface"


def _region_rows(doc: str, ver: str, n: int) -> list[Any]:
    from folio.kernel.model import BBox, Locator, Region

    loc = Locator(page=1, bbox=BBox(x0=0, y0=0, x1=1, y1=1), page_width=10, page_height=10)
    return [
        Region(
            region_id=f"{doc}:{ver}:p1:s{i}",
            doc_id=doc,
            version_id=ver,
            kind="sentence",
            text=f"sentence {i}",
            locators=(loc,),
            seq=i,
        )
        for i in range(n)
    ]


def test_second_writer_waits_and_never_deletes_the_first_writers_rows(tmp_path: Path) -> None:
    """Before claims, ``begin_version`` deleted every row of the version, whoever was writing it."""
    first, second = Store(tmp_path), Store(tmp_path)
    assert first.begin_version("doc", VER, "doc.pdf", 1, "1")
    first.add_regions(_region_rows("doc", VER, 5))
    with pytest.raises(errors.VersionBusy):
        second.begin_version("doc", VER, "doc.pdf", 1, "1", wait=timedelta(seconds=0.3))
    assert first.regions.count_rows(f"version_id = '{VER}'") == 5
    # A writer without the claim cannot commit it.
    with pytest.raises(errors.ClaimLost):
        second.commit_version("doc", VER, pages=1, regions=5, report={})
    assert first.list_versions() == []
    first.commit_version("doc", VER, pages=1, regions=5, report={})
    # Now the bytes are known: the second writer's begin is a no-op.
    assert second.begin_version("doc", VER, "doc.pdf", 1, "1") is False
    assert first.regions.count_rows() == 5
    assert [v.version_id for v in second.list_versions()] == [VER]


def test_commit_verifies_the_claim_and_drops_foreign_rows(tmp_path: Path) -> None:
    """Rows a superseded writer left in the version never become visible; a claim deleted under a
    writer makes its commit fail instead of flipping someone else's row."""
    store = Store(tmp_path)
    assert store.begin_version("doc", VER, "doc.pdf", 1, "1")
    store.add_regions(_region_rows("doc", VER, 3))
    ghost = pa.Table.from_pylist(
        [{**r, "writer": "ghost"} for r in (_row(x) for x in _region_rows("doc", VER, 2))], schema=store.regions.schema
    )
    store.regions.add(ghost)
    store.commit_version("doc", VER, pages=1, regions=3, report={})
    assert store.regions.count_rows() == 3
    # A claim removed by someone else (e.g. `folio delete`) while the writer works: commit refuses.
    ver2 = "0123456789abcdef"
    assert store.begin_version("doc", ver2, "doc.pdf", 1, "1")
    store.add_regions(_region_rows("doc", ver2, 2))
    store.versions.delete(f"version_id = '{ver2}'")
    with pytest.raises(errors.ClaimLost):
        store.commit_version("doc", ver2, pages=1, regions=2, report={})
    store.abort_version("doc", ver2)
    assert store.regions.count_rows(f"version_id = '{ver2}'") == 0
    assert [v.version_id for v in store.list_versions()] == [VER]


def _row(r: Any) -> dict[str, Any]:
    from folio.ingest.storage.schema import region_to_row

    return region_to_row(r)


def _race(stores: list[Store], ver: str) -> list[object]:
    barrier = threading.Barrier(len(stores))
    results: list[object] = []

    def claim(s: Store) -> None:
        barrier.wait()
        try:
            results.append(s.begin_version("doc", ver, "doc.pdf", 1, "1", wait=timedelta(0)))
        except errors.VersionBusy as e:
            results.append(e)

    threads = [threading.Thread(target=claim, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_racing_claims_have_one_winner(tmp_path: Path) -> None:
    """LanceDB's merge_insert lets two racing inserts both land; the commit-order election picks one."""
    Store(tmp_path)  # create the tables once
    for round_ in range(4):
        ver = f"{round_:016x}"
        stores = [Store(tmp_path) for _ in range(4)]
        results = _race(stores, ver)
        assert results.count(True) == 1, results
        assert stores[0].versions.count_rows(f"version_id = '{ver}'") == 1


def _cli_ingest(data: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "folio.api.cli", "ingest", str(SAMPLE), "--doc-id", DOC, "--no-ocr", "--json"]
        + ["--data", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env(),
    )


def _status(out: bytes) -> str:
    status: str = json.loads(out)["data"][0]["status"]
    return status


@pytest.mark.slow
def test_second_cli_writer_of_same_file_waits_then_is_a_noop(tmp_path: Path, reference: dict[str, Any]) -> None:
    """The issue's reproduction: a second `folio ingest` of the same file while the first is writing."""
    first = start_child(tmp_path, "embed", 4.0)
    wait_for(first, b"PAUSED")
    second = _cli_ingest(tmp_path)
    out, err = second.communicate(timeout=300)
    line = wait_for(first, b"STATUS")
    first.wait(timeout=60)
    assert b"created" in line
    assert second.returncode == 0, err.decode()
    assert _status(out) == "unchanged"
    assert counts(tmp_path) == reference


@pytest.mark.slow
def test_two_cli_writers_started_together(tmp_path: Path, reference: dict[str, Any]) -> None:
    procs = [_cli_ingest(tmp_path), _cli_ingest(tmp_path)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e.decode()[-2000:] for _, e in outs]
    assert sorted(_status(o) for o, _ in outs) == ["created", "unchanged"]
    assert counts(tmp_path) == reference
    from folio.ingest.storage.maintenance import check

    assert check(Store(tmp_path))["ok"]


@pytest.mark.slow
def test_readers_never_write(tmp_path: Path, reference: dict[str, Any]) -> None:
    """A reader opening the store while a writer is mid-version (and while a dead writer's claim is
    left over) changes nothing: no table version moves, no row of the live writer goes."""
    from folio.api.cli import main

    # A live writer, paused with its rows half written ...
    live = start_child(tmp_path, "embed", 30.0)
    wait_for(live, b"PAUSED")
    # ... and, started after it, a dead writer's leftover: killed in the embedding stage.
    dead = start_child(tmp_path, "embed", 60.0, pdf=ROOT / "sample_pdfs" / "support-policy-v2.pdf")
    wait_for(dead, b"PAUSED")
    dead.kill()
    dead.wait(timeout=30)
    before = table_versions(tmp_path)
    rows_before = Store(tmp_path).regions.count_rows()
    assert Store(tmp_path).versions.count_rows("status = 'pending'") == 2
    for _ in range(3):
        reader = Store(tmp_path)
        assert reader.list_versions() == []
        assert main(["docs", "--data", str(tmp_path), "--json"]) == 0
    assert table_versions(tmp_path) == before
    assert Store(tmp_path).regions.count_rows() == rows_before
    line = wait_for(live, b"STATUS")
    live.wait(timeout=60)
    assert b"created" in line
    # The live writer committed exactly the clean ingest's rows; the dead writer's claim of another
    # version is still there (writers clean up when they start, and `folio check --repair`), invisible.
    store = Store(tmp_path)
    ver = version_id_for(SAMPLE.read_bytes())
    assert [v.version_id for v in store.list_versions()] == [ver]
    assert store.regions.count_rows(f"version_id = '{ver}'") == reference["regions"]
    from folio.ingest.storage.maintenance import check

    assert {p["kind"] for p in check(store)["problems"]} == {"dead_claim"}
    assert check(store, repair=True)["ok"]
    assert counts(tmp_path) == reference


@pytest.mark.slow
def test_cleanup_running_while_a_writer_starts_loses_nothing(tmp_path: Path, reference: dict[str, Any]) -> None:
    """Crash cleanup (`folio check --repair`) in a loop while another process claims and writes."""
    store = Store(tmp_path)
    writer = start_child(tmp_path, "none", 0.0)
    wait_for(writer, b"PAUSED")
    removed: list[tuple[str, str]] = []
    while writer.poll() is None:
        removed += store.recover()
    assert writer.returncode == 0, writer.stderr.read().decode()[-2000:] if writer.stderr else ""
    assert removed == []
    assert counts(tmp_path) == reference
