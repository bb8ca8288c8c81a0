"""Structure-aware fuzzing of PDF ingest (issue 44): Hypothesis builds PDFs with PyMuPDF, then mutates some.

    .venv/bin/python benchmarks/fuzz_pdf.py [--examples N] [--out PATH]

``pdfs()`` draws a document (``DocSpec``): pages of odd sizes (1 pt to 14,400 pt, extreme aspect ratios) and
rotations, each with text in the base-14 and CJK fonts (any Unicode, tiny to huge sizes, invisible render
mode), text boxes, tables drawn with lines, images, vector shapes, annotations (notes, free text,
highlights, links), a table of contents; or many light pages. Then, for about half of them, a byte-level
mutation of the valid file: truncated, bytes overwritten, a range cut out or repeated, or a PDF token
replaced (``xref``, ``/Count``, ``/Length``, ``obj``, ``stream`` ...): broken xref tables, lengths and
objects.

Each document goes through the ingest an upload runs (``Folio.check_upload`` and the job runner, without
HTTP) and through ``POST /v1/documents`` (``check``). What must hold: no 5xx and no uncaught exception
(a job that crashes is a 500 ``internal_error``); a refusal is a 4xx in the one error shape and both paths
refuse with the same code; nothing half-visible: a refused document leaves no version and no rows, an
accepted one is listed, every version of it ready, its row counts what its version recorded, with regions.

The suite runs a bounded number (``tests/ingest/test_fuzz_pdf.py``); this is the longer run. Results:
``benchmarks/results/fuzz-pdf.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import itertools
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "benchmarks" / "results" / "fuzz-pdf.md"
FONTS = ["helv", "tiro", "cour", "symb", "zadb", "Times-Bold", "Courier-Oblique", "china-s", "japan", "korea"]
# tokens a byte mutation may replace, and what with (broken xref, counts, lengths, objects, streams)
TOKENS = [
    b"xref",
    b"startxref",
    b"trailer",
    b"/Count",
    b"/Length",
    b"/Kids",
    b"/Type",
    b"obj",
    b"endobj",
    b"stream",
    b"endstream",
    b"/Root",
    b"/Font",
    b"/MediaBox",
    b"/Filter",
    b"R",
]
REPLACEMENTS = [
    b"",
    b"0",
    b"-1",
    b"999999999",
    b"4294967297",
    b"1e308",
    b"/Null",
    b"(",
    b"<<",
    b">>",
    b"[",
    b"xref",
    b"obj",
    b"\x00\xff",
    b"%%EOF",
    b"/Kids [1 0 R]",
    b"/Count -5",
]


# ------------------------------------------------------------------------------------------------ strategies
@dataclass(frozen=True)
class PageSpec:
    width: float
    height: float
    rotation: int
    items: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class DocSpec:
    pages: tuple[PageSpec, ...]
    toc: bool  # an outline entry per page
    title: str | None  # the metadata title
    labels: tuple[str, str, int] | None  # page labels: prefix, style, first number
    mutation: tuple[Any, ...]  # ("none",) or (kind, ...args)

    @property
    def kind(self) -> str:
        """What the case is, for the tables: the mutation if any, else what the pages hold."""
        if self.mutation[0] != "none":
            return str(self.mutation[0])
        if len(self.pages) > 12:
            return "many pages"
        kinds = {item[0] for page in self.pages for item in page.items}
        if not kinds:
            return "blank pages"
        return "+".join(sorted(kinds)) if len(kinds) <= 2 else "mixed"


text_value = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120) | st.sampled_from(
    [
        "Annual report 2023",
        "Revenue 1,234.5 (12%)",
        "مرحبا بالعالم",
        "你好，世界",
        "ﬁnance ﬂow",
        "a\u0301e\u0308",
        "\t\n\r",
        "x" * 400,
        "Table 1: results",
        "1. Introduction",
    ]
)
coord = st.floats(-50, 1200, allow_nan=False)
size = st.floats(0.5, 200, allow_nan=False)

text_item = st.tuples(
    st.just("text"), coord, coord, size, st.sampled_from(FONTS), text_value, st.sampled_from([0, 3, 7])
)
box_item = st.tuples(
    st.just("textbox"), coord, coord, st.floats(1, 800), st.floats(1, 800), text_value, size, st.integers(0, 3)
)
table_item = st.tuples(
    st.just("table"),
    coord,
    coord,
    st.integers(1, 8),
    st.integers(1, 6),
    st.floats(8, 160),
    st.floats(6, 60),
    st.lists(text_value, max_size=12),
)
image_item = st.tuples(
    st.just("image"),
    coord,
    coord,
    st.floats(1, 600),
    st.floats(1, 600),
    st.integers(1, 64),
    st.integers(1, 64),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
shape_item = st.tuples(
    st.just("shape"), st.lists(st.tuples(coord, coord), min_size=2, max_size=8), st.booleans(), st.floats(0, 20)
)
annot_item = st.tuples(
    st.just("annot"),
    st.sampled_from(["note", "freetext", "highlight", "link", "square"]),
    coord,
    coord,
    st.floats(1, 400),
    st.floats(1, 200),
    text_value,
)
items = st.lists(st.one_of(text_item, box_item, table_item, image_item, shape_item, annot_item), max_size=8)

odd_size = st.one_of(st.floats(200, 1200), st.sampled_from([1.0, 3.0, 72.0, 14400.0]), st.floats(1, 14400))
page = st.builds(PageSpec, odd_size, odd_size, st.sampled_from([0, 90, 180, 270]), items.map(tuple))
light_page = st.builds(
    PageSpec,
    st.just(612.0),
    st.just(792.0),
    st.sampled_from([0, 90]),
    st.lists(text_item, min_size=1, max_size=2).map(tuple),
)

mutation = st.one_of(
    st.just(("none",)),
    st.tuples(st.just("truncated"), st.floats(0, 1)),
    st.tuples(
        st.just("bytes overwritten"),
        st.lists(st.tuples(st.floats(0, 1), st.binary(min_size=1, max_size=8)), min_size=1, max_size=6),
    ),
    st.tuples(st.just("range cut"), st.floats(0, 1), st.integers(1, 400)),
    st.tuples(st.just("range repeated"), st.floats(0, 1), st.integers(1, 400)),
    st.tuples(st.just("token replaced"), st.sampled_from(TOKENS), st.sampled_from(REPLACEMENTS), st.integers(0, 5)),
)
few_pages = st.lists(page, min_size=1, max_size=4)
documents = st.one_of(few_pages, few_pages, few_pages, st.lists(light_page, min_size=13, max_size=40))
labels = st.none() | st.tuples(text_value, st.sampled_from(["D", "r", "R", "a", "A", ""]), st.integers(-5, 10**6))
pdfs = st.builds(
    DocSpec, documents.map(tuple), st.booleans(), st.none() | text_value, labels, st.just(("none",)) | mutation
)


# -------------------------------------------------------------------------------------------------- building
@functools.cache
def _font(name: str) -> Any:
    """A PyMuPDF font, loaded once (the CJK ones are megabytes: loading one per text took seconds)."""
    import pymupdf

    return pymupdf.Font(name)


def _write(page: Any, at: tuple[float, float], text: str, style: tuple[str, float, int]) -> None:
    """Text through a ``TextWriter`` with a cached font (``insert_text`` measures every glyph of the font on
    each call: seconds for a CJK one); ``style`` is the font, its size and the render mode (3: invisible)."""
    import pymupdf

    font, fontsize, mode = style
    writer = pymupdf.TextWriter(page.rect)
    writer.append(at, text, font=_font(font), fontsize=fontsize)
    writer.write_text(page, render_mode=mode)


def _text(page: Any, item: tuple[Any, ...]) -> None:
    _, x, y, fontsize, font, text, mode = item
    _write(page, (x, y), text, (font, fontsize, mode))


def _textbox(page: Any, item: tuple[Any, ...]) -> None:
    import pymupdf

    _, x, y, w, h, text, fontsize, align = item
    writer = pymupdf.TextWriter(page.rect)
    writer.fill_textbox(pymupdf.Rect(x, y, x + w, y + h), text, font=_font("helv"), fontsize=fontsize, align=align)
    writer.write_text(page)


def _table(page: Any, item: tuple[Any, ...]) -> None:
    _, x, y, rows, cols, cw, ch, cells = item
    for r in range(rows + 1):
        page.draw_line((x, y + r * ch), (x + cols * cw, y + r * ch))
    for c in range(cols + 1):
        page.draw_line((x + c * cw, y), (x + c * cw, y + rows * ch))
    for (r, c), text in zip(itertools.product(range(rows), range(cols)), cells, strict=False):
        _write(page, (x + c * cw + 2, y + r * ch + ch * 0.7), text[:40], ("helv", max(1.0, ch * 0.5), 0))


def _image(page: Any, item: tuple[Any, ...]) -> None:
    import numpy as np
    import pymupdf

    _, x, y, w, h, pw, ph, seed, alpha = item
    pixels = np.random.default_rng(seed).integers(0, 256, (ph, pw, 4 if alpha else 3), dtype=np.uint8)
    pix = pymupdf.Pixmap(pymupdf.csRGB, pw, ph, pixels.tobytes(), alpha)
    page.insert_image(pymupdf.Rect(x, y, x + w, y + h), pixmap=pix)


def _shape(page: Any, item: tuple[Any, ...]) -> None:
    _, points, closed, width = item
    page.draw_polyline(points + points[:1] if closed else points, width=width, fill=(0.8, 0.8, 0.8) if closed else None)


def _annot(page: Any, item: tuple[Any, ...]) -> None:
    import pymupdf

    _, kind, x, y, w, h, text = item
    rect = pymupdf.Rect(x, y, x + w, y + h)
    if kind == "note":
        page.add_text_annot(rect.tl, text)
    elif kind == "freetext":
        page.add_freetext_annot(rect, text)
    elif kind == "highlight":
        page.add_highlight_annot(rect)
    elif kind == "square":
        page.add_rect_annot(rect)
    else:
        page.insert_link({"kind": pymupdf.LINK_URI, "from": rect, "uri": "https://example.invalid/" + text[:20]})


DRAW = {"text": _text, "textbox": _textbox, "table": _table, "image": _image, "shape": _shape, "annot": _annot}


def build(spec: DocSpec) -> bytes:
    """The PDF bytes of ``spec``: built with PyMuPDF, then mutated. An item PyMuPDF itself refuses (a rectangle
    it finds empty, a text it cannot place) is left out: the fuzzer is after what folio does with files."""
    import pymupdf

    doc = pymupdf.open()
    for n, p in enumerate(spec.pages):
        page = doc.new_page(width=p.width, height=p.height)
        for item in p.items:
            with contextlib.suppress(ValueError, RuntimeError, TypeError):
                DRAW[item[0]](page, item)
        with contextlib.suppress(ValueError, RuntimeError):
            page.set_rotation(p.rotation)
        if spec.toc:
            with contextlib.suppress(ValueError, RuntimeError):
                doc.set_toc(doc.get_toc() + [[1, f"Section {n + 1}", n + 1]])
    _document_parts(doc, spec)
    data: bytes = doc.tobytes(garbage=1, deflate=bool(len(spec.pages) % 2))
    return mutate(data, spec.mutation)


def _document_parts(doc: Any, spec: DocSpec) -> None:
    """The metadata title and page labels, and the fonts cut to the glyphs used."""
    with contextlib.suppress(ValueError, RuntimeError):
        if spec.title is not None:
            doc.set_metadata({"title": spec.title})
        if spec.labels is not None:
            prefix, style, first = spec.labels
            doc.set_page_labels([{"startpage": 0, "prefix": prefix, "style": style, "firstpagenum": first}])
        doc.subset_fonts()


def mutate(data: bytes, how: tuple[Any, ...]) -> bytes:
    """``data`` with one byte-level mutation applied (``("none",)``: as it is)."""
    kind, args = how[0], how[1:]
    at = int(args[0] * len(data)) if args and isinstance(args[0], float) else 0
    if kind == "truncated":
        return data[:at]
    if kind == "bytes overwritten":
        out = bytearray(data)
        for frac, chunk in args[0]:
            i = int(frac * len(out))
            out[i : i + len(chunk)] = chunk
        return bytes(out)
    if kind == "range cut":
        return data[:at] + data[at + args[1] :]
    if kind == "range repeated":
        return data[: at + args[1]] + data[at:]
    if kind == "token replaced":
        token, new, nth = args
        spots = [i for i in range(len(data)) if data.startswith(token, i)]
        if spots:
            i = spots[nth % len(spots)]
            return data[:i] + new + data[i + len(token) :]
    return data


# ------------------------------------------------------------------------------------------- the two paths
@dataclass
class Outcome:
    """What one path did with one document: its HTTP status and error code (``""`` when accepted)."""

    status: int
    code: str = ""
    problems: list[str] = field(default_factory=list)


def ingest_direct(folio: Any, data: bytes, doc_id: str) -> Outcome:
    """The ingest an upload runs, without HTTP: the upload check, then the job on the job runner."""
    from folio.api.errors import status_for
    from folio.kernel.errors import FolioError

    try:
        checked = folio.check_upload(data, filename=f"{doc_id}.pdf", doc_id=doc_id, collection="default")
    except FolioError as exc:
        return Outcome(status_for(exc), exc.code)
    except Exception as exc:  # noqa: BLE001 - what the route would turn into a 500: a finding
        return Outcome(500, "uncaught", [f"check_upload raised {type(exc).__name__}: {str(exc)[:200]}"])
    job = folio.submit_ingest(checked)
    if not job.finished.wait(600):
        return Outcome(504, "timeout", ["the ingest job did not finish in 600 s"])
    if job.status == "failed":
        error = job.error or {}
        return Outcome(job.http_status, str(error.get("code", "")), [])
    return Outcome(200)


def upload(client: Any, data: bytes, doc_id: str) -> Outcome:
    """``POST /v1/documents`` (``wait=true``): the status, and the error's code in the one shape."""
    resp = client.post(
        "/v1/documents", files={"file": (f"{doc_id}.pdf", io.BytesIO(data), "application/pdf")}, data={"doc_id": doc_id}
    )
    if resp.status_code < 400:
        return Outcome(resp.status_code)
    body = resp.json()
    err = body.get("error", {}) if isinstance(body, dict) else {}
    shape_ok = (
        set(body) == {"error"}
        and err.get("code")
        and err.get("message")
        and (err.get("request_id") == resp.headers.get("x-request-id"))
    )
    found = [] if shape_ok else [f"REST {resp.status_code} not in the error shape: {resp.text[:200]}"]
    return Outcome(resp.status_code, str(err.get("code", "")), found)


