"""A version's metadata in the store (issue 48, item 2): written under the version's claim into the version-scoped
``metadata`` table, read back typed, matched leaf by leaf by LanceDB, kept by a re-parse, checked by
``folio check`` and removed with its version."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from folio.ingest.pipeline import ingest_path
from folio.ingest.storage.store import Store
from folio.kernel.errors import InvalidRequest
from folio.kernel.metadata import FilterLeaf, check_metadata, parse_filter

META = {"company": "Acme", "year": 2021, "filed": "2021-03-01", "ratio": 0.25, "audited": False}


def test_written_read_matched_checked_and_deleted(tmp_path: Path, samples: Path) -> None:
    store = Store(tmp_path / "data")
    rep = ingest_path(store, samples / "support-policy-v1.pdf", doc_id="acme", ocr=False, metadata=META)
    key = ("acme", rep.version_id)
    assert store.version_metadata([key]) == {key: META}
    assert store.metadata_matches(FilterLeaf(field="filed", op="gte", value="2021-01-01")) == {key}
    assert store.metadata_matches(FilterLeaf(field="ratio", op="lt", value=0.5)) == {key}
    assert store.metadata_matches(FilterLeaf(field="audited", value=False)) == {key}
    assert store.metadata_matches(FilterLeaf(field="filed", value="2021-03-01x")) == set()  # a string, not a date
    assert store.check()["ok"], store.check()
    # the same bytes again, other metadata: unchanged, and so is the metadata
    again = ingest_path(store, samples / "support-policy-v1.pdf", doc_id="acme", ocr=False, metadata={"year": 1})
    assert again.status == "unchanged" and store.version_metadata([key]) == {key: META}
    store.delete_document("acme")
    assert store.version_metadata([key]) == {}
    assert store.metadata_matches(FilterLeaf(field="company", value="Acme")) == set()
    assert store.table("metadata").count_rows() == 0  # type: ignore[union-attr]


def test_an_aborted_ingest_leaves_no_metadata(tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "data")

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("commit failed")

    monkeypatch.setattr(store, "commit_version", boom)
    with pytest.raises(RuntimeError):
        ingest_path(store, samples / "support-policy-v1.pdf", doc_id="acme", ocr=False, metadata=META)
    assert store.table("metadata").count_rows() == 0  # type: ignore[union-attr]


def test_values_are_typed_and_bounded() -> None:
    assert check_metadata({"d": "2024-02-29", "s": "2023-02-29"}) == {"d": date(2024, 2, 29), "s": "2023-02-29"}
    for bad in ({"x": float("inf")}, {"x": 2**60}, {"1x": 1}, {"x": [1]}, {"x": "y" * 513}, "not an object"):
        with pytest.raises(InvalidRequest):
            check_metadata(bad)
    with pytest.raises(InvalidRequest, match="between"):
        parse_filter({"field": "x", "op": "between", "value": ["2020-01-01", 5]})
    assert parse_filter({"field": "x", "op": "between", "value": [1, 2.5]}) is not None
