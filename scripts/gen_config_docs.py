"""Write the generated tables of docs/configuration.md from the code: every field of every ``Settings``
group (with its variable, type, default, bounds and description), the client's ``ClientSettings``, the
test suite's own switches (``tests/switches.py``), and every ``AssemblyOptions`` field (the packing options
of ``POST /v1/context``).

The page's prose is written by hand; only the blocks between ``<!-- BEGIN GENERATED: name -->`` and
``<!-- END GENERATED: name -->`` are replaced. ``tests/test_config_docs.py`` fails when the page is
out of date; regenerate with::

    python scripts/gen_config_docs.py           # rewrite docs/configuration.md
    python scripts/gen_config_docs.py --check   # exit 1 when it is out of date
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "configuration.md"

# Descriptions for settings fields whose code gives none, by group and field (the code's own description wins).
SETTINGS_NOTES = {
    "server.host": "address `folio serve` binds; beyond loopback without a key it prints a warning",
    "server.port": "port of `folio serve`",
    "ingest.max_upload_bytes": "largest PDF upload, enforced while the upload streams (`413 limit_exceeded`)",
    "ingest.max_pages": "most pages in one PDF (`413 limit_exceeded`)",
    "context.default_budget": "token budget of a request that gives neither `budget` nor `context_window` (REST, CLI, "
    "MCP and answers)",
    "llm.model": "model name sent to `llm_base_url`; both set enable `POST /v1/answer`, `folio ask`, the viewer's "
    'answers, `rerank: true`, `compress: "llm"` and the MCP `answer` tool',
    "llm.api_key": "bearer key for `llm_base_url`, when the endpoint needs one (never shown in errors)",
}
ASSEMBLY_NOTES = {
    "budget": "token limit of the whole prompt: system text, question, block headers, message overhead and images",
    "context_window": "the model's context window; the limit is then `context_window - reserve_output` (the "
    "smaller of the two when `budget` is given too)",
    "reserve_output": "tokens kept free for the answer when `context_window` is given",
    "tokenizer": "`cl100k_base`, `o200k_base`, a name in `FOLIO_TOKENIZERS`, or `hf:<dir>` (in-process only; "
    "a request over HTTP names a tokenizer, never a path)",
    "strategy": "how a hit is expanded: `auto` picks per kind (page, page excerpt, section, table, figure); "
    "`raw` the unit itself; `window` the sentences around it; `parent` its section; `neighbors` the paragraphs "
    "beside it; `page` its page",
    "window_before": "`window`: sentences before the hit (when `window_share` is unset)",
    "window_after": "`window`: sentences after the hit (when `window_share` is unset)",
    "parent_max_tokens": "the largest section sent whole; a larger one falls back to windows",
    "neighbors": "`neighbors`: paragraphs on each side of the hit's paragraph",
    "include_images": "send figures found by CLIP, pages found by ColPali and scanned pages as images; false: "
    "as their text",
    "image_tokens": "how one image is priced in the budget (the fields below)",
    "structural_truncation": "after packing, cut candidates left out for budget to the room that is left "
    "(a table to its header and leading rows, text to whole sentences)",
    "order": "`edges`: strongest group first, second strongest last (next to the question), items of one "
    "section together in document order; `relevance`; `document`",
    "max_items": "at most this many items",
    "score_threshold": "drop hits below this score (see `threshold_mode`)",
    "threshold_mode": "`relative`: `score_threshold` is a share of the top score (0..1); `absolute`: a score",
    "mmr_lambda": "reorder candidates by maximal marginal relevance with this weight on relevance (1: relevance only)",
    "modality_slots": "maximum items per modality (`text`, `table`, `figure`, `page`), taken in priority order",
    "sub_questions": "parts of the question the package should cover: candidates that cover a part not yet "
    "covered move forward (at most 16, each at most 4,000 characters)",
    "system_prompt": "replaces folio's citation contract as the system message (at most 20,000 characters)",
    "prompt_format": "`openai` chat messages (images as `image_url` parts) or `anthropic` (image blocks)",
    "image_url_template": "the URL an image item points at; `{region_id}` is replaced literally",
    "citation_style": "`typed`: ids by kind (`S` text, `T` tables, `F` figures, `P` pages); `uniform`: `S` "
    "for every item",
    "kind": "`tile` (OpenAI high detail), `area` (Anthropic) or `fixed`",
    "base": "`tile`: tokens per image",
    "per_tile": "`tile`: tokens per tile",
    "tile_px": "`tile`: tile side in pixels",
    "max_side": "`tile`: the image is first scaled to fit this square",
    "short_side": "`tile`: then down so that its short side is at most this",
    "divisor": "`area`: tokens = ceil(width x height / divisor)",
    "max_long_edge": "`area`: the long edge is first scaled down to this",
    "fixed": "`fixed`: tokens per image",
}
def import_stage(path: str) -> types.ModuleType:
    """The module at ``path`` of a stage folder (``"api/settings"``): ``folio.settings`` after the
    namespace move, else the old top-level name. (A path, not a dotted name, so that
    ``scripts/migrate_namespace.py`` leaves the fallback alone.)"""
    dotted = path.replace("/", ".")
    errors = []
    for name in (f"folio.{dotted}", dotted):
        try:
            return importlib.import_module(name)
        except ImportError as e:
            errors.append(f"{name}: {e}")
    raise ImportError("; ".join(errors))


def type_name(tp: Any) -> str:
    """A short, stable spelling of a field's type: ``int | None``, ``'auto' | 'raw'``, ``dict[str, str]``."""
    origin, args = get_origin(tp), get_args(tp)
    if tp is type(None):
        return "None"
    if origin is Annotated:
        return type_name(args[0])
    if origin is Literal:
        return " \\| ".join(json.dumps(a) for a in args)
    if origin in (Union, types.UnionType):
        return " \\| ".join(type_name(a) for a in args)
    if origin is not None:
        inner = ", ".join("..." if a is Ellipsis else type_name(a) for a in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]"
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def default_text(field: FieldInfo, unset: str) -> str:
    """The default as written in a request or variable; a computed default names its function."""
    factory = field.default_factory
    if factory is not None:
        if factory in (dict, list, tuple, set):
            return f"`{json.dumps(factory())}`" if factory is not set else "`[]`"
        doc = (inspect.getdoc(factory) or "").split("\n")[0].rstrip(".").replace("``", "`")
        return f"`{factory.__name__}()`" + (f": {doc}" if doc else "")
    value = field.default
    if value is PydanticUndefined:
        return "required"
    if value is None:
        return unset
    if isinstance(value, BaseModel):
        return "see below"
    return f"`{json.dumps(value, default=str)}`"


