"""folio on a cluster, on real parts started here on loopback (issue 10): moto's S3 server, a Ray
cluster of a head and two worker nodes (``ray.cluster_utils.Cluster``), ``folio serve`` replicas.

One module-scoped cluster for every test (starting it costs ~30 s); the tests run in file order
and build on each other's store where said.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("ray", reason="the cluster extra is not installed: pip install -e '.[cluster]'")
pytest.importorskip("moto", reason="the cluster extra is not installed: pip install -e '.[cluster]'")

from folio.api.cluster.local import LocalS3, start_ray, start_replica  # noqa: E402
from folio.ingest.storage.maintenance import check  # noqa: E402
from folio.ingest.storage.store import Store  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_pdfs"
DATA = "s3://folio/store"
THREE = ["support-policy-v1.pdf", "support-policy-v2.pdf", "linnsequencer-brochure-scan.pdf"]
QUERY = {"query": "How fast must a priority-one incident be acknowledged?", "budget": 600}


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, Any]]:
    """S3 server + Ray (head without CPUs, two 1-CPU worker nodes); this process is a Ray driver."""
    import ray

    from folio.api.cluster.board import connect

    s3 = LocalS3().start()
    saved = {k: os.environ.get(k) for k in s3.env()}
    os.environ.update(s3.env())  # Ray's nodes and workers inherit them, as do the replicas
    ray_cluster = start_ray(workers=2, cpus_per_worker=1)
    address = ray_cluster.address  # 127.0.0.1:PORT (api/cluster_local.LOOPBACK_RAY)
    connect(address)
    try:
        yield {"s3": s3, "ray": ray_cluster, "address": address, "env": {**s3.env(), "FOLIO_RAY_ADDRESS": address}}
    finally:
        ray.shutdown()
        ray_cluster.shutdown()
        s3.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _folio(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    folio = os.path.join(os.path.dirname(sys.executable), "folio")
    return subprocess.run([folio, *args], env={**os.environ, **env}, capture_output=True, text=True, timeout=600)


def _assert_consistent(store: Store) -> dict[str, Any]:
    result = check(store)
    assert result["ok"], result["problems"]
    assert result["versions"]["pending"] == 0
    return result


def _staged_leftovers() -> list[Path]:
    import tempfile

    return [p for p in Path(tempfile.gettempdir()).glob("folio-staging-*/assets/*") if p.is_dir()]


def test_ray_ingest_three_pdfs_into_s3(cluster: dict[str, Any]) -> None:
    """``folio ingest --ray`` (the CLI, as a user runs it): one task per document, per-document
    reports, every version complete, page renders and crops in the store, nothing on local disk."""
    before = set(_staged_leftovers())
    out = _folio(
        "ingest", "--ray", cluster["address"], "--no-ocr", "--json", "--data", DATA,
        *[str(SAMPLES / n) for n in THREE], env=cluster["env"],
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    reports = json.loads(out.stdout)["data"]
    assert [r["filename"] for r in reports] == THREE
    assert {r["status"] for r in reports} == {"created"}
    assert {r["embed_device"] for r in reports} <= {"cpu", "cuda"}  # where each task's encoder ran (issue 47)
    store = Store(DATA)
    assert sorted(v.doc_id for v in store.list_versions()) == sorted(n.removesuffix(".pdf") for n in THREE)
    result = _assert_consistent(store)
    assert result["rows"]["assets"] >= 3  # at least a page render per document
    v = store.get_version("support-policy-v1")
    page = store.region_index(v.doc_id, v.version_id).page(v.doc_id, v.version_id, 1)
    assert page is not None and store.read_asset(page.meta_get("image") or "")[:4] == b"\x89PNG"
    assert set(_staged_leftovers()) <= before


@pytest.fixture(scope="module")
def replicas(cluster: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """Two ``folio serve`` processes on the same s3:// store, both handing ingest jobs to Ray."""
    logs = tmp_path_factory.mktemp("replicas")
    procs: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    results: list[Any] = [None, None]

    def start(i: int) -> None:
        with open(logs / f"replica{i}.log", "wb") as log:
            results[i] = start_replica(DATA, env=cluster["env"], log=log)

    threads = [threading.Thread(target=start, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        for r in results:
            assert r is not None, "a replica did not start: " + " | ".join(
                p.read_text()[-2000:] for p in logs.iterdir()
            )
            procs.append(r[0])
            urls.append(r[1])
        yield urls
    finally:
        for p in [r[0] for r in results if r is not None]:
            p.terminate()
        for p in [r[0] for r in results if r is not None]:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()


def _context(url: str, **extra: Any) -> dict[str, Any]:
    resp = httpx.post(url + "/v1/context", json={**QUERY, **extra}, timeout=120)
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    return body


def test_two_replicas_answer_the_same_queries(replicas: list[str]) -> None:
    a, b = replicas
    pa, pb = _context(a), _context(b)
    assert pa["items"], pa
    assert [i["region_id"] for i in pa["items"]] == [i["region_id"] for i in pb["items"]]
    assert pa["budget"]["used"] == pb["budget"]["used"] <= 600
    image = httpx.get(b + f"/v1/regions/{pa['items'][0]['region_id']}/image", timeout=60)
    assert image.status_code == 200 and image.content[:4] == b"\x89PNG"


def test_upload_through_one_replica_runs_on_ray_and_shows_on_the_other(replicas: list[str]) -> None:
    """``POST /v1/documents`` on replica A runs on the cluster; the job is readable on B, and the
    version is visible to B's very next query (bound: 0 s, reads check the table version)."""
    a, b = replicas
    pdf = (SAMPLES / "support-policy-v2.pdf").read_bytes()
    resp = httpx.post(
        a + "/v1/documents?wait=false", files={"file": ("policy.pdf", pdf)}, data={"doc_id": "policy"}, timeout=60
    )
    assert resp.status_code == 202, resp.text
    job_id = resp.json()["job_id"]
    deadline = time.monotonic() + 300
    while True:
        job = httpx.get(b + f"/v1/jobs/{job_id}", timeout=30).json()  # the other replica
        if job["status"] in ("done", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert job["status"] == "done", job
    assert job["worker"]["pid"] > 0 and job["attempts"] == 1
    pkg = _context(b, doc_ids=["policy"])
    assert pkg["items"] and {i["doc_id"] for i in pkg["items"]} == {"policy"}
    assert any(j["job_id"] == job_id for j in httpx.get(a + "/v1/jobs", timeout=30).json()["data"])
    # wait=true (the default): the replica awaits the cluster's job and answers with its result.
    v1 = (SAMPLES / "support-policy-v1.pdf").read_bytes()
    resp = httpx.post(b + "/v1/documents", files={"file": ("policy.pdf", v1)}, data={"doc_id": "policy"}, timeout=300)
    assert resp.status_code == 200, resp.text
    assert resp.json()["status"] == "created" and resp.json()["doc_id"] == "policy"
    versions = httpx.get(a + "/v1/documents/policy", timeout=30).json()["versions"]
    assert len(versions) == 2


def test_delete_through_one_replica_hides_it_on_the_other(replicas: list[str]) -> None:
    a, b = replicas
    assert httpx.get(a + "/v1/documents/policy", timeout=30).status_code == 200
    assert httpx.delete(b + "/v1/documents/policy", timeout=60).status_code == 200
    assert httpx.get(a + "/v1/documents/policy", timeout=30).status_code == 404
    pkg = _context(a)
    assert "policy" not in {i["doc_id"] for i in pkg["items"]}
    assert "policy" not in {h["region_id"].split("@")[0] for h in pkg["retrieval"]["hits"]}
    assert httpx.post(a + "/v1/context", json={**QUERY, "doc_ids": ["policy"]}, timeout=60).status_code == 404


def _job(data: bytes, doc_id: str, settings: Any) -> Any:
    """The typed job the door would build (checked here, on the driver), as every Ray task takes it."""
    from folio.ingest.options import IngestOptions
    from folio.ingest.pipeline import IngestJob

    return IngestJob.check(
        data, filename=f"{doc_id}.pdf", options=IngestOptions.from_settings(settings.ingest), doc_id=doc_id
    )


def _long_pdf(pages: int) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    for p in range(pages):
        page = doc.new_page()
        page.insert_text((72, 72), f"Chapter {p + 1}: Maintenance", fontsize=18)
        body = " ".join(f"Step {k} of the procedure on page {p + 1} checks valve {k * p} for leaks." for k in range(40))
        page.insert_textbox(pymupdf.Rect(72, 100, 540, 760), body, fontsize=10)
    data: bytes = doc.tobytes()
    return data


def test_killed_worker_is_retried_and_no_partial_version_shows(cluster: dict[str, Any]) -> None:
    """SIGKILL the worker process of a running ingest task: Ray retries it, the retry takes the dead
    attempt's claim over, a reader never sees the version before it is complete, and the store
    checks out clean afterwards."""
    import ray

    from folio.api.cluster.board import board, job_spec
    from folio.settings import Settings

    store = Store(DATA)
    jobs = board(cluster["address"])
    settings = Settings(ocr=False)
    checked = _job(_long_pdf(24), "manual", settings)
    meta = {"filename": "manual.pdf", "doc_id": "manual"}
    job = ray.get(jobs.submit.remote(job_spec(store, checked, settings), meta))
    seen: list[tuple[int, int]] = []
    stop = threading.Event()

    def reader() -> None:  # what a query would see, all along
        r = Store(DATA)
        while not stop.is_set():
            for v in r.list_versions("manual"):
                seen.append((v.regions, r.regions.count_rows(f"doc_id = 'manual' AND version_id = '{v.version_id}'")))
            time.sleep(0.2)

    watcher = threading.Thread(target=reader, daemon=True)
    watcher.start()
    killed = None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        snap = ray.get(jobs.get.remote(job["job_id"]))
        if killed is None and snap["status"] == "running" and snap["progress"]["stage"] in ("parse", "embed"):
            if snap["progress"]["done"] >= 1 or snap["progress"]["stage"] == "embed":
                killed = snap["worker"]["pid"]
                os.kill(killed, signal.SIGKILL)
        if snap["status"] in ("done", "failed"):
            break
        time.sleep(0.1)
    stop.set()
    watcher.join()
    reader_store = Store(DATA)  # and once more now that it is done (opening it also sweeps dead staging folders)
    for v in reader_store.list_versions("manual"):
        rows = reader_store.regions.count_rows(f"doc_id = 'manual' AND version_id = '{v.version_id}'")
        seen.append((v.regions, rows))
    assert killed is not None, "the task finished before it could be killed"
    assert snap["status"] == "done", snap
    assert snap["attempts"] >= 2 and snap["worker"]["pid"] != killed
    assert snap["result"]["status"] == "created"
    assert seen and all(regions == rows for regions, rows in seen), seen[:5]  # never partial
    versions = store.list_versions("manual", include_pending=True)
    assert len(versions) == 1 and versions[0].pages == 24
    _assert_consistent(store)
    # The dead worker's staged renders are gone from local disk (its orphaned parser may still be
    # finishing a page: sweep until it is gone too).
    import tempfile

    from folio.ingest.storage.objstore import STAGING_PREFIX, sweep_staging

    deadline = time.monotonic() + 30
    while list(Path(tempfile.gettempdir()).glob(f"{STAGING_PREFIX}{killed}-*")) and time.monotonic() < deadline:
        time.sleep(1)
        sweep_staging()
    assert not list(Path(tempfile.gettempdir()).glob(f"{STAGING_PREFIX}{killed}-*"))


def test_concurrent_ingests_into_one_store(cluster: dict[str, Any]) -> None:
    """Two documents at once on the two worker nodes, and the same bytes twice at once: optimistic
    LanceDB commits on S3 lose nothing, and exactly one writer creates the shared version."""
    import ray

    from folio.api.cluster.board import board, job_spec
    from folio.settings import Settings

    store = Store(DATA)
    jobs = board(cluster["address"])
    settings = Settings(ocr=False)
    same = _long_pdf(5)  # one byte string: PyMuPDF stamps each new file differently
    docs = [("alpha", _long_pdf(3)), ("beta", _long_pdf(4)), ("gamma", same), ("gamma", same)]
    submitted = [
        ray.get(
            jobs.submit.remote(job_spec(store, _job(data, d, settings), settings), {})
        )
        for d, data in docs
    ]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        snaps = [ray.get(jobs.get.remote(j["job_id"])) for j in submitted]
        if all(s["status"] in ("done", "failed") for s in snaps):
            break
        time.sleep(0.3)
    assert [s["status"] for s in snaps] == ["done"] * 4, [s.get("error") for s in snaps]
    statuses = [s["result"]["status"] for s in snaps]
    assert statuses[:2] == ["created", "created"]
    assert sorted(statuses[2:]) == ["created", "unchanged"]
    assert {v.doc_id for v in store.list_versions()} >= {"alpha", "beta", "gamma"}
    assert len(store.list_versions("gamma", include_pending=True)) == 1
    _assert_consistent(store)
