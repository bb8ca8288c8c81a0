"""FastAPI dependencies: the app's long-lived resources (built once in ``lifespan`` and kept on
``app.state``: the service, ``api.application.Folio``, and the query pool) and the caller's key
(``api.keys``: which collections it sees, read or write), as ``Annotated`` aliases for route signatures.

They are ``async def`` because none of them blocks: a sync dependency would take a trip through
FastAPI's shared thread pool, and ``/v1/health`` must not wait there behind query work."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, APIKeyQuery, HTTPAuthorizationCredentials, HTTPBearer

from folio.api.application import Folio
from folio.api.errors import Forbidden, InvalidId, Unauthorized
from folio.api.http.pool import QueryPool
from folio.api.http.startup import service
from folio.api.keys import FULL_ACCESS, KeyRing, Principal
from folio.settings import Settings


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_folio(request: Request) -> Folio:
    """The service every route calls (opened once in the app's lifespan); 503 ``not_ready`` while the
    server is still loading it (``api.http.startup``)."""
    return service(request.app.state)


async def get_query_pool(request: Request) -> QueryPool:
    pool: QueryPool = request.app.state.query_pool
    return pool


async def canonical_ids(request: Request) -> None:
    """Every ``/v1`` route: a path parameter (doc, version, region or job id) of ``.`` or ``..`` is a 422
    ``invalid_id`` (it arrives percent-encoded; ``folio.Client`` refuses it before sending)."""
    for name, value in request.path_params.items():
        if value in (".", ".."):
            raise InvalidId(
                f"{name} {value!r} is not an id: '.' and '..' are path segments that address another resource"
            )


SettingsDep = Annotated[Settings, Depends(get_settings)]
FolioDep = Annotated[Folio, Depends(get_folio)]
QueryPoolDep = Annotated[QueryPool, Depends(get_query_pool)]

# auto_error=False: a missing key is our 401 in the common error shape, not FastAPI's 403.
_header_key = APIKeyHeader(
    name="X-API-Key", auto_error=False, description="a key's secret (FOLIO_KEYS_FILE) or FOLIO_API_KEY"
)
_bearer = HTTPBearer(auto_error=False, description="a key's secret as a bearer token")
_query_key = APIKeyQuery(
    name="key",
    auto_error=False,
    description="the key as a query parameter; accepted only on image endpoints, so <img src> works",
)


async def get_keyring(request: Request) -> KeyRing:
    ring: KeyRing = request.app.state.keys
    return ring


def authenticate(ring: KeyRing, *candidates: str | None) -> Principal:
    if not ring.enabled:
        return FULL_ACCESS
    for given in candidates:
        if given:
            found = ring.authenticate(given)
            if found is not None:
                return found
    if any(candidates):
        raise Unauthorized("invalid API key")
    raise Unauthorized("this server needs an API key: send X-API-Key: <key> or Authorization: Bearer <key>")


async def require_key(
    ring: Annotated[KeyRing, Depends(get_keyring)],
    header: Annotated[str | None, Depends(_header_key)],
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The caller's key (``api.keys``): 401 without a valid one when the server has keys.
    Each check stats the keys file; it is re-read only when it changed (a few KB, on the loop)."""
    return authenticate(ring, header, bearer.credentials if bearer else None)


async def require_key_or_query(
    ring: Annotated[KeyRing, Depends(get_keyring)],
    header: Annotated[str | None, Depends(_header_key)],
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    key: Annotated[str | None, Depends(_query_key)],
) -> Principal:
    """Like ``require_key``, also accepting ``?key=`` (image endpoints only: query strings end up in logs)."""
    return authenticate(ring, header, bearer.credentials if bearer else None, key)


async def require_write(caller: Annotated[Principal, Depends(require_key)]) -> Principal:
    """A key with write access (uploads, deletes); a read key gets 403."""
    if not caller.can_write:
        raise Forbidden("this API key is read-only: uploads and deletes need a key with write access")
    return caller


# The caller's principal; FastAPI computes a dependency once per request, so routers that list
# ``require_key`` in ``dependencies`` and routes that take ``CallerDep`` share one check.
CallerDep = Annotated[Principal, Depends(require_key)]
ImageCallerDep = Annotated[Principal, Depends(require_key_or_query)]
WriterDep = Annotated[Principal, Depends(require_write)]
