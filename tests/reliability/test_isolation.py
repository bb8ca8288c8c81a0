"""Cross-collection isolation (issue 12, "Scoped keys"): a key sees only its collections' documents,
versions, pages, page images, regions, region images, jobs, search hits and context packages. An id
from another collection answers exactly like an unknown id (404, same code and message), so a key
cannot even learn that it exists. Read keys cannot upload or delete; keys rotate without a restart;
a data dir from before collections still works."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from folio.api.keys import KeyRecord, hash_secret, write_keys
from tests.api.conftest import assert_error, make_settings

# collection → doc id, file; both small real PDFs with overlapping words, so a leak would show.
DOCS = {"alpha": ("policy-a", "support-policy-v1.pdf"), "beta": ("policy-b", "support-policy-v2.pdf")}
SECRETS = {
    "alpha-read": ("alpha", "read"),
    "alpha-write": ("alpha", "write"),
    "beta-read": ("beta", "read"),
    "beta-write": ("beta", "write"),
    "all-read": ("*", "read"),
}


def secret(name: str) -> str:
    return f"folio_test_{name}"


def write_key_file(path: Path, names: dict[str, tuple[str, str]], prefix: str = "") -> None:
    write_keys(
        path,
        [
            KeyRecord(id=name, sha256=hash_secret(prefix + secret(name)), collections=(coll,), access=access)  # type: ignore[arg-type]
            for name, (coll, access) in names.items()
        ],
    )


def auth(name: str) -> dict[str, str]:
    return {"X-API-Key": secret(name)}


@pytest.fixture(scope="session")
def iso_master(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    data = tmp_path_factory.mktemp("iso-data")
    store = Store(data)
    for collection, (doc_id, name) in DOCS.items():
        rep = ingest_path(store, samples / name, doc_id=doc_id, ocr=False, collection=collection)
        assert rep.status == "created"
    return data


@pytest.fixture()
def iso_data(iso_master: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "data"
    shutil.copytree(iso_master, dst)
    return dst


@pytest.fixture()
def keys_file(tmp_path: Path) -> Path:
    path = tmp_path / "keys.json"
    write_key_file(path, SECRETS)
    return path


@pytest.fixture()
def iso_client(iso_data: Path, keys_file: Path) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(iso_data, keys_file=str(keys_file)))) as c:
        yield c


def _ids(client: TestClient, collection: str) -> dict[str, str]:
    """Ids of one collection's document, read with that collection's own key."""
    doc_id = DOCS[collection][0]
    key = auth(f"{collection}-read")
    doc = client.get(f"/v1/documents/{doc_id}", headers=key).json()
    vid = doc["version_id"]
    pages = client.get(f"/v1/documents/{doc_id}/versions/{vid}/pages", headers=key).json()["data"]
    hits = client.post("/v1/search", json={"query": "support", "k": 5}, headers=key).json()["data"]
    text_region = next(h["region_id"] for h in hits if h["kind"] != "page")
    return {"doc": doc_id, "version": vid, "page_region": pages[0]["region_id"], "region": text_region}


def _same_as_unknown(client: TestClient, method: str, url: str, real: str, fake: str, **kw: Any) -> None:
    """``url`` (naming another collection's id ``real``) answers exactly as with an unknown ``fake``."""
    got = client.request(method, url, **kw)
    ref = client.request(method, url.replace(real, fake), **kw)
    assert got.status_code == ref.status_code == 404, (url, got.text)
    a, b = assert_error(got, 404), assert_error(ref, 404)
    assert a["code"] == b["code"]
    assert str(a["message"]).replace(real, "X") == str(b["message"]).replace(fake, "X"), (a, b)


def test_listing_is_per_key(iso_client: TestClient) -> None:
    def listed(name: str, **params: str) -> dict[str, str]:
        body = iso_client.get("/v1/documents", headers=auth(name), params=params).json()
        return {d["doc_id"]: d["collection"] for d in body["data"]}

    assert listed("alpha-read") == {"policy-a": "alpha"}
    assert listed("beta-write") == {"policy-b": "beta"}
    assert listed("all-read") == {"policy-a": "alpha", "policy-b": "beta"}
    assert listed("all-read", collection="beta") == {"policy-b": "beta"}
    assert listed("alpha-read", collection="beta") == {}
    assert_error(iso_client.get("/v1/documents"), 401, "unauthorized")
    assert_error(iso_client.get("/v1/documents", headers={"X-API-Key": "folio_wrong"}), 401, "unauthorized")


def test_other_collections_ids_are_unknown_ids(iso_client: TestClient) -> None:
    """Every route that takes an id, with the ids of the other collection (as if guessed)."""
    b = _ids(iso_client, "beta")
    vid_fake = "0" * 16
    for name in ("alpha-read", "alpha-write"):
        h = auth(name)
        doc, vid = b["doc"], b["version"]
        base = f"/v1/documents/{doc}"
        _same_as_unknown(iso_client, "GET", base, doc, "no-such-doc", headers=h)
        _same_as_unknown(iso_client, "GET", f"{base}/versions/{vid}", doc, "no-such-doc", headers=h)
        _same_as_unknown(iso_client, "GET", f"{base}/versions/{vid}/pages", doc, "no-such-doc", headers=h)
        _same_as_unknown(iso_client, "GET", f"{base}/versions/{vid}/pages/1/image", doc, "no-such-doc", headers=h)
        _same_as_unknown(
            iso_client, "GET", f"{base}/versions/{vid}/pages/1/image?key={secret(name)}", doc, "no-such-doc"
        )
        for rid in (b["page_region"], b["region"]):
            fake = rid.replace(vid, vid_fake)
            _same_as_unknown(iso_client, "GET", f"/v1/regions/{rid}", rid, fake, headers=h)
            _same_as_unknown(iso_client, "GET", f"/v1/regions/{rid}/image", rid, fake, headers=h)
            _same_as_unknown(iso_client, "GET", f"/v1/regions/{rid}/image?key={secret(name)}", rid, fake)
    # A write key of another collection cannot delete either, and learns nothing: 404, still there.
    h = auth("alpha-write")
    _same_as_unknown(
        iso_client, "DELETE", f"/v1/documents/{b['doc']}/versions/{b['version']}", b["doc"], "nope", headers=h
    )
    _same_as_unknown(iso_client, "DELETE", f"/v1/documents/{b['doc']}", b["doc"], "nope", headers=h)
    assert iso_client.get(f"/v1/documents/{b['doc']}", headers=auth("beta-read")).status_code == 200
    # The owner and the wildcard key do see them.
    for name in ("beta-read", "all-read"):
        assert iso_client.get(f"/v1/regions/{b['region']}", headers=auth(name)).json()["collection"] == "beta"
        img = iso_client.get(f"/v1/regions/{b['page_region']}/image", headers=auth(name))
        assert img.status_code == 200 and img.headers["content-type"] == "image/png"


def test_search_context_verify_stay_in_the_keys_collections(iso_client: TestClient) -> None:
    b = _ids(iso_client, "beta")
    query = {"query": "support policy incident response", "k": 50}
    for name, want in (
        ("alpha-read", {"policy-a"}),
        ("beta-read", {"policy-b"}),
        ("all-read", {"policy-a", "policy-b"}),
    ):
        hits = iso_client.post("/v1/search", json=query, headers=auth(name)).json()["data"]
        assert {h["doc_id"] for h in hits} == want, name
        pkg = iso_client.post("/v1/context", json={**query, "budget": 1500}, headers=auth(name)).json()
        assert pkg["items"] and {it["doc_id"] for it in pkg["items"]} <= want, name
        assert not any("policy-b" in json.dumps(it) for it in pkg["items"]) or "policy-b" in want
    h = auth("alpha-read")
    # Naming the other collection's document, or pinning its version, is the unknown-id 404.
    for body in ({**query, "doc_ids": ["policy-b"]}, {**query, "versions": {"policy-b": b["version"]}}):
        for path, payload in (
            ("/v1/search", body),
            ("/v1/context", body),
            ("/v1/verify", {"answer": "x [C1].", "context_request": body}),
        ):
            got = assert_error(iso_client.post(path, json=payload, headers=h), 404)
            fake = json.loads(json.dumps(payload).replace("policy-b", "policy-zz"))
            ref = assert_error(iso_client.post(path, json=fake, headers=h), 404)
            assert got["code"] == ref["code"] and got["message"] == str(ref["message"]).replace("policy-zz", "policy-b")
    report = iso_client.post("/v1/verify", json={"answer": "x [C1].", "context_request": query}, headers=h)
    assert report.status_code == 200, report.text


def _upload(client: TestClient, key: str, name: str, data: bytes, **form: str) -> Any:
    return client.post(
        "/v1/documents?wait=true", files={"file": (name, data, "application/pdf")}, data=form, headers=auth(key)
    )


def test_read_keys_cannot_write_and_writes_stay_in_their_collections(iso_client: TestClient, samples: Path) -> None:
    pdf = (samples / "support-policy-v2.pdf").read_bytes()
    b = _ids(iso_client, "beta")
    assert_error(_upload(iso_client, "alpha-read", "x.pdf", pdf, collection="alpha"), 403, "forbidden")
    assert_error(iso_client.delete("/v1/documents/policy-a", headers=auth("alpha-read")), 403, "forbidden")
    assert_error(iso_client.delete("/v1/documents/policy-b", headers=auth("all-read")), 403, "forbidden")
    assert_error(_upload(iso_client, "alpha-write", "x.pdf", pdf, collection="beta"), 403, "forbidden")
    # No collection field means "default", which this key does not write to.
    assert_error(_upload(iso_client, "alpha-write", "x.pdf", pdf), 403, "forbidden")
    # A doc_id lives in one collection.
    err = assert_error(
        _upload(iso_client, "alpha-write", "x.pdf", pdf, collection="alpha", doc_id="policy-b"),
        409,
        "collection_conflict",
    )
    assert "beta" not in str(err["message"])
    # Same bytes as beta's document, as a new document of alpha: a separate document, its own ids.
    ok = _upload(iso_client, "alpha-write", "copy.pdf", pdf, collection="alpha", doc_id="policy-a2")
    assert ok.status_code == 200 and ok.json()["collection"] == "alpha", ok.text
    assert ok.json()["version_id"] == b["version"]  # same bytes, same version id: isolation is by doc
    job_id = ok.json()["job_id"]
    assert iso_client.get(f"/v1/jobs/{job_id}", headers=auth("alpha-read")).json()["collection"] == "alpha"
    _same_as_unknown(iso_client, "GET", f"/v1/jobs/{job_id}", job_id, "f" * 16, headers=auth("beta-read"))
    assert job_id not in {j["job_id"] for j in iso_client.get("/v1/jobs", headers=auth("beta-write")).json()["data"]}
    assert job_id in {j["job_id"] for j in iso_client.get("/v1/jobs", headers=auth("all-read")).json()["data"]}
    # beta still sees only its own document; its hits carry its own filename, not alpha's copy.
    hits = iso_client.post("/v1/search", json={"query": "support", "k": 20}, headers=auth("beta-read")).json()["data"]
    assert {h["doc_id"] for h in hits} == {"policy-b"} and {h["filename"] for h in hits} == {"support-policy-v2.pdf"}
    gone = iso_client.delete("/v1/documents/policy-a2", headers=auth("alpha-write"))
    assert (
        gone.status_code == 200
        and iso_client.get("/v1/documents/policy-b", headers=auth("beta-read")).status_code == 200
    )


def test_a_taken_doc_id_says_nothing_about_where(iso_client: TestClient, samples: Path) -> None:
    """Issue 44: alpha's key uploading beta's doc_id got ``409 ... already exists in another collection`` (and a GET of
    it a 404). Now every taken id gets one answer that names no collection and no reason. Doc ids are one name space
    (region ids and citations carry them), so the 409 itself still says that the id is taken; nothing more."""
    pdf = (samples / "support-policy-v1.pdf").read_bytes()
    for wait in ("true", "false"):
        resp = iso_client.post(
            f"/v1/documents?wait={wait}",
            files={"file": ("x.pdf", pdf, "application/pdf")},
            data={"collection": "alpha", "doc_id": "policy-b"},
            headers=auth("alpha-write"),
        )
        err = assert_error(resp, 409, "collection_conflict")
        assert err["message"] == "doc_id policy-b is taken: upload under another doc_id", err
        assert "detail" not in err
    # The document stays beta's.
    assert iso_client.get("/v1/documents/policy-b", headers=auth("beta-read")).json()["collection"] == "beta"


def test_keys_rotate_without_restart(iso_client: TestClient, keys_file: Path) -> None:
    assert iso_client.get("/v1/documents", headers=auth("alpha-read")).status_code == 200
    write_key_file(keys_file, SECRETS, prefix="new-")
    assert_error(iso_client.get("/v1/documents", headers=auth("alpha-read")), 401, "unauthorized")
    new = iso_client.get("/v1/documents", headers={"X-API-Key": "new-" + secret("alpha-read")})
    assert new.status_code == 200 and [d["doc_id"] for d in new.json()["data"]] == ["policy-a"]
    # Revoking (the file rewritten without the key) takes effect at once too; a broken file fails closed.
    write_key_file(keys_file, {k: v for k, v in SECRETS.items() if k != "beta-read"}, prefix="new-")
    assert iso_client.get("/v1/documents", headers={"X-API-Key": "new-" + secret("beta-read")}).status_code == 401
    keys_file.write_text("[{]")
    assert_error(
        iso_client.get("/v1/documents", headers={"X-API-Key": "new-" + secret("alpha-read")}), 503, "keys_unavailable"
    )
    keys_file.unlink()
    assert_error(iso_client.get("/v1/documents", headers={"X-API-Key": "new-" + secret("alpha-read")}), 401)


def test_legacy_api_key_is_full_access(iso_data: Path, keys_file: Path) -> None:
    settings = make_settings(iso_data, keys_file=str(keys_file), api_key="legacy-secret")
    with TestClient(create_app(settings)) as c:
        docs = c.get("/v1/documents", headers={"Authorization": "Bearer legacy-secret"}).json()["data"]
        assert {d["doc_id"] for d in docs} == {"policy-a", "policy-b"}
        assert c.get("/v1/documents", headers=auth("alpha-read")).json()["count"] == 1
        assert c.get("/v1/health").json()["auth"] is True


def test_cli_keys_add_list_revoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from folio.api.cli import main
    from folio.api.keys import KeyRing

    path = tmp_path / "keys.json"
    assert main(["keys", "add", "--file", str(path), "--collections", "a,b", "--access", "read", "--json"]) == 0
    added = json.loads(capsys.readouterr().out)
    assert added["collections"] == ["a", "b"] and added["access"] == "read"
    stored = path.read_text()
    assert added["secret"] not in stored and hash_secret(added["secret"]) in stored
    assert os.stat(path).st_mode & 0o077 == 0
    ring = KeyRing(path)
    principal = ring.authenticate(added["secret"])
    assert principal is not None and principal.collections == {"a", "b"} and not principal.can_write
    assert main(["keys", "list", "--file", str(path)]) == 0
    listing = capsys.readouterr().out
    assert added["id"] in listing and added["secret"] not in listing and added["sha256"] not in listing
    assert main(["keys", "add", "--file", str(path), "--collections", "bad name"]) == 1
    assert main(["keys", "revoke", "--file", str(path), added["id"]]) == 0
    assert ring.authenticate(added["secret"]) is None
    assert main(["keys", "revoke", "--file", str(path), added["id"]]) == 1


def test_data_dir_without_collection_column(iso_master: Path, tmp_path: Path, samples: Path, keys_file: Path) -> None:
    """Data written before collections: every document reads as ``default``; the first writer adds the column."""
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    data = tmp_path / "old"
    shutil.copytree(iso_master, data)
    store = Store(data)
    store.versions.drop_columns(["collection"])
    assert "collection" not in Store(data).versions.schema.names
    write_key_file(keys_file, {"default-read": ("default", "read"), "alpha-read": ("alpha", "read")})
    with TestClient(create_app(make_settings(data, keys_file=str(keys_file)))) as c:
        docs = c.get("/v1/documents", headers=auth("default-read")).json()["data"]
        assert {(d["doc_id"], d["collection"]) for d in docs} == {("policy-a", "default"), ("policy-b", "default")}
        assert c.get("/v1/documents", headers=auth("alpha-read")).json()["count"] == 0
        hits = c.post("/v1/search", json={"query": "support"}, headers=auth("default-read")).json()["data"]
        assert hits
    # A writer migrates: the column appears, old rows are "default", the new document has its own.
    fresh = Store(data)
    rep = ingest_path(fresh, samples / "support-policy-v1.pdf", doc_id="new-doc", ocr=False, collection="alpha")
    assert rep.status == "created"
    assert "collection" in fresh.versions.schema.names
    assert fresh.collections() == {"policy-a": "default", "policy-b": "default", "new-doc": "alpha"}
