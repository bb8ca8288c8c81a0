"""Tokens per page: the stored page text against the compact page text that assembly sends
(``folio.assembly.expansion.pagetext``), over every page with text in a folio data directory.

    .venv/bin/python benchmarks/page_tokens.py DATA_DIR [--tokenizer cl100k_base] [--show DOC_PREFIX PAGE]

Prints pages, mean tokens per page both ways and their ratio, the median per-page ratio, and the same for
pages that hold a table region. ``--show`` prints one page's compact text.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict


def main(argv: list[str] | None = None) -> int:
    from folio.assembly.budget import get_counter
    from folio.assembly.expansion.pagetext import compact_page
    from folio.ingest.storage.store import Store

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="a folio data directory (an ingested store)")
    ap.add_argument("--tokenizer", default="cl100k_base")
    ap.add_argument("--show", nargs=2, metavar=("DOC_PREFIX", "PAGE"), help="print one page's compact text")
    a = ap.parse_args(argv)
    count = get_counter(a.tokenizer).memo()
    store = Store(a.data)
    stored = compact = 0
    ratios: list[float] = []
    tables = [0, 0, 0]
    for v in store.list_versions():
        idx = store.region_index(v.doc_id, v.version_id)
        paras, tabs = defaultdict(list), defaultdict(list)
        for p in idx.of_kind(v.doc_id, v.version_id, "paragraph"):
            paras[p.first_page].append(p)
        for t in idx.of_kind(v.doc_id, v.version_id, "table"):
            tabs[t.first_page].append(t)
        for page in idx.of_kind(v.doc_id, v.version_id, "page"):
            if not page.text.strip():
                continue
            cp = compact_page(page, paras[page.first_page], tabs[page.first_page])
            s, c = count(page.text.strip()), count(cp.text)
            stored, compact = stored + s, compact + c
            ratios.append(c / max(1, s))
            if tabs[page.first_page]:
                tables = [tables[0] + 1, tables[1] + s, tables[2] + c]
            if a.show and v.doc_id.startswith(a.show[0]) and page.first_page == int(a.show[1]):
                print(cp.text)
    n = len(ratios)
    if not n:
        print("no pages with text")
        return 1
    print(f"{n} pages: stored {stored / n:.1f} tokens/page, compact {compact / n:.1f} ({100 * compact / stored:.1f}%), "
          f"median page ratio {statistics.median(ratios):.3f}")
    if tables[0]:
        nt, ns, nc = tables
        print(f"{nt} pages with a table: stored {ns / nt:.1f}, compact {nc / nt:.1f} "
              f"({100 * nc / ns:.1f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
