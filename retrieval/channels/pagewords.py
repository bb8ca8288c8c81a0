"""The words of a page as the page channels read them: tokens, folded plurals, a page's title.

Shared by the whole-page BM25 channel (``channels.pagelex``), the statement pages (``channels.statement``: a
page's title) and the dense channel's document names (``channels.scopenames``); it registers no channel, so
importing it changes no registration order.
"""

from __future__ import annotations

import re
from functools import lru_cache

import pyarrow.compute as pc

from folio.ingest.storage.interface import StoreReader

TITLE_LINES = 4  # lines of a page's first block that make its title

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+|\w+")


def page_tokens(text: str) -> list[str]:
    """Lower-cased word tokens; runs of CJK characters become character bigrams.

    >>> page_tokens("Set Print 受験者数")
    ['set', 'print', '受験', '験者', '者数']
    """
    out: list[str] = []
    for tok in _TOKEN.findall(text.lower()):
        if _CJK.match(tok):
            out.extend(tok[i : i + 2] for i in range(max(len(tok) - 1, 1)))
        else:
            out.append(tok)
    return out


@lru_cache(maxsize=1 << 18)
def fold_plural(word: str) -> str:
    """Harman's S-stemmer (1991): the lightest stemmer, which only folds plural endings, so that
    query and page words match across singular and plural; words of 3 letters or fewer, and words
    with digits, are kept.

    >>> [fold_plural(w) for w in ("assets", "companies", "indexes", "status", "class", "gas", "q3s")]
    ['asset', 'company', 'indexe', 'status', 'class', 'gas', 'q3s']
    """
    if len(word) <= 3 or not word.isalpha() or not word.endswith("s"):
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith(("us", "ss")):
        return word
    return word[:-1]


def page_title(text: str) -> str:
    """A page's title: its first block of text (up to the first blank line), at most ``TITLE_LINES`` lines.

    >>> page_title("ACME Corp\\nBalance Sheet\\nAt December 31\\n\\n(Millions) 2022 2021\\nAssets").splitlines()
    ['ACME Corp', 'Balance Sheet', 'At December 31']
    """
    block = text.strip().split("\n\n", 1)[0]
    return "\n".join(block.splitlines()[:TITLE_LINES])


def page_terms(text: str) -> list[str]:
    """The terms the page lexicon indexes and looks up: ``page_tokens`` with plurals folded.

    >>> page_terms("Total assets of the companies")
    ['total', 'asset', 'of', 'the', 'company']
    """
    return [fold_plural(t) for t in page_tokens(text)]


def version_pages(store: StoreReader, doc_id: str, version_id: str) -> list[tuple[str, int, str]]:
    """The page regions of one ready version as ``(region_id, page, text)``, in page order: one column scan of
    the regions table (the page channels' per-version work reads no other region, and builds none)."""
    data = store.scan_versions("regions", [(doc_id, version_id)], ["region_id", "kind", "page", "text"])
    if data is None:
        return []
    pages = data.filter(pc.equal(data["kind"], "page")).select(["region_id", "page", "text"]).to_pylist()
    rows = [(r["region_id"], int(r["page"]), r["text"]) for r in pages]
    return sorted(rows, key=lambda r: (r[1], r[0]))
