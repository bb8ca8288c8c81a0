"""Uploads, limits, deletes, auth and ingest-while-querying, each on a private copy of the data."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from folio.ingest.storage.store import Store
from tests.api.conftest import assert_error, excerpt, live_server, make_settings


def _upload(
    client: TestClient, name: str, data: bytes, doc_id: str | None = None, wait: bool = True
) -> object:
    form = {"doc_id": doc_id} if doc_id else {}
    return client.post(
        f"/v1/documents?wait={str(wait).lower()}", files={"file": (name, data, "application/pdf")}, data=form
    )


def _snapshot(data: Path) -> tuple[list[tuple[str, str]], int, int]:
    store = Store(data, recover=False)
    versions = [(v.doc_id, v.version_id) for v in store.list_versions(include_pending=True)]
    return versions, store.regions.count_rows(), store.chunks.count_rows()


def test_upload_new_version_noop_and_job(data_copy: Path, samples: Path) -> None:
    v1 = (samples / "support-policy-v1.pdf").read_bytes()
    with TestClient(create_app(make_settings(data_copy))) as client:
        same = _upload(client, "support-policy-v1.pdf", v1, doc_id="support-policy")
        assert same.status_code == 200 and same.json()["status"] == "unchanged"  # type: ignore[attr-defined]
        resp = _upload(client, "policy.pdf", v1, doc_id="policy-copy", wait=False)
        assert resp.status_code == 202  # type: ignore[attr-defined]
        job = resp.json()  # type: ignore[attr-defined]
        assert (
            job["status"] in ("queued", "running", "done")
            and resp.headers["location"] == f"/v1/jobs/{job['job_id']}"
        )  # type: ignore[attr-defined]
        for _ in range(600):
            job = client.get(f"/v1/jobs/{job['job_id']}").json()
            if job["status"] in ("done", "failed"):
                break
            time.sleep(0.1)
        assert job["status"] == "done", job
        assert job["result"]["doc_id"] == "policy-copy" and job["result"]["status"] == "created"
        assert job["progress"]["stage"] == "done"
        listed = client.get("/v1/jobs").json()
        assert listed["count"] >= 2 and listed["data"][0]["job_id"] == job["job_id"]
        docs = {d["doc_id"] for d in client.get("/v1/documents").json()["data"]}
        assert docs == {"support-policy", "register", "policy-copy"}


def test_bad_uploads_are_rejected_and_leave_the_store_as_it_was(data_copy: Path, samples: Path) -> None:
    import pymupdf

    good = (samples / "support-policy-v1.pdf").read_bytes()
    doc = pymupdf.open(stream=good, filetype="pdf")
    encrypted = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    before = _snapshot(data_copy)
    settings = make_settings(data_copy, max_upload_bytes=200_000, max_pages=2)
    with TestClient(create_app(settings)) as client:
        assert_error(_upload(client, "notes.pdf", b"hello, not a pdf"), 422, "not_a_pdf")
        assert_error(_upload(client, "empty.pdf", b""), 422, "not_a_pdf")
        assert_error(_upload(client, "cut.pdf", good[:300]), 422, "corrupt_pdf")
        assert_error(_upload(client, "locked.pdf", encrypted), 422, "encrypted_pdf")
        assert_error(_upload(client, "x.pdf", good, doc_id="bad id!"), 422, "invalid_request")
        big = (samples / "R-data-import-export.pdf").read_bytes()  # 309 KB > 200 KB
        err = assert_error(_upload(client, "big.pdf", big), 413, "limit_exceeded")
        assert "200000" in err["message"]
        pages = excerpt(samples / "federal-register-2020-17221.pdf", 3)  # 3 pages > max_pages=2
        assert_error(_upload(client, "long.pdf", pages), 413, "limit_exceeded")
        # Wrong content type / missing file part.
        assert_error(client.post("/v1/documents", json={"file": "x"}), 422, "invalid_request")
        assert_error(client.post("/v1/documents", data={"doc_id": "x"}, files={"other": ("a", b"b")}), 422)
        assert client.get("/v1/jobs").json()["count"] == 0  # rejected before any job was queued
    assert _snapshot(data_copy) == before


def test_upload_limit_is_enforced_while_streaming(data_copy: Path) -> None:
    """Over a real socket, a chunked body (no Content-Length to trust) over the limit gets a 413 long
    before the client has sent it all: the server never reads an oversized upload whole."""
    import socket

    head = (
        b"POST /v1/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Type: multipart/form-data; boundary=b\r\n\r\n"
    )
    part = b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.7\n'
    chunk = b"0" * 65536
    sent = 0
    reply = b""
    with live_server(make_settings(data_copy, max_upload_bytes=1_000_000)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(head + b"%x\r\n%s\r\n" % (len(part), part))
            sock.setblocking(False)
            for _ in range(10_000):  # up to 640 MB if nobody stops us
                try:
                    reply += sock.recv(65536)
                except BlockingIOError:
                    pass
                if reply:
                    break
                try:
                    sock.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    sent += len(chunk)
                except BlockingIOError:
                    time.sleep(0.01)
                except OSError:
                    break
            sock.setblocking(True)
            while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
                more = sock.recv(65536)
                if not more:
                    break
                reply += more
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert b'"code":"limit_exceeded"' in reply
    assert sent < 50_000_000


def test_declared_content_length_over_the_limit(data_copy: Path) -> None:
    with TestClient(create_app(make_settings(data_copy, max_upload_bytes=1_000_000))) as client:
        resp = client.post(
            "/v1/documents",
            content=b"x" * 1_200_000,
            headers={"content-type": "multipart/form-data; boundary=b"},
        )
        assert_error(resp, 413, "limit_exceeded")


def test_delete_version_then_document(data_copy: Path) -> None:
    with TestClient(create_app(make_settings(data_copy))) as client:
        detail = client.get("/v1/documents/support-policy").json()
        v2, v1 = (v["version_id"] for v in detail["versions"])
        region = client.post(
            "/v1/search", json={"query": "public holidays", "doc_ids": ["support-policy"], "k": 1}
        ).json()["data"][0]["region_id"]
        assert v2 in region
        resp = client.delete(f"/v1/documents/support-policy/versions/{v2}")
        assert resp.status_code == 200 and resp.json()["deleted_versions"] == [v2]
        after = client.get("/v1/documents/support-policy").json()
        assert after["version_id"] == v1 and len(after["versions"]) == 1
        assert_error(client.get(f"/v1/regions/{region}"), 404, "region_not_found")
        assert_error(client.get(f"/v1/documents/support-policy/versions/{v2}/pages/1/image"), 404)
        pkg = client.post(
            "/v1/context", json={"query": "incident acknowledged", "doc_ids": ["support-policy"]}
        ).json()
        assert pkg["items"] and all(i["version_id"] == v1 for i in pkg["items"])
        assert_error(client.delete(f"/v1/documents/support-policy/versions/{v2}"), 404, "version_not_found")
        assert client.delete("/v1/documents/support-policy").json()["deleted_versions"] == [v1]
        assert_error(client.get("/v1/documents/support-policy"), 404, "document_not_found")
        assert_error(client.delete("/v1/documents/support-policy"), 404, "document_not_found")
        assert [d["doc_id"] for d in client.get("/v1/documents").json()["data"]] == ["register"]


def test_api_key(data_copy: Path) -> None:
    settings = make_settings(data_copy, api_key="s3cret")
    with TestClient(create_app(settings)) as client:
        err = assert_error(client.get("/v1/documents"), 401, "unauthorized")
        assert "X-API-Key" in err["message"]
        assert_error(client.get("/v1/documents", headers={"X-API-Key": "wrong"}), 401, "unauthorized")
        assert_error(client.post("/v1/context", json={"query": "x"}), 401, "unauthorized")
        assert client.get("/v1/documents", headers={"X-API-Key": "s3cret"}).status_code == 200
        assert client.get("/v1/documents", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert client.get("/v1/health").json()["auth"] is True  # health stays open
        assert client.get("/viewer").status_code == 200  # the viewer page itself holds no data
        doc = client.get("/v1/documents/register", headers={"X-API-Key": "s3cret"}).json()
        image = f"/v1/documents/register/versions/{doc['version_id']}/pages/1/image"
        assert_error(client.get(image), 401, "unauthorized")
        assert client.get(image + "?key=s3cret").status_code == 200  # for <img src>
        assert_error(client.get("/v1/documents?key=s3cret"), 401)  # ?key= only on image endpoints


def test_no_key_configured_means_open(client: TestClient) -> None:
    assert client.get("/v1/documents", headers={"X-API-Key": "anything"}).status_code == 200


@pytest.mark.slow
def test_ingest_job_does_not_block_queries(data_copy: Path, samples: Path) -> None:
    pdf = excerpt(samples / "federal-register-2020-17221.pdf", 6)
    with TestClient(create_app(make_settings(data_copy))) as client:
        job = _upload(client, "register-6.pdf", pdf, doc_id="register-6", wait=False).json()  # type: ignore[attr-defined]
        during: list[float] = []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            before = client.get(f"/v1/jobs/{job['job_id']}").json()
            if before["status"] in ("done", "failed"):
                break
            if before["status"] != "running":
                time.sleep(0.05)
                continue
            t0 = time.perf_counter()
            resp = client.post("/v1/context", json={"query": "incident acknowledged", "budget": 500})
            elapsed = time.perf_counter() - t0
            after = client.get(f"/v1/jobs/{job['job_id']}").json()
            assert resp.status_code == 200 and resp.json()["items"]
            if after["status"] == "running":
                during.append(elapsed)  # this query started and finished while the ingest ran
        final = client.get(f"/v1/jobs/{job['job_id']}").json()
        assert final["status"] == "done", final
        assert len(during) >= 2, "no query completed while the ingest job was running"
        assert "register-6" in {d["doc_id"] for d in client.get("/v1/documents").json()["data"]}
