"""The query work behind ``/v1/search``, ``/v1/context`` and ``/v1/verify``: from a validated request
and the service (``api.application.Folio``) to the response's JSON text.

They run on a query thread of the server process, or, with ``FOLIO_QUERY_PROCESSES``, in a worker
process (``api.http.query_worker``) that opens its own ``Folio``: the same code either way. The JSON is built
where the work runs, so the event loop only passes text along."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from folio.api.application import Folio
from folio.api.schemas import ContextRequest, SearchRequest, VerifyRequest

Collections = frozenset[str] | None
Op = Callable[[Any, Folio, Collections], str]


def search(req: SearchRequest, folio: Folio, collections: Collections) -> str:
    return folio.search(req, collections=collections).model_dump_json()


def context(req: ContextRequest, folio: Folio, collections: Collections) -> str:
    return folio.context(req, collections=collections).model_dump_json()


def verify(req: VerifyRequest, folio: Folio, collections: Collections) -> str:
    return folio.verify(req, collections=collections).model_dump_json()


OPS: dict[str, tuple[type[BaseModel], Op]] = {
    "search": (SearchRequest, search),
    "context": (ContextRequest, context),
    "verify": (VerifyRequest, verify),
}
