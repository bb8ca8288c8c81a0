"""Generate ``folio/models.py`` (the client's typed models) from the server's OpenAPI schema.

The client's models are not written by hand: this module turns the ``components.schemas`` that the
client's endpoints use (``ROOTS`` and everything they reference) into pydantic classes, one per
schema, field for field. ``tests/api/test_client.py`` regenerates them from the live
``create_app().openapi()`` and fails when the committed file differs, so a change to the REST
schemas cannot silently leave the client behind. Regenerate with::

    .venv/bin/python -m folio._codegen          # rewrites folio/models.py

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

import json
import keyword
import re
from collections.abc import Iterable, Mapping
from typing import Any

# The schemas the client's methods send or return; the models are these and what they reference.
ROOTS = (
    "AnswerRequest",
    "AnswerResponse",
    "ContextPackage",
    "ContextRequest",
    "DeleteResponse",
    "DocumentDetail",
    "DocumentList",
    "ErrorResponse",
    "HealthOut",
    "IngestResponse",
    "JobList",
    "JobOut",
    "PageList",
    "RegionOut",
    "SearchRequest",
    "SearchResponse",
    "VerifyReport",
    "VerifyRequest",
)

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


def referenced(schemas: Mapping[str, Any], roots: Iterable[str]) -> list[str]:
    """``roots`` and every schema they reference, transitively, sorted by name."""
    seen: set[str] = set()
    todo = [r for r in roots if r in schemas]

    def refs(node: Any) -> Iterable[str]:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                yield _ref_name(node["$ref"])
            for value in node.values():
                yield from refs(value)
        elif isinstance(node, list):
            for value in node:
                yield from refs(value)

    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(r for r in refs(schemas[name]) if r not in seen)
    return sorted(seen)


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


def annotation(node: Mapping[str, Any]) -> str:
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


def model_source(schema_name: str, schema: Mapping[str, Any]) -> str:
    """One pydantic class for one object schema."""
    name = class_name(schema_name)
    request = name.endswith("Request")
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


HEADER = '''"""Typed models of folio's REST API, generated from its OpenAPI schema by ``folio/_codegen.py``.

Do not edit: run ``.venv/bin/python -m folio._codegen`` after changing the API's schemas
(``tests/folio/test_client_models.py`` fails until the two agree). Response models accept fields
they do not know (servers add fields, never rename them); request models reject them. The
``...Options`` ``TypedDict``s type the client's keyword options (a request's fields but ``query``).
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict{field}


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, protected_namespaces=(), validate_default=True)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, protected_namespaces=(), validate_default=True)
'''


def generate(openapi: Mapping[str, Any], roots: Iterable[str] = ROOTS) -> str:
    """The source of ``folio/models.py`` for an OpenAPI document."""
    schemas: Mapping[str, Any] = openapi["components"]["schemas"]
    names = referenced(schemas, roots)
    classes = [model_source(n, schemas[n]) for n in names]
    options = [src for n in names if (src := options_source(n, schemas[n])) is not None]
    models = sorted(class_name(n) for n in names)
    exported = sorted([*models, *(src.split("(")[0].removeprefix("class ") for src in options)])
    classes += options
    footer = ["__all__ = [", *[f'    "{n}",' for n in exported], "]", ""]
    footer += ["for _model in (" + ", ".join(models) + "):", "    _model.model_rebuild()", ""]
    header = HEADER.replace("{field}", ", Field" if any("Field(" in c for c in classes) else "")
    return header + "\n\n" + "\n\n\n".join(classes) + "\n\n\n" + "\n".join(footer)


def live_openapi() -> dict[str, Any]:
    """The schema of the app as this checkout builds it (no lifespan: nothing heavy is loaded)."""
    # function-level: the generator needs the server only to read its live schema
    from folio.api.http.app import create_app

    schema: dict[str, Any] = create_app().openapi()
    return schema


def main() -> None:
    from pathlib import Path

    target = Path(__file__).with_name("models.py")
    target.write_text(generate(live_openapi()), encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
