"""``folio.Client`` and ``folio.AsyncClient``: folio's REST API over httpx, with typed results.

>>> import folio
>>> with folio.Client("http://127.0.0.1:8000") as client:            # doctest: +SKIP
...     pkg = client.context("How fast must a P1 incident be acknowledged?", budget=1500)
...     print(pkg.budget.used, [item.citation_id for item in pkg.items])

``answer`` asks the server's configured LLM (``POST /v1/answer``); ``answer_stream`` yields its
server-sent events (``package``, ``delta`` ..., ``done``), raising the typed error of an ``error``
event. Results are the models in ``folio.models`` (generated from the server's OpenAPI schema); errors are
the exceptions in ``folio.errors``, carrying the server's error code. Both clients build each call
the same way (``_Call``) and differ only in how they send it.

``api_key`` defaults to ``$FOLIO_API_KEY`` and ``base_url`` to ``$FOLIO_URL`` (else
``http://127.0.0.1:8000``). Any httpx transport can be passed, e.g. ``httpx.ASGITransport(app)``
to call an app in-process.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Generic, Literal, TypeVar, Unpack, overload
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from folio import models
from folio.errors import APIConnectionError, APITimeoutError, InvalidRequest, JobFailed, ResponseError, error_for
from folio.settings import ClientSettings

DEFAULT_URL = "http://127.0.0.1:8000"
DEFAULT_TIMEOUT = 120.0  # a first query loads the server's models; ingests wait for the parse

M = TypeVar("M", bound=BaseModel)
FileInput = str | os.PathLike[str] | bytes | IO[bytes]


@dataclass(frozen=True)
class _Call(Generic[M]):
    """One request and how to read its answer: a model, or raw bytes when ``model`` is None."""

    method: str
    path: str
    model: type[M] | None
    json: Any = None
    params: Mapping[str, Any] | None = None
    files: Any = None
    data: Mapping[str, str] | None = None
    alternatives: Mapping[int, type[BaseModel]] = field(default_factory=dict)  # status → another model


def _seg(value: str | int) -> str:
    """One path segment (ids may hold ``@`` and ``:``, never ``/``). An empty id, ``.`` or ``..`` is
    refused before anything is sent: httpx resolves dot segments (RFC 3986), so
    ``delete("victim", "..")`` would otherwise become ``DELETE /v1/documents/victim``."""
    text = str(value)
    if text in ("", ".", ".."):
        raise InvalidRequest(
            422,
            "invalid_id",
            f"{text!r} is not an id: an empty, '.' or '..' path segment would address another resource",
        )
    return quote(text, safe="@:")


def _parse(call: _Call[Any], response: httpx.Response) -> Any:
    if response.status_code >= 400:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text[:1000]
        raise error_for(response.status_code, body, dict(response.headers))
    if call.model is None:
        return response.content
    model = call.alternatives.get(response.status_code, call.model)
    try:
        return model.model_validate_json(response.content)
    except ValidationError as e:
        raise ResponseError(
            f"{call.method} {call.path}: the response is not a {model.__name__}: {str(e).splitlines()[0]}"
        ) from e


def _file_part(file: FileInput, filename: str | None) -> tuple[str, Any, str]:
    if isinstance(file, bytes):
        return (filename or "upload.pdf", file, "application/pdf")
    if isinstance(file, str | os.PathLike):
        path = Path(file)
        return (filename or path.name, path.read_bytes(), "application/pdf")
    return (filename or Path(getattr(file, "name", "upload.pdf")).name, file, "application/pdf")


def _request_body(model: type[BaseModel], query: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Checked against the request model here: a misspelt or mistyped option raises ``InvalidRequest``
    (``validation_error``, as the server's 422 would) before anything is sent. Only what the caller
    set is sent, so the server's defaults apply."""
    try:
        request = model(query=query, **options)
    except ValidationError as e:
        problems = [f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()]
        detail = [{"loc": list(err["loc"]), "msg": err["msg"], "type": err["type"]} for err in e.errors()]
        message = f"invalid {model.__name__}: " + "; ".join(problems)
        raise InvalidRequest(422, "validation_error", message, detail) from e
    body: dict[str, Any] = request.model_dump(mode="json", exclude_unset=True, by_alias=True)
    return body


JOB_FINISHED = ("done", "failed")


class FinishedJob(models.JobOut):
    """A job that is done (``wait_for_job``'s result): its ``result`` is the ``IngestResult``, never None."""

    status: Literal["done"]
    result: models.IngestResult


