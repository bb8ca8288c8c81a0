"""Write the generated tables of docs/configuration.md from the code: every ``Settings`` field (with
its ``FOLIO_*`` variable, type, default, bounds and description), the ``FOLIO_*`` variables read
outside ``Settings``, and every ``AssemblyOptions`` field (the packing options of ``POST /v1/context``).

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

# Descriptions for fields whose code gives none (the code's own description wins when it has one).
SETTINGS_NOTES = {
    "host": "address `folio serve` binds; beyond loopback without a key it prints a warning",
    "port": "port of `folio serve`",
    "max_upload_bytes": "largest PDF upload, enforced while the upload streams (`413 limit_exceeded`)",
    "max_pages": "most pages in one PDF (`413 limit_exceeded`)",
    "default_budget": "token budget of a request that gives neither `budget` nor `context_window` (REST, CLI, "
    "MCP and answers)",
    "llm_model": "model name sent to `llm_base_url`; both set enable `POST /v1/answer`, `folio ask`, the viewer's "
    'answers, `rerank: true`, `compress: "llm"` and the MCP `answer` tool',
    "llm_api_key": "bearer key for `llm_base_url`, when the endpoint needs one (never shown in errors)",
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
# FOLIO_* variables read outside Settings: (default, description). A variable the settings module
# lists (OTHER_ENV) but this table does not is still written, without a description.
OTHER_ENV_NOTES = {
    "FOLIO_INGEST_TIMEOUT_S": (
        "300",
        "parse time per document (s); past it the parse child is killed and the "
        "job fails with `422 ingest_timeout`; `0`: off",
    ),
    "FOLIO_PAGE_TIMEOUT_S": (
        "60",
        "parse time per page (s); a page past it is degraded (text and page image "
        "kept, tables, figures and OCR stopped; listed in `degraded_pages`); `0`: off",
    ),
    "FOLIO_INGEST_MEMORY_MB": (
        "3072",
        "address space of the parse child (`422 ingest_memory`); a child killed by a signal is `422 parser_crashed`",
    ),
    "FOLIO_OCR_BUDGET_S": (
        "half the document limit",
        "OCR time per document; later scanned pages are indexed as images with a warning",
    ),
    "FOLIO_INGEST_ISOLATE": ("1", "`0`: parse in-process, without the time and memory limits (no forkserver child)"),
    "FOLIO_EMBED_BACKEND": (
        "onnx-int8",
        "document embeddings: `onnx-int8` (about 2.6x fp32 on 2 cores, page "
        "recall@10 within 1 point), `onnx` (fp32) or `torch` (the fp32 baseline)",
    ),
    "FOLIO_QUERY_BACKEND": (
        "onnx",
        "query embeddings: `onnx` or `torch`, always fp32 (what every store was written with)",
    ),
    "FOLIO_EMBED_THREADS": ("the cores", "threads of the document encoder"),
    "FOLIO_MODEL_CACHE": ("~/.cache/folio/models", "where the ONNX files are exported once per machine"),
    "FOLIO_STORAGE_OPTIONS": (
        "unset",
        "JSON of LanceDB storage options, on top of `AWS_ENDPOINT_URL`, "
        "`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`",
    ),
    "FOLIO_RAY_CPUS_PER_DOC": ("1", "CPUs a Ray ingest task reserves"),
    "FOLIO_RAY_GPUS_PER_DOC": ("0", "GPUs a Ray ingest task reserves"),
    "FOLIO_URL": (
        "unset",
        "the server `folio.Client` talks to, and that `folio context`/`search`/`ask` use when `--data` is not given",
    ),
    "FOLIO_TABLES_BASELINE": ("unset", "benchmarks: `1` runs the table path from before issue 9"),
    "FOLIO_GEN_TEST_DATA": ("unset", "tests: `1` regenerates golden files instead of comparing"),
    "FOLIO_HYPOTHESIS_EXAMPLES": ("per test", "tests: examples per Hypothesis property"),
    "FOLIO_KILL_ITERATIONS": ("unset", "tests: random kill points in the kill -9 loop"),
    "FOLIO_BENCH_DATA": ("unset", "tests: a data directory for the benchmark tests"),
}
TEST_SWITCHES = {
    "FOLIO_TABLES_BASELINE",
    "FOLIO_GEN_TEST_DATA",
    "FOLIO_HYPOTHESIS_EXAMPLES",
    "FOLIO_KILL_ITERATIONS",
    "FOLIO_BENCH_DATA",
}


def import_stage(path: str) -> types.ModuleType:
    """The module at ``path`` of a stage folder (``"api/settings"``): ``folio.api.settings`` after the
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


def env_name(settings_cls: type[BaseModel], path: str, field: FieldInfo) -> str:
    """The variable that sets ``path``: ``FOLIO_NAME``, or ``FOLIO_GROUP__NAME`` for a nested group."""
    if isinstance(field.validation_alias, str) and "." not in path:
        return field.validation_alias.upper()
    config: Any = settings_cls.model_config
    prefix = str(config.get("env_prefix", ""))
    delimiter = config.get("env_nested_delimiter") or "__"
    return (prefix + delimiter.join(path.split("."))).upper()


def settings_rows(settings_cls: type[BaseModel]) -> list[str]:
    rows = ["| variable | type | default | bounds | description |", "|---|---|---|---|---|"]
    for path, name, field in walk(settings_cls):
        if nested_model(field) is not None:
            continue
        desc = field.description or SETTINGS_NOTES.get(name, "")
        rows.append(
            f"| `{env_name(settings_cls, path, field)}` | {type_name(field.annotation)} | "
            f"{cell(default_text(field, 'unset'))} | {bounds_text(field)} | {cell(desc)} |"
        )
    return rows


def other_env_rows(settings_mod: types.ModuleType, settings_cls: type[BaseModel], tests: bool) -> list[str]:
    """The ``FOLIO_*`` variables read outside ``Settings`` (``tests``: only the test and benchmark ones)."""
    listed = set(getattr(settings_mod, "OTHER_ENV", ())) | set(OTHER_ENV_NOTES)
    known = {env_name(settings_cls, p, f) for p, _, f in walk(settings_cls)}
    rows = ["| variable | default | description |", "|---|---|---|"]
    for name in sorted(listed - known):
        if (name in TEST_SWITCHES) != tests:
            continue
        default, desc = OTHER_ENV_NOTES.get(name, ("", ""))
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


def doc_text(cls: type) -> list[str]:
    """The class docstring, as Markdown paragraphs (double backticks made single)."""
    return (inspect.getdoc(cls) or "").replace("``", "`").splitlines()


def blocks() -> dict[str, list[str]]:
    """Every generated block of the page, by name."""
    settings_mod = import_stage("api/settings")
    options_mod = import_stage("assembly/types")
    settings_cls: type[BaseModel] = settings_mod.Settings
    options_cls: type[BaseModel] = options_mod.AssemblyOptions
    source = f"`folio.{settings_mod.__name__.removeprefix('folio.')}`"  # the same before and after the move
    return {
        "settings": [f"From `Settings` in {source}:", "", *settings_rows(settings_cls)],
        "other-env": other_env_rows(settings_mod, settings_cls, tests=False),
        "test-env": other_env_rows(settings_mod, settings_cls, tests=True),
        "assembly": [*doc_text(options_cls), "", *assembly_rows(options_cls)],
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
