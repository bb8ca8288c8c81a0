"""A section's text as one sequence of sentences (``SectionView``), and windows over it.

Every text unit of a section is an interval ``[lo, hi]`` of this sequence (``expansion.units``): a
sentence window, a paragraph, a run of neighbour paragraphs, the whole section. The sequence holds only
that section's sentences, in reading order, so a window can never leave its document, version or section.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from folio.kernel.model import Region


def reading_key(r: Region) -> tuple[int, float, int]:
    """Reading order of a region: its first page, the top of its first box, then ``seq``."""
    return (r.first_page, r.locators[0].bbox.y0 if r.locators else 0.0, r.seq)


class SectionView:
    """The text of one section as a sentence sequence plus its paragraphs and tables."""

    def __init__(self, key: str, section: Region | None, sentences: Sequence[Region],
                 paragraphs: Sequence[Region], tables: Sequence[Region]) -> None:
        self.key = key
        self.section = section
        self.heading = section.heading_path[-1] if section is not None and section.heading_path else None
        self.sentences = list(sentences)
        self.pos = {s.region_id: i for i, s in enumerate(self.sentences)}
        self.paragraphs = list(paragraphs)
        self.tables = list(tables)
        self.para_range: dict[str, tuple[int, int]] = {}
        self.sent_para: list[str | None] = []
        for i, s in enumerate(self.sentences):
            pid = s.parent_id
            self.sent_para.append(pid)
            if pid is not None:
                lo, _ = self.para_range.get(pid, (i, i))
                self.para_range[pid] = (lo, i)
        self.para_index = {p.region_id: i for i, p in enumerate(self.paragraphs)}
        self._blocks: list[Region] | None = None
        self.full_render: object | None = None  # cached by assembly.render
        self.token_totals: dict[str, int] = {}  # tokenizer name -> whole-section tokens (SourceStructure)

    def __len__(self) -> int:
        return len(self.sentences)

    def paragraph_span(self, pos: int) -> tuple[int, int]:
        pid = self.sent_para[pos]
        return self.para_range.get(pid, (pos, pos)) if pid is not None else (pos, pos)

    def blocks(self) -> list[Region]:
        """Paragraphs and tables in reading order, for rendering the whole section.

        Paragraphs keep ``seq`` order (the parser's reading order); each table goes before the first
        paragraph that starts below it on the same or a later page.
        """
        if self._blocks is None:
            out: list[Region] = []
            tables = sorted(self.tables, key=reading_key)
            ti = 0
            for p in self.paragraphs:
                pk = reading_key(p)[:2]
                while ti < len(tables) and reading_key(tables[ti])[:2] <= pk:
                    out.append(tables[ti])
                    ti += 1
                out.append(p)
            out.extend(tables[ti:])
            # sentences whose paragraph is not in this section's paragraph list still render
            known = {p.region_id for p in self.paragraphs}
            self._orphans = [i for i, pid in enumerate(self.sent_para) if pid not in known]
            self._blocks = out
        return self._blocks

    def orphans(self) -> list[int]:
        self.blocks()
        return self._orphans


def token_window(v: SectionView, pos: int, limit: int, count: Callable[[str], int]) -> tuple[int, int]:
    """The sentences around ``pos`` that fit ``limit`` tokens, grown one sentence at a time after,
    then before (the hit sentence always, however long): a window sized in tokens, so that dense
    tabular text and long prose both get about the same amount of context."""
    lo = hi = pos
    total = count(v.sentences[pos].text)
    grew = True
    while grew:
        grew = False
        if hi + 1 < len(v):
            n = count(v.sentences[hi + 1].text)
            if total + n <= limit:
                hi, total, grew = hi + 1, total + n, True
        if lo > 0:
            n = count(v.sentences[lo - 1].text)
            if total + n <= limit:
                lo, total, grew = lo - 1, total + n, True
    return lo, hi

