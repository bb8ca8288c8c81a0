"""The grower of the scale benchmark (``benchmarks/scale.py``): a store grown from real parsed documents, each
copy a distinct document with its text and vectors varied.

Sources: the ready versions of existing folio stores (the evaluation stores under ``/work/data/eval``), read with
LanceDB read calls only (``open_table``, ``search``): nothing is written there. Each copy ``k`` of a source
version becomes a new document (doc id ``<source>-c<k>``, its own version id, file name and region ids) whose

- **text** goes through the copy's ``Variation``: a fraction of the vocabulary (default 15 % of the distinct
  words, so about 15 % of the running words) is swapped, each word for one of nearly the same corpus frequency
  (within ``window`` ranks), and every digit through a permutation of the ten digits. The substitution is a
  function of the word alone, so a page, its paragraphs and its sentences stay consistent with each other, and
  the term statistics BM25 sees keep the corpus's Zipf shape (a frequent word is replaced by a frequent word).
  Lengths are kept, so the character offsets in the regions' locators still point into the varied text;
- **vectors** are the source's MiniLM vectors plus Gaussian noise, renormalised. Re-embedding every copy costs
  about 1 s per 100 chunks on these 2 cores (days at 10⁶ pages), so the noise is calibrated instead: a sample
  of chunk texts and their varied forms is embedded with folio's encoder, and the noise level is set so that a
  perturbed vector has the same expected cosine to its source as the re-embedded varied text has
  (``calibrate``: for unit vectors in d dimensions, ``cos ≈ 1/sqrt(1 + d·σ²)``). The vectors keep the real
  topical structure of the corpus (clusters of similar filings) while no two copies share a vector.

Rows are written in the store's own row format (the schemas of ``folio.ingest.storage.schema``, every row tagged
with one bulk writer id) in large batched appends: regions, chunks and the collection's full-text table first,
then the versions rows as ``pending`` claims of this process, flipped to ``ready`` in one update per batch, as
``Store.commit_version`` does for one document. Images (page renders, figure crops) are not copied: the disk
figures are those of the LanceDB tables.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DIM = 384
_WORD = re.compile(r"[A-Za-z]{3,}")


@dataclass
class SourceDoc:
    """One ready source version: its versions row, its regions and its chunks (the ready writer's rows)."""

    row: dict[str, Any]
    regions: pa.Table
    chunks: pa.Table

    @property
    def pages(self) -> int:
        return int(self.row["pages"])


def load_sources(stores: list[Path]) -> list[SourceDoc]:
    """Every ready version of every store (LanceDB read calls only), in a fixed order."""
    import lancedb

    docs: list[SourceDoc] = []
    seen: set[tuple[str, str]] = set()  # a document in two stores (mmlb holds three of finance's filings) once
    for path in stores:
        db = lancedb.connect(str(path / "lancedb"))
        ready = [r for r in db.open_table("versions").search().limit(None).to_arrow().to_pylist()
                 if r["status"] == "ready"]
        regions = db.open_table("regions").search().limit(None).to_arrow()
        chunks = db.open_table("chunks").search().limit(None).to_arrow()
        for row in sorted(ready, key=lambda r: (r["doc_id"], r["version_id"])):
            if (row["doc_id"], row["version_id"]) in seen:
                continue
            seen.add((row["doc_id"], row["version_id"]))
            docs.append(SourceDoc(row, _rows_of(regions, row), _rows_of(chunks, row)))
    return docs


def _rows_of(table: pa.Table, row: dict[str, Any]) -> pa.Table:
    mask = pc.and_(
        pc.and_(pc.equal(table["doc_id"], row["doc_id"]), pc.equal(table["version_id"], row["version_id"])),
        pc.equal(table["writer"], row["writer"]),
    )
    return table.filter(mask)


def vocabulary(docs: list[SourceDoc], limit: int = 60_000) -> list[str]:
    """The sources' words (3+ letters, lower case) by corpus frequency, most frequent first."""
    counts: Counter[str] = Counter()
    for d in docs:
        for text in d.chunks["text"].to_pylist():
            counts.update(w.lower() for w in _WORD.findall(text or ""))
    return [w for w, n in counts.most_common(limit) if n > 1]


class Variation:
    """Copy ``k``'s text variation (module docstring): a word map over the vocabulary and a digit permutation."""

    def __init__(self, vocab: list[str], k: int, *, fraction: float = 0.15, window: int = 50) -> None:
        rng = np.random.default_rng(1_000 + k)
        by_length: dict[int, list[str]] = {}
        for w in vocab:  # most frequent first, so a word's index in its bucket is its frequency rank there
            by_length.setdefault(len(w), []).append(w)
        self.words: dict[str, str] = {}
        for bucket in by_length.values():
            n = len(bucket)
            swap = np.flatnonzero(rng.random(n) < fraction)
            offsets = rng.integers(1, window + 1, size=len(swap)) * rng.choice([-1, 1], size=len(swap))
            for i, off in zip(swap.tolist(), offsets.tolist(), strict=True):
                j = min(max(i + off, 0), n - 1)
                if j != i:
                    src, dst = bucket[i], bucket[j]
                    self.words.update({src: dst, src.capitalize(): dst.capitalize(), src.upper(): dst.upper()})
        digits = "".join(str(d) for d in rng.permutation(10))
        self.digits = str.maketrans("0123456789", digits)

    def _word(self, m: re.Match[str]) -> str:
        w = m.group()
        return self.words.get(w, w)

    def __call__(self, text: str | None) -> str | None:
        if text is None:
            return None
        return _WORD.sub(self._word, text).translate(self.digits)

    def column(self, values: pa.ChunkedArray | pa.Array) -> pa.Array:
        return pa.array([self(t) for t in values.to_pylist()], pa.string())


def calibrate(
    docs: list[SourceDoc], vocab: list[str], encode: Callable[[list[str]], np.ndarray], sample: int = 192
) -> dict[str, float]:
    """The noise level ``sigma`` that gives a perturbed vector the mean cosine to its source that re-embedding
    the varied text gives (module docstring), from ``sample`` chunk texts of 40+ characters."""
    rng = np.random.default_rng(7)
    texts = [t for d in docs for t in d.chunks["text"].to_pylist() if t and len(t) >= 40]
    picked = [texts[i] for i in rng.choice(len(texts), size=min(sample, len(texts)), replace=False)]
    varied = [Variation(vocab, k)(t) or "" for k, t in enumerate(picked)]
    a, b = _unit(encode(picked)), _unit(encode(varied))
    cos = float(np.mean(np.sum(a * b, axis=1)))
    sigma = float(np.sqrt(max(1.0 / cos**2 - 1.0, 1e-8) / DIM))
    check = _unit(a + rng.normal(0.0, sigma, a.shape))
    return {"reembed_cos_mean": round(cos, 4), "sigma": round(sigma, 5),
            "perturbed_cos_mean": round(float(np.mean(np.sum(a * check, axis=1))), 4), "sample": len(picked)}


def _unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    out: np.ndarray = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    return out


@dataclass
class Copy:
    """One copy's rows, ready to append."""

    version: dict[str, Any]
    regions: pa.Table
    chunks: pa.Table


def copy_key(src: SourceDoc, k: int) -> tuple[str, str]:
    """The doc id and version id of copy ``k`` of ``src``."""
    return f"{src.row['doc_id'][:110]}-c{k}", hashlib.sha256(f"{src.row['version_id']}:{k}".encode()).hexdigest()[:16]


def copy_doc(src: SourceDoc, k: int, variation: Variation, sigma: float, writer: str) -> Copy:
    """Copy ``k`` of ``src``: new ids, varied text, perturbed vectors, every row tagged with ``writer``."""
    old_doc, old_ver = src.row["doc_id"], src.row["version_id"]
    doc_id, version_id = copy_key(src, k)
    old_key, new_key = f"{old_doc}@{old_ver}", f"{doc_id}@{version_id}"
    stem = Path(src.row["filename"]).stem
    filename = f"{stem}-c{k}.pdf"

    def rekey(col: pa.ChunkedArray) -> pa.ChunkedArray:
        return pc.replace_substring(col, pattern=old_key, replacement=new_key)

    def common(t: pa.Table) -> dict[str, Any]:
        n = t.num_rows
        return {"region_id": rekey(t["region_id"]), "doc_id": pa.array([doc_id] * n, pa.string()),
                "version_id": pa.array([version_id] * n, pa.string()), "writer": pa.array([writer] * n, pa.string())}

    r = src.regions
    headings = pc.replace_substring(r["heading_path"], pattern=stem, replacement=f"{stem}-c{k}")
    regions = _replace(r, {**common(r), "text": variation.column(r["text"]), "parent_id": rekey(r["parent_id"]),
                           "section_id": rekey(r["section_id"]), "meta": rekey(r["meta"]), "heading_path": headings})
    c = src.chunks
    text = variation.column(c["text"])
    same = pc.equal(c["fts"], c["text"]).to_pylist()
    fts = pa.array([t if s else variation(f) for t, s, f in zip(text.to_pylist(), same, c["fts"].to_pylist(),
                                                                 strict=True)], pa.string())
    chunks = _replace(c, {**common(c), "text": text, "fts": fts, "vector": _perturbed(c["vector"], k, sigma)})
    report = json.loads(src.row["report"] or "{}")
    report.update(doc_id=doc_id, version_id=version_id, filename=filename)
    version = {**src.row, "doc_id": doc_id, "version_id": version_id, "filename": filename, "status": "pending",
               "report": json.dumps(report), "writer": writer, "retiring": None, "collection": "default",
               "counts": json.dumps({"chunks": c.num_rows, "chunks_text-default": c.num_rows,
                                     "regions": r.num_rows}, sort_keys=True)}
    return Copy(version, regions, chunks)


def _replace(table: pa.Table, columns: dict[str, Any]) -> pa.Table:
    for name, values in columns.items():
        table = table.set_column(table.schema.get_field_index(name), name, values)
    return table


def _perturbed(vectors: pa.ChunkedArray, k: int, sigma: float) -> pa.Array:
    v = vectors.combine_chunks().flatten().to_numpy().reshape(-1, DIM)
    rng = np.random.default_rng(10_000 + k)
    out = _unit(v + rng.normal(0.0, sigma, v.shape).astype(np.float32))
    return pa.FixedSizeListArray.from_arrays(pa.array(out.ravel(), pa.float32()), DIM)


def plan(docs: list[SourceDoc], start_copy: int = 0) -> Iterator[tuple[int, SourceDoc]]:
    """Copies in rounds: copy ``k`` of every source, then ``k + 1`` of every source, ... (an even mix of sets)."""
    k = start_copy
    while True:
        for d in docs:
            yield k, d
        k += 1


@dataclass
class Grower:
    """Appends copies to an open ``folio.ingest.storage.store.Store`` in batches (module docstring)."""

    store: Any
    docs: list[SourceDoc]
    vocab: list[str]
    sigma: float
    batch_rows: int = 150_000
    writer: str = field(default_factory=lambda: f"bulk-{uuid.uuid4().hex}")
    existing: set[tuple[str, str]] = field(default_factory=set)  # copies the store holds already (a resumed run)
    position: int = 0  # how far along the plan the copies are written
    stats: dict[str, float] = field(default_factory=lambda: {"rows": 0, "seconds": 0.0, "vary_s": 0.0})

    def grow_by(self, pages: int) -> dict[str, float]:
        """Append copies (skipping those the store holds) until they add at least ``pages`` pages; rows, time."""
        from folio.ingest.storage.claims import HOST, PROCESS_START
        from folio.ingest.storage.sql import fts_table

        t0 = time.perf_counter()
        pending: list[Copy] = []
        rows = added = 0
        variations: dict[int, Variation] = {}
        it = plan(self.docs)
        for _ in range(self.position):
            next(it)
        while added < pages:
            k, src = next(it)
            self.position += 1
            if copy_key(src, k) in self.existing:
                continue
            tv = time.perf_counter()
            variation = variations.setdefault(k, Variation(self.vocab, k))
            copy = copy_doc(src, k, variation, self.sigma, self.writer)
            copy.version.update(writer_pid=os.getpid(), writer_host=HOST, writer_start=PROCESS_START,
                                heartbeat=time.time(), created_at=time.time())
            self.stats["vary_s"] += time.perf_counter() - tv
            pending.append(copy)
            added += src.pages
            rows += copy.regions.num_rows + copy.chunks.num_rows
            if sum(c.chunks.num_rows for c in pending) >= self.batch_rows:
                self._flush(pending, fts_table("default"))
                pending = []
        if pending:
            self._flush(pending, fts_table("default"))
        seconds = time.perf_counter() - t0
        self.stats["rows"] += rows
        self.stats["seconds"] += seconds
        return {"rows": rows, "pages": added, "seconds": round(seconds, 1),
                "rows_per_s": round(rows / max(seconds, 1e-9))}

    def _flush(self, copies: list[Copy], text_table: str) -> None:
        from folio.ingest.storage.schema import CHUNK_TEXT_SCHEMA

        store = self.store
        regions = pa.concat_tables([c.regions for c in copies])
        chunks = pa.concat_tables([c.chunks for c in copies])
        text = store.database.open(text_table, CHUNK_TEXT_SCHEMA)
        for table, data in ((store.regions, regions), (store.chunks, chunks), (text, chunks)):
            table.add(data.select(table.schema.names).cast(table.schema))
        versions = pa.Table.from_pylist([c.version for c in copies], schema=store.versions.schema)
        store.versions.add(versions)
        store.versions.update(where=f"writer = '{self.writer}' AND status = 'pending'", values={"status": "ready"})
