"""The store: one LanceDB database in one data directory (or object-store URI), one package.

``store.Store`` is the facade every caller opens; it composes parts with one job each:

- ``interface``: ``StoreReader`` and ``StoreWriter``, what retrieval and the application ask of a store
  (scans and searches take a ``Scope`` value; nobody outside the store writes a query string);
- ``database``: the LanceDB connection, its tables (opened once, created from their row models) and the
  scans of version-scoped tables;
- ``catalogue``: the ``versions`` table: which versions exist and are ready, in which collection, and the
  writers' claims on pending ones (``claims``: a claim's writer identity and liveness);
- ``regions``: the ``regions`` table and the per-version ``RegionIndex`` cache;
- ``chunks``: the ``chunks`` table (text vectors and the full-text index) and its searches;
- ``indexes``: the tables' indexes, built once, folded forward by maintenance, rebuilt by ``folio compact
  --reindex``, and the chunk vectors' ANN index past a size (``IndexOptions``);
- ``assets``: page renders and figure crops, ``LocalAssets`` (files under the data dir) or
  ``ObjectStoreAssets`` (rows of the ``assets`` table; ``objstore``: the object store's options), chosen once
  when the store opens;
- ``recovery``: removing what dead or failed writers left, and deleting versions;
- ``compaction`` and ``maintenance``: LanceDB's old table versions cleaned up, and ``folio check``.

What they share: ``schema`` (every table's row model and Arrow schema; imports LanceDB, through
``lance_import``) and ``sql`` (collections, SQL literals and filters, column names; no LanceDB). In this
package "table" is always a LanceDB table and "row" a row of one; a table printed in a PDF is the PDF
reader's (``folio.ingest.pdf``). The parts never import the facade: the facade imports them.
"""
