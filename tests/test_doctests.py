"""The examples in docstrings are tests too: they must stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["retrieval.pageref", "retrieval.fusion", "retrieval.text", "assembly.dedupe"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
