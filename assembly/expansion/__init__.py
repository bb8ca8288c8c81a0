"""Expansion: from a scored hit on a small unit to the unit of evidence the model will see.

Expansion happens *after* scoring (score-then-expand): hits arrive already ranked and expansion
never changes a score.

Text inside one section is modelled as an interval over that section's sentences (in reading order,
``source.in_section(section_id, "sentence")``): a sentence window, a paragraph, a run of neighbour
paragraphs and the whole section are all ``Unit(kind="span", lo, hi)``; the whole section also sets
``full`` so its tables and sentence-less paragraphs are rendered too. Because every text unit of a
section is an interval of the same sequence, dedupe is an interval union (``assembly.dedupe``), and
a window can never leave its document, version or section: the sequence it indexes holds only that
section's sentences. Sentences without a section belong to one implicit section per version.

Figures in a section are *not* part of the parent text: they travel as image items with their
caption, triggered by their own hits.

The modules, by what they hold:

- ``expander``: ``Expander``, which picks each hit's unit, and ``visual_hit`` (which retrievers read text);
- ``units``: ``Unit``, what a hit becomes;
- ``sections``: ``SectionView``, a section as a sentence sequence, and token-sized windows over it;
- ``structure``: ``SourceStructure``, what expansion reads of a source (sections, continued tables, the
  blocks of a page, scanned pages, page text as sent), kept with the source;
- ``pagetext``: a page's compact text, as a page is sent;
- ``excerpts``: a slice of a page's text around a hit;
- ``tables``: tables as Markdown, and a table cut to its header and best rows.
"""
