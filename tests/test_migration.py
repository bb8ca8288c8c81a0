"""Moved names keep working from their old place with a ``DeprecationWarning``, from one table
(``folio._migration``, issue 32); nothing else answers for an old name."""

from __future__ import annotations

import importlib
import warnings

import pytest

from folio._migration import MOVED


def test_an_old_import_of_the_store_warns_and_gives_the_new_class() -> None:
    from folio.ingest.storage.store import Store

    with pytest.warns(DeprecationWarning, match=r"folio\.ingest\.store\.Store has moved: import it from "
                                                r"folio\.ingest\.storage\.store"):
        from folio.ingest.store import Store as Old
    assert Old is Store


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_moved_name_resolves_to_its_new_home(old: str) -> None:
    module, _, name = old.partition(":")
    new_module, _, new_name = MOVED[old].partition(":")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(importlib.import_module(module), name)
    assert value is getattr(importlib.import_module(new_module), new_name)
    assert [w.category for w in caught] == [DeprecationWarning]


def test_a_name_that_never_moved_is_an_attribute_error() -> None:
    old = importlib.import_module("folio.ingest.store")
    with pytest.raises(AttributeError, match="has no attribute 'RegionTable'"):
        old.RegionTable  # noqa: B018
