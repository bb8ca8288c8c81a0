"""Generate ``folio.models`` (the client's typed models) from the server's OpenAPI schema.

The client's models are not written by hand: this module turns the ``components.schemas`` that the
client's endpoints use (``ROOTS`` and everything they reference) into pydantic classes, one per
schema, field for field, in the modules of the ``folio/models/`` package by subject (``MODULES``).
``tests/api/client/test_client.py`` regenerates them from the live ``create_app().openapi()`` and
fails when a committed file differs, so a change to the REST schemas cannot silently leave the
client behind. Regenerate with::

    .venv/bin/python -m folio._codegen          # rewrites folio/models/

Only the shape is generated: names, types, which fields are required, and response defaults (the
descriptions are in the server's own OpenAPI document, ``/docs``). Response models allow extra
fields (the REST contract adds fields, never renames them), so an older client keeps working
against a newer server. Request models forbid them, so a misspelt option fails on the client
instead of as a 422, and state no defaults: the client sends only what the caller set.

The translation covers the JSON Schema that FastAPI/pydantic emit for folio: ``$ref``, ``anyOf``,
``enum``/``const`` (``Literal``), arrays, objects with ``additionalProperties`` or
``patternProperties`` (``dict``), scalars. Value constraints (lengths, bounds, patterns) stay on
the server: it checks them and answers with the one error shape.
"""

from __future__ import annotations

import graphlib
import json
import keyword
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# The modules of ``folio.models``: what each holds (its docstring's first line) and the schemas the client's
# methods send or return that it holds (its roots). A module also holds what its roots reference that no other
# module's roots reach; a schema that the roots of several modules reach goes to ``common``, beside the bases.
MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "common": (
        "The models' bases, the one error shape, the server's health, and the parts more than one module uses.",
        ("ErrorResponse", "HealthOut"),
    ),
    "documents": (
        "Documents, their versions, pages and regions, and ingest jobs.",
        (
            "BatchUploadResponse",
            "DeleteResponse",
            "DocumentDetail",
            "DocumentExport",
            "DocumentList",
            "IngestResponse",
            "JobList",
            "JobOut",
            "PageList",
            "RegionOut",
        ),
    ),
    "responses": (
        "What a query returns: the context package, search hits, an answer and its citation check.",
        ("AnswerResponse", "ContextPackage", "SearchResponse", "VerifyReport"),
    ),
    "requests": (
        "What a query sends (``...Request``), and the ``...Options`` that type the client's keyword options.",
        ("AnswerRequest", "ContextRequest", "SearchRequest", "VerifyRequest"),
    ),
}
ROOTS = tuple(sorted(root for _, roots in MODULES.values() for root in roots))

_REF = "#/components/schemas/"
_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
_RESERVED = {"model_config", "model_fields", "schema", "json", "dict", "copy", "validate", "construct"}


def class_name(schema_name: str) -> str:
    """``ContextPackage-Output`` → ``ContextPackage``; ``ContextPackage-Input`` → ``ContextPackageInput``."""
    if schema_name.endswith("-Output"):
        schema_name = schema_name[: -len("-Output")]
    return re.sub(r"[^0-9A-Za-z_]", "", schema_name)


def _ref_name(ref: str) -> str:
    if not ref.startswith(_REF):
        raise ValueError(f"unsupported $ref {ref!r}")
    return ref[len(_REF) :]


def _refs(node: Any) -> Iterable[str]:
    """The schema names that ``node`` references directly."""
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield _ref_name(node["$ref"])
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def referenced(schemas: Mapping[str, Any], roots: Iterable[str], stop: Iterable[str] = ()) -> list[str]:
    """``roots`` and every schema they reference, transitively but not through ``stop``, sorted by name."""
    seen: set[str] = set()
    stopped = set(stop)
    todo = [r for r in roots if r in schemas]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(r for r in _refs(schemas[name]) if r not in seen and r not in stopped)
    return sorted(seen)


def homes(schemas: Mapping[str, Any]) -> dict[str, str]:
    """Schema name -> the module of ``folio.models`` that holds its class (``MODULES``)."""
    roots = {root: module for module, (_, rs) in MODULES.items() for root in rs if root in schemas}
    reached: dict[str, set[str]] = {}
    for module, (_, rs) in MODULES.items():
        for name in referenced(schemas, rs, stop=roots.keys() - set(rs)):
            reached.setdefault(name, set()).add(module)
    return {n: roots.get(n) or (min(ms) if len(ms) == 1 else "common") for n, ms in reached.items()}


def py(value: Any) -> str:
    """A JSON value as Python source, strings in double quotes (as ruff formats them).

    >>> py({"kind": "tile", "base": 85, "on": True, "x": None})
    '{"kind": "tile", "base": 85, "on": True, "x": None}'
    """
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(py(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py(str(k))}: {py(v)}" for k, v in value.items()) + "}"
    return repr(value)


