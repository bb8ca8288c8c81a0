"""Tables printed in a page, read behind one seam: ``base`` holds the contract (``TablePage`` in, ``TableData`` out,
the ``TableReader`` protocol) and the readers by mode (``register``, the factory ``table_reader``); the parser asks
for the reader of the ``word_tables`` mode and calls it once per page.

- ``ruled`` (mode ``off``): ``page.find_tables()`` on ruled pages, gated and cleaned; ``chars``: the faster
  ``make_chars`` it runs with (its cells' characters);
- ``words``, ``wordrows``: statements read from word positions;
- ``merged`` (modes ``repair`` and ``all``): the ruled tables with the word tables put in.

A new reader is one module here, with its ``register("mode", Reader)`` beside its class.
"""
