"""FastAPI dependencies: the app's long-lived resources (built once in ``lifespan`` and kept on
``app.state``) and the optional API key check, as ``Annotated`` aliases for route signatures.

They are ``async def`` because none of them blocks: a sync dependency would take a trip through
FastAPI's shared thread pool, and ``/v1/health`` must not wait there behind query work."""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, APIKeyQuery, HTTPAuthorizationCredentials, HTTPBearer

from api.errors import Unauthorized
from api.jobs import JobRunner
from api.pool import QueryPool
from api.settings import Settings
from ingest.store import Store

if TYPE_CHECKING:
    from retrieval.search import Retriever


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


async def get_retriever(request: Request) -> Retriever:
    retriever: Retriever = request.app.state.retriever
    return retriever


async def get_jobs(request: Request) -> JobRunner:
    jobs: JobRunner = request.app.state.jobs
    return jobs


async def get_query_pool(request: Request) -> QueryPool:
    pool: QueryPool = request.app.state.query_pool
    return pool


SettingsDep = Annotated[Settings, Depends(get_settings)]
QueryPoolDep = Annotated[QueryPool, Depends(get_query_pool)]
StoreDep = Annotated[Store, Depends(get_store)]
if TYPE_CHECKING:
    RetrieverDep = Annotated[Retriever, Depends(get_retriever)]
else:  # FastAPI resolves annotations at import; the retriever module (torch, models) stays lazy.
    RetrieverDep = Annotated[Any, Depends(get_retriever)]
JobsDep = Annotated[JobRunner, Depends(get_jobs)]

# auto_error=False: a missing key is our 401 in the common error shape, not FastAPI's 403.
_header_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="the server's FOLIO_API_KEY")
_bearer = HTTPBearer(auto_error=False, description="the server's FOLIO_API_KEY as a bearer token")
_query_key = APIKeyQuery(
    name="key",
    auto_error=False,
    description="the API key as a query parameter; accepted only on image endpoints, so <img src> works",
)


def _check(settings: Settings, *candidates: str | None) -> None:
    expected = settings.api_key
    if not expected:
        return
    for given in candidates:
        if given and hmac.compare_digest(given.encode(), expected.encode()):
            return
    if any(candidates):
        raise Unauthorized("invalid API key")
    raise Unauthorized("this server needs an API key: send X-API-Key: <key> or Authorization: Bearer <key>")


async def require_key(
    settings: SettingsDep,
    header: Annotated[str | None, Depends(_header_key)],
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """Enforce ``FOLIO_API_KEY`` when it is set (compared in constant time)."""
    _check(settings, header, bearer.credentials if bearer else None)


async def require_key_or_query(
    settings: SettingsDep,
    header: Annotated[str | None, Depends(_header_key)],
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    key: Annotated[str | None, Depends(_query_key)],
) -> None:
    """Like ``require_key``, also accepting ``?key=`` (image endpoints only: query strings end up in logs)."""
    _check(settings, header, bearer.credentials if bearer else None, key)
