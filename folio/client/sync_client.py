"""``folio.Client``: the API's calls sent with a blocking ``httpx.Client``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, Unpack, overload

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
from folio.client.events import SSE, AnswerEvent, JobEvent, answer_events, job_events
from folio.errors import APIConnectionError, APITimeoutError


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
        self.base_url = resolve_base_url(base_url)
        self._http = httpx.Client(
            base_url=self.base_url, headers=default_headers(api_key, headers), timeout=timeout, transport=transport
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    @overload
    def _send(self, call: Call[M]) -> M: ...
    @overload
    def _send(self, call: Call[Any]) -> Any: ...
    def _send(self, call: Call[Any]) -> Any:
        try:
            response = self._http.request(
                call.method, call.path, json=call.json, params=call.params, files=call.files, data=call.data
            )
        except httpx.TimeoutException as e:
            raise APITimeoutError(f"{call.method} {self.base_url}{call.path}: timed out ({e})") from e
        except httpx.TransportError as e:
            raise APIConnectionError(f"{call.method} {self.base_url}{call.path}: {e}") from e
        return parse_response(call, response)

    def health(self) -> models.HealthOut:
        return self._send(Calls.health())

    def list_documents(self) -> models.DocumentList:
        """The latest version of every document the key sees: ``{data, count}``."""
        return self._send(Calls.list_documents())

    def get_document(self, doc_id: str) -> models.DocumentDetail:
        return self._send(Calls.get_document(doc_id))

    def list_pages(self, doc_id: str, version_id: str) -> models.PageList:
        return self._send(Calls.list_pages(doc_id, version_id))

    @overload
    def upload(
        self,
        file: FileInput,
        *,
        wait: Literal[True] = ...,
        **fields: Unpack[UploadFields],
    ) -> models.IngestResponse: ...
    @overload
    def upload(
        self,
        file: FileInput,
        *,
        wait: Literal[False],
        **fields: Unpack[UploadFields],
    ) -> models.JobOut: ...
    @overload
    def upload(
        self,
        file: FileInput,
        *,
        wait: bool,
        **fields: Unpack[UploadFields],
    ) -> models.IngestResponse | models.JobOut: ...
    def upload(
        self,
        file: FileInput,
        *,
        wait: bool = True,
        **fields: Unpack[UploadFields],
    ) -> models.IngestResponse | models.JobOut:
        """Ingest a PDF (a path, bytes or a binary file): the ``IngestResponse``, or with ``wait=False`` the
        queued ``JobOut`` (typed so: mypy knows which one a call gets)."""
        result: models.IngestResponse | models.JobOut = self._send(
            Calls.upload(file, fields, wait)
        )
        return result

    @overload
    def export_document(
        self, doc_id: str, *, format: Literal["markdown"] = ..., version_id: str | None = ...
    ) -> str: ...
    @overload
    def export_document(
        self, doc_id: str, *, format: Literal["json"], version_id: str | None = ...
    ) -> models.DocumentExport: ...
    def export_document(
        self, doc_id: str, *, format: Literal["markdown", "json"] = "markdown", version_id: str | None = None
    ) -> str | models.DocumentExport:
        """A document version (default: the latest) in reading order: Markdown (a str: headings, paragraphs,
        tables, figure links, ``<!-- page N -->`` markers) or, with ``format="json"``, the ``DocumentExport``
        (the version's facts and its regions with their locators)."""
        out: bytes | models.DocumentExport = self._send(Calls.export_document(doc_id, format, version_id))
        return out.decode("utf-8") if isinstance(out, bytes) else out

    def upload_many(
        self,
        files: Sequence[FileInput],
        *,
        collection: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        redo_degraded: bool = False,
    ) -> models.BatchUploadResponse:
        """Several PDFs in one request (``POST /v1/documents/batch``), one ingest job each, answered at once:
        per file its ``job_id``, or why it was refused (``status``, ``error``; nothing of it was written).
        ``metadata`` is every file's new version's (docs/api.md, Metadata); doc ids come from the file names.
        Follow the jobs with ``job_events``."""
        fields: UploadFields = {"collection": collection, "metadata": metadata}
        return self._send(Calls.upload_many(files, fields, redo_degraded))

    def job_events(
        self, jobs: str | models.JobOut | Sequence[str | models.JobOut], *, timeout: float | None = None
    ) -> Iterator[JobEvent]:
        """A job's (or several jobs') progress as the server pushes it: ``JobEvent``s (``progress`` on each change
        of status or stage, then ``done`` or ``failed``, with the ``JobOut``), up to and including ``end``.
        ``timeout``: the server ends the stream after that many seconds (a ``timeout`` event, then ``end``)."""
        call = Calls.job_events(jobs, timeout)
        sse = SSE()
        try:
            with self._http.stream(call.method, call.path, params=call.params) as response:
                if response.status_code >= 400:
                    response.read()
                    parse_response(call, response)
                yield from job_events((sse.feed_job(line, call.path) for line in response.iter_lines()), call.path)
        except httpx.TimeoutException as e:
            raise APITimeoutError(f"{call.method} {self.base_url}{call.path}: timed out ({e})") from e
        except httpx.TransportError as e:
            raise APIConnectionError(f"{call.method} {self.base_url}{call.path}: {e}") from e

    def delete(self, doc_id: str, version_id: str | None = None) -> models.DeleteResponse:
        return self._send(Calls.delete(doc_id, version_id))

    def job(self, job_id: str) -> models.JobOut:
        return self._send(Calls.job(job_id))

    def jobs(self) -> models.JobList:
        return self._send(Calls.jobs())

    def wait_for_job(
        self, job: str | models.JobOut, *, timeout: float = 600.0, poll_interval: float = 0.5
    ) -> FinishedJob:
        """Poll ``GET /v1/jobs/{id}`` until the job is done and return it (a ``FinishedJob``: its ``result`` is
        the ``IngestResult``). Raises ``JobFailed`` when it failed, ``APITimeoutError`` after ``timeout``
        seconds. ``job`` is an id or the ``JobOut`` of ``upload(..., wait=False)``."""
        import time

        job_id = job if isinstance(job, str) else job.job_id
        deadline = time.monotonic() + timeout
        while (found := finished_job(self.job(job_id))) is None:
            if time.monotonic() >= deadline:
                raise APITimeoutError(f"job {job_id} did not finish within {timeout:g} s")
            time.sleep(poll_interval)
        return found

    def search(self, query: str, **options: Unpack[models.SearchOptions]) -> models.SearchResponse:
        """Ranked hits; ``options`` are ``SearchRequest`` fields (``doc_ids``, ``k``, ``strategy`` ...)."""
        return self._send(Calls.search(query, options))

    def context(self, query: str, **options: Unpack[models.ContextOptions]) -> models.ContextPackage:
        """The cited package; ``options`` are ``ContextRequest`` fields (``budget``, ``strategy``,
        ``doc_ids``, ``include_images`` ...)."""
        return self._send(Calls.context(query, options))

    def answer(self, query: str, **options: Unpack[models.AnswerOptions]) -> models.AnswerResponse:
        """A cited answer from the server's configured LLM, with the citation check; ``options`` are
        ``AnswerRequest`` fields (every context option, ``response_format``, ``json_schema`` ...).
        Without an LLM on the server this raises ``ServiceUnavailable`` (``llm_not_configured``)."""
        return self._send(Calls.answer(query, options, stream=False))

    def answer_stream(self, query: str, **options: Unpack[models.AnswerOptions]) -> Iterator[AnswerEvent]:
        """``answer`` as it is written: the events up to and including ``done``."""
        call = Calls.answer(query, options, stream=True)
        try:
            with self._http.stream(call.method, call.path, json=call.json) as response:
                if response.status_code >= 400:
                    response.read()
                    parse_response(call, response)
                yield from answer_events(response.iter_lines())
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
        return self._send(Calls.verify(answer, package, context_request))

    def region(self, region_id: str) -> models.RegionOut:
        return self._send(Calls.region(region_id))

    def region_image(self, region_id: str) -> bytes:
        """The region's PNG: the figure crop, else the render of its first page."""
        data: bytes = self._send(Calls.region_image(region_id))
        return data

    def page_image(self, doc_id: str, version_id: str, page: int) -> bytes:
        data: bytes = self._send(Calls.page_image(doc_id, version_id, page))
        return data
