"""The cells of a Markdown table line, as the parser writes tables (``| a | b |``, a ``|---|`` rule under the
header, ``\\|`` for a pipe inside a cell). Shared by the row units ingest indexes (``ingest.row_units``) and the
compact page text assembly sends (``assembly.expansion.pagetext``), which may not import each other."""

from __future__ import annotations

import re

_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def split_cells(line: str) -> list[str]:
    """The raw cells of one table line: the outer pipes dropped, split at the pipes that are not escaped.

    >>> split_cells("| Model | a \\\\| b |  |")
    [' Model ', ' a \\\\| b ', '  ']
    """
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return _CELL_SPLIT.split(s)


def is_rule(cells: list[str]) -> bool:
    """Whether ``cells`` are the ``|---|:--:|`` rule under a header.

    >>> is_rule(split_cells("| --- | :-: |")), is_rule(split_cells("| 1 | - |"))
    (True, False)
    """
    return bool(cells) and all(set(c) <= set("-: ") for c in cells) and any("-" in c for c in cells)
