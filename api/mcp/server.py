"""folio as an MCP server, on the official ``mcp`` SDK (``pip install 'folio-context[mcp]'``; importing
this module needs it).

Tools:

- ``list_documents``: the documents (latest versions) with their versions, pages and collection;
- ``search``: ranked hits (region, pages, score, a text excerpt), as ``POST /v1/search``;
- ``get_context``: the cited package for a question under a token budget: the prompt blocks as
  content (text, and figure/page images as image content) plus the citation map
  ``{citation id: region, document version, pages, boxes}`` as structured content;
- ``get_region``: what a citation points at: text, page, box, and the region's image, as
  ``GET /v1/regions/{id}``;
- ``ingest``: a PDF's bytes in the call (base64) ingested as an upload is (``api.mcp.ingest_tool``); not
  read-only, refused for read-only keys;
- ``answer``: only when an LLM is configured (``FOLIO_LLM_BASE_URL`` and ``FOLIO_LLM_MODEL``): the
  answer of ``POST /v1/answer`` (``api.service.answer``), its citations resolved, the citation check.

Two transports share these tools:

- stdio, ``folio mcp --data DIR`` (``serve_stdio``): for a desktop client on the same machine. It
  opens the store in-process with full access, as every other ``folio`` command does.
- streamable HTTP at ``/mcp`` of ``folio serve`` (``api.http.mcp_mount``): stateless, JSON responses, ``POST``
  only (``GET`` and ``DELETE`` are 405: no event stream, no sessions). Every HTTP
  request is authenticated like the REST API (``X-API-Key`` or ``Authorization: Bearer``; 401 in
  the one error shape), and the tools see only the key's collections: a document elsewhere is an
  unknown id. Blocking work runs on the query pool, so a busy server says so (``overloaded``).

Every tool calls the service (``api.application.Folio``) and returns the response model the REST API
serializes for the same request (``DocumentList``, ``SearchResponse``, ``RegionOut``, the
``ContextPackage`` behind ``get_context``'s blocks, ``AnswerResponse``), so a hit's excerpt is the same
500 characters everywhere. Every tool declares the JSON schema of its structured content
(``outputSchema``, from the models in ``api/mcp/outputs.py``), and the SDK checks each result against it.

Tool errors come back as MCP tool errors (``isError``) whose text starts with folio's error code,
e.g. ``region_not_found: no such region: ...``.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from folio.api.keys import FULL_ACCESS, Principal
from folio.api.mcp.ingest_tool import add_ingest_tool
from folio.api.mcp.outputs import AnswerToolOut, ContextOut, DocumentsOut, RegionToolOut, SearchOut
from folio.api.service.highlight import MAX_CHARS as MAX_HIGHLIGHT_CHARS
from folio.kernel.errors import FolioError

# Function-level imports: each tool loads the service code it calls on first use, so that `folio mcp`
# answers the MCP handshake before torch, LanceDB and PyMuPDF are loaded.
if TYPE_CHECKING:

    from folio.api.application import Folio
    from folio.settings import Settings

logger = logging.getLogger(__name__)

T = TypeVar("T")
MAX_REGION_ID_CHARS = 512  # a region id is a doc id, a version id and a short suffix
MAX_ERROR_CHARS = 500
INSTRUCTIONS = (
    "folio answers questions from the user's PDF documents with cited evidence. Call get_context with "
    "the question: it returns context blocks, each opened by a citation id such as [S1] (text), [T1] "
    "(table), [F1] (figure) or [P1] (page). Answer only from those blocks and cite the ids; call "
    "get_region with a block's region_id for its exact page, box and image."
)


Runner = Callable[[Callable[[], Any]], Awaitable[Any]]
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
FILTER_HELP = (
    "only documents whose metadata match this filter: {field, op, value} leaves (op: eq ne in gt gte lt lte "
    "between), {and: [...]}, {or: [...]}, {not: {...}}, or the shorthand {\"company\": \"Acme\", \"year\": "
    "{\"gte\": 2020}}; YYYY-MM-DD strings are dates"
)
_SCOPE_PARAMS = (
    inspect.Parameter(
        "filter", inspect.Parameter.KEYWORD_ONLY, default=None,
        annotation=Annotated[dict[str, Any] | None, Field(description=FILTER_HELP)],
    ),
    inspect.Parameter(
        "collection", inspect.Parameter.KEYWORD_ONLY, default=None,
        annotation=Annotated[str | None, Field(description="only this collection (one the key sees)")],
    ),
)


def scoped(tool: F) -> F:
    """The options every query tool takes besides its own, declared once: ``filter`` (a metadata filter,
    docs/api.md "Filters") and ``collection``. They reach the tool in its ``**scope``; the MCP server reads the
    signature made here (its own parameters, then these), so its input schema lists them as arguments."""
    own = inspect.signature(tool, eval_str=True)
    params = [p for p in own.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    tool.__signature__ = own.replace(parameters=[*params, *_SCOPE_PARAMS])  # type: ignore[attr-defined]
    return tool


def scope_fields(scope: dict[str, Any]) -> dict[str, Any]:
    """The request fields of a tool's ``**scope`` (those given)."""
    return {k: v for k, v in scope.items() if k in ("filter", "collection") and v is not None}


