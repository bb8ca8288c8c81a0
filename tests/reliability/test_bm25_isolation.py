"""BM25 scores depend only on what the caller may read (issue 31, item 7).

On c427992 one full-text index covered every collection, so its statistics (how many units hold a
word, how long units are on average) were the whole store's: collection B's score for "Kestrelwing"
fell from 6.45 to 4.53 once collection A ingested documents containing it, and a key of B could read
that off ``/v1/search``. Now each collection has its own full-text table and index
(``folio.ingest.storage.chunks``). A store of one collection scores exactly as before:
``benchmarks/retrieval_identity.py`` (how it was run is in docs/changelog.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from folio.api.keys import KeyRecord, hash_secret, write_keys
from folio.ingest.parse_supervisor import IngestLimits
from folio.ingest.pipeline import ingest_bytes
from folio.ingest.storage.sql import fts_table
from folio.ingest.storage.store import Store
from tests.api.conftest import make_settings

IN_PROCESS = IngestLimits(isolate=False)
QUERY = {"query": "Kestrelwing calibration interval", "strategy": "bm25", "k": 20}


def _pdf(sentences: list[str]) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(72, 72, 540, 720), " ".join(sentences), fontsize=11)
    return bytes(doc.tobytes())


B_TEXT = [
    "The Kestrelwing sensor is calibrated every ninety days.",
    "A calibration interval longer than that voids the warranty.",
    "Field teams log each calibration in the maintenance book.",
]


def _ingest(store: Store, collection: str, doc_id: str, sentences: list[str]) -> None:
    ingest_bytes(store, _pdf(sentences), filename=f"{doc_id}.pdf", doc_id=doc_id, ocr=False,
                 collection=collection, limits=IN_PROCESS)  # fmt: skip


def _scores(c: TestClient, key: str) -> list[dict[str, Any]]:
    resp = c.post("/v1/search", json=QUERY, headers={"X-API-Key": key})
    assert resp.status_code == 200, resp.text
    return [{"region_id": h["region_id"], "sources": h["sources"]} for h in resp.json()["data"]]


def test_another_collections_documents_do_not_move_a_collections_scores(tmp_path: Path) -> None:
    data = tmp_path / "data"
    keys = tmp_path / "keys.json"
    write_keys(keys, [KeyRecord(id="b", sha256=hash_secret("key-b"), collections=("beta",), access="read")])
    store = Store(data)
    _ingest(store, "beta", "b-manual", B_TEXT)
    with TestClient(create_app(make_settings(data, keys_file=str(keys)))) as c:
        before = _scores(c, "key-b")
        assert before and all(s["retriever"] == "bm25" for h in before for s in h["sources"])
        # Another writer (the CLI, say) puts the same rare word, many times, into collection A.
        for n in range(3):
            _ingest(store, "alpha", f"a-notes-{n}", [f"Kestrelwing note {n}: Kestrelwing Kestrelwing calibration."] * 8)
        after = _scores(c, "key-b")
    assert after == before  # the same hits, the same raw BM25 scores
    assert {t for t in store.table_names() if t.startswith("chunks_text-")} == {fts_table("alpha"), fts_table("beta")}


def test_a_store_from_before_the_collections_full_text_tables_gets_them_with_the_same_scores(tmp_path: Path) -> None:
    """Opening a data dir without them copies each chunk's text to its collection's table, in order."""
    data = tmp_path / "data"
    store = Store(data)
    _ingest(store, "default", "manual", B_TEXT)
    _ingest(store, "default", "notes", ["Kestrelwing calibration notes, one line."] * 4)
    with TestClient(create_app(make_settings(data))) as c:
        expected = c.post("/v1/search", json=QUERY).json()
    for name in store.table_names():
        if name.startswith("chunks_text-"):
            store.database.db.drop_table(name)  # what an older folio wrote: the chunks table alone
    reopened = Store(data)
    assert reopened.table_names().count(fts_table("default")) == 1
    with TestClient(create_app(make_settings(data))) as c:
        assert c.post("/v1/search", json=QUERY).json() == expected
