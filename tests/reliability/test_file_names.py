"""A file name is shown, never obeyed (issue 31): a name with terminal escapes (ESC, other C0 and C1
controls) or bidi overrides was stored as it came and printed live by ``folio docs``, so a document
could clear the screen, retitle the terminal or show ``gnp.pdf`` as ``pdf.png``.

Names are cleaned when a version is stored (each such character becomes ``?``), and the CLI escapes
what it prints from a store written before that (``\\u001b``, ``\\u202e``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from benchmarks.odd_pdfs import valid_pdf
from folio.api.cli import main
from folio.api.http.app import create_app
from folio.ingest.pipeline import ingest_bytes
from folio.ingest.storage.store import Store
from tests.api.conftest import make_settings

# Clear the screen, set the window title (OSC ... BEL), a C1 CSI, then a right-to-left override.
HOSTILE = "evil\x1b[2J\x1b]0;pwned\x07\x9b31m\u202egnp.pdf"
CLEAN = "evil?[2J?]0;pwned??31m?gnp.pdf"
CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")


def test_a_name_with_escapes_is_stored_clean(tmp_path: Path) -> None:
    store = Store(tmp_path / "data")
    report = ingest_bytes(store, valid_pdf(1), filename=HOSTILE, doc_id="evil", ocr=False)
    assert report.filename == CLEAN
    assert [v.filename for v in store.list_versions("evil")] == [CLEAN]
    # Names in other scripts, and the joiners some of them need, are kept as they are.
    kept = "отчёт 報告 می\u200cخواهم.pdf"
    assert ingest_bytes(store, valid_pdf(2), filename=kept, doc_id="kept", ocr=False).filename == kept


def test_an_upload_with_escapes_in_its_name_is_stored_clean(tmp_path: Path) -> None:
    name = "evil\x1b[2J\x9b31m\u202egnp.pdf"  # (httpx sends a BEL in a multipart file name as %07)
    with TestClient(create_app(make_settings(tmp_path / "data"))) as client:
        resp = client.post(
            "/v1/documents", files={"file": (name, valid_pdf(1), "application/pdf")}, data={"doc_id": "x"}
        )
        assert resp.status_code == 200, resp.text
        assert resp.json()["filename"] == "evil?[2J?31m?gnp.pdf"
        assert client.get("/v1/documents/x").json()["filename"] == "evil?[2J?31m?gnp.pdf"


@pytest.mark.parametrize("json_out", [False, True])
def test_folio_docs_escapes_a_raw_name_of_an_older_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], json_out: bool
) -> None:
    data = tmp_path / "data"
    store = Store(data)
    ingest_bytes(store, valid_pdf(1), filename="plain.pdf", doc_id="evil", ocr=False)
    # What an older folio stored: the name as it came.
    store.versions.update(where="doc_id = 'evil'", values={"filename": HOSTILE})
    assert main(["docs", "--data", str(data), *(["--json"] if json_out else [])]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in CONTROLS), repr(out)
    assert "\\u001b[2J" in out and "gnp.pdf" in out