def bounds_text(field: FieldInfo) -> str:
    """The field's numeric and length bounds: ``≥ 1, ≤ 256``."""
    marks = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<", "min_length": "length ≥", "max_length": "length ≤"}
    out = []
    for meta in field.metadata:
        for attr, mark in marks.items():
            value = getattr(meta, attr, None)
            if value is not None:
                out.append(f"{mark} {value:,}" if isinstance(value, int) else f"{mark} {value}")
    return ", ".join(out)


def cell(text: str) -> str:
    """Text fit for one Markdown table cell."""
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip()


def nested_model(field: FieldInfo) -> type[BaseModel] | None:
    tp = field.annotation
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def walk(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, str, FieldInfo]]:
    """``(dotted path, leaf name, field)`` for every field, nested models' fields after their own row."""
    for name, field in model.model_fields.items():
        yield prefix + name, name, field
        sub = nested_model(field)
        if sub is not None:
            yield from walk(sub, f"{prefix}{name}.")


def env_name(group: type[BaseModel], name: str, field: FieldInfo) -> str:
    """The variable that sets field ``name`` of a settings group: the field's own (``validation_alias``),
    else the group's prefix and the name (``FOLIO_LLM_`` + ``model``)."""
    if isinstance(field.validation_alias, str):
        return field.validation_alias.upper()
    config: Any = group.model_config
    return (str(config.get("env_prefix", "")) + name).upper()


def group_rows(group: type[BaseModel], path: str) -> list[str]:
    """One table of a settings group: every field with its variable, its place in the tree and its default."""
    rows = ["| variable | field | type | default | bounds | description |", "|---|---|---|---|---|---|"]
    for name, field in group.model_fields.items():
        desc = field.description or SETTINGS_NOTES.get(path + name, "")
        rows.append(
            f"| `{env_name(group, name, field)}` | `{path}{name}` | {type_name(field.annotation)} | "
            f"{cell(default_text(field, 'unset'))} | {bounds_text(field)} | {cell(desc)} |"
        )
    return rows


