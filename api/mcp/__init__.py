"""folio's MCP tools (``server``) and the schemas of their structured results (``outputs``); served over stdio by
``folio mcp`` and over HTTP at ``/mcp`` by ``api.http.mcp_mount``."""
