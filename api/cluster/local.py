"""A whole folio cluster on one machine, for the tests, ``benchmarks/bench_cluster.py`` and
``scripts/cluster_demo.sh``: an S3-compatible server (moto's standalone server, loopback only),
a multi-node Ray cluster (``ray.cluster_utils.Cluster``: a head that runs no tasks plus worker
nodes) and ``folio serve`` replicas. Needs the ``cluster`` extra.

Not for production: there the object store is S3 / MinIO / GCS and Ray runs as a real cluster
(``docs/scaling.md``).
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Any

import httpx

from folio.settings import apply_process_environment, child_environ

REGION = "us-east-1"
# moto accepts any credentials; these only have to be present and the same everywhere.
KEY_ID, SECRET = "folio-test", "folio-test-secret"


# Ray binds and advertises the machine's address unless told it is not clustering with other hosts;
# this makes every Ray process (nodes, workers, drivers that inherit it) use 127.0.0.1.
LOOPBACK_RAY = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
# Ray reads it when it is imported: set it before anything here imports Ray.
apply_process_environment(LOOPBACK_RAY)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LocalS3:
    """moto's S3 server on 127.0.0.1 in a thread of this process, with one bucket."""

    def __init__(self, bucket: str = "folio", port: int | None = None) -> None:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one log line per request otherwise
        self.bucket = bucket
        self.port = port or free_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The variables a folio process needs to reach this server (``ingest/storage/objstore.py``)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": KEY_ID,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_REGION": REGION,
        }

    def start(self) -> LocalS3:
        import boto3

        self._server.start()
        client = boto3.client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET, region_name=REGION
        )
        client.create_bucket(Bucket=self.bucket)
        return self

    def stop(self) -> None:
        self._server.stop()


def start_ray(workers: int = 2, cpus_per_worker: float = 1, object_store_mb: int = 80) -> Any:
    """A Ray cluster of a head (no CPUs: it schedules, it does not ingest) and ``workers`` nodes."""
    apply_process_environment(LOOPBACK_RAY)  # before Ray is imported: its nodes and workers inherit it
    from ray.cluster_utils import Cluster

    mem = object_store_mb * 1024 * 1024
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 0, "include_dashboard": False, "object_store_memory": mem},
    )
    for _ in range(workers):
        cluster.add_node(num_cpus=cpus_per_worker, object_store_memory=mem)
    cluster.wait_for_nodes()
    return cluster


def start_replica(
    data: str, *, env: Mapping[str, str], port: int | None = None, log: Any = None
) -> tuple[subprocess.Popen[bytes], str]:
    """``folio serve --data DATA`` in a child process; returns it and its base URL once it is ready (``/v1/ready``:
    ``/v1/health`` answers earlier, while it loads)."""
    port = port or free_port()
    folio = os.path.join(os.path.dirname(sys.executable), "folio")
    cmd = [folio, "serve", "--data", data, "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(
        cmd, env=child_environ(**env), stdout=log or subprocess.DEVNULL, stderr=log or subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    wait_http(url + "/v1/ready", proc)
    return proc, url


def wait_http(url: str, proc: subprocess.Popen[bytes] | None = None, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{url}: the server exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f} s")


# ---------------------------------------------------------------------------------- the demo
DEMO_PDFS = ("support-policy-v1.pdf", "support-policy-v2.pdf", "linnsequencer-brochure-scan.pdf")


def _say(msg: str) -> None:
    print(f"cluster-demo: {msg}", file=sys.stderr, flush=True)


def demo(*, replicas: int = 2, workers: int = 2, s3_port: int = 9000, api_port: int = 8100, stay: bool = True) -> int:
    """The whole cluster on this machine (``scripts/cluster_demo.sh``): S3 server, Ray head and
    ``workers`` worker nodes, ``replicas`` API replicas; ingests the sample PDFs through Ray, asks
    every replica the same question, then keeps running until Ctrl-C (``stay=False``: stops)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    apply_process_environment({"HF_HUB_OFFLINE": "1"}, override=False)
    s3 = LocalS3(port=s3_port).start()
    apply_process_environment(s3.env())
    _say(f"S3 server (moto) at {s3.endpoint}, bucket {s3.bucket}")
    cluster = start_ray(workers=workers)
    env = {**s3.env(), **LOOPBACK_RAY, "FOLIO_RAY_ADDRESS": cluster.address}
    _say(f"Ray head at {cluster.address} (no CPUs) + {workers} worker nodes (1 CPU each)")
    data = f"s3://{s3.bucket}/demo"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        urls = []
        for i in range(replicas):
            proc, url = start_replica(data, env=env, port=api_port + i)
            procs.append(proc)
            urls.append(url)
            _say(f"API replica {i + 1}: {url} (viewer {url}/viewer)")
        folio = os.path.join(os.path.dirname(sys.executable), "folio")
        pdfs = [str(root / "sample_pdfs" / n) for n in DEMO_PDFS]
        _say(f"folio ingest --ray {cluster.address} --data {data} {' '.join(DEMO_PDFS)}")
        done = subprocess.run(
            [folio, "ingest", "--ray", cluster.address, "--data", data, *pdfs], env=child_environ(**env)
        )
        if done.returncode:
            return done.returncode
        _ask_every_replica(urls)
        _show_how(env, data, urls)
        if stay:
            _say("running; Ctrl-C stops everything")
            while all(p.poll() is None for p in procs):
                time.sleep(1)
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(procs, cluster, s3)


def _ask_every_replica(urls: list[str]) -> None:
    """The same question to every replica: the same first items from each."""
    question = {"query": "How fast must a priority-one incident be acknowledged?", "budget": 600}
    for url in urls:
        pkg = httpx.post(url + "/v1/context", json=question, timeout=120).json()
        firsts = [i["region_id"] for i in pkg["items"][:3]]
        _say(f"{url}: {len(pkg['items'])} items, {pkg['budget']['used']} tokens; first: {firsts}")


def _show_how(env: dict[str, str], data: str, urls: list[str]) -> None:
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    _say("try it (in another shell):")
    _say(f"  export {exports}")
    _say(f"  .venv/bin/folio context 'Are there exceptions?' --data {data}")
    _say(f"  curl -s -F file=@sample_pdfs/R-data-import-export.pdf {urls[0]}/v1/documents")
    _say(f"  curl -s {urls[-1]}/v1/jobs   # the job, read on another replica")


def _stop(procs: list[subprocess.Popen[bytes]], cluster: Any, s3: LocalS3) -> None:
    """The replicas (terminated, killed after 20 s), Ray, the cluster and the S3 server."""
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
    import ray

    ray.shutdown()
    cluster.shutdown()
    s3.stop()
    _say("stopped")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="folio's whole cluster on this machine (S3, Ray, API replicas)")
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--s3-port", type=int, default=9000)
    ap.add_argument("--api-port", type=int, default=8100)
    ap.add_argument("--exit", action="store_true", help="stop after the ingest and the queries")
    a = ap.parse_args()
    raise SystemExit(
        demo(replicas=a.replicas, workers=a.workers, s3_port=a.s3_port, api_port=a.api_port, stay=not a.exit)
    )
