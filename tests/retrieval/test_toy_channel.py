"""A channel from one new module (``tests/retrieval/toy_channel.py``): importing it registers it, a retriever runs
it and fuses its hits with the built-in lists, the api's text channels include it, and ``unregister`` takes it
out again (issue 46)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from folio.retrieval.channels.base import CHANNELS, strategy_channels, text_channels, unregister
from folio.retrieval.query import SearchQuery

BUILT_IN = ["bm25", "dense", "clip", "colpali", "pagelex", "statement", "pageref", "labelref"]
MODULE = "tests.retrieval.toy_channel"


@pytest.fixture()
def toy() -> Iterator[ModuleType]:
    assert MODULE not in sys.modules and list(CHANNELS) == BUILT_IN
    module = importlib.import_module(MODULE)
    try:
        yield module
    finally:
        unregister(module.NAME)
        del sys.modules[MODULE]  # a later import registers it again


def test_a_channel_module_registers_on_import_and_its_hits_are_fused(visual_store: Any, toy: ModuleType) -> None:
    from folio.retrieval.search import Retriever, text_retrievers

    assert list(CHANNELS) == [*BUILT_IN, toy.NAME] and strategy_channels("hybrid")[-1] == toy.NAME
    assert toy.NAME in text_channels() and toy.NAME in text_retrievers()  # what the api hands to assembly
    plain = Retriever(visual_store).search_detailed(SearchQuery("priority one incident", k=10))
    assert toy.NAME in plain.retrievers
    boosted = Retriever(visual_store, toy_weight=5.0).search_detailed(SearchQuery("priority one incident", k=10))
    top = boosted.hits[0]
    assert any(s.retriever == toy.NAME and s.rank == 1 for s in top.sources)  # weight 5 puts its page first
    assert top.kind == "page" and top.pages == (max(r.first_page for r in _pages(visual_store, top)),)
    assert Retriever(visual_store).status()[toy.NAME]["model"] == "last page"
    bm25 = Retriever(visual_store).search_detailed(SearchQuery("priority one incident", k=10, strategy="bm25"))
    assert bm25.retrievers == ["bm25"]  # a channel runs in the strategies its registration names


def test_unregistering_takes_the_channel_out_again(visual_store: Any) -> None:
    from folio.retrieval.search import Retriever

    module = importlib.import_module(MODULE)
    unregister(module.NAME)
    del sys.modules[MODULE]
    assert list(CHANNELS) == BUILT_IN and module.NAME not in text_channels()
    r = Retriever(visual_store)
    assert module.NAME not in r.channels
    assert module.NAME not in r.search_detailed(SearchQuery("priority one incident", k=10)).retrievers
    with pytest.raises(TypeError, match="toy_weight"):
        Retriever(visual_store, toy_weight=5.0)  # its option went with it
    with pytest.raises(KeyError):
        unregister(module.NAME)


def _pages(store: Any, hit: Any) -> list[Any]:
    return list(store.region_index(hit.doc_id, hit.version_id).of_kind(hit.doc_id, hit.version_id, "page"))


def test_assemblys_default_text_retrievers_are_the_built_in_channels() -> None:
    """Assembly cannot read the registry, so its default (for callers that build options themselves) is a copy of
    the built-in text channels' names: this keeps the copy equal to what the api hands in."""
    from folio.assembly.options import AssemblyOptions
    from folio.retrieval.search import text_retrievers

    assert AssemblyOptions().text_retrievers == text_retrievers()
