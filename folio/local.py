"""folio in this process: ``LocalFolio(data_dir).context(question, ...)`` returns the same
``folio.models.ContextPackage`` as ``Client.context`` against a server on that data, by calling the
service the server calls (``api.application.Folio``) here. It needs the full folio install (the store, the
embedder); the client alone does not.

The service (store, retriever, the configured tokenizers) is opened on first use, once; one
``LocalFolio`` may be shared by threads.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from folio import models

# Function-level imports: ``LocalFolio`` runs the whole service in-process and loads it (torch, LanceDB)
# on first use, so that importing folio's client never does.
if TYPE_CHECKING:
    from folio.api.application import Folio
    from folio.settings import Settings


class LocalFolio:
    def __init__(self, data: str | os.PathLike[str] | None = None, *, settings: Settings | None = None) -> None:
        from folio.api.application import LazyFolio
        from folio.settings import Settings

        settings = settings or Settings()
        if data is not None:
            settings = settings.model_copy(update={"data": str(data)})
        self.settings = settings
        self._folio = LazyFolio(settings)

    @property
    def service(self) -> Folio:
        """The service itself (opened on first use): every method of ``api.application.Folio``."""
        return self._folio()

    def context(self, query: str, **options: Any) -> models.ContextPackage:
        """The cited package; ``options`` are ``ContextRequest`` fields, validated as the server does."""
        from folio.api.schemas import ContextRequest

        service = self.service  # opened first: it registers the configured tokenizers a request may name
        req = ContextRequest.model_validate({"query": query, **options})
        package = service.context(req)
        return models.ContextPackage.model_validate(package.model_dump(mode="json"))

    def verify(self, answer: str, *, package: models.ContextPackage) -> models.VerifyReport:
        """The citation check of ``POST /v1/verify`` on ``answer`` against ``package``, in this process (through
        the service, as the server runs it: the same request bounds)."""
        from folio.api.schemas import VerifyRequest

        req = VerifyRequest.model_validate({"answer": answer, "package": package.model_dump(mode="json")})
        report = self.service.verify(req)
        return models.VerifyReport.model_validate(report.model_dump(mode="json"))
