"""kill -9 during ingest, over and over: nothing partial is ever visible, the next writer cleans up,
and every re-ingest ends with exactly the rows of a clean single ingest.

CI runs one kill per placed point (embedding; every row written, before the commit; inside the
commit, before the versions row flips). ``FOLIO_KILL_ITERATIONS=N`` runs N iterations; those past
the placed points kill at a random moment of the whole ingest.
"""

from __future__ import annotations

import os
import random
import signal
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from folio.ingest.pipeline import ingest_path
from folio.ingest.storage.compaction import compact
from folio.ingest.storage.maintenance import check
from folio.ingest.storage.store import Store
from folio.kernel.model import version_id_for
from tests.reliability.helpers import DOC, SAMPLE, counts, start_child, wait_for
from tests.switches import switch

POINTS = ("embed", "rows", "commit")
ITERATIONS = int(switch("FOLIO_KILL_ITERATIONS") or len(POINTS))


def _kill_once(data: Path, point: str, rng: random.Random) -> None:
    if point == "random":
        proc = start_child(data, "none", 0.0)
        wait_for(proc, b"PAUSED")  # the claim is being taken; kill somewhere in the rest
        time.sleep(rng.uniform(0.0, 4.0))
    else:
        proc = start_child(data, point, 120.0)
        wait_for(proc, b"PAUSED")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.mark.slow
def test_kill_loop(tmp_path: Path, reference: dict[str, Any]) -> None:
    rng = random.Random(12)
    ver = version_id_for(SAMPLE.read_bytes())
    for i in range(ITERATIONS):
        point = POINTS[i] if i < len(POINTS) else "random"
        _kill_once(tmp_path, point, rng)

        # What any reader sees now: nothing, or (a random kill after the commit) the whole version.
        seen = counts(tmp_path)
        if seen["versions"]:
            assert point == "random", f"a kill at {point!r} left a visible version"
            assert seen["versions"] == [(DOC, ver)]
            ready = check(Store(tmp_path))
            assert not [p for p in ready["problems"] if p["kind"] != "dead_claim"], ready["problems"]

        # The next writer cleans up what the dead one left and ingests from scratch.
        store = Store(tmp_path)
        rep = ingest_path(store, SAMPLE, doc_id=DOC, ocr=False)
        assert rep.status in ("created", "unchanged")
        assert counts(tmp_path) == reference, f"after a kill at {point!r}"
        result = check(store)
        assert result["ok"], result["problems"]
        store.delete_document(DOC)  # so that the next iteration writes the version again

    store = Store(tmp_path)
    ingest_path(store, SAMPLE, doc_id=DOC, ocr=False)
    compact(store, timedelta(0))
    assert check(store)["ok"]
    assert counts(tmp_path) == reference
