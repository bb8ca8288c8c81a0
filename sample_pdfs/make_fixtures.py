"""Generate the support-policy fixtures deterministically: ``python sample_pdfs/make_fixtures.py``.

v1 and v2 differ only in the wording of the exception sentence in section 2.1. Metadata dates and
the document id are fixed and the file is saved without compression variance, so the bytes are
identical on every run with the same PyMuPDF version.
"""

from __future__ import annotations

import pathlib

import pymupdf

HERE = pathlib.Path(__file__).parent
EXCEPTIONS = {
    1: "Exception: incidents reported outside business hours are acknowledged by the next business day.",
    2: "Exception: incidents reported on public holidays are acknowledged within eight hours instead.",
}


def build(version: int) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    y = 72.0

    def text(s: str, size: float = 10.5, bold: bool = False, width: float = 450) -> None:
        nonlocal y
        font = "hebo" if bold else "helv"
        rect = pymupdf.Rect(72, y, 72 + width, y + 200)
        rest = page.insert_textbox(rect, s, fontsize=size, fontname=font)
        used = 200 - rest
        y += used + size * 0.8

    text("Support Policy", 20, True)
    text("1 Scope", 14, True)
    text("This policy describes how the support team responds to incidents reported by customers. "
         "It applies to all production services. It does not cover feature requests.")
    text("2 Priority-one incidents", 14, True)
    text("A priority-one incident is a complete outage of a production service. Such incidents are handled "
         "before any other work.")
    text("2.1 Response targets", 12, True)
    text("The on-call engineer must acknowledge a priority-one incident within 30 minutes. "
         "The acknowledgement is sent by e-mail and by phone. Updates follow every hour until resolution. "
         + EXCEPTIONS[version])
    # Ruled table: severity / response / owner.
    rows = [("Severity", "Response", "Owner"), ("P1", "30 minutes", "On-call engineer"),
            ("P2", "4 hours", "Support team"), ("P3", "2 business days", "Product team")]
    x = [72.0, 192.0, 332.0, 492.0]
    top = y + 14
    rh = 18.0
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            page.insert_text((x[j] + 4, top + i * rh + 13), cell, fontsize=10, fontname="hebo" if i == 0 else "helv")
    shape = page.new_shape()
    for i in range(len(rows) + 1):
        shape.draw_line((x[0], top + i * rh), (x[-1], top + i * rh))
    for xv in x:
        shape.draw_line((xv, top), (xv, top + len(rows) * rh))
    shape.finish(color=(0, 0, 0), width=0.8)
    shape.commit()
    y = top + len(rows) * rh + 16
    text("3 Escalation", 14, True)
    text("If a target is missed, the incident is escalated along the path shown below.")
    # Vector diagram: three boxes joined by arrows.
    shape = page.new_shape()
    labels = ["Engineer", "Team lead", "Director"]
    bx = [90.0, 250.0, 410.0]
    by = y + 10
    for xv, _label in zip(bx, labels, strict=True):
        shape.draw_rect(pymupdf.Rect(xv, by, xv + 100, by + 40))
    shape.finish(color=(0, 0, 0.6), fill=(0.85, 0.9, 1.0), width=1)
    for a in (190.0, 350.0):
        shape.draw_line((a, by + 20), (a + 60, by + 20))
        shape.draw_polyline([(a + 52, by + 15), (a + 60, by + 20), (a + 52, by + 25)])
    shape.finish(color=(0, 0, 0), width=1)
    shape.commit()
    for xv, label in zip(bx, labels, strict=True):
        page.insert_text((xv + 12, by + 24), label, fontsize=10, fontname="helv")
    y = by + 52
    text("Figure 1: Escalation path", 9.5)
    doc.set_toc([[1, "1 Scope", 1], [1, "2 Priority-one incidents", 1], [2, "2.1 Response targets", 1],
                 [1, "3 Escalation", 1]])
    stamp = "D:20240101000000Z"
    doc.set_metadata({"title": "Support Policy", "author": "folio fixtures", "creator": "make_fixtures.py",
                      "producer": "PyMuPDF", "creationDate": stamp, "modDate": stamp})
    return doc.tobytes(garbage=3, deflate=True, no_new_id=True)


def main() -> None:
    for v in (1, 2):
        (HERE / f"support-policy-v{v}.pdf").write_bytes(build(v))


if __name__ == "__main__":
    main()
