"""The table readers' contract: a page in (``TablePage``), its tables out (``TableData``), and the readers by mode.

A reader is one module of this package with one registration beside its class (``register("mode", Reader)``,
LanceDB's ``@register`` style); ``table_reader(mode)`` is the factory the parser asks (docling's
``TableStructureFactory``), so the parser calls one reader and never picks between readers itself. The modes
are the ``word_tables`` option's values (``IngestOptions.word_tables``, the ``FOLIO_WORD_TABLES`` setting):
folio's own are ``WORD_TABLE_MODES`` (``ruled``: ``off``; ``merged``: ``repair`` and ``all``). The first time
a mode is asked for, every module of this package is imported, so that each registers its readers: no file
lists them. A reader registered from elsewhere (a test's) is found once its module is imported.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Protocol

from folio.ingest.pdf.text import Block, Box

if TYPE_CHECKING:
    import pymupdf

Box5 = tuple[float, float, float, float, str]  # a word: its box and its text

# folio's own modes, the ones the settings offer. "off": find_tables only (as parser v6); "repair": word tables
# replace the find_tables tables they overlap when those read fewer rows right (label and figures in cells of
# their own); "all": and where it found none.
WordTables = Literal["off", "repair", "all"]
WORD_TABLE_MODES: tuple[WordTables, ...] = ("off", "repair", "all")
TableMode = str  # a registered reader's mode: one of WORD_TABLE_MODES, or one registered beside them


@dataclass(slots=True)
class TableData:
    """A table read on a page: its box in page points and its cells, the header apart from the body."""

    bbox: Box
    header: list[str]
    rows: list[list[str]]  # body rows, header excluded
    header_in_table: bool
    title: str = ""  # the lines above a word table (``tables.words``): issuer, statement name
    unit: str = ""  # "Dollars in millions, except per share amount"


@dataclass(frozen=True)
class TablePage:
    """What a reader reads of one page: the MuPDF page, its text blocks in reading order, its vector drawings
    (``page.get_cdrawings()``; none on a scanned page, whose text is not read yet) and whether it is a scan."""

    page: pymupdf.Page
    blocks: Sequence[Block]
    drawings: list[dict[str, Any]]
    scanned: bool

    @cached_property
    def words(self) -> list[Box5]:
        """The blocks' words, ``(x0, y0, x1, y1, text)``, in reading order."""
        return [wd for b in self.blocks for ln in b.lines for wd in ln.words]


class TableReader(Protocol):
    """Reads the tables of one page, in the order the page's regions list them."""

    def read(self, page: TablePage) -> list[TableData]: ...


_READERS: dict[TableMode, Callable[[], TableReader]] = {}


def register(mode: TableMode, make: Callable[[], TableReader]) -> None:
    """Make ``make()`` the reader of ``mode`` (a reader class, or any function that builds one)."""
    if mode in _READERS and _READERS[mode] is not make:
        raise ValueError(f"a table reader is registered for mode {mode!r} already")
    _READERS[mode] = make


def table_reader(mode: TableMode) -> TableReader:
    """The reader of ``mode``; a ``ValueError`` names the modes there are when none is registered for it."""
    if mode not in _READERS:
        _import_readers()
    if mode not in _READERS:
        raise ValueError(f"no table reader for mode {mode!r}: one of {', '.join(sorted(_READERS))}")
    return _READERS[mode]()


def _import_readers() -> None:
    """Import every module of this package: each registers its readers when imported."""
    package = __name__.rpartition(".")[0]
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        importlib.import_module(f"{package}.{info.name}")


def to_markdown(header: list[str], rows: list[list[str]]) -> str:
    """GitHub-flavoured Markdown with a header row (pipes in cells escaped).

    >>> print(to_markdown(["Item", "2018"], [["Cash", "1|2"]]))
    | Item | 2018 |
    | --- | --- |
    | Cash | 1\\|2 |
    """

    def fmt(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    n = max([len(header)] + [len(r) for r in rows])
    head = header + [""] * (n - len(header))
    lines = [fmt(head), "| " + " | ".join("---" for _ in range(n)) + " |"]
    lines += [fmt(r + [""] * (n - len(r))) for r in rows]
    return "\n".join(lines)
