"""Statements read as rows by default (issue 45, item 1): an unruled balance sheet uploaded with the default settings
comes back from ``POST /v1/context`` as rows, a label and its figures on one line, under one header that carries
the statement's title, its unit and its periods; ``folio ingest``'s report counts the table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from tests.api.conftest import make_settings
from tests.ingest.test_pdf_wordtables import statement_pdf


@pytest.fixture()
def sheet_client(tmp_path: Path) -> TestClient:
    with TestClient(create_app(make_settings(tmp_path / "data"))) as c:
        up = c.post("/v1/documents?wait=true", files={"file": ("sheet.pdf", statement_pdf(), "application/pdf")},
                    data={"doc_id": "sheet"})
        assert up.status_code in (200, 201), up.text
        yield c


def test_an_unruled_statement_is_sent_as_rows_with_unit_and_periods(sheet_client: TestClient) -> None:
    pkg = sheet_client.post(
        "/v1/context", json={"query": "What were total inventories in 2018?", "doc_ids": ["sheet"], "budget": 1000}
    ).json()
    text = "\n".join(item["text"] for item in pkg["items"])
    lines = text.splitlines()
    assert "Total inventories|4,366|4,034" in lines  # the label and both periods' figures on one line
    assert "Cash and cash equivalents|$2,853|$3,053" in lines
    header = next(ln for ln in lines if "Consolidated Balance Sheets" in ln)
    assert "In millions" in header and "2018" in header and "2017" in header  # title, unit and periods at once
    assert not any(ln.strip() in ("4,366", "$", "4,034") for ln in lines)  # no figure on a line of its own


def test_folio_ingest_reports_the_statement_table(tmp_path: Path) -> None:
    pdf = tmp_path / "sheet.pdf"
    pdf.write_bytes(statement_pdf())
    folio = Path(sys.executable).with_name("folio")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLIO_")} | {"FOLIO_OCR": "0"}  # the defaults
    out = subprocess.run([str(folio), "ingest", str(pdf), "--data", str(tmp_path / "data")],
                         capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert " 1 tables," in out.stdout, out.stdout  # with FOLIO_WORD_TABLES=repair: 0 tables
