"""``folio.Client`` and ``folio.AsyncClient``: folio's REST API over httpx, with typed results.

>>> import folio
>>> with folio.Client("http://127.0.0.1:8000") as client:            # doctest: +SKIP
...     pkg = client.context("How fast must a P1 incident be acknowledged?", budget=1500)
...     print(pkg.budget.used, [item.citation_id for item in pkg.items])

``upload_many`` sends several PDFs in one request (one ingest job each) and ``job_events`` yields their progress
as the server pushes it (``JobEvent``: ``progress``, ``done``/``failed``, ``end``). ``answer`` asks the server's
configured LLM (``POST /v1/answer``); ``answer_stream`` yields its
server-sent events (``package``, ``delta`` ..., ``done``), raising the typed error of an ``error``
event. Results are the models in ``folio.models`` (generated from the server's OpenAPI schema); errors are
the exceptions in ``folio.errors``, carrying the server's error code. Both clients build each call
the same way (``folio.client.calls``) and differ only in how they send it.

``api_key`` defaults to ``$FOLIO_API_KEY`` and ``base_url`` to ``$FOLIO_URL`` (else
``http://127.0.0.1:8000``). Any httpx transport can be passed, e.g. ``httpx.ASGITransport(app)``
to call an app in-process.
"""

from __future__ import annotations

from folio.client.async_client import AsyncClient
from folio.client.calls import DEFAULT_TIMEOUT, DEFAULT_URL, FileInput, FinishedJob
from folio.client.events import AnswerEvent, JobEvent
from folio.client.sync_client import Client

__all__ = [
    "DEFAULT_TIMEOUT", "DEFAULT_URL", "AnswerEvent", "AsyncClient", "Client", "FileInput", "FinishedJob", "JobEvent"
]