def visible(store: Any, doc_id: str) -> dict[str, Any]:
    """What a reader sees of ``doc_id``: its versions (every status) and its rows per table."""
    versions = [r for r in store.versions.search().limit(None).to_arrow().to_pylist() if r["doc_id"] == doc_id]
    rows: Counter[str] = Counter()
    for table in store.version_tables():
        got = table.search().where(f"doc_id = '{doc_id}'").select(["version_id"]).limit(None).to_arrow()
        rows[table.name] = got.num_rows
    return {"versions": versions, "rows": rows}


def visibility_problems(store: Any, doc_id: str, outcome: Outcome) -> list[str]:
    """Nothing half-visible: a refusal leaves no version and no row; an acceptance is ready and complete."""
    seen = visible(store, doc_id)
    if outcome.status >= 400:
        left = {k: n for k, n in seen["rows"].items() if n}
        if seen["versions"] or left:
            return [f"{doc_id} refused ({outcome.code}) but left {len(seen['versions'])} versions, rows {left}"]
        return []
    statuses = sorted({v["status"] for v in seen["versions"]})
    if statuses != ["ready"]:
        return [f"{doc_id} accepted but its versions are {statuses}"]
    recorded = sum(int(v["regions"] or 0) for v in seen["versions"])
    if not recorded or seen["rows"]["regions"] != recorded:
        return [f"{doc_id} accepted with {seen['rows']['regions']} region rows, {recorded} recorded"]
    return []


