"""What every ``folio`` subcommand module shares: exit codes, ``--data``, settings, the progress bar,
and turning the errors a command may raise into one line on stderr.

``api.cli`` (the entry point and the document commands) and the subcommand modules
(``cli_query``, ``cli_keys``, ``cli_mcp``) import from here, never from each other.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any, get_args

from pydantic import ValidationError

if TYPE_CHECKING:
    from api.settings import Settings
    from ingest.store import Store

EXIT_USAGE = 2
EXIT_FAILED = 1


class ProgressBar:
    """A one-line progress bar on stderr (silent when stderr is not a terminal, unless forced)."""

    def __init__(self, label: str, *, enabled: bool | None = None) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 24
        frac = done / total if total else 1.0
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        sys.stderr.write(f"\r{self.label[:32]:32} {stage:12} [{bar}] {done}/{total}   ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 90 + "\r")
            sys.stderr.flush()


def add_data_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data", metavar="DIR", default=None, help="data directory (default: $FOLIO_DATA or ~/.local/share/folio)"
    )


def settings_for(args: argparse.Namespace) -> Settings:
    """``Settings`` from the environment, with ``--data`` when the command has it and it was given."""
    from api.settings import Settings

    settings = Settings()
    data: str | None = getattr(args, "data", None)  # argparse namespaces: not every command has --data
    if data:
        settings = settings.model_copy(update={"data": data})
    return settings


def open_store(args: argparse.Namespace) -> Store:
    from ingest.store import Store

    return Store(settings_for(args).data)


def format_report(r: dict[str, Any]) -> str:
    """One ingest report (``IngestReport`` fields plus ``status``) as the lines ``folio ingest`` prints."""
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(r["regions_by_kind"].items()))
    line = (
        f"{r['filename']}: {r['status']} {r['doc_id']}@{r['version_id']}  {r['pages']} pages, "
        f"{r['tables']} tables, {r['figures']} figures, {r['ocr_pages']} OCRed pages, {r['seconds']:.1f}s"
    )
    if kinds:
        line += f"\n    regions: {kinds}"
    for w in r.get("warnings", []):
        line += f"\n    warning: {w}"
    for issue in r.get("issues", []):
        line += f"\n    page {issue['page']}: {issue['message']}"
    if r.get("degraded_pages"):
        pages = ", ".join(str(p) for p in r["degraded_pages"])
        line += f"\n    degraded pages: {pages} (parse them again: folio ingest --redo-degraded --page-timeout SECONDS)"
    return line


def choices(literal: Any) -> tuple[str, ...]:
    """The values of a ``Literal`` type, for argparse ``choices`` (the API's 422 and the CLI's usage
    error come from the same list).

    >>> from typing import Literal
    >>> choices(Literal["a", "b"])
    ('a', 'b')
    """
    return tuple(str(v) for v in get_args(literal))


def validation_message(e: ValidationError) -> str:
    """A ``pydantic.ValidationError`` as one line: ``field: problem`` for each error.

    >>> from pydantic import BaseModel
    >>> class M(BaseModel):
    ...     k: int
    >>> try:
    ...     M(k="x")
    ... except ValidationError as e:
    ...     print(validation_message(e))
    k: Input should be a valid integer, unable to parse string as an integer
    """
    parts = []
    for err in e.errors():
        where = ".".join(str(p) for p in err["loc"])
        parts.append(f"{where}: {err['msg']}" if where else str(err["msg"]))
    return "; ".join(parts)


def os_error_message(e: OSError) -> str:
    """An ``OSError`` as one line: what went wrong and with which file (no traceback)."""
    what = e.strerror or str(e) or type(e).__name__
    return f"{what}: {e.filename}" if e.filename else what
