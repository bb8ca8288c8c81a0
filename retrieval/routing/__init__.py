"""What a question is turned into before the channels run: the line items and statements of the financial metrics
it names (``glossary``) and the sections summary routing searches first (``summary``, with its ingest-side
indexer)."""