def _finished(job: models.JobOut) -> FinishedJob | None:
    """``job`` when it has finished (``JobFailed`` when it failed), else None."""
    if job.status == "failed":
        raise JobFailed(job)
    return FinishedJob.model_validate(job.model_dump()) if job.status in JOB_FINISHED else None


@dataclass(frozen=True)
class AnswerEvent:
    """One server-sent event of a streamed answer: ``package`` (the package and the usage known
    before the model is asked), ``delta`` (``data["text"]``), ``done`` (``answer`` is the
    ``AnswerResponse``, the citation check included, without the package)."""

    event: str
    data: dict[str, Any]
    answer: models.AnswerResponse | None = None


class _SSE:
    """Server-sent events from lines (``event:``/``data:`` fields, a blank line ends an event)."""

    def __init__(self) -> None:
        self.event = "message"
        self.data: list[str] = []

    def feed(self, line: str) -> AnswerEvent | None:
        if line.startswith("event:"):
            self.event = line[6:].strip()
        elif line.startswith("data:"):
            self.data.append(line[5:].lstrip())
        elif not line and self.data:
            event, raw = self.event, "\n".join(self.data)
            self.event, self.data = "message", []
            return _answer_event(event, raw)
        return None


def _answer_event(event: str, raw: str) -> AnswerEvent:
    import json

    try:
        data = json.loads(raw)
    except ValueError as e:
        raise ResponseError(f"POST /v1/answer: a {event} event whose data is not JSON") from e
    if event == "error":  # the one error shape plus the status the error would have had
        raise error_for(int(data.get("status") or 502), data)
    if event == "done":
        try:
            return AnswerEvent(event, data, models.AnswerResponse.model_validate(data))
        except ValidationError as e:
            raise ResponseError(f"POST /v1/answer: the done event is not an AnswerResponse: {e}") from e
    return AnswerEvent(event, data)


def _events(lines: Iterable[str]) -> Iterator[AnswerEvent]:
    sse = _SSE()
    for line in lines:
        found = sse.feed(line)
        if found is not None:
            yield found
            if found.event == "done":
                return
    raise ResponseError("POST /v1/answer: the stream ended before its done event")


class _Calls:
    """The calls of the API, shared by the two clients."""

    @staticmethod
    def health() -> _Call[models.HealthOut]:
        return _Call("GET", "/v1/health", models.HealthOut)

    @staticmethod
    def list_documents() -> _Call[models.DocumentList]:
        return _Call("GET", "/v1/documents", models.DocumentList)

    @staticmethod
    def get_document(doc_id: str) -> _Call[models.DocumentDetail]:
        return _Call("GET", f"/v1/documents/{_seg(doc_id)}", models.DocumentDetail)

    @staticmethod
    def list_pages(doc_id: str, version_id: str) -> _Call[models.PageList]:
        return _Call("GET", f"/v1/documents/{_seg(doc_id)}/versions/{_seg(version_id)}/pages", models.PageList)

    @staticmethod
    def upload(
        file: FileInput, filename: str | None, doc_id: str | None, collection: str | None, wait: bool
    ) -> _Call[models.IngestResponse]:
        data = {k: v for k, v in (("doc_id", doc_id), ("collection", collection)) if v}
        return _Call(
            "POST",
            "/v1/documents",
            models.IngestResponse,
            params={"wait": "true" if wait else "false"},
            files={"file": _file_part(file, filename)},
            data=data,
            alternatives={202: models.JobOut},
        )

    @staticmethod
    def delete(doc_id: str, version_id: str | None) -> _Call[models.DeleteResponse]:
        path = f"/v1/documents/{_seg(doc_id)}" + (f"/versions/{_seg(version_id)}" if version_id is not None else "")
        return _Call("DELETE", path, models.DeleteResponse)

    @staticmethod
    def job(job_id: str) -> _Call[models.JobOut]:
        return _Call("GET", f"/v1/jobs/{_seg(job_id)}", models.JobOut)

    @staticmethod
    def jobs() -> _Call[models.JobList]:
        return _Call("GET", "/v1/jobs", models.JobList)

    @staticmethod
    def search(query: str, options: Mapping[str, Any]) -> _Call[models.SearchResponse]:
        return _Call(
            "POST", "/v1/search", models.SearchResponse, json=_request_body(models.SearchRequest, query, options)
        )

    @staticmethod
    def context(query: str, options: Mapping[str, Any]) -> _Call[models.ContextPackage]:
        body = _request_body(models.ContextRequest, query, options)
        return _Call("POST", "/v1/context", models.ContextPackage, json=body)

    @staticmethod
    def answer(query: str, options: Mapping[str, Any], stream: bool) -> _Call[models.AnswerResponse]:
        body = _request_body(models.AnswerRequest, query, {**options, "stream": stream})
        return _Call("POST", "/v1/answer", models.AnswerResponse, json=body)

    @staticmethod
    def verify(
        answer: str,
        package: models.ContextPackage | Mapping[str, Any] | None,
        context_request: Mapping[str, Any] | None,
    ) -> _Call[models.VerifyReport]:
        body: dict[str, Any] = {"answer": answer}
        if package is not None:
            body["package"] = package.model_dump(mode="json") if isinstance(package, BaseModel) else dict(package)
        if context_request is not None:
            body["context_request"] = dict(context_request)
        return _Call("POST", "/v1/verify", models.VerifyReport, json=body)

    @staticmethod
    def region(region_id: str) -> _Call[models.RegionOut]:
        return _Call("GET", f"/v1/regions/{_seg(region_id)}", models.RegionOut)

    @staticmethod
    def region_image(region_id: str) -> _Call[Any]:
        return _Call("GET", f"/v1/regions/{_seg(region_id)}/image", None)

    @staticmethod
    def page_image(doc_id: str, version_id: str, page: int) -> _Call[Any]:
        return _Call("GET", f"/v1/documents/{_seg(doc_id)}/versions/{_seg(version_id)}/pages/{_seg(page)}/image", None)


