"""Byte-identity check for retrieval: every strategy, with tiny CLIP and ColPali models on, gives the same hits.

``assembly_identity.py`` saves hybrid text hits over the evaluation stores; this covers what it does not: the
``bm25``, ``dense`` and ``summary`` strategies, the CLIP and ColPali channels, page/kind filters, and a
``Retriever.refresh``. It runs offline on the sample PDFs, with tiny random models (``tests/retrieval/tiny_models``;
random but saved once, so both sides load the same weights). Run each step with ``PYTHONPATH=<checkout>`` of
the code to check (this file may come from either side), and compare the JSON files byte for byte::

    python benchmarks/retrieval_identity.py --models /tmp/ri/models                       # once
    python benchmarks/retrieval_identity.py --ingest /tmp/ri/models /tmp/ri/data-old       # old checkout
    python benchmarks/retrieval_identity.py --search /tmp/ri/models /tmp/ri/data-old /tmp/ri/old.json
    python benchmarks/retrieval_identity.py --search /tmp/ri/models /tmp/ri/data-old /tmp/ri/new.json   # new
    cmp /tmp/ri/old.json /tmp/ri/new.json

Ingesting with the new checkout and searching with the old one checks the writes the same way. Search on a copy
of the data folder when the two sides may differ in what they write on open. ``--extra`` ingests more PDFs
(each under its file name's stem), e.g. a few of the corpus, for a larger store.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # last: ``folio`` comes from PYTHONPATH, the checkout being checked

SAMPLES = ROOT / "sample_pdfs"
DOCUMENTS = (
    ("support-policy-v1.pdf", "policy"), ("support-policy-v2.pdf", "policy"), ("R-data-import-export.pdf", "rdata"),
)
QUERIES = (
    "response targets for priority one incidents", "What does page 2 say?", "How do I read a CSV file?",
    "Table 1 export formats", "support hours on weekends", "figure showing the data flow",
    "R connections and binary files",
    # the glossary expands these and the statement channel adds its list (with --extra filings)
    "What is the fixed asset turnover ratio?", "capital expenditure in the cash flow statement",
    "What does Figure 1 show?",  # a label the policy names: the label-reference channel adds its list
)
STRATEGIES = ("hybrid", "bm25", "dense", "summary")


def settings(models: Path) -> Any:
    from folio.settings import Settings

    return Settings(data="/nonexistent", clip_model=f"local-dir:{models / 'clip'}",
                    colpali_model=str(models / "colpali"), colpali_pool_factor=2)


def build_models(out: Path) -> None:
    from tests.retrieval.tiny_models import build_tiny_clip, build_tiny_colmodernvbert

    build_tiny_clip(out / "clip")
    build_tiny_colmodernvbert(out / "colpali")


def ingest(models: Path, data: Path, extra: Sequence[Path] = ()) -> None:
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store
    from folio.retrieval.visual import indexers_from_settings

    store = Store(data)
    indexers = indexers_from_settings(settings(models))
    for path, doc in [*((SAMPLES / name, doc) for name, doc in DOCUMENTS), *((p, p.stem.lower()) for p in extra)]:
        print(path.name, ingest_path(store, path, doc_id=doc, indexers=indexers, ocr=False).status)


def search(models: Path, data: Path, out: Path) -> None:
    from folio.ingest.storage.store import Store
    from folio.retrieval.query import SearchQuery
    from folio.retrieval.search import Retriever

    retriever = Retriever.from_settings(Store(data), settings(models))
    results: dict[str, Any] = {"status": retriever.status()}
    for rnd in ("first", "refreshed"):
        for q in QUERIES:
            for strategy in STRATEGIES:
                for k in (10, 60):
                    res = retriever.search_detailed(SearchQuery(q, k=k, strategy=strategy))  # type: ignore[arg-type]
                    results[f"{rnd}/{q}/{strategy}/{k}"] = {
                        "hits": [h.model_dump(mode="json") for h in res.hits], "retrievers": res.retrievers,
                        "notes": res.notes, "texts": retriever.texts_for(res.hits[:5]),
                    }
            filtered = SearchQuery(q, k=20, doc_ids=["policy"], pages=[1], kinds=["page", "sentence"])
            res = retriever.search_detailed(filtered)
            results[f"{rnd}/{q}/filtered"] = [h.model_dump(mode="json") for h in res.hits]
        retriever.refresh()
    out.write_text(json.dumps(results, indent=1, sort_keys=True), encoding="utf-8")
    print(f"{len(results) - 1} result lists written to {out}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", metavar="DIR", help="build the tiny models into DIR")
    ap.add_argument("--ingest", nargs=2, metavar=("MODELS", "DATA"), help="ingest the sample PDFs into DATA")
    ap.add_argument("--search", nargs=3, metavar=("MODELS", "DATA", "OUT"), help="search DATA, write OUT.json")
    ap.add_argument("--extra", nargs="*", default=[], metavar="PDF", help="with --ingest: more PDFs to ingest")
    args = ap.parse_args()
    if args.models:
        build_models(Path(args.models))
    if args.ingest:
        ingest(*map(Path, args.ingest), extra=[Path(p) for p in args.extra])
    if args.search:
        search(*map(Path, args.search))
    return 0


if __name__ == "__main__":  # the ingest's parser runs in a child process that imports this module
    sys.exit(main())
