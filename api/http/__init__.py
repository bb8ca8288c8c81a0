"""REST: ``app.create_app(settings)``, its routes (``routes/``), dependencies (``deps``), middleware and body
limits, the h11 protocol with a header deadline (``protocol``), the background start-up (``startup``), the query
pool and its worker processes (``pool``, ``query_worker``, ``query_ops``), the viewer (``static/``) and the MCP
tools' HTTP mount (``mcp_mount``). Every route calls the door, ``api.application.Folio``.
"""
