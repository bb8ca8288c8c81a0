"""Issue 48, item 3: several PDFs in one request (``POST /v1/documents/batch``, one job each) and their progress
pushed as server-sent events (``GET /v1/jobs/events``, ``GET /v1/jobs/{id}/events``), through ``folio.Client``
against a real server on loopback (uvicorn: the events arrive as the jobs run, not at the end)."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

import folio
from folio.api.http.app import create_app
from folio.api.http.routes.batch import MAX_BATCH_FILES
from folio.api.keys import add_key
from tests.api.conftest import assert_error, live_server, make_settings

PIPELINE = ("starting", "parse", "embed", "commit")


def _named(tmp_path: Path, samples: Path) -> list[Path]:
    """Two good PDFs (new documents ``policy-a`` and ``policy-b``) and one that is no PDF."""
    a, b, bad = tmp_path / "policy-a.pdf", tmp_path / "policy-b.pdf", tmp_path / "notes.pdf"
    shutil.copy(samples / "support-policy-v1.pdf", a)
    shutil.copy(samples / "support-policy-v2.pdf", b)
    bad.write_text("meeting notes, not a PDF")
    return [a, bad, b]


@pytest.mark.slow
def test_a_batch_is_one_job_per_good_file_and_its_events_run_to_the_end(
    data_copy: Path, tmp_path: Path, samples: Path
) -> None:
    keys = tmp_path / "keys.json"
    _, writer = add_key(keys, ["default"], "write")
    _, reader = add_key(keys, ["default"], "read")
    _, outsider = add_key(keys, ["elsewhere"], "read")
    files = _named(tmp_path, samples)
    with live_server(make_settings(data_copy, keys_file=str(keys))) as url, folio.Client(url, api_key=writer) as c:
        batch = c.upload_many(files)
        assert (batch.count, batch.accepted, batch.refused) == (3, 2, 1)
        a, bad, b = batch.data
        assert (a.filename, a.doc_id, a.status) == ("policy-a.pdf", "policy-a", "accepted") and a.job_id
        assert (b.doc_id, b.status) == ("policy-b", "accepted") and b.job_id
        assert (bad.status, bad.job_id, bad.http_status) == ("refused", None, 422)
        assert bad.error is not None and bad.error.code == "not_a_pdf"

        events = list(c.job_events([a.job_id, b.job_id]))
        assert events[-1].event == "end" and events[-1].data == {"done": 2, "failed": 0, "unfinished": 0}
        for job_id in (a.job_id, b.job_id):
            mine = [e for e in events if e.job is not None and e.job.job_id == job_id]
            assert [e.event for e in mine][-1] == "done" and {e.event for e in mine[:-1]} == {"progress"}, mine
            stages = [e.job.progress.stage for e in mine if e.job is not None]
            # in the pipeline's order; the long stages each seen (the runner is polled every 0.1 s: commit may not be)
            seen = [s for s in dict.fromkeys(stages) if s in PIPELINE]
            assert seen == sorted(seen, key=PIPELINE.index), stages
            assert {"parse", "embed"} <= set(stages), stages
            result = mine[-1].job.result if mine[-1].job is not None else None
            assert result is not None and result.status == "created" and result.pages == 1
        listed = {d.doc_id for d in c.list_documents().data}
        assert {"policy-a", "policy-b"} <= listed and "notes" not in listed  # the refused file wrote nothing

        # A finished job's stream: its done event at once, then end.
        assert [e.event for e in c.job_events(a.job_id)] == ["done", "end"]
        with httpx.stream("GET", f"{url}/v1/jobs/{a.job_id}/events", headers={"X-API-Key": reader}) as raw:
            assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/event-stream")
            assert raw.read().decode().startswith("event: done\ndata: {")

        # Keys: a read-only key uploads nothing; a key of another collection sees no such job.
        with folio.Client(url, api_key=reader) as read_only, pytest.raises(folio.errors.Forbidden):
            read_only.upload_many(files[:1])
        with folio.Client(url, api_key=outsider) as other, pytest.raises(folio.NotFound) as hidden:
            list(other.job_events([a.job_id, b.job_id]))
        assert hidden.value.code == "job_not_found"

        async def async_events() -> list[str]:
            async with folio.AsyncClient(url, api_key=writer) as ac:
                return [e.event async for e in ac.job_events(b.job_id)]

        assert asyncio.run(async_events()) == ["done", "end"]


def test_batch_limits_and_bad_requests(data_copy: Path, samples: Path) -> None:
    """Too many files or bytes in all: a 413 for the whole batch and nothing queued; a file over the single
    upload's limit: refused alone; a body that is no multipart form, or without files: 422."""
    pdf = (samples / "support-policy-v1.pdf").read_bytes()  # 6.9 KB
    with TestClient(create_app(make_settings(data_copy, max_upload_bytes=10_000))) as c:
        many = [("file", (f"p{i}.pdf", b"%PDF-1.4 small", "application/pdf")) for i in range(MAX_BATCH_FILES + 1)]
        err = assert_error(c.post("/v1/documents/batch", files=many), 413, "limit_exceeded")
        assert err["message"] == f"a batch holds at most {MAX_BATCH_FILES} files"
        heavy = [("file", (f"p{i}.pdf", pdf, "application/pdf")) for i in range(16)]  # over 4 x 10 KB and the slack
        err = assert_error(c.post("/v1/documents/batch", files=heavy), 413, "limit_exceeded")
        assert "in all" in err["message"]
        assert c.get("/v1/jobs").json()["count"] == 0  # nothing was queued

        big = pdf + b"%" * 4000
        out = c.post("/v1/documents/batch", files=[("file", ("big.pdf", big, "application/pdf"))])
        assert out.status_code == 202, out.text
        (item,) = out.json()["data"]
        assert (item["status"], item["http_status"], item["error"]["code"]) == ("refused", 413, "limit_exceeded")

        twice = [("file", ("same.pdf", pdf, "application/pdf"))] * 2
        first, second = c.post("/v1/documents/batch", files=twice).json()["data"]
        assert first["status"] == "accepted" and second["status"] == "refused"
        assert "another file of this batch" in second["error"]["message"]

        assert_error(c.post("/v1/documents/batch", json={"file": "x"}), 422, "invalid_request")
        assert_error(c.post("/v1/documents/batch", data={"collection": "default"}, files={}), 422)
        assert_error(c.get("/v1/jobs/events", params={"ids": " , "}), 422, "invalid_request")
        assert_error(c.get("/v1/jobs/events", params={"ids": "nope"}), 404, "job_not_found")
        assert_error(c.get("/v1/jobs/nope/events"), 404, "job_not_found")
        assert_error(c.get(f"/v1/jobs/{first['job_id']}/events", params={"timeout": 0}), 422, "validation_error")