# ----------------------------------------------------------------------------- the tool bodies
# Plain blocking functions over the service and the caller's collections (None: all).
def list_documents(folio: Folio, collections: frozenset[str] | None, collection: str | None) -> dict[str, Any]:
    out: dict[str, Any] = folio.documents(collections=collections, collection=collection).model_dump(mode="json")
    return out


def search(folio: Folio, collections: frozenset[str] | None, body: dict[str, Any]) -> dict[str, Any]:
    from folio.api.schemas import SearchRequest

    req = SearchRequest.model_validate(body)
    out: dict[str, Any] = folio.search(req, collections=collections).model_dump(mode="json")
    return out


def citation_map(package: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{citation id: where it points}`` for a package in its JSON form."""
    keys = ("region_id", "doc_id", "version_id", "filename", "pages", "locators", "lines", "modality", "expansion",
            "status", "image_url", "alt_text")
    return {item["citation_id"]: {k: item.get(k) for k in keys} for item in package["items"]}


def get_context(folio: Folio, collections: frozenset[str] | None, body: dict[str, Any]) -> dict[str, Any]:
    """The package (JSON form) and, for each image part of the prompt, the PNG it points at."""
    from folio.api.schemas import ContextRequest

    req = ContextRequest.model_validate(body)
    package = folio.context(req, collections=collections)
    pkg = package.model_dump(mode="json")
    sent = {_image_part_url(part) for message in pkg["prompt"]["messages"] for part in _parts(message["content"])}
    images: dict[str, bytes] = {}
    for item in package.items:
        if item.image_url and item.image_url in sent:
            png = _region_png(folio, item.region_id, collections)
            if png is not None:
                images[item.image_url] = png
    return {"package": pkg, "images": images}


def _parts(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A message's content as a list of parts (a plain string is one text part)."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _image_part_url(part: dict[str, Any]) -> str | None:
    """The URL of an image part, OpenAI (``image_url.url``) or Anthropic (``source.url``) shape."""
    url = (part.get("image_url") or {}).get("url") or (part.get("source") or {}).get("url")
    return str(url) if url else None


def get_region(
    folio: Folio, collections: frozenset[str] | None, region_id: str, include_image: bool,
    highlight: str | None = None,
) -> dict[str, Any]:
    region = folio.region(region_id, collections=collections).model_dump(mode="json")
    if include_image and highlight is not None:
        return {"region": region, "image": folio.highlighted_region_image(region_id, highlight,
                                                                          collections=collections)}
    return {"region": region, "image": _region_png(folio, region_id, collections) if include_image else None}


def _region_png(folio: Folio, region_id: str, collections: frozenset[str] | None) -> bytes | None:
    """The figure or page crop of a region, else the render of its first page (``GET
    /v1/regions/{id}/image``, from a local or an object store); None when no image was stored."""
    from folio.api.errors import AssetNotFound

    try:
        image = folio.region_image(region_id, collections=collections)
    except AssetNotFound:
        return None
    return image if isinstance(image, bytes) else image.read_bytes()


# ------------------------------------------------------------------------------------ the server
def build_server(
    folio: Callable[[], Folio],
    run: Runner,
    principal: Callable[[Context[Any, Any]], Principal] = lambda ctx: FULL_ACCESS,
    *,
    with_answer: bool = False,
) -> MCPServer[Any]:
    """The MCP server over the service ``folio()`` (called per tool call, so it may open lazily).

    ``run`` runs blocking work (a worker thread, or the API's query pool); ``principal`` says
    whose collections a call may see."""
    server = _new_server()
    call = _caller(folio, run, principal)
    _add_document_tools(server, call)
    _add_query_tools(server, call)
    add_ingest_tool(server, call, principal)
    if with_answer:
        _add_answer_tool(server, call)
    return server


Call = Callable[..., Awaitable[Any]]


def _new_server() -> MCPServer[Any]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server: MCPServer[Any] = MCPServer(name="folio", instructions=INSTRUCTIONS, version=_version())
    # MCPServer() calls logging.basicConfig (a rich handler on the root logger when it has none):
    # logging is the application's to configure (``folio serve``, the CLI, a test), so undo that.
    for handler in root.handlers[len(handlers) :]:
        root.removeHandler(handler)
    root.setLevel(level)
    return server


def _caller(folio: Callable[[], Folio], run: Runner, principal: Callable[[Context[Any, Any]], Principal]) -> Call:
    """``call(ctx, fn, *args)``: ``fn(folio(), collections, *args)`` run by ``run``, folio's errors as tool errors."""

    async def call(ctx: Context[Any, Any], fn: Callable[..., T], *args: Any) -> T:
        collections = principal(ctx).collections
        try:
            result: T = await run(lambda: fn(folio(), collections, *args))
        except FolioError as e:  # capped: a message may echo the caller's input
            raise ToolError(f"{e.code}: {_capped(str(e))}") from e
        except ValidationError as e:  # a request model rejected the arguments
            raise ToolError(f"validation_error: {_first_error(e)}") from e
        return result

    return call


READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=False)


def _add_document_tools(server: MCPServer[Any], call: Call) -> None:
    @server.tool(name="list_documents", annotations=READ_ONLY)
    async def list_documents_tool(
        ctx: Context[Any, Any], collection: str | None = None
    ) -> Annotated[CallToolResult, DocumentsOut]:
        """List the documents (latest versions): doc_id, version_id, filename, pages, collection and how
        many versions each has. Optionally only one collection."""
        out = await call(ctx, list_documents, collection)
        return _json_result(out)

    @server.tool(name="get_region", annotations=READ_ONLY)
    async def get_region_tool(
        ctx: Context[Any, Any], region_id: str, include_image: bool = True, highlight: str | None = None
    ) -> Annotated[CallToolResult, RegionToolOut]:
        """What a citation points at: the region's text, document version, pages, bounding boxes
        (PDF points, origin top-left) and its image (the figure, else its page). highlight: 'lines' (the
        region's own line boxes) or boxes 'x0,y0,x1,y1;...' in PDF points (a context block's lines): the
        image is then its first page's render with those boxes painted."""
        if len(region_id) > MAX_REGION_ID_CHARS:  # refused without echoing it
            raise ToolError(f"validation_error: region_id is over {MAX_REGION_ID_CHARS} characters")
        if highlight is not None and len(highlight) > MAX_HIGHLIGHT_CHARS:
            raise ToolError(f"validation_error: highlight is over {MAX_HIGHLIGHT_CHARS} characters")
        out = await call(ctx, get_region, region_id, include_image, highlight)
        content: list[Any] = [TextContent(type="text", text=json.dumps(out["region"], ensure_ascii=False))]
        if out["image"] is not None:
            content.append(_image(out["image"]))
        return CallToolResult(content=content, structured_content=out["region"])


def _add_query_tools(server: MCPServer[Any], call: Call) -> None:
    @server.tool(name="search", annotations=READ_ONLY)
    @scoped
    async def search_tool(
        ctx: Context[Any, Any],
        query: str,
        doc_ids: list[str] | None = None,
        k: int = 10,
        strategy: str = "hybrid",
        **scope: Any,
    ) -> Annotated[CallToolResult, SearchOut]:
        """Ranked hits for a query: region_id, document version, pages, score and a text excerpt.
        Use get_context instead to get evidence packed for answering. filter: only documents whose metadata
        match (list_documents shows each one's metadata)."""
        body: dict[str, Any] = {"query": query, "doc_ids": doc_ids, "k": k, "strategy": strategy,
                                **scope_fields(scope)}
        out = await call(ctx, search, body)
        return _json_result(out)

    @server.tool(name="get_context", annotations=READ_ONLY)
    @scoped
    async def get_context_tool(  # noqa: PLR0913
        ctx: Context[Any, Any],
        query: str,
        budget: int | None = None,
        strategy: str = "auto",
        doc_ids: list[str] | None = None,
        retrieval_strategy: str = "hybrid",
        include_images: bool = True,
        k: int = 50,
        scanned_pages: Literal["text", "image"] | None = None,
        **scope: Any,
    ) -> Annotated[CallToolResult, ContextOut]:
        """Evidence for answering a question, packed under a token budget (default: the server's).
        Returns the citation instructions and context blocks, each opened by its citation id ([S1]
        text, [T1] table, [F1] figure, [P1] page; figures and pages also as images), and in structured
        content the citation map {id: region_id, doc_id, version_id, filename, pages, locators (page,
        bbox), lines (what made the block relevant), image_url and alt_text of an image block} and the
        budget. strategy: auto, raw, window, parent, neighbors or page. scanned_pages: a scanned page
        as its OCR text ("text", the default) or as the page image ("image", for a model that reads
        images; its OCR text is then alt_text). filter: only documents whose metadata match."""
        body: dict[str, Any] = {
            "query": query,
            "budget": budget,
            "strategy": strategy,
            "doc_ids": doc_ids,
            "retrieval_strategy": retrieval_strategy,
            "include_images": include_images,
            "k": k,
            "scanned_pages": scanned_pages,
            **scope_fields(scope),
        }
        out = await call(ctx, get_context, {k2: v for k2, v in body.items() if v is not None})
        return _context_result(out["package"], out["images"])


def _capped(message: str) -> str:
    return message if len(message) <= MAX_ERROR_CHARS else f"{message[:MAX_ERROR_CHARS]}..."


def _first_error(e: ValidationError) -> str:
    first = e.errors()[0]
    return f"invalid request: {'.'.join(str(p) for p in first.get('loc', ()))}: {first.get('msg')}"


def _version() -> str:
    from folio._version import __version__

    return __version__


def _image(png: bytes) -> Any:
    """MCP image content for a PNG."""
    return Image(data=png, format="png").to_image_content()


def _json_result(out: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(out, ensure_ascii=False))], structured_content=out
    )


