"""The store's parts, each with one job; ``folio.ingest.store.Store`` composes them into one facade.

- ``interface``: ``StoreReader`` and ``StoreWriter``, what retrieval and the application ask of a store
  (scans and searches take a ``Scope`` value; nobody outside the store writes a query string);
- ``database``: the LanceDB connection, its tables (opened once, created from their row models) and the
  scans of version-scoped tables;
- ``catalogue``: the ``versions`` table: which versions exist and are ready, in which collection, and the
  writers' claims on pending ones;
- ``regions``: the ``regions`` table and the per-version ``RegionIndex`` cache;
- ``chunks``: the ``chunks`` table (text vectors and the full-text index) and its searches;
- ``assets``: page renders and figure crops, ``LocalAssets`` (files under the data dir) or
  ``ObjectStoreAssets`` (rows of the ``assets`` table), chosen once when the store opens;
- ``recovery``: removing what dead or failed writers left, and deleting versions.

The parts import the kernel and the storage modules of ``folio.ingest`` (rows, tables, claims, objstore,
compaction), never the facade: the facade imports them.
"""
