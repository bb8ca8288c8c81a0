"""folio's kernel: what every stage shares, in a room of its own.

- ``folio.kernel.model``: the domain model (Document, Page, Region, Locator, ...), frozen pydantic values;
- ``folio.kernel.geometry``: ``BBox``, the one rectangle type, with its operations;
- ``folio.kernel.errors``: the exception tree (``code`` only; HTTP statuses belong to ``folio.api.errors``);
- ``folio.kernel.tokens``: tokenizers and token counting;
- ``folio.kernel.textnorm``: text normalisation shared by indexing and querying;
- ``folio.kernel.hit``: ``Hit``, what retrieval hands to assembly and the api;
- ``folio.kernel.index``: ``RegionIndex`` / ``RegionSource``, a version's regions by id, parent and position;
- ``folio.kernel.pageref``: the page numbers a question names ("page 12", "pp. 51-53");
- ``folio.kernel.scope``: ``Scope``, the versions (and pages, kinds) a query may see.

The kernel imports nothing else of folio (an import-linter contract in pyproject.toml, checked by
tests/test_layers.py); every other room may import it. The store and assembly import nothing else.
"""
