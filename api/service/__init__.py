"""The work behind the door (``api.application.Folio``): building a context package (``context``), answers
(``answer``, ``answer_schemas``, ``schema_check``) and the one chat client (``llm``, ``llm_http``, ``chat``),
``compress="llm"`` (``compress_llm``), the bound on model calls (``model_calls``), ingest jobs and their
runner (``jobs``) and highlighted page renders (``highlight``). Plain functions over the store and retriever
the door hands in; no interface imports this room except through the door.
"""

from folio._migration import getattr_migration

__getattr__ = getattr_migration(__name__)  # what the module of this name held before it was a package
