"""Who folio is in the package registry: the distribution ``folio-context``, importing as ``folio`` (issue 48).

The registry's ``folio`` is someone else's project (a static-site generator from 2013), so folio is distributed
as ``folio-context``: ``pip install folio-context`` (the client), ``pip install 'folio-context[server]'`` (the
server). The import name stays ``folio``: changing it would break every user's ``import folio``, and a
distribution named apart from its import is common (``scikit-learn`` imports as ``sklearn``).

The version is written here once; ``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``), so the installed
metadata (``importlib.metadata.version(DISTRIBUTION)``) says the same, and folio's own code reads it without
asking the installed metadata, which a checkout may not have under this name.

>>> DISTRIBUTION
'folio-context'
"""

from __future__ import annotations

DISTRIBUTION = "folio-context"
__version__ = "0.1.0"
