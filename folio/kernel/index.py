"""An in-memory, read-only index over the regions of one or more document versions.

Assembly needs structural lookups (a sentence's neighbours within its section, a section's
children, the page region containing a table) thousands of times per second; a database round
trip per lookup would dominate its latency. The store builds one ``RegionIndex`` per version
from the regions table and caches it; tests build one straight from parsed regions.

``RegionSource`` is the protocol assembly depends on, so ``assembly`` never imports the store.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Protocol

from folio.kernel.model import Region, RegionKind


class RegionSource(Protocol):
    def get(self, region_id: str) -> Region | None: ...

    def children(self, parent_id: str) -> Sequence[Region]:
        """Direct structural children in reading order."""
        ...

    def in_section(self, section_id: str, kind: RegionKind) -> Sequence[Region]:
        """All regions of ``kind`` whose innermost section is ``section_id``, in reading order."""
        ...

    def of_kind(self, doc_id: str, version_id: str, kind: RegionKind) -> Sequence[Region]:
        """All regions of ``kind`` in one version, in reading order (``seq``)."""
        ...

    def page(self, doc_id: str, version_id: str, page: int) -> Region | None: ...

    def descendants(self, section_id: str) -> Sequence[Region]:
        """Paragraphs, tables and figures anywhere under a section (subsections included), in order."""
        ...


class RegionIndex:
    """A ``RegionSource`` over a fixed set of regions."""

    def __init__(self, regions: Iterable[Region]) -> None:
        self._by_id: dict[str, Region] = {}
        self._children: dict[str, list[Region]] = defaultdict(list)
        self._in_section: dict[tuple[str, str], list[Region]] = defaultdict(list)
        self._of_kind: dict[tuple[str, str, str], list[Region]] = defaultdict(list)
        self._pages: dict[tuple[str, str, int], Region] = {}
        for r in regions:
            self._by_id[r.region_id] = r
            if r.parent_id:
                self._children[r.parent_id].append(r)
            if r.section_id and r.kind != "section":
                self._in_section[(r.section_id, r.kind)].append(r)
            self._of_kind[(r.doc_id, r.version_id, r.kind)].append(r)
            if r.kind == "page":
                self._pages[(r.doc_id, r.version_id, r.first_page)] = r
        for lst in (*self._children.values(), *self._in_section.values(), *self._of_kind.values()):
            lst.sort(key=lambda x: x.seq)

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, region_id: object) -> bool:
        return region_id in self._by_id

    def regions(self) -> Iterable[Region]:
        return self._by_id.values()

    def get(self, region_id: str) -> Region | None:
        return self._by_id.get(region_id)

    def children(self, parent_id: str) -> Sequence[Region]:
        return self._children.get(parent_id, [])

    def in_section(self, section_id: str, kind: RegionKind) -> Sequence[Region]:
        return self._in_section.get((section_id, kind), [])

    def of_kind(self, doc_id: str, version_id: str, kind: RegionKind) -> Sequence[Region]:
        return self._of_kind.get((doc_id, version_id, kind), [])

    def page(self, doc_id: str, version_id: str, page: int) -> Region | None:
        return self._pages.get((doc_id, version_id, page))

    def descendants(self, section_id: str) -> Sequence[Region]:
        out: list[Region] = []
        stack = [section_id]
        seen: set[str] = set()
        while stack:
            sid = stack.pop()
            if sid in seen:
                continue
            seen.add(sid)
            for child in self._children.get(sid, []):
                if child.kind == "section":
                    stack.append(child.region_id)
                elif child.kind in ("paragraph", "table", "figure"):
                    out.append(child)
        out.sort(key=lambda r: (r.first_page, _top(r), r.seq))
        return out


def _top(r: Region) -> float:
    return r.locators[0].bbox.y0 if r.locators else 0.0


class MergedSource:
    """Several ``RegionSource``s seen as one (one per version, each cached by the store)."""

    def __init__(self, sources: Sequence[RegionIndex]) -> None:
        self._sources = list(sources)

    def _first(self, fn: str, *args: object) -> object:
        for s in self._sources:
            res = getattr(s, fn)(*args)
            if res:
                return res
        return None

    def get(self, region_id: str) -> Region | None:
        for s in self._sources:
            r = s.get(region_id)
            if r is not None:
                return r
        return None

    def children(self, parent_id: str) -> Sequence[Region]:
        res = self._first("children", parent_id)
        return res if isinstance(res, list) else []

    def in_section(self, section_id: str, kind: RegionKind) -> Sequence[Region]:
        res = self._first("in_section", section_id, kind)
        return res if isinstance(res, list) else []

    def of_kind(self, doc_id: str, version_id: str, kind: RegionKind) -> Sequence[Region]:
        res = self._first("of_kind", doc_id, version_id, kind)
        return res if isinstance(res, list) else []

    def page(self, doc_id: str, version_id: str, page: int) -> Region | None:
        for s in self._sources:
            r = s.page(doc_id, version_id, page)
            if r is not None:
                return r
        return None

    def descendants(self, section_id: str) -> Sequence[Region]:
        res = self._first("descendants", section_id)
        return res if isinstance(res, list) else []
