"""``folio mcp``: folio's tools for an MCP client (Claude Desktop, an agent) over stdio.

The client starts ``folio mcp --data DIR`` and talks MCP on its stdin/stdout; logs go to stderr.
The same tools are served over HTTP at ``/mcp`` by ``folio serve`` (``api.mcp.server``).
"""

from __future__ import annotations

import argparse
from typing import Any

from folio.api.cli.common import EXIT_USAGE, add_command, add_data_arg, say

# Function-level imports: each command imports what it runs, so that `folio --help` and the light commands start
# without loading torch, LanceDB or PyMuPDF.

def cmd_mcp(args: argparse.Namespace) -> int:
    from folio.settings import Settings

    try:
        from folio.api.mcp.server import serve_stdio
    except ImportError as e:
        say(f"folio: the MCP server needs the mcp package: pip install 'folio-context[mcp]' ({e})")
        return EXIT_USAGE
    settings = Settings()
    if args.data:
        settings = settings.model_copy(update={"data": args.data})
    serve_stdio(settings)
    return 0


def register(sub: Any) -> None:
    p = add_command(
        sub, "mcp", "serve folio's tools to an MCP client over stdio",
        "Speak MCP over stdin and stdout: list_documents, search, get_context, get_region and (with an LLM "
        "configured) answer, on the data directory. An MCP client starts this command itself.",
        "folio mcp --data ./folio-data",
        'claude mcp add folio -- folio mcp --data "$PWD/folio-data"',
    )
    add_data_arg(p)
    p.set_defaults(func=cmd_mcp)
