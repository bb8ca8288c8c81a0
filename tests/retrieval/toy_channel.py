"""A toy channel in a module of its own, registered when the module is imported: what a new channel takes (one
module, one ``register`` call, no other file edited). ``tests/retrieval/test_toy_channel.py`` imports it, runs a
retriever with it and takes it out again (``unregister``).

It ranks the last page of every version in scope, weighted by its own keyword option of ``Retriever``
(``toy_weight``): a list no built-in channel makes, so its hits are easy to tell in the fused results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from folio.retrieval.channels.base import ChannelContext, ChannelQuery, ChannelSpec, Ranking, register
from folio.retrieval.text import Candidate

NAME = "toy-last-pages"


@dataclass
class LastPages:
    """The last page of each version in scope, best first in scope order."""

    context: ChannelContext
    weight: float
    name: str = NAME
    table: str = "regions"

    def search(self, query: ChannelQuery) -> Ranking | None:
        found = []
        for doc, version in query.scope.versions:
            pages = self.context.store.region_index(doc, version).of_kind(doc, version, "page")
            if pages:
                last = max(pages, key=lambda r: r.first_page)
                found.append(Candidate(last.region_id, doc, version, "page", last.first_page, 1.0))
        return Ranking(found[: query.limit]) if found else None

    def clear(self) -> None:
        """Nothing kept."""

    def status(self) -> dict[str, Any] | None:
        return {"enabled": True, "model": "last page", "reason": None, "enable": None}


SPEC = register(ChannelSpec(NAME, lambda c: LastPages(c, c.options["toy_weight"]), {"toy_weight": 1.0}, text=True))
