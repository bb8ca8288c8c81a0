"""Byte-identity check for assembly: the same hits must give the same ``ContextPackage`` JSON.

Guards speed work on ``assembly`` (and on the sources it reads) that must not change any output. Two steps:

1. ``--hits OUT.json``: run retrieval once per question over both evaluation stores (the manuals set,
   ``data/eval-v4/manuals/folio`` with ``dev_questions.jsonl``, and the wide set) and save the hits:
   ``k=50`` as ``benchmarks/eval_quality.py`` asks, and ``k=200`` as ``bench_assembly.py --server-path``
   does. Retrieval is outside the check, so both sides read the same saved hits.
2. ``--packages HITS.json OUT.jsonl``: assemble every saved hit list through the server path
   (``Retriever.source_for`` + ``api.service.context.version_filenames`` + ``assemble``) with every variant of
   ``quality.folio_runs.FOLIO_VARIANTS`` at budgets 1000, 2000 and 4000 (``k=50``) and the server-path options
   (budget 1500, ``k=200``), twice over (cold caches, then warm), and write one ``model_dump_json()`` per line.
   ``--compare REF.jsonl`` then reports how many lines differ. Fields in ``ADDITIONS`` (documented additions
   to the item schema, e.g. ``ContextItem.lines``) are taken out of both sides before comparing and reported
   on their own: a line that differs only by an addition counts as identical, and the report says how many
   packages and items carry the addition. The packed text, tokens and budget must still be byte-identical.

``--store NAME DATA QUESTIONS`` (repeatable) replaces the two evaluation stores, e.g. a store of the
sample PDFs with the development questions on those documents.

Run from the checkout whose code is to be checked (``PYTHONPATH=<checkout>``)::

    python benchmarks/assembly_identity.py --hits /tmp/hits.json
    python benchmarks/assembly_identity.py --packages /tmp/hits.json /tmp/ref.jsonl          # unchanged code
    python benchmarks/assembly_identity.py --packages /tmp/hits.json /tmp/new.jsonl --compare /tmp/ref.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.quality.folio_runs import FOLIO_K, FOLIO_VARIANTS  # noqa: E402
from benchmarks.quality.questions import doc_id_for  # noqa: E402

EVAL = ROOT.parent / "shared" / "eval"
STORES = {
    "manuals": (ROOT / "data" / "eval-v4" / "manuals" / "folio", EVAL / "dev_questions.jsonl"),
    "wide": (ROOT / "data" / "eval-v4" / "wide" / "folio", EVAL / "wide" / "questions.jsonl"),
}
BUDGETS = (1000, 2000, 4000)
ADDITIONS = ("lines",)
"""Item fields added to the schema after a reference was written (``ContextItem.lines``, issue 23)."""
SERVER_K, SERVER_BUDGET = 200, 1500


def save_hits(out: str) -> None:
    from folio.ingest.storage.store import Store
    from folio.retrieval.query import SearchQuery
    from folio.retrieval.search import Retriever

    rows: list[dict[str, Any]] = []
    for name, (data, questions) in STORES.items():
        store = Store(str(data), recover=False)
        retriever = Retriever(store)
        have = {v.doc_id for v in store.list_versions()}
        for line in questions.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            q = json.loads(line)
            doc = doc_id_for(q["doc"])
            if doc not in have:
                continue
            for k in (FOLIO_K, SERVER_K):
                hits = retriever.search(SearchQuery(q["question"], doc_ids=[doc], k=k, strategy="hybrid"))
                rows.append({"store": name, "id": q["id"], "question": q["question"], "k": k,
                             "hits": [h.model_dump(mode="json") for h in hits]})
        print(f"{name}: {sum(r['store'] == name for r in rows)} hit lists", file=sys.stderr)
    Path(out).write_text(json.dumps(rows), encoding="utf-8")


def packages(hits_path: str) -> list[str]:
    try:
        from folio.api.service.context import version_filenames
    except ImportError:  # a checkout from before issue 32 (this file may check either side)
        from folio.api.service import version_filenames  # type: ignore[no-redef]
    from folio.assembly import AssemblyOptions, assemble
    from folio.ingest.storage.store import Store
    from folio.kernel.hit import Hit
    from folio.retrieval.search import Retriever

    rows = json.loads(Path(hits_path).read_text(encoding="utf-8"))
    stores = {name: Store(str(data), recover=False) for name, (data, _) in STORES.items()}
    retrievers = {name: Retriever(s) for name, s in stores.items()}
    out: list[str] = []
    for rnd in ("cold", "warm"):
        for row in rows:
            hits = [Hit.model_validate(h) for h in row["hits"]]
            if row["k"] == SERVER_K:
                cases = [("server", SERVER_BUDGET, {})]
            else:
                cases = [(v, b, o) for v, o in FOLIO_VARIANTS.items() for b in BUDGETS]
            for variant, budget, overrides in cases:
                store, retriever = stores[row["store"]], retrievers[row["store"]]
                opts = AssemblyOptions(budget=budget, tokenizer="cl100k_base", **overrides)
                pkg = assemble(row["question"], hits, retriever.source_for(hits), opts,
                               filenames=version_filenames(store))
                key = f"{rnd}/{row['store']}/{row['id']}/k{row['k']}/{variant}/{budget}"
                out.append(key + "\t" + pkg.model_dump_json())
    return out


def without_additions(line: str) -> tuple[str, int]:
    """``line`` (key, tab, package JSON) with the ``ADDITIONS`` taken out of every item, and how many items
    carried a non-empty addition."""
    key, _, body = line.partition("\t")
    pkg = json.loads(body)
    carried = 0
    for item in pkg.get("items", []):
        for name in ADDITIONS:
            if item.pop(name, None):
                carried += 1
    return key + "\t" + json.dumps(pkg, sort_keys=True), carried


def compare(lines: list[str], ref: list[str]) -> int:
    """Report identical, identical but for the additions, and differing packages; 1 when any differs."""
    same = [a == b for a, b in zip(lines, ref, strict=False)]
    diff: list[str] = []
    with_add = items_add = 0
    for a, b, eq in zip(lines, ref, same, strict=False):
        if eq:
            continue
        a2, n = without_additions(a)
        b2, _ = without_additions(b)
        if a2 == b2:
            with_add += 1
            items_add += n
        else:
            diff.append(a.split("\t", 1)[0])
    print(f"{len(lines)} packages compared with {len(ref)}: {sum(same)} identical, {with_add} identical but for "
          f"the additions {', '.join(ADDITIONS)} ({items_add} items carry them), {len(diff)} differ"
          f"{': ' + ', '.join(diff[:10]) if diff else ''}")
    return 1 if diff or len(lines) != len(ref) else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hits", metavar="OUT", help="retrieve and save the hits")
    ap.add_argument("--packages", nargs=2, metavar=("HITS", "OUT"), help="assemble the saved hits")
    ap.add_argument("--compare", metavar="REF", help="with --packages: compare with these packages")
    ap.add_argument("--store", nargs=3, action="append", metavar=("NAME", "DATA", "QUESTIONS"),
                    help="instead of the evaluation stores: this data dir with these questions (repeatable)")
    args = ap.parse_args()
    if args.store:
        STORES.clear()
        STORES.update({name: (Path(data), Path(questions)) for name, data, questions in args.store})
    if args.hits:
        save_hits(args.hits)
    if not args.packages:
        return 0
    lines = packages(args.packages[0])
    Path(args.packages[1]).write_text("\n".join(lines) + "\n", encoding="utf-8")
    if not args.compare:
        print(f"{len(lines)} packages written")
        return 0
    return compare(lines, Path(args.compare).read_text(encoding="utf-8").splitlines())


if __name__ == "__main__":
    sys.exit(main())