def _examples_of(title: str) -> list[str]:
    """The ```python blocks of one section of docs/api.md."""
    text = (Path(__file__).resolve().parents[3] / "docs" / "api.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [block.split("```", 1)[0] for block in section.split("```python\n")[1:]]


@pytest.mark.slow
def test_the_docs_examples_of_batch_upload_and_progress_events_run(
    data_copy: Path, tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/api.md's examples, run against a server on loopback, print what their comments say."""
    from tests.test_docs_examples import _run

    prints = re.compile(r"^\s*print\(.*\)  # (?P<shown>.+)$", re.M)  # also inside a with block

    shutil.copy(samples / "support-policy-v1.pdf", tmp_path / "q3-report.pdf")
    shutil.copy(samples / "support-policy-v2.pdf", tmp_path / "q4-report.pdf")
    (tmp_path / "notes.pdf").write_text("meeting notes, not a PDF")
    monkeypatch.chdir(tmp_path)
    with live_server(make_settings(data_copy)) as url:
        for title in ("Batch upload", "Progress events"):
            (code,) = _examples_of(title)
            printed = _run(code.replace("http://127.0.0.1:8000", url))
            shown = [said["shown"] for said in prints.finditer(code)]
            assert shown and all(s in printed for s in shown), (title, shown, printed)


def test_a_stream_sends_heartbeats_and_ends_at_its_timeout() -> None:
    """A job that does not finish (the runner is not started: it stays queued): the stream says so once, pings while
    nothing changes, and ends after its timeout with the unfinished job, never hanging."""
    from folio.api.http.job_stream import job_events
    from folio.api.service.jobs import LocalJobRunner

    runner = LocalJobRunner()
    job = runner.submit("ingest", lambda progress: {}, filename="slow.pdf")

    async def collect() -> list[bytes]:
        return [c async for c in job_events(runner.get, [job.job_id], 0.5, poll_s=0.05, heartbeat_s=0.1)]

    chunks = asyncio.run(collect())
    events = [c.split(b"\n", 1)[0] for c in chunks]
    assert events[0] == b"event: progress" and events[-2:] == [b"event: timeout", b"event: end"], events
    assert b": ping" in events and events.count(b"event: progress") == 1, events
    assert b'"unfinished": 1' in chunks[-1] and job.job_id.encode() in chunks[-2]
