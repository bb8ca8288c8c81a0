"""Document metadata and the typed filter language over it: plain values, checked here, with no store.

Metadata is a flat JSON object a user gives with an upload: keys matching ``KEY_PATTERN`` (at most
``MAX_KEYS``), values that are strings (at most ``MAX_STRING_CHARS``), finite numbers, booleans or dates; the
whole object at most ``MAX_METADATA_BYTES`` of JSON. A string of the form ``YYYY-MM-DD`` that is a real date
*is* a date, everywhere (upload, filters, listings): dates compare as dates, never as text.

A filter (``parse_filter``) is a tree of at most ``MAX_FILTER_NODES`` nodes and ``MAX_FILTER_DEPTH`` levels:

- a leaf ``{"field": "year", "op": "gte", "value": 2020}`` (ops: ``eq ne in gt gte lt lte between``; ``in``
  takes a list of 1 to ``MAX_IN_VALUES`` values, ``between`` a list ``[low, high]``, both ends included);
- ``{"and": [...]}``, ``{"or": [...]}`` (1 to ``MAX_FILTER_NODES`` children), ``{"not": {...}}``;
- a shorthand: any other object is an ``and`` of its entries, ``{"company": "Acme", "year": {"gte": 2020},
  "form": ["10-K", "10-Q"]}``: a scalar is ``eq``, a list is ``in``, an object maps ops to values.

A leaf holds for a document version that has ``field`` with a value *of the leaf value's type* satisfying
``op``: a comparison across types (a date against a string, a number against a date) matches nothing, and so
does ``ne`` on a version without the field (``not`` is the way to ask for "has no such value").
The store evaluates each leaf (``folio.ingest.storage.sql.metadata_where``); retrieval combines the sets.
"""

from __future__ import annotations

import json
import math
import re
from datetime import date
from typing import Annotated, Any, Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field

from folio.kernel.errors import InvalidRequest

KEY_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"
MAX_KEYS = 32
MAX_STRING_CHARS = 512
MAX_METADATA_BYTES = 8192
MAX_FILTER_DEPTH = 8
MAX_FILTER_NODES = 64
MAX_IN_VALUES = 256
MAX_EXACT_INT = 2**53  # numbers are stored as float64: integers beyond this would not compare exactly

_KEY_RE = re.compile(KEY_PATTERN.replace("$", r"\Z"))
_DATE_RE = re.compile(r"\A\d{4}-\d{2}-\d{2}\Z")

MetaValue = str | float | int | bool | date
Ops = Literal["eq", "ne", "in", "gt", "gte", "lt", "lte", "between"]
OPS: tuple[str, ...] = ("eq", "ne", "in", "gt", "gte", "lt", "lte", "between")
Scalar = str | int | float | bool  # lengths and finiteness: ``typed_value``


def typed_value(value: Any, where: str) -> MetaValue:
    """One metadata (or filter) value, typed: a ``YYYY-MM-DD`` string that is a real date becomes a ``date``.

    >>> typed_value("2024-02-29", "x"), typed_value(3, "x"), typed_value("Acme", "x")
    (datetime.date(2024, 2, 29), 3, 'Acme')
    """
    if isinstance(value, bool | date):
        return value
    if isinstance(value, int | float):
        if not math.isfinite(value) or abs(value) > MAX_EXACT_INT:
            raise InvalidRequest(f"{where}: numbers must be finite and at most 2**53 in size, got {value!r}")
        return value
    if isinstance(value, str):
        if len(value) > MAX_STRING_CHARS:
            raise InvalidRequest(f"{where}: strings are at most {MAX_STRING_CHARS} characters")
        if _DATE_RE.match(value):
            try:
                return date.fromisoformat(value)
            except ValueError:
                return value
        return value
    raise InvalidRequest(f"{where}: a value is a string, a number, a boolean or a YYYY-MM-DD date, got {value!r}")


def check_key(key: Any, where: str = "metadata") -> str:
    if not isinstance(key, str) or not _KEY_RE.match(key):
        raise InvalidRequest(
            f"{where}: invalid key {str(key)[:80]!r}: 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or '_'"
        )
    return key


def check_metadata(raw: Any) -> dict[str, MetaValue]:
    """Validate an upload's metadata (module docstring); ``InvalidRequest`` (422) says what is wrong.

    >>> check_metadata({"company": "Acme", "year": 2024, "filed": "2024-03-01"})["filed"]
    datetime.date(2024, 3, 1)
    """
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidRequest("metadata must be a JSON object of key: value")
    if len(raw) > MAX_KEYS:
        raise InvalidRequest(f"metadata has {len(raw)} keys; at most {MAX_KEYS}")
    if len(json.dumps(raw, ensure_ascii=False, default=str).encode()) > MAX_METADATA_BYTES:
        raise InvalidRequest(f"metadata is over {MAX_METADATA_BYTES} bytes of JSON")
    return {check_key(k): typed_value(v, f"metadata[{k!r}]") for k, v in raw.items()}


def metadata_json(meta: dict[str, MetaValue]) -> dict[str, str | float | int | bool]:
    """Metadata as JSON values (dates as ``YYYY-MM-DD``, which read back as dates)."""
    return {k: v.isoformat() if isinstance(v, date) else v for k, v in meta.items()}


def parse_metadata_json(text: str | None) -> dict[str, MetaValue]:
    """Metadata given as a JSON string (a form field, a CLI option): ``check_metadata`` of its object."""
    if text is None or not text.strip():
        return {}
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise InvalidRequest(f"metadata is not valid JSON: {exc}") from exc
    return check_metadata(raw)


