"""Fuzz every operation of folio's served OpenAPI document with schemathesis (issue 44).

    .venv/bin/python benchmarks/fuzz_api.py [--examples N] [--seed S] [--out PATH]

A small store (``sample_pdfs/support-policy-v1.pdf`` ingested as ``policy``) behind a real uvicorn on
127.0.0.1, with a keys file and a loopback stand-in for the answer model (``tests/api/llm_standin.py``).
The OpenAPI document is the one the server serves (``/openapi.json``). Every operation in it gets
``--examples`` Hypothesis examples for each generation mode (``positive``: requests the schema allows;
``negative``: requests that break it) and each caller (``CALLERS``: a write key for every collection, a read
key of a collection that holds nothing, no key). In half of the examples the path ids are the store's real ones
(doc, version, region, a page that exists), so the found paths are fuzzed too; a write key's deletes keep their
generated ids (a real one would delete the document this run checks afterwards).

Each response is checked (``problems``): no 5xx, its status and content type declared for the operation, its
body and headers valid against what the document declares, every 4xx in folio's one error shape
(``{"error": {"code", "message", "detail"?, "request_id"}}`` with the ``X-Request-ID`` header's id), and a
key of another collection never reading a real document. After the run the store must be intact
(``store_problems``): the policy still listed with its version, ``folio check`` clean, every version ready.

The suite runs the same checks in a bounded run (``tests/reliability/test_fuzz_api.py``); this is the longer
one. Results: ``benchmarks/results/fuzz-api.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SAMPLE = ROOT / "sample_pdfs" / "support-policy-v1.pdf"
RESULTS = ROOT / "benchmarks" / "results" / "fuzz-api.md"
DOC = "policy"
WRITE_SECRET = "folio-fuzz-write-key"
OTHER_SECRET = "folio-fuzz-other-read-key"
# caller name -> the headers it adds to every request (the key's secret as X-API-Key)
CALLERS: dict[str, dict[str, str]] = {
    "write": {"X-API-Key": WRITE_SECRET},
    "other": {"X-API-Key": OTHER_SECRET},
    "none": {},
}
MODES = ("positive", "negative")
ERROR_FIELDS = {"code", "message", "detail", "request_id"}


@dataclass(frozen=True)
class FuzzStore:
    """The store under test: its data dir, keys file and the ids of what it holds."""

    data: Path
    keys: Path
    ids: dict[str, str]  # path parameter -> a real value: doc_id, version_id, region_id, n (a page)


def build_store(root: Path) -> FuzzStore:
    """Ingest the sample into ``root/data`` and write a keys file (a write key for every collection, a
    read key for the empty collection ``other``)."""
    from folio.api.keys import KeyRecord, hash_secret, write_keys
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    store = Store(root / "data")
    report = ingest_path(store, SAMPLE, doc_id=DOC, ocr=False)
    assert report.status == "created", report
    regions = store.table("regions")
    assert regions is not None
    region = regions.search().select(["region_id"]).limit(1).to_arrow().to_pylist()[0]["region_id"]
    keys = root / "keys.json"
    write_keys(
        keys,
        [
            KeyRecord(id="fuzz-write", sha256=hash_secret(WRITE_SECRET), collections=("*",), access="write"),
            KeyRecord(id="fuzz-other", sha256=hash_secret(OTHER_SECRET), collections=("other",), access="read"),
        ],
    )
    ids = {"doc_id": DOC, "version_id": report.version_id, "region_id": region, "n": "1"}
    return FuzzStore(root / "data", keys, ids)


@contextlib.contextmanager
def serve(store: FuzzStore) -> Iterator[str]:
    """uvicorn on 127.0.0.1 over ``store``, answering through a loopback stand-in model; yields the base URL."""
    from folio.settings import Settings
    from tests.api.conftest import live_server
    from tests.api.llm_standin import StandInLLM

    with StandInLLM() as llm:
        settings = Settings(
            data=str(store.data),
            ocr=False,
            keys_file=str(store.keys),
            llm_base_url=llm.url,
            llm_model="stand-in",
            llm_api_key="sk-fuzz",
        )
        with live_server(settings) as url:
            yield url


def load_schema(url: str) -> Any:
    """The OpenAPI document the server serves, as a schemathesis schema aimed at ``url``."""
    import schemathesis

    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    return schema


def prepare(case: Any, caller: str, real: bool, store: FuzzStore) -> bool:
    """Put the store's real ids into the case's path when ``real`` (not for a write key's DELETE);
    True when it did."""
    params = case.path_parameters
    if not real or not params or (caller == "write" and case.method.upper() == "DELETE"):
        return False
    for name in params:
        if name in store.ids:
            params[name] = int(store.ids[name]) if name == "n" else store.ids[name]
    return True


def call(case: Any, caller: str) -> Any:
    """Send the case to the server with the caller's key."""
    return case.call(headers=dict(CALLERS[caller]), timeout=120)


def conformance_checks() -> list[Any]:
    """The schemathesis checks run on every response: no 5xx, and status, content type, headers and body
    as the document declares them. (``positive_data_acceptance`` and ``negative_data_rejection`` are left
    out: whether a request is acceptable also depends on what the schema cannot say, e.g. that ``file`` is a
    PDF or that quotas add up to at most ``k``.)"""
    from schemathesis import checks

    return [
        checks.not_a_server_error,
        checks.status_code_conformance,
        checks.content_type_conformance,
        checks.response_headers_conformance,
        checks.response_schema_conformance,
    ]


def schema_problems(case: Any, response: Any) -> list[str]:
    """What the conformance checks found, one line each (empty when the response conforms)."""
    try:
        case.validate_response(response, checks=conformance_checks())
    except (AssertionError, BaseExceptionGroup) as exc:  # Failure, or schemathesis' FailureGroup of them
        failures = exc.exceptions if isinstance(exc, BaseExceptionGroup) else (exc,)
        return [
            f"{getattr(f, 'title', type(f).__name__)}: {_one_line(getattr(f, 'message', str(f)))}" for f in failures
        ]
    return []


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


def _header(response: Any, name: str) -> str | None:
    """A response header's value (schemathesis keeps each header as a list of values)."""
    value = response.headers.get(name)
    if isinstance(value, list):
        return str(value[0]) if value else None
    return value if value is None else str(value)


def error_shape_problems(response: Any) -> list[str]:
    """An error (4xx/5xx) must be the one error shape, its request id the ``X-Request-ID`` header's."""
    rid = _header(response, "x-request-id")
    if not rid:
        return ["no X-Request-ID header"]
    if response.status_code < 400:
        return []
    try:
        body = response.json()
    except ValueError:
        return [f"{response.status_code} body is not JSON: {response.text[:120]!r}"]
    err = body.get("error") if isinstance(body, dict) and set(body) == {"error"} else None
    if not isinstance(err, dict) or not set(err) <= ERROR_FIELDS:
        return [f"{response.status_code} not the error shape: {json.dumps(body)[:200]}"]
    if not all(isinstance(err.get(name), str) and err[name] for name in ("code", "message")):
        return [f"{response.status_code} error without code or message: {json.dumps(err)[:200]}"]
    if err.get("request_id") != rid:
        return [f"{response.status_code} request_id {err.get('request_id')!r} is not X-Request-ID {rid!r}"]
    return []


def isolation_problems(case: Any, response: Any, caller: str, real: bool) -> list[str]:
    """A key of another collection, on a real document's path, gets what an unknown id gets (never a 2xx)."""
    if caller == "other" and real and 200 <= response.status_code < 300:
        return [f"key of another collection got {response.status_code} for {case.formatted_path}"]
    return []


def problems(case: Any, response: Any, caller: str, real: bool) -> list[str]:
    """Everything wrong with one response."""
    return (
        schema_problems(case, response)
        + error_shape_problems(response)
        + isolation_problems(case, response, caller, real)
    )


def exercise(case: Any, caller: str, real: bool, store: FuzzStore) -> tuple[Any, list[str]]:
    """Prepare, send and check one case: the response and its problems."""
    real = prepare(case, caller, real, store)
    response = call(case, caller)
    return response, problems(case, response, caller, real)


def reproducer(case: Any, caller: str) -> str:
    """A curl command line for the case (the key's secret filtered)."""
    text: str = case.as_curl_command(headers=dict(CALLERS[caller]))
    return text[:1500]


# ------------------------------------------------------------------------------------------ the store after
def settle(url: str, timeout: float = 300.0) -> None:
    """Wait until the server has no ingest job queued or running: a fuzzed upload can be a PDF (schemathesis
    sends a minimal one for a binary part), and with ``wait=false`` its job runs on after the answer."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = httpx.get(f"{url}/v1/jobs", headers=CALLERS["write"], timeout=30).json()["data"]
        if not any(job["status"] in ("queued", "running") for job in jobs):
            return
        time.sleep(0.5)
    raise TimeoutError(f"ingest jobs still running after {timeout:g} s")


def store_state(data: Path) -> dict[str, Any]:
    """What must survive the run: the documents and versions listed, and ``folio check``'s verdict."""
    from folio.ingest.storage.maintenance import check
    from folio.ingest.storage.store import Store

    store = Store(data)
    versions = store.versions.search().limit(None).to_arrow().to_pylist()
    return {
        "listed": sorted((v.doc_id, v.version_id) for v in store.list_versions()),
        "statuses": sorted({str(v["status"]) for v in versions}),
        "check": check(store),
    }


def store_problems(store: FuzzStore, state: dict[str, Any]) -> list[str]:
    """The fuzzed store is intact: the policy's version still listed, no version left pending or broken,
    ``folio check`` finds nothing."""
    out = []
    if (DOC, store.ids["version_id"]) not in state["listed"]:
        out.append(f"{DOC}@{store.ids['version_id']} is no longer listed: {state['listed']}")
    if state["statuses"] != ["ready"]:
        out.append(f"versions not all ready: {state['statuses']}")
    if not state["check"]["ok"]:
        out.append(f"folio check: {state['check']['problems']}")
    return out


# ---------------------------------------------------------------------------------------------- the runner
@dataclass
class Tally:
    """Cases and problems of one (operation, mode, caller)."""

    cases: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    problems: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    note: str = ""


def fuzz(operation: Any, mode: str, caller: str, store: FuzzStore, examples: int) -> Tally:
    """Run ``examples`` Hypothesis examples of one operation, mode and caller, recording (not raising)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode

    tally = Tally()

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(GenerationMode(mode)), real=st.booleans())
    def run(case: Any, real: bool) -> None:
        try:
            response, found = exercise(case, caller, real, store)
        except Exception as exc:  # noqa: BLE001 - a failed call (a dropped connection) is a finding, recorded
            response, found = None, [f"request failed: {type(exc).__name__}: {str(exc)[:160]}"]
        tally.cases += 1
        if response is not None:
            tally.statuses[response.status_code] += 1
        for problem in found:
            tally.problems[problem] += 1
            tally.examples.setdefault(problem, reproducer(case, caller))

    try:
        run()
    except Unsatisfiable:  # e.g. negative mode of an operation that takes no input: nothing to break
        tally.note = "no negative input possible"
    return tally


def run_all(store: FuzzStore, url: str, examples: int) -> dict[tuple[str, str, str], Tally]:
    """Every operation of the served document, in each mode, for each caller."""
    schema = load_schema(url)
    out: dict[tuple[str, str, str], Tally] = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in MODES:
            for caller in CALLERS:
                started = time.perf_counter()
                tally = fuzz(operation, mode, caller, store, examples)
                out[(operation.label, mode, caller)] = tally
                print(
                    f"{operation.label:70s} {mode:8s} {caller:6s} {tally.cases:5d} cases "
                    f"{sum(tally.problems.values()):4d} problems {time.perf_counter() - started:6.1f}s",
                    flush=True,
                )
    return out


def table(results: dict[tuple[str, str, str], Tally]) -> str:
    """Cases and problems per operation (both modes and every caller together)."""
    per_op: dict[str, list[Tally]] = {}
    for (label, _, _), tally in results.items():
        per_op.setdefault(label, []).append(tally)
    lines = ["| operation | cases | statuses | problems |", "|---|---:|---|---:|"]
    for label, tallies in per_op.items():
        statuses: Counter[int] = sum((t.statuses for t in tallies), Counter())
        shown = ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items()))
        found = sum(sum(t.problems.values()) for t in tallies)
        lines.append(f"| `{label}` | {sum(t.cases for t in tallies)} | {shown} | {found} |")
    total = sum(t.cases for t in results.values())
    found = sum(sum(t.problems.values()) for t in results.values())
    lines.append(f"| **all** | **{total}** | | **{found}** |")
    return "\n".join(lines)


def findings(results: dict[tuple[str, str, str], Tally]) -> str:
    """Each distinct problem once, with how often it came and a reproducer."""
    lines = []
    for (label, mode, caller), tally in results.items():
        for problem, n in tally.problems.items():
            example = tally.examples[problem]
            lines += [f"- `{label}` ({mode}, {caller}), {n} cases: {problem}", "", "  ```", f"  {example}", "  ```"]
    return "\n".join(lines) or "None."


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--examples", type=int, default=100, help="examples per operation, mode and caller")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-api-"))
    started = time.perf_counter()
    try:
        store = build_store(tmp)
        with serve(store) as url:
            results = run_all(store, url, args.examples)
            settle(url)
        after = store_problems(store, store_state(store.data))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    seconds = time.perf_counter() - started
    text = (
        f"# API fuzzing\n\n`python benchmarks/fuzz_api.py --examples {args.examples}`: schemathesis over the served "
        f"OpenAPI document, {args.examples} examples per operation, mode ({', '.join(MODES)}) and caller "
        f"({', '.join(CALLERS)}); {seconds:.0f} s.\n\n{table(results)}\n\nStore after the run: "
        f"{'; '.join(after) if after else 'intact (policy listed, folio check clean, every version ready)'}.\n\n"
        f"## Findings\n\n{findings(results)}\n"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print("\n" + table(results) + "\n\nstore: " + ("; ".join(after) or "intact"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
