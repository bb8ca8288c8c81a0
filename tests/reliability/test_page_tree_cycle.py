"""A PDF whose page tree has a cycle (issue 44, item 5): ``/Kids [3 0 R 2 0 R]``, the page tree's root listing
itself as its second kid. MuPDF counts two pages and loads the first; the second is "cycle in page tree". The
parse met that on page 2, its page-failure handler loaded the page again to learn its size, and the second error
escaped the parser: a 500 over REST and a traceback from ``folio ingest``. Now ``open_pdf`` finds every page in
the tree before anything is queued or written: a 422 ``corrupt_pdf`` and one line from the CLI, nothing stored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from folio.ingest.pdf.parse import PagePlan, _first_passes
from folio.ingest.pdf.tables.base import table_reader
from folio.ingest.pdf.validate import open_pdf
from folio.ingest.storage.store import Store
from folio.kernel.errors import CorruptPDF
from tests.api.conftest import assert_error, make_settings

FOLIO = Path(sys.executable).with_name("folio")
PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>"
TEXT = b"<< /Length 44 >>\nstream\nBT /F1 12 Tf 72 720 Td (Hello, tree) Tj ET\nendstream"


def hand_built_pdf(objects: list[bytes]) -> bytes:
    """A PDF written byte by byte (PyMuPDF would not save a broken tree): ``objects`` are objects 1, 2, ...
    with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


# The root (2) lists a page (3) and itself: two pages by /Count, the first one fine.
CYCLE = hand_built_pdf(
    [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>", PAGE, TEXT]
)
# The cycle one level down: the root's second kid (5) lists a page (6) and the root.
DEEP_CYCLE = hand_built_pdf(
    [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 3 >>",
        PAGE,
        TEXT,
        b"<< /Type /Pages /Parent 2 0 R /Kids [6 0 R 2 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 5 0 R /MediaBox [0 0 612 792] >>",
    ]
)


def test_open_pdf_refuses_a_page_tree_with_a_cycle() -> None:
    doc = pymupdf.open(stream=CYCLE, filetype="pdf")  # the issue's case: two pages, the first one loads
    assert doc.page_count == 2 and "Hello, tree" in doc.load_page(0).get_text()
    for data, page in ((CYCLE, 2), (DEEP_CYCLE, 3)):
        with pytest.raises(CorruptPDF) as info:
            open_pdf(data)
        message = str(info.value)
        assert message == f"corrupt PDF: the page tree is broken at page {page} (code=7: cycle in page tree)"


def _folio(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert FOLIO.is_file(), f"{FOLIO} is missing: scripts/setup.sh installs the folio command"
    env = {**os.environ, "FOLIO_OCR": "0"}
    env.pop("FOLIO_URL", None)
    return subprocess.run([str(FOLIO), *args], capture_output=True, text=True, cwd=cwd, timeout=300, env=env)


def _stored(data: Path) -> list[Any]:
    return list(Store(data, recover=False).list_versions(include_pending=True))


def test_folio_ingest_says_one_line_and_stores_nothing(tmp_path: Path) -> None:
    pdf = tmp_path / "loop.pdf"
    pdf.write_bytes(CYCLE)
    data = tmp_path / "data"
    out = _folio("ingest", str(pdf), "--data", str(data), cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
    assert out.stderr.splitlines() == [
        "loop.pdf: failed: corrupt PDF: the page tree is broken at page 2 (code=7: cycle in page tree)"
    ]
    assert _stored(data) == []


def test_upload_is_a_422_and_stores_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with TestClient(create_app(make_settings(data))) as client:
        for wait in ("true", "false"):
            resp = client.post(f"/v1/documents?wait={wait}", files={"file": ("loop.pdf", CYCLE, "application/pdf")})
            err = assert_error(resp, 422, "corrupt_pdf")
            assert "cycle in page tree" in err["message"]
        assert client.get("/v1/jobs").json()["count"] == 0  # refused before a job was queued
        assert client.get("/v1/documents").json()["count"] == 0
    assert _stored(data) == []


class _PageTwoFails:
    """A document whose page 2 fails every time it is loaded, as the cycle's did (the rest is a real document)."""

    def __init__(self, doc: pymupdf.Document) -> None:
        self.doc = doc
        self.page_count = doc.page_count

    def load_page(self, i: int) -> pymupdf.Page:
        if i == 1:
            raise RuntimeError("code=7: cycle in page tree")
        return self.doc.load_page(i)


def test_a_page_that_fails_twice_is_an_issue_not_a_crash() -> None:
    """The parse's own guard, for a page ``open_pdf`` let through that still fails: the failure handler loaded
    the page again for its size, and that second error escaped the parse. Now it is the page's issue, the page
    keeps US Letter size and the other pages are parsed."""
    good = pymupdf.open()
    for _ in range(3):
        good.new_page(width=500, height=700).insert_text((72, 72), "A page of text")
    doc: Any = _PageTwoFails(good)
    pages, issues = _first_passes(doc, None, None, PagePlan(None, {}, table_reader("repair")))
    assert [i.page for i in issues] == [2] and "cycle in page tree" in issues[0].message
    assert [(p.width, p.height) for p in pages] == [(500, 700), (612, 792), (500, 700)]
    assert pages[0].blocks and pages[2].blocks and not pages[1].blocks
