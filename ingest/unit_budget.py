"""What one page and one document may cost the text index: searchable units per page, embedded tokens
per document.

Embedding is the slow part of an ingest (MiniLM reads up to 256 tokens of each unit), and it grows with
the text, not with the file: a 137 KB one-page PDF of 60,000 words split into 1,000 sentences took
two minutes to embed. So before the text channels index a version (``ingest.pipeline``), its searchable
units are cut to ``MAX_PAGE_UNITS`` per page (the page's own unit first, then the others in reading
order) and to ``MAX_DOCUMENT_TOKENS`` embedded tokens in all (in page order; a unit costs the tokens
the encoder reads of it, at most ``EMBED_TOKENS``). What is cut stays in the document (its regions,
the page text, context expansions) but is not searchable; the ingest report says so: a ``PageIssue``
per page cut, a warning when the document's total was reached, and the status ``partial``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from folio.ingest.embed import MAX_LENGTH as EMBED_TOKENS
from folio.kernel.model import PageIssue, Region

# A dense two-column page has about 60 sentences, tables and figures; a filing's statement page up to about 230
# (a figure or a label per line: JPMorgan's 10-Qs, Walmart's 10-K), which a limit of 150 left partly unsearchable.
MAX_PAGE_UNITS = 300
MAX_DOCUMENT_TOKENS = 1_000_000  # a 300-page manual embeds about 450,000
_COUNTED_CHARS = 16 * EMBED_TOKENS  # enough text to hold the tokens the encoder reads


@dataclass(frozen=True)
class Budgeted:
    """The units to index, and what the report says about those cut."""

    units: list[Region]
    issues: tuple[PageIssue, ...] = ()
    warnings: tuple[str, ...] = field(default=())


def default_counter() -> Callable[[str], int]:
    """Tokens of a text by the default tokenizer (``folio.kernel.tokens``)."""
    from folio.kernel.tokens import get_tokenizer  # function-level: the BPE files load on first use

    return get_tokenizer().count


def budget_units(
    searchable: Sequence[Region],
    *,
    count: Callable[[str], int] | None = None,
    page_units: int = MAX_PAGE_UNITS,
    document_tokens: int = MAX_DOCUMENT_TOKENS,
) -> Budgeted:
    """``searchable`` (in document order) cut to ``page_units`` per page and ``document_tokens`` in all."""
    by_page: dict[int, list[Region]] = {}
    for r in searchable:
        by_page.setdefault(r.first_page, []).append(r)
    kept: list[Region] = []
    issues: list[PageIssue] = []
    for page, units in by_page.items():
        if len(units) > page_units:
            chosen = {id(r) for r in sorted(units, key=lambda r: r.kind != "page")[:page_units]}  # sort is stable
            issues.append(PageIssue(page=page, message=_page_cut(len(units), page_units)))
            units = [r for r in units if id(r) in chosen]
        kept += units
    counter = count or default_counter()
    total = 0
    for n, r in enumerate(kept):
        total += min(counter(r.text[:_COUNTED_CHARS]), EMBED_TOKENS)
        if total > document_tokens:
            cut = kept[n:]
            warning = (
                f"searchable text over {document_tokens} tokens: the last {len(cut)} units, from page "
                f"{cut[0].first_page} on, are not searchable"
            )
            return Budgeted(kept[:n], tuple(issues), (warning,))
    return Budgeted(kept, tuple(issues))


def _page_cut(units: int, most: int) -> str:
    return f"{units} searchable units on this page, over the limit of {most}: {units - most} are not searchable"
