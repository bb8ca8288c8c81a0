"""One carrier and one options object through the ingest (issue 32, item 4): the PDF is checked once, and no
stage reads a setting when the caller hands the options in."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import folio.ingest.pdf.parse as parse_mod
import folio.ingest.pdf.validate as validate_mod
import folio.ingest.pipeline as pipeline_mod
from folio.ingest.options import IngestOptions
from folio.ingest.parse_supervisor import IngestLimits
from folio.ingest.pipeline import IngestJob, IngestSource, ingest, ingest_bytes
from folio.ingest.storage.store import Store
from folio.kernel.errors import InvalidRequest, NotAPDF
from folio.kernel.model import PARSER_VERSION
from folio.settings import IngestSettings

IN_PROCESS = IngestLimits(isolate=False)  # the parse runs here, where the checks are counted


@pytest.fixture()
def policy(samples: Path) -> bytes:
    return (samples / "support-policy-v1.pdf").read_bytes()


def test_an_ingest_checks_the_pdf_once(
    tmp_path: Path, policy: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the pipeline checked the bytes, then the parse checked them again."""
    checks: list[int] = []
    real = validate_mod.open_pdf

    def counted(data: bytes, **kwargs: Any) -> Any:
        checks.append(len(data))
        return real(data, **kwargs)

    monkeypatch.setattr(validate_mod, "open_pdf", counted)
    monkeypatch.setattr(parse_mod, "open_pdf", counted)
    report = ingest_bytes(Store(tmp_path / "data"), policy, filename="policy.pdf", limits=IN_PROCESS, ocr=False)
    assert report.status == "created" and report.pages > 0
    assert checks == [len(policy)]


def test_no_stage_reads_a_setting_when_the_options_are_handed_in(
    tmp_path: Path, policy: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A setting that cannot be read fails whoever reads it: only the door without options does."""
    monkeypatch.setenv("FOLIO_WORD_TABLES", "sideways")
    monkeypatch.setenv("FOLIO_INGEST_TIMEOUT_S", "not a number")
    store = Store(tmp_path / "data")
    options = IngestOptions(ocr=False, limits=IN_PROCESS, word_tables="off")
    job = IngestJob.check(policy, filename="policy.pdf", options=options, collection="handbooks")
    assert (job.doc_id, job.collection, job.source.pdf.pages) == ("policy", "handbooks", 1)
    report = ingest(store, job)
    assert report.status == "created" and store.collection_of("policy") == "handbooks"
    assert ingest_bytes(store, policy, filename="policy.pdf", collection="handbooks", options=options).status == (
        "unchanged"
    )
    with pytest.raises(ValidationError, match="FOLIO_WORD_TABLES|FOLIO_INGEST_TIMEOUT_S"):
        ingest_bytes(store, policy, filename="policy.pdf", collection="handbooks")  # no options: read here


def test_the_source_is_checked_before_anything_is_stored(tmp_path: Path, policy: bytes) -> None:
    options = IngestOptions(limits=IN_PROCESS)
    with pytest.raises(InvalidRequest, match="invalid doc_id"):
        IngestSource.check(policy, filename="p.pdf", options=options, doc_id="../etc")
    with pytest.raises(NotAPDF):
        IngestSource.check(b"hello", filename="p.pdf", options=options)
    with pytest.raises(InvalidRequest, match="invalid collection"):
        IngestSource.check(policy, filename="p.pdf", options=options, collection="a b")
    assert not (tmp_path / "data").exists()


def test_the_job_carries_what_the_check_found_and_crosses_to_another_process(policy: bytes) -> None:
    """Issue 46: one typed job, checked once: its facts (page count, size, version id) travel with it, to a
    thread, the CLI or a Ray task (plain data: it pickles), and nothing downstream checks the PDF again."""
    import pickle

    from folio.kernel.model import version_id_for

    options = IngestOptions(ocr=False, limits=IN_PROCESS)
    job = IngestJob.check(policy, filename="Policy \x1b.pdf", options=options, doc_id="p", collection="c")
    assert (job.source.pdf.pages, len(job.source.pdf.data), job.source.version_id) == (
        1, len(policy), version_id_for(policy)
    )
    names = ("Policy ?.pdf", "Policy \x1b.pdf", "p", "c")
    assert (job.filename, job.received_name, job.doc_id, job.collection) == names
    assert pickle.loads(pickle.dumps(job)) == job
    assert job.with_options(reparse_outdated=False).options == replace(options, reparse_outdated=False)


def test_an_upload_names_no_file_when_it_is_empty() -> None:
    """The door checks an upload once (``upload=True``): an empty one is refused as it always was over REST."""
    options = IngestOptions(limits=IN_PROCESS)
    with pytest.raises(NotAPDF, match="no bytes received"):
        IngestJob.check(b"", filename="e.pdf", options=options, upload=True)
    with pytest.raises(NotAPDF, match="e.pdf is 0 bytes"):
        IngestJob.check(b"", filename="e.pdf", options=options)


def test_options_from_settings_with_changes() -> None:
    env = {"FOLIO_WORD_TABLES": "repair", "FOLIO_MAX_PAGES": "9", "FOLIO_INGEST_ISOLATE": "0"}
    settings = IngestSettings.from_env(env)
    options = IngestOptions.from_settings(settings, row_units=True)
    assert (options.word_tables, options.max_pages, options.limits.isolate) == ("repair", 9, False)
    assert options.row_units
    assert options.max_bytes == settings.max_upload_bytes


def test_a_version_stored_by_an_older_parser_is_parsed_again(
    tmp_path: Path, policy: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same bytes stored by an older parser are parsed again and replaced in place (same version id, the
    stored parser version updated), so an upgrade reaches documents already stored; then they are unchanged."""
    store = Store(str(tmp_path / "data"))
    options = IngestOptions(ocr=False)
    monkeypatch.setattr(pipeline_mod, "PARSER_VERSION", "0-old")
    first = ingest_bytes(store, policy, filename="policy.pdf", options=options)
    assert store.get_version(first.doc_id).parser_version == "0-old"
    monkeypatch.undo()

    kept = ingest_bytes(store, policy, filename="policy.pdf", options=replace(options, reparse_outdated=False))
    assert kept.status == "unchanged" and store.get_version(first.doc_id).parser_version == "0-old"

    again = ingest_bytes(store, policy, filename="policy.pdf", options=options)
    assert again.status == "created" and again.version_id == first.version_id
    assert any("parsed again: stored by parser 0-old" in w for w in again.warnings)
    assert store.get_version(first.doc_id).parser_version == PARSER_VERSION
    assert [v.version_id for v in store.list_versions(first.doc_id)] == [first.version_id]
    assert ingest_bytes(store, policy, filename="policy.pdf", options=options).status == "unchanged"
