"""Every kind of bad input raises its specific error with a one-line message."""

from __future__ import annotations

import pathlib

import pymupdf
import pytest

from folio.ingest.pdf.parse import parse_pdf
from folio.ingest.pdf.validate import open_pdf
from folio.kernel.errors import CorruptPDF, EmptyPDF, EncryptedPDF, LimitExceeded, NotAPDF

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "sample_pdfs"
GOOD = (SAMPLES / "support-policy-v1.pdf").read_bytes()


def _zero_page_pdf() -> bytes:
    """A hand-written, well-formed PDF whose page tree is empty (PyMuPDF refuses to save one)."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


def _encrypted() -> bytes:
    doc = pymupdf.open(stream=GOOD, filetype="pdf")
    return doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="secret")


@pytest.mark.parametrize(
    ("data", "kwargs", "error", "fragment"),
    [
        (b"", {}, NotAPDF, "empty"),
        (b"hello, world\n" * 10, {}, NotAPDF, "not a PDF"),
        (GOOD[: len(GOOD) // 3], {}, CorruptPDF, "corrupt"),
        (b"%PDF-1.7\n" + b"\x00garbage" * 50, {}, CorruptPDF, "corrupt"),
        (_zero_page_pdf(), {}, EmptyPDF, "no pages"),
        (GOOD, {"max_bytes": 100}, LimitExceeded, "bytes"),
        (GOOD, {"max_pages": 0}, LimitExceeded, "pages"),
        (_encrypted(), {}, EncryptedPDF, "password is required"),
        (_encrypted(), {"password": "wrong"}, EncryptedPDF, "wrong"),
    ],
)
def test_bad_input_raises_specific_error(
    data: bytes, kwargs: dict[str, object], error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error) as info:
        open_pdf(data, **kwargs)  # type: ignore[arg-type]
    msg = str(info.value)
    assert "\n" not in msg and "Traceback" not in msg
    assert fragment.lower() in msg.lower()
    # parse_pdf surfaces the same error.
    with pytest.raises(error):
        parse_pdf(data, doc_id="bad", filename="bad.pdf", assets_dir=None, **kwargs)  # type: ignore[arg-type]


def test_correct_password_opens_and_parses() -> None:
    doc = open_pdf(_encrypted(), password="secret")
    assert doc.page_count == 1
    parsed = parse_pdf(
        _encrypted(), doc_id="enc", filename="enc.pdf", assets_dir=None, password="secret", ocr=False
    )
    assert any("Escalation" in r.text for r in parsed.regions if r.kind == "section")