def settings_rows(settings_cls: type[BaseModel]) -> list[str]:
    """A heading line and a table per group of the tree, in the tree's order."""
    out: list[str] = []
    for name, field in settings_cls.model_fields.items():
        group = nested_model(field)
        if group is None:
            raise SystemExit(f"Settings.{name} is not a group: every setting belongs to one")
        doc = (inspect.getdoc(group) or "").split("\n\n")[0].replace("``", "`")
        out += [f"**`settings.{name}`** (`{group.__name__}`): {cell(doc)}", "", *group_rows(group, name + "."), ""]
    return out[:-1]


def test_switch_rows() -> list[str]:
    """The test suite's own switches (``tests/switches.py``): not settings, listed for whoever runs the tests."""
    sys.path.insert(0, str(ROOT))
    from tests.switches import SWITCHES

    rows = ["| variable | default | description |", "|---|---|---|"]
    for name, (default, desc) in sorted(SWITCHES.items()):
        rows.append(f"| `{name}` | {cell(default)} | {cell(desc)} |")
    return rows


def assembly_rows(options_cls: type[BaseModel]) -> list[str]:
    rows = ["| field | type | default | bounds | description |", "|---|---|---|---|---|"]
    for path, name, field in walk(options_cls):
        desc = field.description or ASSEMBLY_NOTES.get(name, "")
        rows.append(
            f"| `{path}` | {type_name(field.annotation)} | {cell(default_text(field, '`null`'))} | "
            f"{bounds_text(field)} | {cell(desc)} |"
        )
    return rows


def assembly_groups(options_cls: type[BaseModel]) -> list[str]:
    """A heading line (the group's docstring) and a table per group of ``AssemblyOptions.GROUPS``; a field that
    no group holds is an error (every option belongs to the group of its concern)."""
    groups: tuple[type[BaseModel], ...] = getattr(options_cls, "GROUPS", ())
    grouped = [name for group in groups for name in group.model_fields]
    loose = [name for name in options_cls.model_fields if name not in grouped]
    if loose or not groups:
        raise SystemExit(f"AssemblyOptions fields in no group of AssemblyOptions.GROUPS: {', '.join(loose)}")
    out: list[str] = []
    for group in groups:
        out += [f"**`{group.__name__}`**: {cell(' '.join(doc_text(group)))}", "", *assembly_rows(group), ""]
    return out[:-1]


def doc_text(cls: type) -> list[str]:
    """The class docstring, as Markdown paragraphs (double backticks made single)."""
    return (inspect.getdoc(cls) or "").replace("``", "`").splitlines()


def blocks() -> dict[str, list[str]]:
    """Every generated block of the page, by name."""
    settings_mod = importlib.import_module("folio.settings")
    options_mod = import_stage("assembly/options")
    settings_cls: type[BaseModel] = settings_mod.Settings
    options_cls: type[BaseModel] = options_mod.AssemblyOptions
    client_cls: type[BaseModel] = settings_mod.ClientSettings
    return {
        "settings": [f"From `Settings` in `{settings_mod.__name__}`:", "", *settings_rows(settings_cls)],
        "other-env": group_rows(client_cls, "client."),
        "test-env": test_switch_rows(),
        "assembly": [*doc_text(options_cls), "", *assembly_groups(options_cls)],
    }


def render(text: str, generated: dict[str, list[str]]) -> str:
    """``text`` with each named block replaced; a block the page lacks is an error."""
    for name, lines in generated.items():
        begin, end = f"<!-- BEGIN GENERATED: {name} -->", f"<!-- END GENERATED: {name} -->"
        pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
        found = pattern.search(text)
        if found is None:
            raise SystemExit(f"{DOC}: no {begin} ... {end} block")
        text = text[: found.start()] + "\n".join([begin, "", *lines, "", end]) + text[found.end() :]
    return text


def main(argv: list[str] | None = None, out: Callable[[str], object] = sys.stderr.write) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is out of date")
    args = parser.parse_args(argv)
    current = DOC.read_text(encoding="utf-8")
    fresh = render(current, blocks())
    if args.check:
        if fresh != current:
            out(f"{DOC.relative_to(ROOT)} is out of date: python scripts/gen_config_docs.py\n")
            return 1
        return 0
    if fresh != current:
        DOC.write_text(fresh, encoding="utf-8")
        out(f"wrote {DOC.relative_to(ROOT)}\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
