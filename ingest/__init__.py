"""Ingest: PDF bytes in, a ready document version in the store out.

- ``pipeline``: the stages (check, claim, parse, embed and index, commit) over one carrier (``Ingestion``), with
  ``IngestSource`` (the PDF checked once) and ``ingest`` / ``ingest_bytes`` / ``ingest_path``;
- ``options``: ``IngestOptions``, what one ingest is asked to do, handed to every stage;
- ``parse_supervisor``: the parse in a child process within its time and memory limits;
- ``pdf/``: the PDF reader (``parse_pdf``), which stores nothing;
- ``embed``, ``unit_budget``, ``row_units``: the text vectors, what the text index may cost, a chunk per body
  row of a long table;
- ``storage/``: the store (``storage.store.Store``), one LanceDB database.
"""