def annotation(node: Mapping[str, Any]) -> str:  # noqa: C901
    """The Python type of one JSON Schema node, as source text."""
    if "$ref" in node:
        return class_name(_ref_name(node["$ref"]))
    for key in ("anyOf", "oneOf"):
        if key in node:
            parts = list(dict.fromkeys(annotation(n) for n in node[key]))
            if "None" in parts:  # ``X | None`` reads better than ``None | X``
                parts = [p for p in parts if p != "None"] + ["None"]
            return " | ".join(parts)
    if "const" in node:
        return f"Literal[{py(node['const'])}]"
    if "enum" in node:
        return "Literal[" + ", ".join(py(v) for v in node["enum"]) + "]"
    kind = node.get("type")
    if isinstance(kind, list):
        return " | ".join(annotation({**node, "type": k}) for k in kind)
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        if "prefixItems" in node:
            return "tuple[" + ", ".join(annotation(n) for n in node["prefixItems"]) + "]"
        items = node.get("items")
        return f"list[{annotation(items) if items else 'Any'}]"
    if kind == "object" or "additionalProperties" in node or "patternProperties" in node:
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            return f"dict[str, {annotation(extra)}]"
        patterns = list((node.get("patternProperties") or {}).values())
        if len(patterns) == 1:
            return f"dict[str, {annotation(patterns[0])}]"
        return "dict[str, Any]"
    return "Any"


def _field_name(name: str) -> tuple[str, str | None]:
    """A valid attribute name for a JSON property, and the alias when it had to change."""
    attr = re.sub(r"\W", "_", name)
    if keyword.iskeyword(attr) or attr in _RESERVED or attr[:1].isdigit():
        attr += "_"
    return attr, (name if attr != name else None)


def _is_request(name: str) -> bool:
    """A request model (``_Request``: extra fields forbidden, no defaults) rather than a response model."""
    return name.endswith("Request")


def model_source(schema_name: str, schema: Mapping[str, Any]) -> str:
    """One pydantic class for one object schema."""
    name = class_name(schema_name)
    request = _is_request(name)
    base = "_Request" if request else "_Response"
    out = [f"class {name}({base}):"]
    required = set(schema.get("required", ()))
    props: Mapping[str, Any] = schema.get("properties") or {}
    if not props:
        out.append("    pass")
    for prop, node in props.items():
        attr, alias = _field_name(prop)
        ann = annotation(node)
        args: list[str] = []
        if prop not in required:
            # A request sends only what the caller set, so the server's defaults apply: the
            # client states none of its own (and does not go stale when one changes).
            has_default = "default" in node and not request
            args.append(py(node["default"]) if has_default else "None")
            if not has_default and "None" not in ann.split(" | "):
                ann += " | None"
        keywords = [f"alias={py(alias)}"] if alias else []
        if keywords:
            value = f" = Field({', '.join(args + keywords)})"
        else:
            value = f" = {args[0]}" if args else ""
        out.append(f"    {attr}: {ann}{value}")
    return "\n".join(out)


def options_source(schema_name: str, schema: Mapping[str, Any]) -> str | None:
    """For a request with a ``query``, a ``TypedDict`` of its other fields: the type of the client's
    ``**options`` (``Client.context(query, **options: Unpack[ContextOptions])``), so that a type checker
    sees a misspelt or mistyped option."""
    props: Mapping[str, Any] = schema.get("properties") or {}
    name = class_name(schema_name)
    if not name.endswith("Request") or "query" not in props:
        return None
    out = [f"class {name.removesuffix('Request')}Options(TypedDict, total=False):"]
    for prop, node in props.items():
        attr, _ = _field_name(prop)
        if prop == "query" or attr != prop:  # a keyword argument is the JSON name itself
            continue
        ann = annotation(node)
        out.append(f"    {attr}: {ann if 'None' in ann.split(' | ') else ann + ' | None'}")
    return "\n".join(out)


GENERATED = "Generated from folio's OpenAPI schema by ``folio/_codegen.py``: do not edit (see ``folio.models``)."

BASES = '''class _Response(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, protected_namespaces=(), validate_default=True)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, protected_namespaces=(), validate_default=True)'''

PACKAGE_DOC = '''"""Typed models of folio's REST API, generated from its OpenAPI schema by ``folio/_codegen.py``.

Do not edit: run ``.venv/bin/python -m folio._codegen`` after changing the API's schemas
(``tests/api/client/test_client.py`` fails until the two agree). Response models accept fields
they do not know (servers add fields, never rename them); request models reject them. The
``...Options`` ``TypedDict``s type the client's keyword options (a request's fields but ``query``).

Import them from here (``from folio.models import ContextPackage``); the modules hold them by subject:

'''


