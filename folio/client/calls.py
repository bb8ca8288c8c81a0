"""What the two clients share: each call of the API built once as a ``Call`` (method, path, body, the model
of its answer), its answer read into that model or a typed error, and the headers and URL a client starts with.
``Client`` and ``AsyncClient`` differ only in how they send a ``Call``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Generic, Literal, TypedDict, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from folio import models
from folio._version import __version__
from folio.errors import InvalidRequest, JobFailed, ResponseError, error_for
from folio.settings import ClientSettings

DEFAULT_URL = "http://127.0.0.1:8000"
DEFAULT_TIMEOUT = 120.0  # a first query loads the server's models; ingests wait for the parse

M = TypeVar("M", bound=BaseModel)
FileInput = str | os.PathLike[str] | bytes | IO[bytes]


@dataclass(frozen=True)
class Call(Generic[M]):
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


def parse_response(call: Call[Any], response: httpx.Response) -> Any:
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


def request_body(model: type[BaseModel], query: str, options: Mapping[str, Any]) -> dict[str, Any]:
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


class UploadFields(TypedDict, total=False):
    """What ``upload`` takes besides the file and ``wait``: the ``filename`` to give it (default: the path's),
    its ``doc_id`` (default: from the file name), its ``collection`` (default: ``default``), and the new
    version's ``metadata`` (docs/api.md, Metadata: strings, finite numbers, booleans, dates)."""

    filename: str | None
    doc_id: str | None
    collection: str | None
    metadata: Mapping[str, Any] | None


def upload_form(fields: UploadFields) -> dict[str, str]:
    """An upload's form fields besides the file: those given, ``metadata`` as its JSON object (checked by the
    server: bad metadata is a 422 before any job)."""
    given = (("doc_id", fields.get("doc_id")), ("collection", fields.get("collection")))
    data = {k: v for k, v in given if v}
    metadata = fields.get("metadata")
    if metadata:
        data["metadata"] = json.dumps(dict(metadata), default=str)  # a date goes as its YYYY-MM-DD
    return data


JOB_FINISHED = ("done", "failed")


class FinishedJob(models.JobOut):
    """A job that is done (``wait_for_job``'s result): its ``result`` is the ``IngestResult``, never None."""

    status: Literal["done"]
    result: models.IngestResult


def finished_job(job: models.JobOut) -> FinishedJob | None:
    """``job`` when it has finished (``JobFailed`` when it failed), else None."""
    if job.status == "failed":
        raise JobFailed(job)
    return FinishedJob.model_validate(job.model_dump()) if job.status in JOB_FINISHED else None


class Calls:
    """The calls of the API, shared by the two clients."""

    @staticmethod
    def health() -> Call[models.HealthOut]:
        return Call("GET", "/v1/health", models.HealthOut)

    @staticmethod
    def list_documents() -> Call[models.DocumentList]:
        return Call("GET", "/v1/documents", models.DocumentList)

    @staticmethod
    def get_document(doc_id: str) -> Call[models.DocumentDetail]:
        return Call("GET", f"/v1/documents/{_seg(doc_id)}", models.DocumentDetail)

    @staticmethod
    def list_pages(doc_id: str, version_id: str) -> Call[models.PageList]:
        return Call("GET", f"/v1/documents/{_seg(doc_id)}/versions/{_seg(version_id)}/pages", models.PageList)

    @staticmethod
    def upload(file: FileInput, fields: UploadFields, wait: bool) -> Call[models.IngestResponse]:
        return Call(
            "POST",
            "/v1/documents",
            models.IngestResponse,
            params={"wait": "true" if wait else "false"},
            files={"file": _file_part(file, fields.get("filename"))},
            data=upload_form(fields),
            alternatives={202: models.JobOut},
        )

    @staticmethod
    def upload_many(
        files: Sequence[FileInput], fields: UploadFields, redo_degraded: bool
    ) -> Call[models.BatchUploadResponse]:
        """``fields``: the ``collection`` and the ``metadata`` of every file (a batch takes no ``doc_id``)."""
        if not files:
            raise InvalidRequest(422, "invalid_request", "upload_many: give at least one file")
        return Call(
            "POST",
            "/v1/documents/batch",
            models.BatchUploadResponse,
            params={"redo_degraded": "true"} if redo_degraded else None,
            files=[("file", _file_part(f, None)) for f in files],
            data=upload_form({"collection": fields.get("collection"), "metadata": fields.get("metadata")}) or None,
        )

    @staticmethod
    def job_events(jobs: str | models.JobOut | Sequence[str | models.JobOut], timeout: float | None) -> Call[Any]:
        """The event stream of one job (``/v1/jobs/{id}/events``) or of several (``/v1/jobs/events?ids=``)."""
        many = [jobs] if isinstance(jobs, str | models.JobOut) else list(jobs)
        ids = [j if isinstance(j, str) else j.job_id for j in many]
        if not ids:
            raise InvalidRequest(422, "invalid_request", "job_events: give at least one job")
        params: dict[str, Any] = {"timeout": timeout} if timeout is not None else {}
        if len(ids) == 1:
            return Call("GET", f"/v1/jobs/{_seg(ids[0])}/events", None, params=params)
        for i in ids:
            _seg(i)
        return Call("GET", "/v1/jobs/events", None, params={"ids": ",".join(ids), **params})

    @staticmethod
    def delete(doc_id: str, version_id: str | None) -> Call[models.DeleteResponse]:
        path = f"/v1/documents/{_seg(doc_id)}" + (f"/versions/{_seg(version_id)}" if version_id is not None else "")
        return Call("DELETE", path, models.DeleteResponse)

    @staticmethod
    def export_document(doc_id: str, fmt: str, version_id: str | None) -> Call[Any]:
        """Markdown comes back as bytes (``model`` None), JSON as a ``DocumentExport``."""
        params = {"format": fmt, **({"version_id": version_id} if version_id is not None else {})}
        model = models.DocumentExport if fmt == "json" else None
        return Call("GET", f"/v1/documents/{_seg(doc_id)}/export", model, params=params)

    @staticmethod
    def job(job_id: str) -> Call[models.JobOut]:
        return Call("GET", f"/v1/jobs/{_seg(job_id)}", models.JobOut)

    @staticmethod
    def jobs() -> Call[models.JobList]:
        return Call("GET", "/v1/jobs", models.JobList)

    @staticmethod
    def search(query: str, options: Mapping[str, Any]) -> Call[models.SearchResponse]:
        return Call(
            "POST", "/v1/search", models.SearchResponse, json=request_body(models.SearchRequest, query, options)
        )

    @staticmethod
    def context(query: str, options: Mapping[str, Any]) -> Call[models.ContextPackage]:
        body = request_body(models.ContextRequest, query, options)
        return Call("POST", "/v1/context", models.ContextPackage, json=body)

    @staticmethod
    def answer(query: str, options: Mapping[str, Any], stream: bool) -> Call[models.AnswerResponse]:
        body = request_body(models.AnswerRequest, query, {**options, "stream": stream})
        return Call("POST", "/v1/answer", models.AnswerResponse, json=body)

    @staticmethod
    def verify(
        answer: str,
        package: models.ContextPackage | Mapping[str, Any] | None,
        context_request: Mapping[str, Any] | None,
    ) -> Call[models.VerifyReport]:
        body: dict[str, Any] = {"answer": answer}
        if package is not None:
            body["package"] = package.model_dump(mode="json") if isinstance(package, BaseModel) else dict(package)
        if context_request is not None:
            body["context_request"] = dict(context_request)
        return Call("POST", "/v1/verify", models.VerifyReport, json=body)

    @staticmethod
    def region(region_id: str) -> Call[models.RegionOut]:
        return Call("GET", f"/v1/regions/{_seg(region_id)}", models.RegionOut)

    @staticmethod
    def region_image(region_id: str) -> Call[Any]:
        return Call("GET", f"/v1/regions/{_seg(region_id)}/image", None)

    @staticmethod
    def page_image(doc_id: str, version_id: str, page: int) -> Call[Any]:
        return Call("GET", f"/v1/documents/{_seg(doc_id)}/versions/{_seg(version_id)}/pages/{_seg(page)}/image", None)


def default_headers(api_key: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    headers = {"User-Agent": f"folio-client/{__version__}", "Accept": "application/json"}
    key = api_key if api_key is not None else ClientSettings().api_key
    if key:
        headers["X-API-Key"] = key
    headers.update(extra or {})
    return headers


def resolve_base_url(base_url: str | None) -> str:
    return (base_url or ClientSettings().url or DEFAULT_URL).rstrip("/")
