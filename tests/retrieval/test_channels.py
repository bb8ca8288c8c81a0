"""Retrieval as channels (``retrieval.channels``): the registry, the strategy map, and a retriever built from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, get_args

from folio.kernel.hit import RetrievalStrategy
from folio.retrieval.channels import (
    CHANNELS,
    STRATEGY_CHANNELS,
    ChannelQuery,
    IndexerModels,
    channel_indexers,
)
from folio.retrieval.text import Candidate


def test_every_strategy_names_registered_channels_in_registry_order() -> None:
    names = [spec.name for spec in CHANNELS]
    assert names == ["bm25", "dense", "clip", "colpali", "pagelex", "statement"]
    assert set(STRATEGY_CHANNELS) == set(get_args(RetrievalStrategy))
    for strategy, channels in STRATEGY_CHANNELS.items():
        assert list(channels) == [n for n in names if n in channels], strategy


def test_a_retriever_runs_the_strategys_channels_in_order(retriever: Any) -> None:
    assert list(retriever.channels) == ["bm25", "dense", "clip", "colpali", "pagelex", "statement"]
    assert {c.table for c in retriever.channels.values()} == {"chunks", "figures", "pages", "regions"}
    hybrid = retriever.search_detailed("response targets for priority one incidents", k=10)
    assert hybrid.retrievers[:4] == ["bm25", "dense", "clip", "colpali"]
    assert retriever.search_detailed("response targets", k=10, strategy="bm25").retrievers == ["bm25"]
    assert retriever.search_detailed("response targets", k=10, strategy="dense").retrievers == ["dense"]


@dataclass
class Recording:
    """A channel in a few lines: it records which lists were built before it and adds one candidate."""

    name: str = "colpali"
    table: str = "pages"
    weight: float = 1.0
    seen: list[list[str]] = field(default_factory=list)

    def search(self, query: ChannelQuery) -> list[Candidate] | None:
        self.seen.append(list(query.found))
        best = query.found["bm25"][0]
        return [Candidate(best.region_id, best.doc_id, best.version_id, best.kind, best.page, 9.0)]

    def clear(self) -> None:
        self.seen.clear()


def test_a_channel_sees_the_lists_built_before_it_and_is_fused(visual_store: Any) -> None:
    from folio.retrieval.search import Retriever

    r = Retriever(visual_store)  # no CLIP or ColPali model: those channels are off
    assert "colpali" not in r.channels
    recording = Recording()
    r.channels["colpali"] = recording
    res = r.search_detailed("priority one incident", k=10)
    assert recording.seen == [["bm25", "dense"]]
    assert res.retrievers[:3] == ["bm25", "dense", "colpali"]
    assert any(s.retriever == "colpali" for s in res.hits[0].sources)
    r.refresh()
    assert recording.seen == []


def test_refresh_clears_each_channel_and_keeps_results(retriever: Any) -> None:
    before = [h.region_id for h in retriever.search("priority one incident", k=10)]
    assert retriever.channels["pagelex"].pagelex._cache and retriever.text.cache._versions
    retriever.refresh()
    assert not retriever.channels["pagelex"].pagelex._cache and not retriever.text.cache._versions
    assert not retriever.channels["colpali"].colpali._cache
    assert [h.region_id for h in retriever.search("priority one incident", k=10)] == before


def test_page_lex_weight_is_the_channels_weight(visual_store: Any) -> None:
    from folio.retrieval.search import Retriever

    r = Retriever(visual_store, page_lex_weight=0)
    assert r.channels["pagelex"].weight == 0 == r.page_lex_weight
    assert "pagelex" not in r.search_detailed("priority one incident", k=10).retrievers
    r.page_lex_weight = 0.5
    assert "pagelex" in r.search_detailed("priority one incident", k=10).retrievers


def test_channel_indexers_follow_the_models_that_are_on(retriever: Any) -> None:
    assert channel_indexers(IndexerModels()) == []
    clip, colpali = retriever.channels["clip"].clip, retriever.channels["colpali"].colpali
    on = channel_indexers(IndexerModels(clip.model, colpali.model, 2))
    assert [i.name for i in on] == ["clip", "colpali"]
