"""A short load run against ``folio serve`` on loopback (a real process, real sockets).

16 clients ask ``/v1/context`` as fast as they can for a few seconds while a probe polls
``/v1/health``. Before the query pool, health queued behind queries in FastAPI's shared thread pool
(p99 14.7 s at 200 clients) and a full server had no way to say "busy". Now: every answer is a 200
or a 503 with ``Retry-After``, no connection is dropped, and health p99 stays under a second.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

import tests.api.conftest as api_fixtures
from folio.api.http.pool import QueryPool

# The API suite's fixtures (its session data dir); tests/reliability/conftest.py has the store suites'.
api_master, client, data_copy, register_excerpt = (
    api_fixtures.api_master,
    api_fixtures.client,
    api_fixtures.data_copy,
    api_fixtures.register_excerpt,
)

CLIENTS = 16
SECONDS = 6.0
HEALTH_P99_S = 1.0


@pytest.fixture()
def served(data_copy: Path, tmp_path: Path) -> object:
    env = {
        **os.environ,
        "FOLIO_DATA": str(data_copy),
        "FOLIO_OCR": "false",
        "FOLIO_QUERY_WORKERS": "2",
        "FOLIO_QUERY_QUEUE": "4",
    }
    log = (tmp_path / "server.log").open("w")
    try:
        proc, url = api_fixtures.folio_serve(env, log)
    except RuntimeError as e:
        raise RuntimeError(f"{e}: " + (tmp_path / "server.log").read_text()[-2000:]) from None
    try:
        yield url, tmp_path / "server.log"
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


class _Load:
    """What the load run's threads share: the server, when to stop, the answers counted, the problems seen and
    the health probes' times."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.stop = time.monotonic() + SECONDS
        self.outcomes: Counter[str] = Counter()
        self.problems: list[str] = []
        self.health_s: list[float] = []
        self.lock = threading.Lock()

    def asker(self, i: int) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as c:
            while time.monotonic() < self.stop:
                body = {"query": f"how fast must incident {i} be acknowledged", "budget": 600, "k": 20}
                try:
                    resp = c.post("/v1/context", json=body)
                except httpx.HTTPError as e:  # a dropped or reset connection
                    with self.lock:
                        self.problems.append(f"{type(e).__name__}: {e}")
                    continue
                self._count(resp)
                if resp.status_code == 503:
                    time.sleep(float(resp.headers.get("retry-after", 1)) / 10)  # back off (shortened here)

    def _count(self, resp: httpx.Response) -> None:
        """A context answer counted: a 200, or a 503 ``overloaded`` with ``Retry-After``; anything else is a problem."""
        with self.lock:
            self.outcomes[str(resp.status_code)] += 1
            if resp.status_code == 503:
                if "retry-after" not in resp.headers or resp.json()["error"]["code"] != "overloaded":
                    self.problems.append(f"503 without Retry-After: {resp.text[:200]}")
            elif resp.status_code != 200:
                self.problems.append(f"{resp.status_code}: {resp.text[:200]}")

    def probe(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as c:
            while time.monotonic() < self.stop:
                t0 = time.perf_counter()
                resp = c.get("/v1/health")
                self.health_s.append(time.perf_counter() - t0)
                if resp.status_code != 200:
                    self.problems.append(f"health {resp.status_code}")
                time.sleep(0.05)

    def idle_reuse(self) -> None:
        """The dropped connections of issue 12 (ReadError): a client reused a keep-alive connection
        just as uvicorn's 5 s idle timeout closed it (httpx keeps idle connections 5 s too). folio
        serve keeps them 75 s, so a connection idle for longer than 5 s still answers."""
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", int(self.url.rsplit(":", 1)[1]), timeout=30)
        try:
            for i in range(2):
                if i:
                    time.sleep(5.5)
                conn.request("GET", "/v1/health")
                resp = conn.getresponse()
                resp.read()
                if resp.status != 200:
                    self.problems.append(f"idle reuse: {resp.status}")
        except (OSError, http.client.HTTPException) as e:
            self.problems.append(f"idle keep-alive connection dropped: {type(e).__name__}: {e}")
        finally:
            conn.close()


def test_load_with_health_probes(served: tuple[str, Path]) -> None:
    url, server_log = served
    load = _Load(url)
    threads = [threading.Thread(target=load.asker, args=(i,)) for i in range(CLIENTS)]
    threads += [threading.Thread(target=load.probe), threading.Thread(target=load.idle_reuse)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    outcomes, problems, health_s = load.outcomes, load.problems, load.health_s
    health_s.sort()
    p99 = health_s[min(len(health_s) - 1, int(len(health_s) * 0.99))]
    print(
        f"\nload: {dict(outcomes)}, health n={len(health_s)} p50={health_s[len(health_s) // 2] * 1000:.0f} ms "
        f"p99={p99 * 1000:.0f} ms"
    )
    assert problems == [], problems[:5]
    assert outcomes["200"] > 0
    assert p99 < HEALTH_P99_S, health_s[-5:]
    assert "POST /v1/context" in server_log.read_text()  # the access log is on in folio serve


def test_pool_sheds_when_full() -> None:
    import asyncio

    from folio.api.errors import Overloaded

    release = threading.Event()

    async def main() -> None:
        pool = QueryPool(workers=1, queue=1)
        first = asyncio.ensure_future(pool.run(release.wait, 10))
        second = asyncio.ensure_future(pool.run(lambda: 2))
        await asyncio.sleep(0.05)
        assert pool.pending == 2
        with pytest.raises(Overloaded) as info:
            await pool.run(lambda: 3)
        assert info.value.retry_after >= 1
        release.set()
        assert await first is True and await second == 2
        await asyncio.sleep(0.01)
        assert pool.pending == 0
        assert await pool.run(lambda: 4) == 4
        pool.shutdown()

    asyncio.run(main())