def _import(module: str, names: Iterable[str]) -> list[str]:
    """``from module import (...)``, one name a line, in the order ruff's isort keeps: classes, then the rest."""
    ordered = sorted(set(names), key=lambda n: (not n[:1].isupper(), n))
    return [f"from {module} import (", *[f"    {n}," for n in ordered], ")"]


def _uses(schemas: Mapping[str, Any], home: Mapping[str, str], module: str) -> dict[str, set[str]]:
    """Other module -> the classes of it that the classes of ``module`` name."""
    out: dict[str, set[str]] = {}
    for name, where in home.items():
        if where == module:
            for ref in _refs(schemas[name]):
                if home[ref] != module:
                    out.setdefault(home[ref], set()).add(class_name(ref))
    return out


def module_source(module: str, schemas: Mapping[str, Any], home: Mapping[str, str]) -> str:
    """The source of ``folio/models/<module>.py``: its classes (sorted by schema name), then its options."""
    names = sorted(n for n, where in home.items() if where == module)
    classes = [model_source(n, schemas[n]) for n in names]
    options = [src for n in names if (src := options_source(n, schemas[n])) is not None]
    body = "\n\n\n".join([*([BASES] if module == "common" else []), *classes, *options])
    lines = [f'"""{MODULES[module][0]}', "", GENERATED, '"""', "", "# ruff: noqa: E501"]
    lines.append("from __future__ import annotations")
    typing = [t for t in ("Any", "Literal", "TypedDict") if re.search(rf"\b{t}\b", body)]
    if typing:
        lines += ["", f"from typing import {', '.join(typing)}"]
    pydantic = (["BaseModel", "ConfigDict"] if module == "common" else []) + (["Field"] if "Field(" in body else [])
    if pydantic:
        lines += ["", f"from pydantic import {', '.join(pydantic)}"]
    uses = _uses(schemas, home, module)
    if module != "common":
        bases = {"_Request" if _is_request(class_name(n)) else "_Response" for n in names}
        uses["common"] = uses.get("common", set()) | bases
    if uses:
        lines.append("")
        for other in sorted(uses):
            lines += _import(f"folio.models.{other}", uses[other])
    models = ", ".join(class_name(n) for n in names)
    footer = [f"for _model in ({models}{',' if len(names) == 1 else ''}):", "    _model.model_rebuild()", ""]
    return "\n".join(lines) + "\n\n\n" + body + "\n\n\n" + "\n".join(footer)


def _exported(source: str) -> list[str]:
    """The public classes a module's source defines."""
    return re.findall(r"^class ([A-Za-z]\w*)\(", source, re.M)


def init_source(sources: Mapping[str, str]) -> str:
    """``folio/models/__init__.py``: every model and options class, imported from its module."""
    doc = PACKAGE_DOC + "".join(f"- ``{m}``: {MODULES[m][0]}\n" for m in MODULES) + '"""\n'
    lines = [doc, "from __future__ import annotations", ""]
    for module in sorted(sources):
        lines += _import(f"folio.models.{module}", _exported(sources[module]))
    exported = sorted(n for src in sources.values() for n in _exported(src))
    lines += ["", "__all__ = [", *[f'    "{n}",' for n in exported], "]", ""]
    return "\n".join(lines)


def generate(openapi: Mapping[str, Any]) -> dict[str, str]:
    """The files of the ``folio/models/`` package for an OpenAPI document: file name -> source."""
    schemas: Mapping[str, Any] = openapi["components"]["schemas"]
    home = homes(schemas)
    order = graphlib.TopologicalSorter({m: set(_uses(schemas, home, m)) for m in MODULES})
    try:
        tuple(order.static_order())
    except graphlib.CycleError as e:
        raise ValueError(f"the modules of folio.models would import each other: {e.args[1]}") from None
    sources = {m: module_source(m, schemas, home) for m in MODULES if m in home.values()}
    return {"__init__.py": init_source(sources), **{f"{m}.py": src for m, src in sources.items()}}


def write(target: Path, files: Mapping[str, str]) -> None:
    """``files`` into the folder ``target``, whose other modules go (it holds generated files only)."""
    target.mkdir(exist_ok=True)
    for stale in target.glob("*.py"):
        if stale.name not in files:
            stale.unlink()
    for name, source in files.items():
        (target / name).write_text(source, encoding="utf-8")


def live_openapi() -> dict[str, Any]:
    """The schema of the app as this checkout builds it (no lifespan: nothing heavy is loaded)."""
    # function-level: the generator needs the server only to read its live schema
    from folio.api.http.app import create_app

    schema: dict[str, Any] = create_app().openapi()
    return schema


def main() -> None:
    target = Path(__file__).with_name("models")
    write(target, generate(live_openapi()))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