def _context_result(pkg: dict[str, Any], images: dict[str, bytes]) -> CallToolResult:
    """The prompt as MCP content (system text, then the user message's parts; an image part becomes
    image content when its PNG is there, else its URL as text) and the citation map."""
    prompt = pkg["prompt"]
    system = prompt.get("system")
    content: list[Any] = []
    for message in prompt["messages"]:
        parts = message["content"]
        if message["role"] == "system":
            system = parts if isinstance(parts, str) else "\n".join(p.get("text", "") for p in parts)
            continue
        for part in _parts(parts):
            if part.get("type") == "text":
                content.append(TextContent(type="text", text=part["text"]))
                continue
            url = _image_part_url(part)
            if url is not None and url in images:
                content.append(_image(images[url]))
            else:
                content.append(TextContent(type="text", text=f"(image: {url})"))
    if system:
        content.insert(0, TextContent(type="text", text=system))
    structured = {
        "query": pkg["query"],
        "budget": {k: pkg["budget"][k] for k in ("limit", "used", "tokenizer")},
        "refused": pkg["refused"],
        "refusal_reason": pkg.get("refusal_reason"),
        "system": system,
        "blocks": [
            {"citation_id": it["citation_id"], "modality": it["modality"], "text": it["text"]} for it in pkg["items"]
        ],
        "citations": citation_map(pkg),
        "excluded": len(pkg["excluded"]),
    }
    return CallToolResult(content=content, structured_content=structured)


