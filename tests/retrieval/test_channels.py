"""Retrieval as channels (``retrieval.channels``): the registry, the strategies, and a retriever that names none."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import pytest

from folio.kernel.hit import RetrievalStrategy
from folio.retrieval.channels.base import (
    CHANNELS,
    ChannelContext,
    ChannelQuery,
    ChannelSpec,
    Ranking,
    channel_indexers,
    register,
    strategy_channels,
)
from folio.retrieval.query import SearchQuery
from folio.retrieval.text import Candidate

BUILT_IN = ["bm25", "dense", "clip", "colpali", "pagelex", "statement", "pageref", "labelref"]
SEARCH = Path(__file__).resolve().parents[2] / "retrieval" / "search.py"  # where Retriever lives


def test_every_strategy_runs_registered_channels_in_registry_order() -> None:
    assert list(CHANNELS) == BUILT_IN
    assert strategy_channels("hybrid") == strategy_channels("summary") == BUILT_IN
    assert strategy_channels("bm25") == ["bm25"] and strategy_channels("dense") == ["dense"]
    assert all(strategy_channels(s) for s in get_args(RetrievalStrategy))


def _string_literals(tree: ast.Module) -> set[str]:
    """The module's string constants, docstrings left out (they may describe channels)."""
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs}


def test_the_retriever_names_no_channel() -> None:
    """Retriever iterates the registry: adding a channel touches one file, never ``retrieval/search.py``."""
    named = _string_literals(ast.parse(SEARCH.read_text(encoding="utf-8"))) & set(CHANNELS)
    assert not named, f"retrieval/search.py names channels {sorted(named)}: let their registrations say it"
    assert _string_literals(ast.parse('"""doc"""\nX = "bm25"\ndef f():\n    """d"""\n    return "x"')) == {"bm25", "x"}


def test_a_retriever_runs_the_strategys_channels_in_order(retriever: Any) -> None:
    assert list(retriever.channels) == BUILT_IN
    assert {c.table for c in retriever.channels.values()} == {"chunks", "figures", "pages", "regions"}
    hybrid = retriever.search_detailed(SearchQuery("response targets for priority one incidents", k=10))
    assert hybrid.retrievers[:4] == ["bm25", "dense", "clip", "colpali"]
    assert retriever.search_detailed(SearchQuery("response targets", k=10, strategy="bm25")).retrievers == ["bm25"]
    assert retriever.search_detailed(SearchQuery("response targets", k=10, strategy="dense")).retrievers == ["dense"]
    assert list(retriever.status()) == ["bm25", "dense", "clip", "colpali", "summary", "rerank"]


@dataclass
class Recording:
    """A channel in a few lines: it records which lists were built before it and adds one candidate."""

    name: str = "colpali"
    table: str = "pages"
    weight: float = 1.0
    seen: list[list[str]] = field(default_factory=list)

    def search(self, query: ChannelQuery) -> Ranking | None:
        self.seen.append(list(query.found))
        best = query.found["bm25"][0]
        return Ranking([Candidate(best.region_id, best.doc_id, best.version_id, best.kind, best.page, 9.0)])

    def clear(self) -> None:
        self.seen.clear()

    def status(self) -> dict[str, Any] | None:
        return None


def test_a_channel_sees_the_lists_built_before_it_and_is_fused(visual_store: Any) -> None:
    from folio.retrieval.search import Retriever

    r = Retriever(visual_store)  # no CLIP or ColPali model: those channels are off
    assert "colpali" not in r.channels
    recording = Recording()
    r.channels["colpali"] = recording
    res = r.search_detailed(SearchQuery("priority one incident", k=10))
    assert recording.seen == [["bm25", "dense"]]
    assert res.retrievers[:3] == ["bm25", "dense", "colpali"]
    assert any(s.retriever == "colpali" for s in res.hits[0].sources)
    r.refresh()
    assert recording.seen == []


# ----------------------------------------------------------------------------- a channel registered here
@dataclass
class FirstPages:
    """A toy channel: the first page of every version in scope, weighted by its own keyword option."""

    context: ChannelContext
    weight: float
    name: str = "first-pages"
    table: str = "regions"

    def search(self, query: ChannelQuery) -> Ranking | None:
        pages = [r for d, v in query.scope.versions
                 for r in self.context.store.region_index(d, v).of_kind(d, v, "page") if r.first_page == 1]
        return Ranking([Candidate(r.region_id, r.doc_id, r.version_id, "page", 1, 1.0) for r in pages])

    def clear(self) -> None:
        """Nothing kept."""

    def status(self) -> dict[str, Any] | None:
        return {"enabled": True, "model": "first page", "reason": None, "enable": None}


@pytest.fixture()
def first_pages() -> Iterator[ChannelSpec]:
    spec = register(ChannelSpec("first-pages", lambda c: FirstPages(c, c.options["first_page_weight"]),
                                {"first_page_weight": 1.0}))
    try:
        yield spec
    finally:
        del CHANNELS[spec.name]


def test_a_channel_registered_in_one_file_is_run_fused_and_reported(visual_store: Any, first_pages: Any) -> None:
    from folio.retrieval.search import Retriever

    r = Retriever(visual_store, first_page_weight=3.0)
    res = r.search_detailed(SearchQuery("priority one incident", k=10))
    assert res.retrievers[-1] == "first-pages"
    top = res.hits[0]
    assert top.pages == (1,) and any(s.retriever == "first-pages" for s in top.sources)  # weight 3 puts it first
    assert r.status()["first-pages"]["model"] == "first page"
    bm25_only = r.search_detailed(SearchQuery("priority one incident", k=10, strategy="bm25"))
    assert "first-pages" not in bm25_only.retrievers
    assert strategy_channels("hybrid")[-1] == "first-pages"


def test_an_option_no_channel_reads_is_a_type_error(visual_store: Any) -> None:
    from folio.retrieval.search import Retriever

    with pytest.raises(TypeError, match="page_lex_wieght"):
        Retriever(visual_store, page_lex_wieght=0)
    with pytest.raises(ValueError, match="already registered"):
        register(ChannelSpec("bm25", lambda c: None))
    with pytest.raises(ValueError, match="ref_weight"):
        register(ChannelSpec("refs-again", lambda c: None, {"ref_weight": 5.0}))
    assert list(CHANNELS) == BUILT_IN


def test_refresh_clears_each_channel_and_keeps_results(retriever: Any) -> None:
    before = [h.region_id for h in retriever.search(SearchQuery("priority one incident", k=10))]
    assert len(retriever.channels["pagelex"].pagelex.lexicons) and retriever.text.cache._versions
    retriever.refresh()
    assert not len(retriever.channels["pagelex"].pagelex.lexicons) and not retriever.text.cache._versions
    assert not len(retriever.channels["colpali"].colpali.versions)
    assert [h.region_id for h in retriever.search(SearchQuery("priority one incident", k=10))] == before


def test_page_lex_weight_is_the_channels_weight(visual_store: Any) -> None:
    from folio.retrieval.search import Retriever

    r = Retriever(visual_store, page_lex_weight=0)
    assert r.channels["pagelex"].weight == 0
    assert "pagelex" not in r.search_detailed(SearchQuery("priority one incident", k=10)).retrievers
    r.channels["pagelex"].weight = 0.5
    assert "pagelex" in r.search_detailed(SearchQuery("priority one incident", k=10)).retrievers


def test_channel_indexers_follow_the_models_that_are_on(visual_settings: Any) -> None:
    from folio.settings import Settings

    assert channel_indexers(Settings(data="/nonexistent")) == []
    assert [i.name for i in channel_indexers(visual_settings)] == ["clip", "colpali"]
