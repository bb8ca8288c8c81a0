"""``folio``'s argument parser, which says what a mistyped option or command most likely meant, as the REST
API does for a misspelt body field (``api.errors``: ``unknown field; did you mean 'budget'?``)::

    $ folio context --budgt 300 "q"
    usage: folio context [-h] [--budget BUDGET] ...
    folio context: error: unknown option --budgt; did you mean '--budget'?

The usage shown is the subcommand's, not ``folio``'s. ``difflib`` (the standard library) finds the nearest
name: a command that asks a server must stay light (``folio.settings_light``).
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable, Sequence
from typing import NoReturn

from folio.kernel.printable import terminal_safe

_INVALID_CHOICE = re.compile(r"^argument (?P<name>.+?): invalid choice: (?P<value>'[^']*'|\S+)")


def nearest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` most likely misspells, None when none is near.

    >>> nearest("--budgt", ["--budget", "--doc", "--json"]), nearest("contxt", ["context", "search"])
    ('--budget', 'context')
    >>> nearest("--zzz", ["--budget"]) is None
    True
    """
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return close[0] if close else None


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors suggest the nearest valid value (``nearest``): an invalid choice (a
    subcommand, ``--strategy``) here; unknown options through ``parse``. Its subcommands' parsers are of this
    class too (argparse makes them of their parent's class)."""

    def parse(self, argv: Sequence[str] | None = None) -> argparse.Namespace:
        """``parse_args``, but an unknown option is reported by the subcommand that was given it (its usage),
        with the nearest option it has."""
        args, extras = self.parse_known_args(argv)
        if extras:
            chosen = self._chosen(args)
            chosen.error(chosen.unknown_message(extras))
        return args

    def unknown_message(self, extras: Sequence[str]) -> str:
        """``unknown option --budgt; did you mean '--budget'?`` for each unknown option in ``extras`` (a
        value of ``--budgt=300`` included); argparse's words when only stray values are left."""
        options = [s for a in self._actions for s in a.option_strings]
        said = []
        for extra in extras:
            if not extra.startswith("-") or extra == "-":
                continue
            flag = extra.split("=", 1)[0]
            near = nearest(flag, options)
            said.append(f"unknown option {flag}" + (f"; did you mean {near!r}?" if near else ""))
        return "; ".join(said) or f"unrecognized arguments: {' '.join(extras)}"

    def error(self, message: str) -> NoReturn:
        found = _INVALID_CHOICE.match(message)
        if found is not None and "did you mean" not in message:
            value = found["value"].strip("'")
            near = nearest(value, self._choices_of(found["name"]))
            if near is not None:
                message += f"; did you mean {near!r}?"
        super().error(terminal_safe(message, keep=""))  # what the user typed: shown, never obeyed

    def _choices_of(self, name: str) -> list[str]:
        """The choices of the argument argparse calls ``name`` in its messages (``--strategy``, ``command``)."""
        for action in self._actions:
            names = {"/".join(action.option_strings), action.dest, str(action.metavar)}
            if name in names and action.choices is not None:
                return [str(c) for c in action.choices]
        return []

    def _chosen(self, args: argparse.Namespace) -> Parser:
        """The deepest subcommand's parser that ``args`` chose (``folio keys add``), else this one."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):  # argparse has no public walk over subparsers
                sub = action.choices.get(getattr(args, action.dest, None) or "")
                if isinstance(sub, Parser):
                    return sub._chosen(args)
        return self