def _headers(api_key: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        agent = f"folio-client/{version('folio')}"
    except PackageNotFoundError:
        agent = "folio-client"
    headers = {"User-Agent": agent, "Accept": "application/json"}
    key = api_key if api_key is not None else ClientSettings().api_key
    if key:
        headers["X-API-Key"] = key
    headers.update(extra or {})
    return headers


def _base_url(base_url: str | None) -> str:
    return (base_url or ClientSettings().url or DEFAULT_URL).rstrip("/")


class Client:
    """A synchronous client; use it as a context manager or call ``close()``."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = _base_url(base_url)
        self._http = httpx.Client(
            base_url=self.base_url, headers=_headers(api_key, headers), timeout=timeout, transport=transport
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    @overload
    def _send(self, call: _Call[M]) -> M: ...
    @overload
    def _send(self, call: _Call[Any]) -> Any: ...
    def _send(self, call: _Call[Any]) -> Any:
        try:
            response = self._http.request(
                call.method, call.path, json=call.json, params=call.params, files=call.files, data=call.data
            )
        except httpx.TimeoutException as e:
            raise APITimeoutError(f"{call.method} {self.base_url}{call.path}: timed out ({e})") from e
        except httpx.TransportError as e:
            raise APIConnectionError(f"{call.method} {self.base_url}{call.path}: {e}") from e
        return _parse(call, response)

    def health(self) -> models.HealthOut:
        return self._send(_Calls.health())

    def list_documents(self) -> models.DocumentList:
        """The latest version of every document the key sees: ``{data, count}``."""
        return self._send(_Calls.list_documents())

    def get_document(self, doc_id: str) -> models.DocumentDetail:
        return self._send(_Calls.get_document(doc_id))

    def list_pages(self, doc_id: str, version_id: str) -> models.PageList:
        return self._send(_Calls.list_pages(doc_id, version_id))

    @overload
    def upload(
        self,
        file: FileInput,
        *,
        filename: str | None = ...,
        doc_id: str | None = ...,
        collection: str | None = ...,
        wait: Literal[True] = ...,
    ) -> models.IngestResponse: ...
    @overload
    def upload(
        self,
        file: FileInput,
        *,
        filename: str | None = ...,
        doc_id: str | None = ...,
        collection: str | None = ...,
        wait: Literal[False],
    ) -> models.JobOut: ...
    @overload
    def upload(
        self,
        file: FileInput,
        *,
        filename: str | None = ...,
        doc_id: str | None = ...,
        collection: str | None = ...,
        wait: bool,
    ) -> models.IngestResponse | models.JobOut: ...
    def upload(
        self,
        file: FileInput,
        *,
        filename: str | None = None,
        doc_id: str | None = None,
        collection: str | None = None,
        wait: bool = True,
    ) -> models.IngestResponse | models.JobOut:
        """Ingest a PDF (a path, bytes or a binary file): the ``IngestResponse``, or with ``wait=False`` the
        queued ``JobOut`` (typed so: mypy knows which one a call gets)."""
        result: models.IngestResponse | models.JobOut = self._send(
            _Calls.upload(file, filename, doc_id, collection, wait)
        )
        return result

    def delete(self, doc_id: str, version_id: str | None = None) -> models.DeleteResponse:
        return self._send(_Calls.delete(doc_id, version_id))

    def job(self, job_id: str) -> models.JobOut:
        return self._send(_Calls.job(job_id))

    def jobs(self) -> models.JobList:
        return self._send(_Calls.jobs())

    def wait_for_job(
        self, job: str | models.JobOut, *, timeout: float = 600.0, poll_interval: float = 0.5
    ) -> FinishedJob:
        """Poll ``GET /v1/jobs/{id}`` until the job is done and return it (a ``FinishedJob``: its ``result`` is
        the ``IngestResult``). Raises ``JobFailed`` when it failed, ``APITimeoutError`` after ``timeout``
        seconds. ``job`` is an id or the ``JobOut`` of ``upload(..., wait=False)``."""
        import time

        job_id = job if isinstance(job, str) else job.job_id
        deadline = time.monotonic() + timeout
        while (found := _finished(self.job(job_id))) is None:
            if time.monotonic() >= deadline:
                raise APITimeoutError(f"job {job_id} did not finish within {timeout:g} s")
            time.sleep(poll_interval)
        return found

    def search(self, query: str, **options: Unpack[models.SearchOptions]) -> models.SearchResponse:
        """Ranked hits; ``options`` are ``SearchRequest`` fields (``doc_ids``, ``k``, ``strategy`` ...)."""
        return self._send(_Calls.search(query, options))

    def context(self, query: str, **options: Unpack[models.ContextOptions]) -> models.ContextPackage:
        """The cited package; ``options`` are ``ContextRequest`` fields (``budget``, ``strategy``,
        ``doc_ids``, ``include_images`` ...)."""
        return self._send(_Calls.context(query, options))

    def answer(self, query: str, **options: Unpack[models.AnswerOptions]) -> models.AnswerResponse:
        """A cited answer from the server's configured LLM, with the citation check; ``options`` are
        ``AnswerRequest`` fields (every context option, ``response_format``, ``json_schema`` ...).
        Without an LLM on the server this raises ``ServiceUnavailable`` (``llm_not_configured``)."""
        return self._send(_Calls.answer(query, options, stream=False))

    def answer_stream(self, query: str, **options: Unpack[models.AnswerOptions]) -> Iterator[AnswerEvent]:
        """``answer`` as it is written: the events up to and including ``done``."""
        call = _Calls.answer(query, options, stream=True)
        try:
            with self._http.stream(call.method, call.path, json=call.json) as response:
                if response.status_code >= 400:
                    response.read()
                    _parse(call, response)
                yield from _events(response.iter_lines())
        except httpx.TimeoutException as e:
            raise APITimeoutError(f"{call.method} {self.base_url}{call.path}: timed out ({e})") from e
        except httpx.TransportError as e:
            raise APIConnectionError(f"{call.method} {self.base_url}{call.path}: {e}") from e

    def verify(
        self,
        answer: str,
        *,
        package: models.ContextPackage | Mapping[str, Any] | None = None,
        context_request: Mapping[str, Any] | None = None,
    ) -> models.VerifyReport:
        return self._send(_Calls.verify(answer, package, context_request))

    def region(self, region_id: str) -> models.RegionOut:
        return self._send(_Calls.region(region_id))

    def region_image(self, region_id: str) -> bytes:
        """The region's PNG: the figure crop, else the render of its first page."""
        data: bytes = self._send(_Calls.region_image(region_id))
        return data

    def page_image(self, doc_id: str, version_id: str, page: int) -> bytes:
        data: bytes = self._send(_Calls.page_image(doc_id, version_id, page))
        return data


class AsyncClient:
    """The same calls as ``Client``, awaited; use ``async with`` or ``await aclose()``."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = _base_url(base_url)
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=_headers(api_key, headers), timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    @overload
    async def _send(self, call: _Call[M]) -> M: ...
    @overload
    async def _send(self, call: _Call[Any]) -> Any: ...
    async def _send(self, call: _Call[Any]) -> Any:
        try:
            response = await self._http.request(
                call.method, call.path, json=call.json, params=call.params, files=call.files, data=call.data
            )
        except httpx.TimeoutException as e:
            raise APITimeoutError(f"{call.method} {self.base_url}{call.path}: timed out ({e})") from e
        except httpx.TransportError as e:
            raise APIConnectionError(f"{call.method} {self.base_url}{call.path}: {e}") from e
        return _parse(call, response)

    async def health(self) -> models.HealthOut:
        return await self._send(_Calls.health())

    async def list_documents(self) -> models.DocumentList:
        return await self._send(_Calls.list_documents())

    async def get_document(self, doc_id: str) -> models.DocumentDetail:
        return await self._send(_Calls.get_document(doc_id))

    async def list_pages(self, doc_id: str, version_id: str) -> models.PageList:
        return await self._send(_Calls.list_pages(doc_id, version_id))

    @overload
    async def upload(
        self,
        file: FileInput,
        *,
        filename: str | None = ...,
        doc_id: str | None = ...,
        collection: str | None = ...,
        wait: Literal[True] = ...,
    ) -> models.IngestResponse: ...
    @overload
    async def upload(
        self,
        file: FileInput,
        *,
        filename: str | None = ...,
        doc_id: str | None = ...,
        collection: str | None = ...,
        wait: Literal[False],
    ) -> models.JobOut: ...
    @overload
    async def upload(
        self,
        file: FileInput,
        *,
        filename: str | None = ...,
        doc_id: str | None = ...,
        collection: str | None = ...,
        wait: bool,
    ) -> models.IngestResponse | models.JobOut: ...
    async def upload(
        self,
        file: FileInput,
        *,
        filename: str | None = None,
        doc_id: str | None = None,
        collection: str | None = None,
        wait: bool = True,
    ) -> models.IngestResponse | models.JobOut:
        """``Client.upload``, awaited."""
        result: models.IngestResponse | models.JobOut = await self._send(
            _Calls.upload(file, filename, doc_id, collection, wait)
        )
        return result

    async def delete(self, doc_id: str, version_id: str | None = None) -> models.DeleteResponse:
        return await self._send(_Calls.delete(doc_id, version_id))

    async def job(self, job_id: str) -> models.JobOut:
        return await self._send(_Calls.job(job_id))

    async def jobs(self) -> models.JobList:
        return await self._send(_Calls.jobs())

    async def wait_for_job(
        self, job: str | models.JobOut, *, timeout: float = 600.0, poll_interval: float = 0.5
    ) -> FinishedJob:
        """``Client.wait_for_job``, awaited."""
        import asyncio
        import time

        job_id = job if isinstance(job, str) else job.job_id
        deadline = time.monotonic() + timeout
        while (found := _finished(await self.job(job_id))) is None:
            if time.monotonic() >= deadline:
                raise APITimeoutError(f"job {job_id} did not finish within {timeout:g} s")
            await asyncio.sleep(poll_interval)
        return found

    async def search(self, query: str, **options: Unpack[models.SearchOptions]) -> models.SearchResponse:
        return await self._send(_Calls.search(query, options))

    async def context(self, query: str, **options: Unpack[models.ContextOptions]) -> models.ContextPackage:
        return await self._send(_Calls.context(query, options))

    async def answer(self, query: str, **options: Unpack[models.AnswerOptions]) -> models.AnswerResponse:
        return await self._send(_Calls.answer(query, options, stream=False))

    async def answer_stream(self, query: str, **options: Unpack[models.AnswerOptions]) -> AsyncIterator[AnswerEvent]:
        call = _Calls.answer(query, options, stream=True)
        sse = _SSE()
        try:
            async with self._http.stream(call.method, call.path, json=call.json) as response:
                if response.status_code >= 400:
                    await response.aread()
                    _parse(call, response)
                async for line in response.aiter_lines():
                    found = sse.feed(line)
                    if found is not None:
                        yield found
                        if found.event == "done":
                            return
        except httpx.TimeoutException as e:
            raise APITimeoutError(f"{call.method} {self.base_url}{call.path}: timed out ({e})") from e
        except httpx.TransportError as e:
            raise APIConnectionError(f"{call.method} {self.base_url}{call.path}: {e}") from e
        raise ResponseError("POST /v1/answer: the stream ended before its done event")

    async def verify(
        self,
        answer: str,
        *,
        package: models.ContextPackage | Mapping[str, Any] | None = None,
        context_request: Mapping[str, Any] | None = None,
    ) -> models.VerifyReport:
        return await self._send(_Calls.verify(answer, package, context_request))

    async def region(self, region_id: str) -> models.RegionOut:
        return await self._send(_Calls.region(region_id))

    async def region_image(self, region_id: str) -> bytes:
        data: bytes = await self._send(_Calls.region_image(region_id))
        return data

    async def page_image(self, doc_id: str, version_id: str, page: int) -> bytes:
        data: bytes = await self._send(_Calls.page_image(doc_id, version_id, page))
        return data