def check(client: Any, data: bytes, name: str) -> tuple[Outcome, list[str]]:
    """One document through both paths (doc ids ``d-<name>`` and ``r-<name>``): the REST outcome and every
    problem found."""
    folio = client.app.state.folio
    direct = ingest_direct(folio, data, f"d-{name}")
    rest = upload(client, data, f"r-{name}")
    found = direct.problems + rest.problems
    for path, outcome in (("direct", direct), ("REST", rest)):
        if outcome.status >= 500:
            found.append(f"{path}: {outcome.status} {outcome.code}")
    if (direct.status >= 400) != (rest.status >= 400) or direct.code != rest.code:
        found.append(f"paths disagree: direct {direct.status} {direct.code}, REST {rest.status} {rest.code}")
    found += visibility_problems(folio.store, f"d-{name}", direct) + visibility_problems(folio.store, f"r-{name}", rest)
    return rest, found


@contextlib.contextmanager
def server(data: Path) -> Iterator[Any]:
    """The real app over ``data`` (no keys), in a ``TestClient`` so that its lifespan runs."""
    from fastapi.testclient import TestClient

    from folio.api.http.app import create_app
    from folio.settings import Settings

    settings = Settings(data=str(data), ocr=False, allowed_hosts=["testserver"])
    with TestClient(create_app(settings)) as client:
        yield client


