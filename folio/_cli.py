"""The ``folio`` command's entry point.

``pip install folio-context`` is the client only (``folio.Client``, the models, the adapters); the command is the
server's CLI (``folio.api.cli``), whose commands need the ``server`` extra. On a client-only install a command
says how to get it instead of failing with a traceback.
"""

from __future__ import annotations

import sys
from typing import NoReturn

from folio._version import DISTRIBUTION

SERVER_MODULES = frozenset(
    {
        "torch",
        "torchvision",
        "transformers",
        "lancedb",
        "pyarrow",
        "fitz",
        "pymupdf",
        "tiktoken",
        "numpy",
        "fastapi",
        "uvicorn",
        "onnxruntime",
        "open_clip",
        "colpali_engine",
        "jsonschema",
        "regex",
        "multipart",
    }
)
HINT = (
    f"folio: the folio command needs the server parts: pip install '{DISTRIBUTION}[server]'"
    " (this install is the client only)"
)


def main() -> NoReturn:
    """``folio.api.cli.main``, its return value as the process's exit status (2 usage, 1 failure, 130
    interrupted; a console script's ``main`` that returns drops it, and every error exited 0). A server
    dependency missing (a client-only install) is the install hint, exit 2. The CLI loads its heavy modules per
    command, so ``folio --version`` and ``--help`` work without them."""
    try:
        # function-level: the server's CLI (and its dependencies) is an extra this module must survive without
        from folio.api.cli import main as server_main

        code = server_main()
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in SERVER_MODULES:
            raise
        print(f"{HINT} ({e.name} is missing)", file=sys.stderr)
        raise SystemExit(2) from None
    raise SystemExit(code)
