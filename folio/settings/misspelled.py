"""Misspelled ``FOLIO_`` variables: each one folio does not read is reported at startup, with the nearest
name it does read."""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Mapping

from folio.settings.base import Group, env_names
from folio.settings.groups import ClientSettings
from folio.settings.tree import LEGACY_NAMES, Settings

logger = logging.getLogger("folio.settings")  # the name users saw before the package split


def setting_groups() -> list[type[Group]]:
    """Every group of the tree, then the client's."""
    tree = [Settings.model_fields[name].annotation for name in Settings.GROUPS]
    return [g for g in tree if isinstance(g, type) and issubclass(g, Group)] + [ClientSettings]


def known_env() -> frozenset[str]:
    """Every ``FOLIO_`` variable folio reads."""
    return frozenset(v for g in setting_groups() for v in env_names(g).values() if v.startswith("FOLIO_"))


def _known_in_order() -> list[str]:
    """The variables of the flat settings of before the groups first (in their old order), then the rest."""
    groups = dict(zip(Settings.GROUPS, setting_groups(), strict=False))
    out = [env_names(groups[g])[f] for g, f in LEGACY_NAMES.values()]
    for g in setting_groups():
        out += [v for n, v in env_names(g).items() if n in g.model_fields and v.startswith("FOLIO_") and v not in out]
    return out


def unknown_env(environ: Mapping[str, str]) -> list[str]:
    """One message per ``FOLIO_`` variable that folio does not read, with the nearest known name.

    >>> unknown_env({"FOLIO_BUGDET": "500", "FOLIO_DATA": "/d", "HOME": "/root"})
    ['unknown setting FOLIO_BUGDET; did you mean FOLIO_DEFAULT_BUDGET?']
    """
    known = known_env()
    out = []
    for name in sorted(environ):
        if not name.startswith("FOLIO_") or name in known:
            continue
        near = nearest_setting(name)
        out.append(f"unknown setting {name}" + (f"; did you mean {near}?" if near else ""))
    return out


def nearest_setting(name: str) -> str | None:
    """The known variable ``name`` most likely misspells: a close whole name, else the one sharing the
    most close words (``BUGDET`` ~ ``BUDGET``), the settings of before the groups first; None if nothing is near.

    >>> nearest_setting("FOLIO_CLIPMODEL"), nearest_setting("FOLIO_XYZ")
    ('FOLIO_CLIP_MODEL', None)
    """
    known = _known_in_order()
    suffix = name.removeprefix("FOLIO_")
    tails = [k.removeprefix("FOLIO_") for k in known]
    close = difflib.get_close_matches(suffix, tails, n=1, cutoff=0.75)
    if close:
        return "FOLIO_" + close[0]
    words = [w for w in suffix.split("_") if w]

    def shared(tail: str) -> int:
        return sum(1 for w in words if difflib.get_close_matches(w, tail.split("_"), n=1, cutoff=0.6))

    scored = [(shared(t), -k, t) for k, t in enumerate(tails)]
    best = max(scored)
    return "FOLIO_" + best[2] if best[0] else None


def warn_unknown_env(environ: Mapping[str, str] | None = None) -> list[str]:
    """Log a warning per misspelled ``FOLIO_`` variable (at startup: the CLI and ``create_app``)."""
    messages = unknown_env(os.environ if environ is None else environ)
    for m in messages:
        logger.warning("%s", m)
    return messages
