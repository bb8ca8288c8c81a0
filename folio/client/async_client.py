"""``folio.AsyncClient``: the same calls as ``folio.Client``, awaited on an ``httpx.AsyncClient``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, Unpack, overload

import httpx

from folio import models
from folio.client.calls import (
    DEFAULT_TIMEOUT,
    Call,
    Calls,
    FileInput,
    FinishedJob,
    M,
    UploadFields,
    default_headers,
    finished_job,
    parse_response,
    resolve_base_url,
)
from folio.client.events import SSE, AnswerEvent, JobEvent
from folio.errors import APIConnectionError, APITimeoutError, ResponseError

E = TypeVar("E", AnswerEvent, JobEvent)


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
        self.base_url = resolve_base_url(base_url)
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=default_headers(api_key, headers), timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    @overload
    async def _send(self, call: Call[M]) -> M: ...
    @overload
    async def _send(self, call: Call[Any]) -> Any: ...
    async def _send(self, call: Call[Any]) -> Any:
        try:
            response = await self._http.request(
                call.method, call.path, json=call.json, params=call.params, files=call.files, data=call.data
            )
        except httpx.TimeoutException as e:
            raise APITimeoutError(f"{call.method} {self.base_url}{call.path}: timed out ({e})") from e
        except httpx.TransportError as e:
            raise APIConnectionError(f"{call.method} {self.base_url}{call.path}: {e}") from e
        return parse_response(call, response)

    async def health(self) -> models.HealthOut:
        return await self._send(Calls.health())

    async def list_documents(self) -> models.DocumentList:
        return await self._send(Calls.list_documents())

    async def get_document(self, doc_id: str) -> models.DocumentDetail:
        return await self._send(Calls.get_document(doc_id))

    async def list_pages(self, doc_id: str, version_id: str) -> models.PageList:
        return await self._send(Calls.list_pages(doc_id, version_id))

    @overload
    async def upload(
        self,
        file: FileInput,
        *,
        wait: Literal[True] = ...,
        **fields: Unpack[UploadFields],
    ) -> models.IngestResponse: ...
    @overload
    async def upload(
        self,
        file: FileInput,
        *,
        wait: Literal[False],
        **fields: Unpack[UploadFields],
    ) -> models.JobOut: ...
    @overload
    async def upload(
        self,
        file: FileInput,
        *,
        wait: bool,
        **fields: Unpack[UploadFields],
    ) -> models.IngestResponse | models.JobOut: ...
    async def upload(
        self,
        file: FileInput,
        *,
        wait: bool = True,
        **fields: Unpack[UploadFields],
    ) -> models.IngestResponse | models.JobOut:
        """``Client.upload``, awaited."""
        result: models.IngestResponse | models.JobOut = await self._send(
            Calls.upload(file, fields, wait)
        )
        return result

    @overload
    async def export_document(
        self, doc_id: str, *, format: Literal["markdown"] = ..., version_id: str | None = ...
    ) -> str: ...
    @overload
    async def export_document(
        self, doc_id: str, *, format: Literal["json"], version_id: str | None = ...
    ) -> models.DocumentExport: ...
    async def export_document(
        self, doc_id: str, *, format: Literal["markdown", "json"] = "markdown", version_id: str | None = None
    ) -> str | models.DocumentExport:
        """A document version (default: the latest) in reading order: Markdown (a str: headings, paragraphs,
        tables, figure links, ``<!-- page N -->`` markers) or, with ``format="json"``, the ``DocumentExport``
        (the version's facts and its regions with their locators)."""
        out: bytes | models.DocumentExport = await self._send(Calls.export_document(doc_id, format, version_id))
        return out.decode("utf-8") if isinstance(out, bytes) else out

    async def upload_many(
        self,
        files: Sequence[FileInput],
        *,
        collection: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        redo_degraded: bool = False,
    ) -> models.BatchUploadResponse:
        """``Client.upload_many``, awaited."""
        fields: UploadFields = {"collection": collection, "metadata": metadata}
        return await self._send(Calls.upload_many(files, fields, redo_degraded))

    async def _events(self, call: Call[Any], feed: Callable[[str], E | None], last: str) -> AsyncIterator[E]:
        """The events ``feed`` reads from a server-sent stream, up to and including its ``last`` one; a stream that
        ends before it is a ``ResponseError``."""
        try:
            async with self._http.stream(call.method, call.path, json=call.json, params=call.params) as response:
                if response.status_code >= 400:
                    await response.aread()
                    parse_response(call, response)
                async for line in response.aiter_lines():
                    found = feed(line)
                    if found is not None:
                        yield found
                        if found.event == last:
                            return
        except httpx.TimeoutException as e:
            raise APITimeoutError(f"{call.method} {self.base_url}{call.path}: timed out ({e})") from e
        except httpx.TransportError as e:
            raise APIConnectionError(f"{call.method} {self.base_url}{call.path}: {e}") from e
        raise ResponseError(f"{call.method} {call.path}: the stream ended before its {last} event")

    async def job_events(
        self, jobs: str | models.JobOut | Sequence[str | models.JobOut], *, timeout: float | None = None
    ) -> AsyncIterator[JobEvent]:
        """``Client.job_events``, as an async iterator."""
        call = Calls.job_events(jobs, timeout)
        sse = SSE()
        async for found in self._events(call, lambda line: sse.feed_job(line, call.path), "end"):
            yield found

    async def delete(self, doc_id: str, version_id: str | None = None) -> models.DeleteResponse:
        return await self._send(Calls.delete(doc_id, version_id))

    async def job(self, job_id: str) -> models.JobOut:
        return await self._send(Calls.job(job_id))

    async def jobs(self) -> models.JobList:
        return await self._send(Calls.jobs())

    async def wait_for_job(
        self, job: str | models.JobOut, *, timeout: float = 600.0, poll_interval: float = 0.5
    ) -> FinishedJob:
        """``Client.wait_for_job``, awaited."""
        import asyncio
        import time

        job_id = job if isinstance(job, str) else job.job_id
        deadline = time.monotonic() + timeout
        while (found := finished_job(await self.job(job_id))) is None:
            if time.monotonic() >= deadline:
                raise APITimeoutError(f"job {job_id} did not finish within {timeout:g} s")
            await asyncio.sleep(poll_interval)
        return found

    async def search(self, query: str, **options: Unpack[models.SearchOptions]) -> models.SearchResponse:
        return await self._send(Calls.search(query, options))

    async def context(self, query: str, **options: Unpack[models.ContextOptions]) -> models.ContextPackage:
        return await self._send(Calls.context(query, options))

    async def answer(self, query: str, **options: Unpack[models.AnswerOptions]) -> models.AnswerResponse:
        return await self._send(Calls.answer(query, options, stream=False))

    async def answer_stream(self, query: str, **options: Unpack[models.AnswerOptions]) -> AsyncIterator[AnswerEvent]:
        call = Calls.answer(query, options, stream=True)
        sse = SSE()
        async for found in self._events(call, sse.feed, "done"):
            yield found

    async def verify(
        self,
        answer: str,
        *,
        package: models.ContextPackage | Mapping[str, Any] | None = None,
        context_request: Mapping[str, Any] | None = None,
    ) -> models.VerifyReport:
        return await self._send(Calls.verify(answer, package, context_request))

    async def region(self, region_id: str) -> models.RegionOut:
        return await self._send(Calls.region(region_id))

    async def region_image(self, region_id: str) -> bytes:
        data: bytes = await self._send(Calls.region_image(region_id))
        return data

    async def page_image(self, doc_id: str, version_id: str, page: int) -> bytes:
        data: bytes = await self._send(Calls.page_image(doc_id, version_id, page))
        return data