# ---------------------------------------------------------------------------------------------- the runner
@dataclass
class Tally:
    cases: Counter[str] = field(default_factory=Counter)  # kind -> cases
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)  # (kind, code or "accepted") -> cases
    problems: dict[str, tuple[str, DocSpec]] = field(default_factory=dict)  # problem -> (kind, first spec)


def run(client: Any, examples: int, tally: Tally) -> None:
    """``examples`` Hypothesis documents through both paths, recorded in ``tally`` (nothing raised)."""
    from hypothesis import HealthCheck, Phase, given, settings

    counter = itertools.count()

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(spec=pdfs)
    def one(spec: DocSpec) -> None:
        n = next(counter)
        outcome, found = check(client, build(spec), f"fuzz{n}")
        tally.cases[spec.kind] += 1
        tally.outcomes[(spec.kind, outcome.code or "accepted")] += 1
        for problem in found:
            tally.problems.setdefault(problem, (spec.kind, spec))
        if n % 10 == 0:
            print(f"{n} cases, {len(tally.problems)} problems", flush=True)

    one()


def report(tally: Tally, examples: int, seconds: float) -> str:
    lines = [
        "# PDF fuzzing",
        "",
        f"`python benchmarks/fuzz_pdf.py --examples {examples}`: {sum(tally.cases.values())} generated PDFs, each "
        f"through the upload's ingest (no HTTP) and `POST /v1/documents`; {seconds:.0f} s.",
        "",
        "| kind | cases | accepted | refused (code: cases) |",
        "|---|---:|---:|---|",
    ]
    for kind, n in sorted(tally.cases.items(), key=lambda kv: -kv[1]):
        codes = {c: m for (k, c), m in tally.outcomes.items() if k == kind}
        refused = ", ".join(f"`{c}`: {m}" for c, m in sorted(codes.items()) if c != "accepted")
        lines.append(f"| {kind} | {n} | {codes.get('accepted', 0)} | {refused} |")
    lines += ["", "## Findings", ""]
    lines += [f"- ({kind}) {p}\n\n  `{spec!r:.1500}`" for p, (kind, spec) in tally.problems.items()] or ["None."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--examples", type=int, default=200, help="generated PDFs (each ingested twice)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-pdf-"))
    tally = Tally()
    started = time.perf_counter()
    try:
        with server(tmp / "data") as client:
            run(client, args.examples, tally)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = report(tally, args.examples, time.perf_counter() - started)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