# ----------------------------------------------------------------------------------- answer tool
def _add_answer_tool(server: MCPServer[Any], call: Call) -> None:
    @server.tool(
        name="answer",
        annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=True),
    )
    @scoped
    async def answer_tool(
        ctx: Context[Any, Any], query: str, budget: int | None = None, doc_ids: list[str] | None = None, **scope: Any
    ) -> Annotated[CallToolResult, AnswerToolOut]:
        """Answer a question from the documents with the configured LLM: the answer with [S1]-style
        citations, each resolved to its region, and the citation check (kept, invented, uncited). filter: only
        documents whose metadata match."""
        body = {k: v for k, v in {"query": query, "budget": budget, "doc_ids": doc_ids}.items() if v is not None}
        body.update(scope_fields(scope))
        out = await call(ctx, _answer, body)
        return _answer_result(out)


def _answer_result(out: dict[str, Any]) -> CallToolResult:
    """The answer text with its sources (and any invented ids) as content; the whole response
    (citations resolved, the check, token usage) as structured content."""
    lines = [out["answer"]]
    if out["citations"]:
        lines += ["", "Sources:"]
        for c in out["citations"]:
            pages = ",".join(str(p) for p in c["pages"])
            lines.append(f"[{c['citation_id']}] {c['filename']} p.{pages} ({c['region_id']})")
    invented = out["check"].get("invented_ids") or []
    if invented:
        lines += ["", "Cited but not in the evidence: " + ", ".join(f"[{i}]" for i in invented)]
    return CallToolResult(content=[TextContent(type="text", text="\n".join(lines))], structured_content=out)


def _answer(folio: Folio, collections: frozenset[str] | None, body: dict[str, Any]) -> dict[str, Any]:
    from folio.api.service.answer_schemas import AnswerRequest

    req = AnswerRequest.model_validate({**body, "include_package": False, "stream": False})
    out: dict[str, Any] = folio.answer(req, collections=collections).model_dump(mode="json", exclude={"package"})
    return out


# ------------------------------------------------------------------------------------ transports
def serve_stdio(settings: Settings) -> None:
    """``folio mcp``: the tools over stdin/stdout until the client closes them."""
    import anyio.to_thread

    from folio.api.application import LazyFolio

    # the store and models load on a thread while the handshake is answered; the ingest tool's jobs run in-process
    folio = LazyFolio(settings, on_open=lambda f: f.start())
    folio.warm()

    async def run(fn: Callable[[], T]) -> T:
        return await anyio.to_thread.run_sync(fn)

    server = build_server(folio, run, with_answer=bool(settings.llm.base_url and settings.llm.model))
    server.run("stdio")
