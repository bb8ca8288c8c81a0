"""Metadata on upload and the typed filter language, through REST (issue 48, item 2): two sample PDFs uploaded
with different metadata; questions filtered by equality, in, ranges, and/or/not; filters that try to inject SQL;
the bounds; a store written before metadata existed; ``collection`` on a request."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from tests.api.conftest import assert_error, make_settings

QUESTION = "How long is a product supported?"
ACME = {"company": "Acme", "year": 2021, "filed": "2021-03-01", "audited": True}
GLOBEX = {"company": "Globex", "year": 2023, "filed": "2023-06-30", "form": "10-K"}


def upload(c: TestClient, pdf: Path, doc_id: str, metadata: Any, **form: str) -> Any:
    with pdf.open("rb") as f:
        return c.post(
            "/v1/documents",
            files={"file": (pdf.name, f, "application/pdf")},
            data={"doc_id": doc_id, "metadata": metadata if isinstance(metadata, str) else json.dumps(metadata),
                  **form},
        )


@pytest.fixture(scope="module")
def meta_master(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    """A data dir with the two policy PDFs as two documents of two companies, and an old-style third."""
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    data = tmp_path_factory.mktemp("folio-meta") / "data"
    ingest_path(Store(data), samples / "support-policy-v1.pdf", doc_id="plain")  # no metadata
    with TestClient(create_app(make_settings(data))) as c:
        assert upload(c, samples / "support-policy-v1.pdf", "acme", ACME).status_code == 200
        assert upload(c, samples / "support-policy-v2.pdf", "globex", GLOBEX, collection="filings").status_code == 200
    return data


@pytest.fixture(scope="module")
def mc(meta_master: Path) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(meta_master))) as c:
        yield c


def docs_of(c: TestClient, flt: Any, endpoint: str = "/v1/search", **extra: Any) -> set[str]:
    r = c.post(endpoint, json={"query": QUESTION, "filter": flt, **extra})
    assert r.status_code == 200, r.text
    body = r.json()
    if endpoint == "/v1/context":
        return {i["doc_id"] for i in body["items"]}
    return {h["doc_id"] for h in body["data"]}


def test_listings_show_each_versions_metadata(mc: TestClient) -> None:
    docs = {d["doc_id"]: d for d in mc.get("/v1/documents").json()["data"]}
    assert docs["acme"]["metadata"] == ACME
    assert docs["globex"]["metadata"] == GLOBEX
    assert docs["plain"]["metadata"] == {}
    detail = mc.get("/v1/documents/globex").json()
    assert detail["metadata"] == GLOBEX and detail["versions"][0]["metadata"] == GLOBEX


def test_unfiltered_question_mixes_both_and_a_filter_keeps_one(mc: TestClient) -> None:
    assert {"acme", "globex"} <= docs_of(mc, None)
    assert docs_of(mc, {"company": "Acme"}) == {"acme"}
    assert docs_of(mc, {"field": "company", "op": "eq", "value": "Globex"}, "/v1/context") == {"globex"}


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"field": "year", "op": "gte", "value": 2022}, {"globex"}),
        ({"year": {"gte": 2020, "lt": 2022}}, {"acme"}),
        ({"field": "year", "op": "between", "value": [2020, 2030]}, {"acme", "globex"}),
        ({"field": "filed", "op": "lt", "value": "2022-01-01"}, {"acme"}),  # dates compare as dates
        ({"company": ["Acme", "Initech"]}, {"acme"}),
        ({"or": [{"company": "Acme"}, {"form": "10-K"}]}, {"acme", "globex"}),
        ({"and": [{"company": "Acme"}, {"form": "10-K"}]}, set()),
        ({"not": {"company": "Acme"}}, {"globex", "plain"}),
        ({"field": "company", "op": "ne", "value": "Acme"}, {"globex"}),  # ne needs the field
        ({"audited": True}, {"acme"}),
        # typed: a date against a string, a string against a number, match nothing
        ({"field": "company", "op": "gt", "value": "2020-01-01"}, set()),
        ({"field": "year", "op": "eq", "value": "2021"}, set()),
    ],
)
def test_filters(mc: TestClient, flt: Any, expected: set[str]) -> None:
    assert docs_of(mc, flt) == expected


def test_injection_in_a_value_matches_nothing_and_is_quoted(mc: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from folio.ingest.storage import metadata as stored

    sent: list[str] = []
    real = stored.matching_versions

    def spy(database: Any, where: str, ready: Any) -> Any:
        sent.append(where)
        return real(database, where, ready)

    monkeypatch.setattr(stored, "matching_versions", spy)
    assert docs_of(mc, {"company": "x' OR '1'='1"}) == set()
    assert sent == ["key = 'company' AND str_value = 'x'' OR ''1''=''1'"]


def test_injection_in_a_field_is_refused(mc: TestClient) -> None:
    r = mc.post("/v1/search", json={"query": QUESTION, "filter": {"field": "year' OR 1=1 --", "value": 1}})
    assert_error(r, 422)
    r = mc.post("/v1/search", json={"query": QUESTION, "filter": {"year' OR 1=1 --": 1}})
    assert_error(r, 422)


@pytest.mark.parametrize(
    "flt",
    [
        {"field": "year", "op": "in", "value": list(range(257))},
        {"or": [{"year": i} for i in range(65)]},
        {"not": {"not": {"not": {"not": {"not": {"not": {"not": {"not": {"year": 1}}}}}}}}},
        {"field": "year", "op": "like", "value": 1},
        {"field": "year", "op": "gt", "value": [1, 2]},
        {"field": "year", "op": "eq", "value": 1e300},
        {"and": []},
        [],
    ],
)
def test_bounds_are_422(mc: TestClient, flt: Any) -> None:
    assert_error(mc.post("/v1/search", json={"query": QUESTION, "filter": flt}), 422)


def test_an_empty_match_is_an_empty_package(mc: TestClient) -> None:
    r = mc.post("/v1/context", json={"query": QUESTION, "filter": {"company": "Nobody"}})
    assert r.status_code == 200 and r.json()["items"] == []


def test_doc_ids_pins_and_collection_with_a_filter(mc: TestClient) -> None:
    assert docs_of(mc, {"company": "Acme"}, doc_ids=["globex"]) == set()  # both narrow: and
    assert docs_of(mc, {"company": "Globex"}, doc_ids=["acme", "globex"]) == {"globex"}
    assert docs_of(mc, None, collection="filings") == {"globex"}
    assert docs_of(mc, {"company": "Acme"}, collection="filings") == set()
    assert_error(mc.post("/v1/search", json={"query": QUESTION, "doc_ids": ["acme"], "collection": "filings"}), 404)


def test_collection_outside_the_keys_is_404(meta_master: Path, tmp_path: Path) -> None:
    from folio.api.keys import KeyRecord, hash_secret, write_keys

    keys = tmp_path / "keys.json"
    write_keys(keys, [KeyRecord(id="mine", sha256=hash_secret("folio_test_mine"), collections=("default",),
                                access="read")])
    with TestClient(create_app(make_settings(meta_master, keys_file=str(keys)))) as c:
        h = {"X-API-Key": "folio_test_mine"}
        r = c.post("/v1/search", json={"query": QUESTION, "collection": "filings"}, headers=h)
        assert_error(r, 404)
        r = c.post("/v1/search", json={"query": QUESTION, "collection": "default"}, headers=h)
        assert {x["doc_id"] for x in r.json()["data"]} <= {"acme", "plain"}


@pytest.mark.parametrize(
    "meta",
    [
        "not json",
        "[1, 2]",
        {"bad key!": 1},
        {f"k{i}": i for i in range(33)},
        {"long": "x" * 513},
        {"n": None},
        {"nested": {"a": 1}},
    ],
)
def test_bad_metadata_is_422_before_a_job(mc: TestClient, samples: Path, meta: Any) -> None:
    before = len(mc.get("/v1/jobs").json()["data"])
    assert_error(upload(mc, samples / "support-policy-v1.pdf", "bad", meta), 422)
    assert len(mc.get("/v1/jobs").json()["data"]) == before


def test_a_store_without_metadata_lists_and_filters(ingested_data: Path) -> None:
    with TestClient(create_app(make_settings(ingested_data))) as c:
        docs = c.get("/v1/documents").json()["data"]
        assert docs and all(d["metadata"] == {} for d in docs)
        r = c.post("/v1/search", json={"query": QUESTION, "filter": {"company": "Acme"}})
        assert r.status_code == 200 and r.json()["data"] == []
        assert docs_of(c, {"not": {"company": "Acme"}}) >= {"support-policy"}


def test_a_new_version_carries_new_metadata(meta_master: Path, tmp_path: Path, samples: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(meta_master, data)
    with TestClient(create_app(make_settings(data))) as c:
        new = upload(c, samples / "support-policy-v2.pdf", "acme", {"company": "Acme", "year": 2024})
        assert new.status_code == 200
        detail = c.get("/v1/documents/acme").json()
        assert [v["metadata"].get("year") for v in detail["versions"]] == [2024, 2021]
        assert docs_of(c, {"year": 2021}) == set()  # the latest version is the one filtered
        old = detail["versions"][1]["version_id"]
        assert docs_of(c, {"year": 2021}, versions={"acme": old}) == {"acme"}


def test_answer_takes_a_filter(meta_master: Path) -> None:
    from tests.api.llm_standin import Reply, StandInLLM

    with StandInLLM() as llm:
        settings = make_settings(meta_master, llm_base_url=llm.url, llm_model="stand-in")
        with TestClient(create_app(settings)) as c:
            none = c.post("/v1/answer", json={"query": QUESTION, "filter": {"company": "Nobody"}}).json()
            assert none["refused"] and none["package"]["items"] == [] and llm.requests == []
            llm.replies.append(Reply("Supported for a while."))
            body = c.post("/v1/answer", json={"query": QUESTION, "filter": {"form": "10-K"}}).json()
            assert {i["doc_id"] for i in body["package"]["items"]} == {"globex"} and len(llm.requests) == 1
            assert_error(c.post("/v1/answer", json={"query": QUESTION, "filter": {"and": []}}), 422)
