"""folio on a Ray cluster (docs/scaling.md): the job board and its ingest task (``board``), the API's job runner
on it (``jobs``) and a whole cluster on one machine for tests and demos (``local``)."""

from folio._migration import getattr_migration

__getattr__ = getattr_migration(__name__)  # what the module of this name held before it was a package
