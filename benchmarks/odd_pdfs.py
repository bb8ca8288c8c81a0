"""Odd, broken and hostile PDFs built in code, for the ingest fuzzing harness and the limits tests.

``odd_pdfs()`` maps a file name to its bytes. Most are written by hand (``raw_pdf``) so that the
damage is exactly what the name says; a few use PyMuPDF to build a valid file first. None needs
anything outside this repository, and the whole set builds in a few seconds.
"""

from __future__ import annotations

import os
import random
import zlib
from collections.abc import Callable, Sequence

_PAGE_TEXT = (
    "Support policy. Customers on the standard plan get answers within two business days. "
    "Priority customers get answers within four hours, every day of the year. "
    "Refunds are issued within thirty days of a purchase when the product does not work as described. "
)


def raw_pdf(objects: Sequence[bytes], *, root: int = 1, xref: bool = True) -> bytes:
    """A PDF whose object ``i`` (1-based) is ``objects[i-1]``, with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets: list[int] = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    start = len(out)
    if xref:
        out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
        out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root {root} 0 R >>\nstartxref\n{start}\n%%EOF\n".encode()
    return bytes(out)


def stream(entries: str, data: bytes) -> bytes:
    return f"<< {entries} /Length {len(data)} >>\nstream\n".encode() + data + b"\nendstream"


def one_page(
    content: bytes,
    resources: str = "<< >>",
    extra: Sequence[bytes] = (),
    page_extra: str = "",
    box: str = "0 0 612 792",
) -> bytes:
    """One page with ``content``; ``extra`` objects are numbered from 5 on."""
    page = f"<< /Type /Page /Parent 2 0 R /MediaBox [{box}] /Resources {resources} /Contents 4 0 R {page_extra}>>"
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        page.encode(),
        stream("", content),
        *extra,
    ]
    return raw_pdf(objs)


_TEXT_X, _TEXT_Y = 72, 720  # where the text starts (PDF points, origin bottom-left)
_TEXT_SIZE = 11  # font size, points; the leading is 1.3 times it
_TEXT_WIDTH = 90  # characters per line at most


def _text_ops(text: str, *, mode: int = 0) -> bytes:
    """Content-stream operators that show ``text`` in Helvetica (``/F1``) from the top left of a letter page,
    wrapped at ``_TEXT_WIDTH`` characters; ``mode`` is the text render mode (3: invisible)."""
    x, y, size, width = _TEXT_X, _TEXT_Y, _TEXT_SIZE, _TEXT_WIDTH
    words = text.split()
    lines: list[str] = []
    cur = ""
    for w in words:
        if len(cur) + len(w) + 1 > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    lines.append(cur)
    esc = [ln.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for ln in lines]
    body = " ".join(f"({ln}) Tj T*" for ln in esc)
    return f"BT /F1 {size} Tf {mode} Tr {size * 1.3:.1f} TL {x} {y} Td {body} ET".encode()


_HELV = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
_FONT_RES = "<< /Font << /F1 5 0 R >> >>"
_TEXT_PAGE = f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources {_FONT_RES} /Contents 4 0 R >>".encode()


def text_pdf(paragraphs: int = 6) -> bytes:
    return one_page(_text_ops(_PAGE_TEXT * paragraphs), _FONT_RES, [_HELV])


def valid_pdf(pages: int = 3) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    for k in range(pages):
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 540, 720), f"Section {k + 1}. " + _PAGE_TEXT * 4, fontsize=11)
    return bytes(doc.tobytes())


def wordy_page(words: int = 60_000, sentence_words: int = 20, seed: int = 1) -> bytes:
    """One page of ``words`` words in tiny type (a period every ``sentence_words`` words on average), plus
    an ordinary second page: the issue-31 file was a 137 KB one-page PDF of 60,000 words."""
    import pymupdf

    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(300)]
    text = " ".join(rng.choice(vocab) + ("." if rng.random() < 1 / sentence_words else "") for _ in range(words))
    text = ". ".join(part.strip().capitalize() for part in text.split(". "))
    doc = pymupdf.open()
    side = max(612.0, 8.0 * words**0.5)  # room for every word at 2 pt
    doc.new_page(width=side, height=side).insert_textbox(pymupdf.Rect(10, 10, side - 10, side - 10), text, fontsize=2)
    doc.new_page().insert_textbox(pymupdf.Rect(72, 72, 540, 720), "Section 2. " + _PAGE_TEXT * 4, fontsize=11)
    return bytes(doc.tobytes(garbage=3, deflate=True))


def repaired_pdf() -> bytes:
    """A valid file whose ``startxref`` points at nothing: MuPDF repairs it on open."""
    data = text_pdf(3)
    head, _, tail = data.rpartition(b"startxref\n")
    return head + b"startxref\n" + b"999999" + tail[tail.index(b"\n") :]


def no_xref_pdf() -> bytes:
    """No cross-reference table and no ``startxref`` target at all (repaired by scanning objects)."""
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
        + _FONT_RES.encode()
        + b" /Contents 4 0 R >>",
        stream("", _text_ops(_PAGE_TEXT * 3)),
        _HELV,
    ]
    return raw_pdf(objs, xref=False)


def encrypted_pdf() -> bytes:
    import pymupdf

    doc = pymupdf.open(stream=valid_pdf(1), filetype="pdf")
    return bytes(doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner"))


def image_bomb(side: int = 30000) -> bytes:
    """A small file (under 1 MB) holding a ``side`` x ``side`` grey image (900 MB decoded at 30000)."""
    co = zlib.compressobj(9)
    chunk = b"\x00" * (1 << 24)
    left = side * side
    parts: list[bytes] = []
    while left > 0:
        n = min(left, len(chunk))
        parts.append(co.compress(chunk[:n]))
        left -= n
    parts.append(co.flush())
    img = stream(
        f"/Type /XObject /Subtype /Image /Width {side} /Height {side} /ColorSpace /DeviceGray "
        "/BitsPerComponent 8 /Filter /FlateDecode",
        b"".join(parts),
    )
    return one_page(b"q 500 0 0 500 50 100 cm /Im0 Do Q", "<< /XObject << /Im0 5 0 R >> >>", [img])


def slow_vector_page(rects: int = 200_000) -> bytes:
    """One page of ``rects`` tiny stroked rectangles: seconds of MuPDF time, a few MB of file."""
    ops = [f"{(i % 500) * 1.1 + 20:.1f} {(i // 500) % 700 + 50} 0.8 0.8 re S" for i in range(rects)]
    return one_page("\n".join(ops).encode())


BROCHURE_SLOW_TEXT = "Campus map. The observatory library opens at eight every morning, weekends included."


def slow_table_brochure(pages: int = 3, slow: int = 2, grid: tuple[int, int] = (80, 160)) -> bytes:
    """Text pages, one of which (1-based ``slow``) also carries a ruled grid of ``grid`` cells with
    ``BROCHURE_SLOW_TEXT`` above it: PyMuPDF's ``find_tables`` spends seconds on that grid (3 s for
    80 x 160 here) while the file stays a few KB. The shape of the brochure of issue 20."""
    import pymupdf

    doc = pymupdf.open()
    for k in range(1, pages + 1):
        page = doc.new_page(width=612, height=792)
        if k != slow:
            page.insert_textbox(pymupdf.Rect(72, 72, 540, 720), f"Section {k}. " + _PAGE_TEXT * 2, fontsize=11)
            continue
        page.insert_textbox(pymupdf.Rect(40, 20, 572, 80), BROCHURE_SLOW_TEXT, fontsize=11)
        shape = page.new_shape()
        nx, ny = grid
        x0, y0, x1, y1 = 40.0, 90.0, 572.0, 770.0
        for i in range(nx + 1):
            shape.draw_line((x0 + (x1 - x0) * i / nx, y0), (x0 + (x1 - x0) * i / nx, y1))
        for j in range(ny + 1):
            shape.draw_line((x0, y0 + (y1 - y0) * j / ny), (x1, y0 + (y1 - y0) * j / ny))
        shape.finish(width=0.3)
        shape.commit()
    return bytes(doc.tobytes())


def text_then_slow_vector_page(rects: int = 500_000) -> bytes:
    """A text page, then ``slow_vector_page(rects)``: its ``get_cdrawings`` is one C call of seconds."""
    import pymupdf

    doc = pymupdf.open(stream=valid_pdf(1), filetype="pdf")
    doc.insert_pdf(pymupdf.open(stream=slow_vector_page(rects), filetype="pdf"))
    return bytes(doc.tobytes())


def noise_scan(width: int = 1654, height: int = 2338, seed: int = 1) -> bytes:
    """A scanned-looking page that is all speckle: the worst case for Tesseract."""
    rng = random.Random(seed)
    samples = bytes(0 if rng.random() < 0.4 else 255 for _ in range(width * height))
    img = stream(
        f"/Type /XObject /Subtype /Image /Width {width} /Height {height} /ColorSpace /DeviceGray "
        "/BitsPerComponent 8 /Filter /FlateDecode",
        zlib.compress(samples, 6),
    )
    return one_page(b"q 595 0 0 842 0 0 cm /Im0 Do Q", "<< /XObject << /Im0 5 0 R >> >>", [img], box="0 0 595 842")


def text_scan(pages: int = 2, width: int = 1654, height: int = 2338) -> bytes:
    """Image-only pages of rendered text, ``width`` x ``height`` pixels (A4 at 200 dpi by default)."""
    import pymupdf

    src = pymupdf.open()
    out = pymupdf.open()
    for k in range(pages):
        page = src.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(50, 50, 545, 800), f"Part {k + 1}. " + _PAGE_TEXT * 7, fontsize=10)
        pix = page.get_pixmap(matrix=pymupdf.Matrix(width / 595, height / 842), colorspace=pymupdf.csGRAY)
        scan = out.new_page(width=595, height=842)
        scan.insert_image(scan.rect, stream=pix.tobytes("png"))
    return bytes(out.tobytes())


def type3_text() -> bytes:
    """Text in a Type3 font whose glyphs are filled boxes (no ToUnicode): extractable only as codes."""
    procs = {c: stream("", b"600 0 0 0 500 700 d1 0 0 500 700 re f") for c in "abcdefghijklmnopqrstuvwxyz"}
    names = sorted(procs)
    first = 5
    font = (
        "<< /Type /Font /Subtype /Type3 /FontBBox [0 0 600 700] /FontMatrix [0.001 0 0 0.001 0 0] "
        f"/CharProcs << {' '.join(f'/{c} {first + 1 + i} 0 R' for i, c in enumerate(names))} >> "
        f"/Encoding << /Type /Encoding /Differences [97 {' '.join('/' + c for c in names)}] >> "
        f"/FirstChar 97 /LastChar 122 /Widths [{' '.join(['600'] * 26)}] >>"
    ).encode()
    text = _text_ops(_PAGE_TEXT.lower().replace(".", "") * 3)
    return one_page(text, "<< /Font << /F1 5 0 R >> >>", [font, *(procs[c] for c in names)])


def invisible_text() -> bytes:
    """Render mode 3 (invisible) text over nothing: like an OCR layer whose image is missing."""
    return one_page(_text_ops(_PAGE_TEXT * 6, mode=3), _FONT_RES, [_HELV])


def form_xobject_text() -> bytes:
    """All text inside a form XObject drawn by the page."""
    form = stream(
        "/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 6 0 R >> >>",
        _text_ops(_PAGE_TEXT * 6),
    )
    return one_page(b"q 1 0 0 1 0 0 cm /Fm0 Do Q", "<< /XObject << /Fm0 5 0 R >> >>", [form, _HELV])


def _background(width: int = 850, height: int = 1100) -> bytes:
    """A light page-sized grey image (a paper texture, a slide background, a scan under its OCR layer)."""
    rng = random.Random(3)
    samples = bytes(235 + rng.randrange(20) for _ in range(width * height))
    return stream(
        f"/Type /XObject /Subtype /Image /Width {width} /Height {height} /ColorSpace /DeviceGray "
        "/BitsPerComponent 8 /Filter /FlateDecode",
        zlib.compress(samples, 6),
    )


def text_on_background() -> bytes:
    """Ordinary visible text over a page-sized background image."""
    ops = b"q 612 0 0 792 0 0 cm /Im0 Do Q " + _text_ops(_PAGE_TEXT * 6)
    return one_page(ops, "<< /Font << /F1 5 0 R >> /XObject << /Im0 6 0 R >> >>", [_HELV, _background()])


def searchable_scan() -> bytes:
    """A scan with an OCR text layer: a page-sized image under invisible (render mode 3) text."""
    ops = b"q 612 0 0 792 0 0 cm /Im0 Do Q " + _text_ops(_PAGE_TEXT * 6, mode=3)
    return one_page(ops, "<< /Font << /F1 5 0 R >> /XObject << /Im0 6 0 R >> >>", [_HELV, _background()])


def rotated_page() -> bytes:
    return one_page(_text_ops(_PAGE_TEXT * 6), _FONT_RES, [_HELV], page_extra="/Rotate 90 ")


def per_char_text() -> bytes:
    """Every character placed by its own ``Td``, no space characters (spaces are gaps only)."""
    ops = ["BT /F1 11 Tf"]
    y = 720.0
    text = _PAGE_TEXT * 4
    for line in [text[i : i + 80] for i in range(0, len(text), 80)][:40]:
        x = 72.0
        for ch in line:
            if ch != " ":
                esc = ch.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
                ops.append(f"1 0 0 1 {x:.1f} {y:.1f} Tm ({esc}) Tj")
            x += 6.2
        y -= 14
    ops.append("ET")
    return one_page(" ".join(ops).encode(), _FONT_RES, [_HELV])


def tj_kerned_text() -> bytes:
    """Words separated only by large ``TJ`` kerning offsets, no space glyphs."""
    words = (_PAGE_TEXT * 4).split()
    lines = [words[i : i + 12] for i in range(0, len(words), 12)][:40]
    body = []
    for k, ln in enumerate(lines):
        arr = " -350 ".join(f"({w})" for w in ln)
        body.append(f"1 0 0 1 72 {720 - 14 * k} Tm [{arr}] TJ")
    return one_page(f"BT /F1 11 Tf {' '.join(body)} ET".encode(), _FONT_RES, [_HELV])


def deeply_nested(depth: int = 50_000) -> bytes:
    nest = b"[" * depth + b"]" * depth
    return one_page(_text_ops(_PAGE_TEXT), _FONT_RES, [_HELV], page_extra=f"/Junk {nest.decode()} ")


def javascript_pdf() -> bytes:
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R /OpenAction 6 0 R /Names << /JavaScript << /Names [(x) 6 0 R] >> >> >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
        + _FONT_RES.encode()
        + b" /Contents 4 0 R >>",
        stream("", _text_ops(_PAGE_TEXT * 3)),
        _HELV,
        b"<< /S /JavaScript /JS (app.alert\\('hi'\\); while\\(true\\){}) >>",
    ]
    return raw_pdf(objs)


def giant_page_box() -> bytes:
    return one_page(_text_ops(_PAGE_TEXT * 3), _FONT_RES, [_HELV], box="0 0 14400 14400")


def many_pages(pages: int = 400) -> bytes:
    return valid_pdf(pages)


def huge_page_count(pages: int = 5000) -> bytes:
    """A page tree that claims ``pages`` pages, all the same page object (tiny file)."""
    kids = " ".join(["3 0 R"] * pages)
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        stream("", b""),
    ]
    return raw_pdf(objs)


def page_tree_loop() -> bytes:
    """A page tree whose node lists itself as a kid."""
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        stream("", b""),
    ]
    return raw_pdf(objs)


def truncated() -> bytes:
    data = valid_pdf(3)
    return data[: len(data) // 3]


def wrong_header() -> bytes:
    return b"\x89PNG\r\n\x1a\n" + text_pdf(1)[9:]


def garbage(n: int = 50_000, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(n)


def pdf_header_garbage(n: int = 50_000, seed: int = 8) -> bytes:
    return b"%PDF-1.7\n" + random.Random(seed).randbytes(n)


def bad_stream() -> bytes:
    """A content stream that claims Flate but holds junk, and a wrong ``/Length``."""
    body = b"<< /Filter /FlateDecode /Length 99999 >>\nstream\n" + os.urandom(2000) + b"\nendstream"
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            body,
        ]
    )


GENERATORS: dict[str, Callable[[], bytes]] = {
    "zero-byte.pdf": lambda: b"",
    "garbage.pdf": garbage,
    "wrong-header.pdf": wrong_header,
    "pdf-header-garbage.pdf": pdf_header_garbage,
    "truncated.pdf": truncated,
    "repaired-startxref.pdf": repaired_pdf,
    "no-xref.pdf": no_xref_pdf,
    "encrypted.pdf": encrypted_pdf,
    "huge-page-count.pdf": huge_page_count,
    "page-tree-loop.pdf": page_tree_loop,
    "giant-page-box.pdf": giant_page_box,
    "deeply-nested.pdf": deeply_nested,
    "image-bomb.pdf": image_bomb,
    "javascript.pdf": javascript_pdf,
    "many-pages.pdf": many_pages,
    "bad-stream.pdf": bad_stream,
    "slow-vector-page.pdf": slow_vector_page,
    "noise-scan.pdf": noise_scan,
    "text-scan-2p.pdf": text_scan,
    "type3-text.pdf": type3_text,
    "invisible-text.pdf": invisible_text,
    "form-xobject-text.pdf": form_xobject_text,
    "rotated-page.pdf": rotated_page,
    "text-on-background.pdf": text_on_background,
    "searchable-scan.pdf": searchable_scan,
    "per-char-text.pdf": per_char_text,
    "tj-kerned-text.pdf": tj_kerned_text,
}


def odd_pdfs(names: Sequence[str] | None = None) -> dict[str, bytes]:
    """File name → bytes for every generator (or only ``names``)."""
    return {name: GENERATORS[name]() for name in (names or GENERATORS)}
