"""The pages a question names ("page 12", "the last slide"), as one ranked list for fusion.

``kernel.pageref`` finds the references and resolves them to physical pages of one version (through the
printed page labels first). ``named_pages`` makes the list of the ``pageref`` channel (``retrieval.channels``):
each resolved page of the scope, then the other channels' candidates on those pages in their order. A
reference is exact when the scope holds one version and each named number resolves to one page (the printed
label and the physical index agree, or only one exists); an exact reference weighs ``EXACT_REF_BOOST`` times
more in fusion.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from folio.ingest.storage.interface import StoreReader
from folio.kernel.pageref import PageRef, parse_page_refs, resolve
from folio.kernel.scope import Scope
from folio.retrieval.channels.base import ChannelQuery, ChannelSpec, Ranking, register, versions_to_search
from folio.retrieval.text import Candidate

# Weight in fusion of the lists of pages and objects a question names ("page 12", "Table 1"). Measured with
# benchmarks/eval_quality.py: 2.0 lost wide-set answers at 1k/2k against 1.0 (README, "Quality").
REF_WEIGHT = 1.0
EXACT_REF_BOOST = 2.0  # a page reference that resolves to one page per number counts this much more
MAX_VERSIONS = 50  # page references are resolved in at most this many versions of the scope


def named_pages(store: StoreReader, refs: Sequence[PageRef], scope: Scope,
                found: Iterable[Sequence[Candidate]], versions: Sequence[tuple[str, str]],
                ) -> tuple[list[Candidate], bool]:
    """The list for ``refs`` in ``scope`` (module docstring), after the lists ``found`` before it, and
    whether the reference is exact; in ``versions`` of the scope (``channels.base.versions_to_search``)."""
    out: list[Candidate] = []
    wanted: set[tuple[str, str, int]] = set()
    named = sum(len(r.numbers) for r in refs)
    exact = len(scope.versions) == 1
    for doc_id, version_id in versions:
        by_no = {r.first_page: r for r in store.region_index(doc_id, version_id).of_kind(doc_id, version_id, "page")}
        last = max(by_no, default=0)
        labels = [(by_no[p].meta_get("label") or "") if p in by_no else "" for p in range(1, last + 1)]
        resolved = resolve(refs, labels, last)
        exact = exact and len(resolved) == named
        for pno in resolved:
            r = by_no.get(pno)
            if r is None or (scope.pages is not None and pno not in scope.pages):
                continue
            wanted.add((doc_id, version_id, pno))
            out.append(Candidate(r.region_id, doc_id, version_id, "page", pno, 1.0))
    seen = {c.region_id for c in out}
    for lst in found:
        for c in lst:
            if (c.doc_id, c.version_id, c.page) in wanted and c.region_id not in seen:
                seen.add(c.region_id)
                out.append(c)
    return out, exact and bool(out)


# ----------------------------------------------------------------------------- the channel
@dataclass
class PageRefChannel:
    """The pages the question names (``named_pages``), then the lists before it on those pages; no list when it
    names none. An exact reference counts ``EXACT_REF_BOOST`` times."""

    store: StoreReader
    weight: float = REF_WEIGHT
    name: str = "pageref"
    table: str = "regions"

    def search(self, query: ChannelQuery) -> Ranking | None:
        refs = parse_page_refs(query.text)
        if not refs:
            return None
        found, exact = named_pages(self.store, refs, query.scope, query.found.values(),
                                   versions_to_search(query, MAX_VERSIONS))
        return Ranking(found, EXACT_REF_BOOST if exact else 1.0)

    def clear(self) -> None:
        """Nothing to forget: the store keeps the region indexes."""

    def status(self) -> dict[str, Any] | None:
        return None


register(ChannelSpec("pageref", lambda c: PageRefChannel(c.store, c.options["ref_weight"]),
                     {"ref_weight": REF_WEIGHT}, text=True))
