"""Assembly: ranked hits in, a cited, budgeted context package out (pure: no LanceDB, torch, PyMuPDF).

>>> from folio.assembly import assemble, verify_answer, AssemblyOptions  # doctest: +SKIP
>>> pkg = assemble("P1 target?", hits, index, AssemblyOptions(budget=2000))  # doctest: +SKIP

Steps (each recorded in ``ContextPackage.manifest``; ``assembly.core.assemble`` runs them): select and
expand the hits (``assembly.selection``, ``assembly.expansion``), dedupe/merge (``assembly.dedupe``),
prioritise (``assembly.priority``) and pack (``assembly.packing``), order (``assembly.order``), render
and count the prompt (``assembly.prompt``); ``verify_answer`` (``assembly.verify``) checks an
answer's citations afterwards.
"""

from folio.assembly.core import assemble
from folio.assembly.options import AssemblyOptions, ImageTokens
from folio.assembly.package import ContextItem, ContextPackage, ManifestEntry, VerifyReport
from folio.assembly.verify import verify_answer

__all__ = [
    "AssemblyOptions",
    "ContextItem",
    "ContextPackage",
    "ImageTokens",
    "ManifestEntry",
    "VerifyReport",
    "assemble",
    "verify_answer",
]
