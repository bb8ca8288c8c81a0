"""What retrieval keeps in a process: what it derives from one document version, per version stamp
(``version_cache``), and the optional models, each loaded once, with their status entries (``models``)."""
