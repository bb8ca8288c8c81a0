"""A doc id folio derives from a file name is always valid (issue 20, item 1b).

A 150-character file name uploaded without a ``doc_id`` was refused with ``422 invalid doc_id``:
the derived id was over 128 characters, so the user lost the document for a reason they never
chose. Only an id the client sends may be refused; a derived one is shortened to a prefix plus a
hash of the full name, and short derived ids stay exactly as they were.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from benchmarks.odd_pdfs import valid_pdf
from folio.api.cli import main
from folio.api.http.app import create_app
from folio.ingest.pipeline import check_doc_id, doc_id_from_filename
from tests.api.conftest import assert_error, make_settings

LONG = "Annual Report of the University Brochure Committee " * 3  # 153 characters
SHARED = "x" * 140  # two names that agree on their first 140 characters


def test_short_derived_ids_are_unchanged() -> None:
    # Evaluations and existing stores depend on these: byte-identical to before.
    assert doc_id_from_filename("Reportlab UserGuide.PDF") == "reportlab-userguide"
    assert doc_id_from_filename("R Data (Import).PDF") == "r-data-import"
    assert doc_id_from_filename("support-policy-v1.pdf") == "support-policy-v1"
    assert doc_id_from_filename("!!!.pdf") == "document"
    assert doc_id_from_filename("a" * 128 + ".pdf") == "a" * 128  # exactly at the limit: kept whole


def test_long_names_get_a_valid_stable_unique_id() -> None:
    name = LONG.strip() + ".pdf"
    assert len(Path(name).stem) > 128
    got = doc_id_from_filename(name)
    assert check_doc_id(got) == got and len(got) <= 128
    assert got.startswith("annual-report-of-the-university-brochure-committee")
    assert doc_id_from_filename(name) == got  # the same name is the same document (new bytes: a new version)
    a, b = doc_id_from_filename(SHARED + "a.pdf"), doc_id_from_filename(SHARED + "b.pdf")
    assert a != b and check_doc_id(a) == a and check_doc_id(b) == b
    assert doc_id_from_filename("_draft.pdf") != doc_id_from_filename("draft.pdf")  # "_draft" was invalid
    assert check_doc_id(doc_id_from_filename("_draft.pdf"))


def test_a_client_sent_id_is_still_refused(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path / "data"))) as client:
        resp = client.post(
            "/v1/documents",
            files={"file": ("short.pdf", valid_pdf(1), "application/pdf")},
            data={"doc_id": "x" * 129},
        )
        assert_error(resp, 422, "invalid_request")


def test_rest_upload_with_a_150_character_name_and_no_doc_id(tmp_path: Path) -> None:
    first, second = SHARED + "-first.pdf", SHARED + "-second.pdf"
    assert len(first) >= 150
    with TestClient(create_app(make_settings(tmp_path / "data"))) as client:
        ids = []
        for name, pages in ((first, 1), (second, 2)):
            resp = client.post("/v1/documents", files={"file": (name, valid_pdf(pages), "application/pdf")})
            assert resp.status_code == 200, resp.text
            ids.append(resp.json()["doc_id"])
        assert ids == [doc_id_from_filename(first), doc_id_from_filename(second)] and ids[0] != ids[1]
        listed = {d["doc_id"]: d for d in client.get("/v1/documents").json()["data"]}
        assert set(listed) == set(ids)
        # The same long name again, new bytes: a new version of the same document, not a new document.
        again = client.post("/v1/documents", files={"file": (first, valid_pdf(3), "application/pdf")})
        assert again.status_code == 200 and again.json()["doc_id"] == ids[0]


def test_cli_ingest_of_a_long_file_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdf = tmp_path / (LONG.strip() + ".pdf")
    pdf.write_bytes(valid_pdf(1))
    code = main(["ingest", str(pdf), "--data", str(tmp_path / "data"), "--no-ocr", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    assert out["data"][0]["status"] == "created"
    assert out["data"][0]["doc_id"] == doc_id_from_filename(pdf.name)


# Issue 31, item 1: every non-Latin name slugged to "document" ("Q3 отчёт" and "Q3 報告" both to "q3"), so a
# second upload became a silent new version of the first and the first's text left default search.
NON_LATIN = ["отчёт.pdf", "报告.pdf", "Q3 отчёт.pdf", "Q3 報告.pdf", "отчет.pdf", "Café.pdf", "Cafe.pdf", "한국어.pdf"]


def test_non_latin_names_are_distinct_readable_and_stable() -> None:
    ids = [doc_id_from_filename(n) for n in NON_LATIN]
    assert len(set(ids)) == len(ids), ids  # eight names, eight documents
    assert all(check_doc_id(i) == i for i in ids)
    assert ids[0].startswith("otchet-") and ids[1].startswith("baogao-") and ids[2].startswith("q3-otchet-")
    assert ids[6] == "cafe"  # an ASCII name is as before; its accented twin is another document
    assert [doc_id_from_filename(n) for n in NON_LATIN] == ids  # the same name is the same document
    # A decomposed "é" (macOS file names) is the same name as the composed one.
    assert doc_id_from_filename("Cafe\u0301.pdf") == ids[5]


def test_rest_uploads_of_two_non_latin_names_are_two_documents(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path / "data"))) as client:
        first = client.post("/v1/documents", files={"file": ("отчёт.pdf", valid_pdf(1), "application/pdf")})
        second = client.post("/v1/documents", files={"file": ("报告.pdf", valid_pdf(2), "application/pdf")})
        assert first.status_code == 200 and second.status_code == 200, (first.text, second.text)
        ids = [first.json()["doc_id"], second.json()["doc_id"]]
        assert ids[0] != ids[1] and ids[0].startswith("otchet-") and ids[1].startswith("baogao-")
        listed = {d["doc_id"]: d for d in client.get("/v1/documents").json()["data"]}
        assert set(listed) == set(ids) and all(listed[i]["versions"] == 1 for i in ids)
        # A queued job (wait=false) says at once which id was derived.
        job = client.post(
            "/v1/documents?wait=false", files={"file": ("Q3 報告.pdf", valid_pdf(3), "application/pdf")}
        )
        assert job.status_code == 202 and job.json()["doc_id"] == doc_id_from_filename("Q3 報告.pdf")
        # The same name in another collection is no 409 against a different file's document.
        other = client.post(
            "/v1/documents",
            files={"file": ("Q3 отчёт.pdf", valid_pdf(1), "application/pdf")},
            data={"collection": "other"},
        )
        assert other.status_code == 200, other.text


def test_cli_ingests_a_folder_of_non_latin_names_as_separate_documents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    for pages, name in enumerate(NON_LATIN[:4], start=1):
        (folder / name).write_bytes(valid_pdf(pages))
    code = main(["ingest", str(folder), "--data", str(tmp_path / "data"), "--no-ocr", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    assert [r["status"] for r in out["data"]] == ["created"] * 4
    assert len({r["doc_id"] for r in out["data"]}) == 4
