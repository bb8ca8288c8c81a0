"""folio's application and its interfaces, in rooms by role (docs/architecture.md):

    application.py   ``Folio``, the one door: every interface calls it, and only it (and the service room
                     it is made of) reaches the store
    service/         the work behind the door: context packages, answers and the chat client, ingest jobs,
                     the bound on model calls, highlights
    http/            REST: the FastAPI app, its routes, dependencies, middleware, query pool and workers,
                     and the MCP tools' HTTP mount
    cli/             the ``folio`` command
    mcp/             the MCP tools (over stdio with ``folio mcp``; over HTTP through ``http``)
    cluster/         ingest on a Ray cluster: the job board and its task, the job runner, a local cluster
    errors.py, schemas.py, keys.py   what every room shares: the error shape, the REST schemas, API keys
"""
