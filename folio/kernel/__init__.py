"""folio's kernel: what every stage shares, in a room of its own.

- ``folio.kernel.model``: the domain model (Document, Page, Region, Locator, ...), frozen pydantic values;
- ``folio.kernel.geometry``: ``BBox``, the one rectangle type, with its operations;
- ``folio.kernel.errors``: the exception tree (``code`` only; HTTP statuses belong to ``folio.api.errors``);
- ``folio.kernel.tokens``: tokenizers and token counting;
- ``folio.kernel.textnorm``: text normalisation shared by indexing and querying.

The kernel imports nothing else of folio (an import-linter contract in pyproject.toml, checked by
tests/test_layers.py); every other room may import it.
"""