# ------------------------------------------------------------------------------------ filters
class _Node(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FilterLeaf(_Node):
    """One comparison of a field's value (module docstring); ``value`` is typed by ``typed_value``."""

    field: Annotated[str, Field(pattern=KEY_PATTERN)]
    op: Ops = "eq"
    value: Scalar | list[Scalar]

    def values(self) -> tuple[MetaValue, ...]:
        """The leaf's values, typed (one, except for ``in`` and ``between``)."""
        raw = self.value if isinstance(self.value, list) else [self.value]
        return tuple(typed_value(v, f"filter on {self.field!r}") for v in raw)


class FilterAnd(_Node):
    all_of: tuple[FilterNode, ...] = Field(alias="and", min_length=1, max_length=MAX_FILTER_NODES)


class FilterOr(_Node):
    any_of: tuple[FilterNode, ...] = Field(alias="or", min_length=1, max_length=MAX_FILTER_NODES)


class FilterNot(_Node):
    negated: FilterNode = Field(alias="not")


FilterNode = FilterLeaf | FilterAnd | FilterOr | FilterNot
for _model in (FilterAnd, FilterOr, FilterNot):
    _model.model_rebuild()


def parse_filter(raw: Any) -> FilterNode | None:
    """A filter's typed tree from its JSON (None: no filter); ``InvalidRequest`` for anything out of shape or
    over the bounds (module docstring).

    >>> parse_filter({"company": "Acme", "year": {"gte": 2020}})  # doctest: +NORMALIZE_WHITESPACE
    FilterAnd(all_of=(FilterLeaf(field='company', op='eq', value='Acme'),
                      FilterLeaf(field='year', op='gte', value=2020)))
    """
    if raw is None:
        return None
    counter = [0]
    node = _node(raw, 1, counter)
    return node


def _node(raw: Any, depth: int, counter: list[int]) -> FilterNode:
    if depth > MAX_FILTER_DEPTH:
        raise InvalidRequest(f"filter is nested deeper than {MAX_FILTER_DEPTH} levels")
    counter[0] += 1
    if counter[0] > MAX_FILTER_NODES:
        raise InvalidRequest(f"filter has more than {MAX_FILTER_NODES} nodes")
    if not isinstance(raw, dict) or not raw:
        raise InvalidRequest(f"a filter node is a non-empty JSON object, got {str(raw)[:80]!r}")
    if "field" in raw:
        return _leaf(raw.get("field"), raw.get("op", "eq"), raw.get("value"), set(raw) - {"field", "op", "value"})
    if len(raw) == 1 and next(iter(raw)) in ("and", "or"):
        op, children = next(iter(raw.items()))
        if not isinstance(children, list) or not children:
            raise InvalidRequest(f"filter {op!r} takes a non-empty list of filters")
        nodes = tuple(_node(c, depth + 1, counter) for c in children)
        return FilterAnd.model_validate({"and": nodes}) if op == "and" else FilterOr.model_validate({"or": nodes})
    if len(raw) == 1 and "not" in raw:
        return FilterNot.model_validate({"not": _node(raw["not"], depth + 1, counter)})
    return _shorthand(raw, counter)


def _shorthand(raw: dict[str, Any], counter: list[int]) -> FilterNode:
    """``{"company": "Acme", "year": {"gte": 2020}, "form": ["10-K"]}``: an ``and`` of leaves."""
    leaves: list[FilterNode] = []
    for key, spec in raw.items():
        if isinstance(spec, dict):
            if not spec:
                raise InvalidRequest(f"filter on {str(key)[:80]!r}: give at least one of {', '.join(OPS)}")
            leaves += [_leaf(key, op, value, set()) for op, value in spec.items()]
        else:
            leaves.append(_leaf(key, "in" if isinstance(spec, list) else "eq", spec, set()))
    counter[0] += len(leaves)
    if counter[0] > MAX_FILTER_NODES:
        raise InvalidRequest(f"filter has more than {MAX_FILTER_NODES} nodes")
    return leaves[0] if len(leaves) == 1 else FilterAnd.model_validate({"and": tuple(leaves)})


def _leaf(field: Any, op: Any, value: Any, extra: set[str]) -> FilterLeaf:
    if extra:
        raise InvalidRequest(f"a filter leaf has field, op and value; unknown: {', '.join(sorted(extra))}")
    where = f"filter on {str(field)[:80]!r}"
    check_key(field, "filter")
    if op not in OPS:
        raise InvalidRequest(f"{where}: unknown op {str(op)[:20]!r}; use one of {', '.join(OPS)}")
    if op in ("in", "between"):
        size = (1, MAX_IN_VALUES) if op == "in" else (2, 2)
        if not isinstance(value, list) or not size[0] <= len(value) <= size[1]:
            raise InvalidRequest(f"{where}: {op} takes a list of {size[0]} to {size[1]} values")
    elif isinstance(value, list | dict) or value is None:
        raise InvalidRequest(f"{where}: {op} takes one string, number, boolean or date")
    leaf = FilterLeaf(field=field, op=op, value=value)
    typed = leaf.values()  # the type checks (finite numbers, string lengths), once here
    if op == "between" and type(typed[0]) is not type(typed[1]) and not all(is_number(t) for t in typed):
        raise InvalidRequest(f"{where}: between takes two values of one type")
    return leaf


def is_number(value: MetaValue) -> TypeGuard[int | float]:
    """A number (not a bool, which Python counts as an int)."""
    return isinstance(value, int | float) and not isinstance(value, bool)
