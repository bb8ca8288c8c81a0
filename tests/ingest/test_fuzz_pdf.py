"""Structure-aware fuzzing of PDF ingest (issue 44): Hypothesis builds PDFs with PyMuPDF (text in many fonts,
text boxes, tables drawn with lines, images, shapes, annotations, odd page sizes and rotations, page labels,
many pages) and mutates half of them byte by byte (truncated, bytes overwritten, ranges cut or repeated, PDF
tokens such as ``xref``, ``/Count`` or ``/Kids`` replaced): ``benchmarks/fuzz_pdf.py``, which also runs the
longer version.

Each document goes through the ingest an upload runs (``Folio.check_upload`` and the job runner) and through
``POST /v1/documents``. No 5xx, no uncaught exception, a refusal in the one error shape with the same code on
both paths, and nothing half-visible: a refused document leaves no version and no rows, an accepted one is
ready with its regions. Then the installed ``folio ingest`` takes a folder of mutated files: one line per
file, never a traceback. Bounded for CI (derandomized, so a failure reproduces; no shrinking: each case is
two ingests).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings

from benchmarks import fuzz_pdf
from benchmarks.fuzz_pdf import DocSpec, PageSpec

pytestmark = pytest.mark.slow

EXAMPLES = 14  # generated documents, each ingested twice, plus the explicit ones below
FOLIO = Path(sys.executable).with_name("folio")
TEXT_PAGE = PageSpec(612.0, 792.0, 0, (("text", 72.0, 72.0, 11.0, "helv", "Quarterly revenue grew 12%", 0),))
TABLE_PAGE = PageSpec(595.0, 842.0, 90, (("table", 40.0, 60.0, 4, 3, 90.0, 18.0, ["Item", "2023", "2024"] * 4),))


def spec(mutation: tuple[Any, ...], pages: tuple[PageSpec, ...] = (TEXT_PAGE, TABLE_PAGE)) -> DocSpec:
    return DocSpec(pages, toc=True, title="Report", labels=None, mutation=mutation)


# Always run, whatever Hypothesis draws: the broken cross-reference table, a page count past the pages, a
# page tree that lists itself after its first page (issue 44, item 5: ``2 0 obj <</Type/Pages/Count 2/Kids[4 0
# R 2 0 R ...]>>``, a 500 and a traceback before), one that lists the catalog, a file cut in half, a stream
# length that lies.
EXPLICIT = [
    spec(("token replaced", b"xref", b"", 0)),
    spec(("token replaced", b"/Count 2", b"/Count 999999999", 0)),
    spec(("token replaced", b"/Kids[4 0 R", b"/Kids[4 0 R 2 0 R", 0)),
    spec(("token replaced", b"/Kids", b"/Kids [1 0 R]", 0)),
    spec(("truncated", 0.5)),
    spec(("token replaced", b"/Length", b"/Length 999999999", 1)),
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with fuzz_pdf.server(Path(tmp_path_factory.mktemp("fuzz-pdf")) / "data") as c:
        yield c


COUNTER = iter(range(10**6))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(spec=fuzz_pdf.pdfs)
@example(spec=EXPLICIT[0])
@example(spec=EXPLICIT[1])
@example(spec=EXPLICIT[2])
@example(spec=EXPLICIT[3])
@example(spec=EXPLICIT[4])
@example(spec=EXPLICIT[5])
def test_a_fuzzed_pdf_is_ingested_whole_or_refused_cleanly(client: Any, spec: DocSpec) -> None:
    outcome, problems = fuzz_pdf.check(client, fuzz_pdf.build(spec), f"t{next(COUNTER)}")
    assert outcome.status < 500
    assert not problems, f"{problems}\n{spec!r:.3000}"


def test_the_cli_ingests_mutated_pdfs_without_a_traceback(tmp_path: Path) -> None:
    """``folio ingest`` over a folder of broken files: exit 1 (some failed), one report line per file."""
    assert FOLIO.is_file(), f"{FOLIO} is missing: scripts/setup.sh installs the folio command"
    folder = tmp_path / "pdfs"
    folder.mkdir()
    for n, case in enumerate(EXPLICIT + [spec(("truncated", 0.0)), spec(("range cut", 0.0, 9))]):
        (folder / f"fuzz{n}.pdf").write_bytes(fuzz_pdf.build(case))
    env = {**os.environ, "FOLIO_OCR": "0"}
    env.pop("FOLIO_URL", None)
    done = subprocess.run(
        [str(FOLIO), "ingest", str(folder), "--data", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    assert done.returncode in (0, 1), out
    assert all(f"fuzz{n}.pdf" in out for n in range(len(EXPLICIT) + 2)), out
