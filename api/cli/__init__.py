"""``folio`` command line: the entry point (``main``, also ``python -m folio.api.cli``) and its parser.

The commands live in this package by what they do: ``documents`` (ingest, docs, delete, compact, check),
``query`` (serve, context, search, verify, demo), ``answer`` (ask), ``keys``, ``mcp``; ``common`` holds what they
share, ``discovery`` finds a running server, ``ray_ingest`` is ``folio ingest --ray``. Every command that reads
or changes a store calls the service (``api.application.Folio``).

Every command but ``keys`` (which works on the keys file) takes ``--data DIR`` (default ``$FOLIO_DATA``,
else ``~/.local/share/folio``); a command that reads a store refuses a directory that holds none.
``context``, ``search`` and ``ask`` ask a running server instead with ``--server URL`` or ``$FOLIO_URL``.
Errors are one line on stderr (``common.say``: what a terminal would obey in them is escaped) and a non-zero exit
code, never a traceback: 1 when the work failed, 2 for a wrong command line (a mistyped option or command says
the nearest valid one: ``api.cli.suggest``), 3 when ``folio context`` packed nothing (the package is refused:
it is printed, and why is on stderr), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from typing import Any

from folio.api.cli import answer, documents, keys, mcp, query
from folio.api.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    UsageError,
    add_verbose_everywhere,
    os_error_message,
    say,
    validation_message,
)
from folio.api.cli.suggest import Parser
from folio.kernel.errors import FolioError
from folio.settings_light import any_unknown_env

# Function-level imports: each command imports what it runs, so that `folio --help` and the light commands start
# without loading torch, LanceDB or PyMuPDF.


def build_parser() -> Parser:
    """``folio``'s parser: a mistyped option or command gets the nearest valid one (``api.cli.suggest``)."""
    parser = Parser(prog="folio", description="PDFs in; cited, budgeted LLM context out.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    parser.add_argument("--version", action=_VersionAction, help="show the installed version and exit")
    sub = parser.add_subparsers(dest="command", required=True)

    for register in (documents.register, query.register, keys.register, answer.register, mcp.register):
        register(sub)
    add_verbose_everywhere(parser)
    return parser


class _VersionAction(argparse.Action):
    """argparse's ``version`` action, with the version read when asked for: reading the installed metadata
    costs every other command 30 ms for nothing."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"{parser.prog} {_version()}")
        parser.exit()


def _version() -> str:
    from folio._version import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Usage errors (argparse, invalid options, unreadable files) exit 2, failures 1,
    with one line on stderr each."""
    parser = build_parser()
    args = parser.parse(argv)  # --help and --version end here, before the settings load
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    if any_unknown_env():  # the settings tree (pydantic) loads to say which: a command that asks a server needs none
        from folio.settings import warn_unknown_env

        warn_unknown_env()
    try:
        code: int = args.func(args)
        return code
    except UsageError as e:  # a command line that cannot work
        say(f"folio: {e}")
        return EXIT_USAGE
    except FolioError as e:  # NoStore, a FileNotFoundError: the command line names a store that is not there
        say(f"folio: {e}")
        return EXIT_USAGE if isinstance(e, FileNotFoundError) else EXIT_FAILED
    except ValueError as e:  # pydantic's ValidationError is one: an option the API would answer with 422
        from pydantic import ValidationError  # function-level: a command that validates nothing never loads it

        if not isinstance(e, ValidationError):
            raise
        say(f"folio: {validation_message(e)}")
        return EXIT_USAGE
    except OSError as e:  # a file named on the command line that cannot be read or written
        say(f"folio: {os_error_message(e)}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        say("folio: interrupted")
        return 130

