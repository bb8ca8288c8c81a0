"""Nested packing's acceptance rule (``assembly.packing.nesting.nested_carries_more``): the nested package stands
when it keeps more of the half-budget package's pages than plain greedy packing, even when it cannot keep them
all."""

from __future__ import annotations

from folio.assembly.packing.nesting import nested_carries_more


def _pages(*numbers: int) -> set[tuple[str, int]]:
    return {("v", n) for n in numbers}


def test_a_partial_nesting_that_keeps_more_half_budget_pages_stands() -> None:
    must = _pages(2, 3, 6, 7, 8)  # page 7 had a unit only at half the budget (a span across pages 7-8)
    assert nested_carries_more(must, _pages(2, 3, 6, 8), _pages(2, 8, 11))


def test_plain_greedy_stands_when_nesting_keeps_no_more() -> None:
    must = _pages(2, 3, 6)
    assert not nested_carries_more(must, _pages(2, 3), _pages(2, 6, 9))
    assert not nested_carries_more(must, _pages(2), _pages(2, 3, 6))
    assert not nested_carries_more(set(), _pages(1), _pages())


def test_pages_outside_the_half_package_do_not_count() -> None:
    assert not nested_carries_more(_pages(1, 2), _pages(1, 4, 5, 6), _pages(1, 9))
