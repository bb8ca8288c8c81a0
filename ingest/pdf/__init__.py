"""The PDF reader: one PDF's bytes in, a ``ParsedDocument`` out (pages, sections, paragraphs, sentences, tables,
figures), nothing stored.

- ``validate``: opening untrusted bytes, every failure one ``InvalidDocument``;
- ``parse``: the two passes over the pages (``parse_pdf``), with ``page_lanes`` (PNG writes and Tesseract beside
  the parse) and ``page_deadline`` (a page's soft time limit);
- ``text``, ``furniture``, ``headings``, ``sentences``, ``regions``: text blocks, running headers and footers,
  headings, sentences, and the regions built from them;
- ``tables/``: the table readers behind one seam, by mode (ruled tables with ``find_tables``, statements read from
  word positions, both merged); ``figures``, ``ocr``.

In this package "table" is always a table printed in the PDF; the LanceDB tables are the store's
(``folio.ingest.storage``). It imports the kernel and the settings, nothing else of folio (pyproject's contracts).
"""
