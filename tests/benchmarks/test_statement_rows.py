"""The row-accuracy measure of ``benchmarks/statement_rows.py``: what a statement line is, and when a table row
reads it right."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import statement_rows as S


def _line(*cells: tuple[float, str]) -> list[tuple[float, float, float, float, str]]:
    """Words at ``x`` on one text line 8 points high (7 points wide per character)."""
    return [(x, 100.0, x + 5.0 * len(t), 108.0, t) for x, t in cells]


def test_a_statement_line_is_a_label_then_figures_apart() -> None:
    line = _line((60, "Total"), (90, "inventories...."), (380, "$"), (400, "4,366"), (470, "(4,034)"), (520, "—"))
    assert S.statement_line(line) == ("total inventories", ("4,366", "(4,034)"))
    assert S.statement_line(_line((60, "Balance"), (100, "at"), (115, "2018"))) is None  # a year close to the label
    assert S.statement_line(_line((60, "Years"), (100, "ended"), (400, "2018"), (470, "2017"))) is None  # a header
    assert S.statement_line(_line((400, "2,853"), (470, "3,053"))) is None  # no label


def test_a_row_is_right_with_the_label_and_exactly_its_figures() -> None:
    line = S.Line(1, "total inventories", ("4,366", "4,034"))
    right = S.table_rows(
        "| Sheet (In millions) | 2018 | 2017 |\n| --- | --- | --- |\n| Total inventories | 4,366 | $4,034 |"
    )
    garbled = S.table_rows("| Assets |  |  |\n| --- | --- | --- |\n| Total inventories 4,366 4,034 |  |  |")
    short = S.table_rows("| Assets |  |  |\n| --- | --- | --- |\n| Total inventories | 4,366 |  |")
    assert S.correct(line, right)
    assert not S.correct(line, garbled) and not S.correct(line, short)


def test_the_script_refuses_an_unknown_mode_and_a_folder_without_the_filings(tmp_path: Path) -> None:
    for argv in (["--modes", "off,sometimes"], []):
        with pytest.raises(SystemExit) as e:
            S.main(["--shared", str(tmp_path), *argv])
        assert e.value.code == 2
