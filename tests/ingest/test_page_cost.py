"""What one page can cost an ingest (issue 31, item 3).

On c427992 a 137 KB one-page PDF of 60,000 words took two minutes to embed in the server process, and
the embedding ran past ``FOLIO_INGEST_TIMEOUT_S``. Now the page's searchable units are cut to
``MAX_PAGE_UNITS`` (the report says so), the document's embedded tokens to ``MAX_DOCUMENT_TOKENS``,
and the embedding runs under the document's deadline. The time and memory before and after are
``benchmarks/bench_wordy_page.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.odd_pdfs import wordy_page
from folio.ingest.parse_supervisor import IngestLimits
from folio.ingest.pipeline import ingest_bytes
from folio.ingest.storage.sql import SEARCH_KINDS
from folio.ingest.storage.store import Store
from folio.ingest.unit_budget import MAX_PAGE_UNITS, budget_units
from folio.kernel.errors import IngestTimeout
from tests.assembly.builders import make_doc

IN_PROCESS = IngestLimits(timeout_s=None, isolate=False)


def _chunk_pages(store: Store) -> list[int]:
    return [int(p) for p in store.chunks.to_arrow().column("page").to_pylist()]


def test_a_page_of_thousands_of_sentences_is_searchable_up_to_its_limit(tmp_path: Path) -> None:
    store = Store(tmp_path / "data")
    report = ingest_bytes(store, wordy_page(6000, 5), filename="wordy.pdf", ocr=False, limits=IN_PROCESS)
    regions = list(store.region_index("wordy", report.version_id).regions())
    sentences = [r for r in regions if r.kind == "sentence" and r.first_page == 1]
    assert len(sentences) > 2 * MAX_PAGE_UNITS  # every sentence is kept as a region ...
    pages = _chunk_pages(store)
    assert pages.count(1) == MAX_PAGE_UNITS  # ... but only so many are searchable
    assert pages.count(2) == len([r for r in regions if r.first_page == 2 and r.kind in SEARCH_KINDS])
    assert report.status == "partial"
    (issue,) = [i for i in report.issues if i.page == 1]
    assert f"over the limit of {MAX_PAGE_UNITS}" in issue.message
    assert store.version_report("wordy", report.version_id)["issues"][0]["page"] == 1  # stored with the version


def test_the_embedding_runs_under_the_documents_deadline(tmp_path: Path) -> None:
    """Parsed in process (no parse deadline), the deadline passes while embedding: the ingest fails as a
    parse past its deadline does, and nothing of the version stays."""
    store = Store(tmp_path / "data")
    with pytest.raises(IngestTimeout, match=r"embedding took longer than 0\.2 s .* embedding \d+ of"):
        ingest_bytes(
            store,
            wordy_page(6000, 5),
            filename="wordy.pdf",
            ocr=False,
            limits=IngestLimits(timeout_s=0.2, isolate=False),
        )
    assert store.list_versions(include_pending=True) == []
    assert store.chunks.count_rows() == 0


def test_the_documents_embedded_tokens_are_bounded() -> None:
    sentences = [f"Clause {n} says that the supplier answers within {n} days of a request." for n in range(40)]
    regions = [r for r in make_doc("terms", [("Terms", [sentences])]) if r.kind == "sentence"]
    everything = budget_units(regions)
    assert everything.units == regions and not everything.warnings and not everything.issues
    cut = budget_units(regions, document_tokens=200)
    assert 0 < len(cut.units) < len(regions) and cut.units == regions[: len(cut.units)]
    (warning,) = cut.warnings
    assert f"the last {len(regions) - len(cut.units)} units, from page 1 on, are not searchable" in warning
