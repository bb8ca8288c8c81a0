"""schemathesis over every operation of the OpenAPI document the server serves (issue 44).

A real uvicorn on 127.0.0.1 over a small store (the support policy, ingested) with a keys file, and a loopback
stand-in for the answer model. Each operation gets ``EXAMPLES`` Hypothesis examples that the schema allows and
as many that break it, for each caller: a write key, a read key of a collection that holds nothing, no key;
half of them on the store's real ids (``benchmarks/fuzz_api.py``, which also runs the longer version). Every
response: no 5xx; status, content type, headers and body as the document declares them; every error in the
one error shape with the ``X-Request-ID`` id; another collection's key never reading a real document.
Afterwards the store is intact. No operation of the document is left out; what the document does not list is not
reached: ``/mcp`` (JSON-RPC, not OpenAPI: tests/api/mcp), the HTML pages and ``/static`` (no input but the
path). Bounded for CI (about a minute here), derandomized so that a failure reproduces.

Found by it and fixed: a body that is not JSON answered 400 on ``/v1/search``, ``/v1/context``, ``/v1/verify``
and ``/v1/answer``, a status their documents did not declare (nor the 413 of a body over the limits).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import fuzz_api

pytestmark = pytest.mark.slow

EXAMPLES = 6  # per operation, mode and caller: 6 x 2 x 3 = 36 requests per operation, ~700 in all
GOLDEN = Path(__file__).resolve().parents[1] / "api" / "data" / "openapi.json"
CASES: Counter[str] = Counter()  # operation label -> cases sent, for the check afterwards


def labels(document: dict[str, Any]) -> list[str]:
    """``METHOD /path`` of every operation in an OpenAPI document."""
    return [f"{m.upper()} {p}" for p, ops in document["paths"].items() for m in ops if m != "parameters"]


# The parameters come from the snapshot of the document (tests/api/http/test_openapi.py keeps it equal to
# what the server serves); the cases come from the served document, and the last test checks that the two
# name the same operations. schemathesis' own pytest integration (``schemathesis.pytest.from_fixture``) does
# not run under pytest 9 (it sets ``Function._nodeid``), so the loop is ``fuzz_api.fuzz``.
OPERATIONS = labels(json.loads(GOLDEN.read_text()))


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[fuzz_api.FuzzStore, str, Any]]:
    """The store, the server's URL, and the schema of the document the running server serves."""
    store = fuzz_api.build_store(Path(tmp_path_factory.mktemp("fuzz-api")))
    with fuzz_api.serve(store) as url:
        yield store, url, fuzz_api.load_schema(url)


@pytest.mark.parametrize("label", OPERATIONS)
def test_operation(label: str, fuzzed: tuple[fuzz_api.FuzzStore, str, Any]) -> None:
    store, _, schema = fuzzed
    method, path = label.split(" ", 1)
    operation = schema[path][method]
    found = []
    for mode in fuzz_api.MODES:
        for caller in fuzz_api.CALLERS:
            tally = fuzz_api.fuzz(operation, mode, caller, store, EXAMPLES)
            CASES[label] += tally.cases
            found += [f"({mode}, {caller}) {p}\n  {tally.examples[p]}" for p in tally.problems]
    assert CASES[label] > 0
    assert not found, "\n".join(found)


def test_store_intact_after_fuzzing(fuzzed: tuple[fuzz_api.FuzzStore, str, Any]) -> None:
    """Every operation the server serves was fuzzed, and the store still lists the policy, ``folio check``
    clean, every version ready."""
    if not CASES:
        pytest.skip("runs after test_operation")
    store, url, schema = fuzzed
    fuzz_api.settle(url)  # an upload of schemathesis' minimal PDF with wait=false may still be ingesting
    served = [result.ok().label for result in schema.get_all_operations()]
    assert sorted(served) == sorted(OPERATIONS)
    assert set(CASES) == set(OPERATIONS)
    assert not fuzz_api.store_problems(store, fuzz_api.store_state(store.data))
