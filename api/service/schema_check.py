"""A client's JSON schema, checked safely: what ``POST /v1/answer`` may accept and how a reply is validated.

A ``json_schema`` comes from the client and runs inside the server, so (issue 20):

- ``schema_problem`` (at request time, a 422 before any model call): every ``$ref`` (and
  ``$dynamicRef``, ``$recursiveRef``) must point inside the schema (``#`` or ``#/...``); folio never
  fetches a URL or reads a file for a schema. ``patternProperties`` together with
  ``unevaluatedProperties`` is refused (jsonschema would run those patterns unbounded).
- ``validate``: a ``referencing.Registry`` with no retrieval, so even a reference that slips through
  resolves only inside the schema (or jsonschema's bundled meta-schemas), else it is reported as an
  error. Patterns (``pattern``, ``patternProperties`` and the ``additionalProperties`` that depend on
  them) run on the ``regex`` module with a timeout and without the GIL, not on ``re``, which can
  backtrack for minutes; and every keyword checks one deadline (``CHECK_S``), so neither a
  catastrophic pattern nor a schema whose references multiply the work holds a worker for longer.
  The deadline is also checked inside the keywords whose work grows faster than the value (issue 31:
  ``uniqueItems`` over 6,000 objects compared every pair, 117 s): ``uniqueItems`` hashes each item
  once, ``unevaluatedItems`` and ``unevaluatedProperties`` look indexes and keys up in sets. Every
  other keyword does work in proportion to the value, or to the schema (at most 20,000 characters).
  A value nested deeper than ``MAX_VALUE_DEPTH``, or holding more than ``MAX_VALUE_NODES`` values,
  is not checked at all; at most ``MAX_ERRORS`` errors are collected.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

CHECK_S = 1.0
"""The most one reply's schema check may take; past it the reply is reported as not checked."""
MAX_VALUE_DEPTH = 64
MAX_VALUE_NODES = 100_000
"""The most values (items, members and scalars, at any depth) a checked reply may hold: far more than a
reply within ``max_tokens`` can, and what bounds the work of a keyword that walks them in one call."""
MAX_ERRORS = 100
"""Errors collected before the check stops (the 10 shown are the first by path among them)."""
REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
_DEADLINE: ContextVar[float] = ContextVar("folio_schema_deadline", default=0.0)


class _OutOfTime(Exception):
    pass


def depth(value: Any, limit: int) -> int:
    """How deep ``value`` nests (lists and objects), counted up to ``limit + 1`` without recursion."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        v, d = todo.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            break
        if isinstance(v, dict):
            todo.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            todo.extend((x, d + 1) for x in v)
    return deepest


def values(value: Any, limit: int) -> int:
    """How many values ``value`` holds (itself, and every item and member at any depth), counted up to
    ``limit + 1`` without recursion.

    >>> values({"a": [1, 2, {"b": None}]}, 100)
    6
    """
    seen = 0
    todo: list[Any] = [value]
    while todo and seen <= limit:
        v = todo.pop()
        seen += 1
        if isinstance(v, dict):
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    return seen


def schema_problem(schema: Any) -> str | None:
    """Why folio will not use ``schema`` (a non-local reference, an unsupported pairing), or None."""
    todo: list[Any] = [schema]
    pattern_props = unevaluated = False
    while todo:
        v = todo.pop()
        if isinstance(v, list):
            todo.extend(v)
        elif isinstance(v, dict):
            for key in REF_KEYS:
                ref = v.get(key)
                if isinstance(ref, str) and not ref.startswith("#"):
                    return (
                        f"{key} {ref[:100]!r} is not a reference inside the schema: only '#' and '#/...' "
                        f"references are followed (folio fetches no URL and reads no file for a schema)"
                    )
            pattern_props = pattern_props or isinstance(v.get("patternProperties"), dict)
            unevaluated = unevaluated or "unevaluatedProperties" in v
            todo.extend(v.values())
    if pattern_props and unevaluated:
        return "patternProperties together with unevaluatedProperties is not supported"
    return None


def _search(pattern: str, text: str) -> bool:
    import regex

    left = _DEADLINE.get() - time.monotonic()
    if left <= 0:
        raise _OutOfTime
    try:
        return regex.search(pattern, text, timeout=left, concurrent=True) is not None
    except TimeoutError:
        raise _OutOfTime from None


def _pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _search(patrn, instance):
        yield ValidationError(f"{instance[:100]!r} does not match {patrn[:100]!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for k, v in instance.items():
            if _search(pattern, k):
                yield from validator.descend(v, subschema, path=k, schema_path=pattern)


def _additional_properties(validator: Any, ap: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [k for k in instance if k not in properties and not any(_search(p, k) for p in patterns)]
    if validator.is_type(ap, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], ap, path=extra)
    elif not ap and extras:
        shown = ", ".join(repr(e[:100]) for e in sorted(extras)[:10])
        yield ValidationError(f"Additional properties are not allowed ({shown} unexpected)")


_TRUE, _FALSE = object(), object()  # JSON true and false, which Python takes for 1 and 0


def _same(v: Any) -> Any:
    """A hashable stand-in for a JSON value, equal for values JSON Schema calls equal (``1`` and ``1.0``;
    not ``1`` and ``true``; objects whatever their key order)."""
    if v is True or v is False:
        return _TRUE if v else _FALSE
    if isinstance(v, list):
        return tuple(_same(x) for x in v)
    if isinstance(v, dict):
        return frozenset((k, _same(x)) for k, x in v.items())
    return v


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``uniqueItems`` in one pass: each item hashed once (jsonschema compares every pair of items that
    do not sort, 117 s for 6,000 objects), within the deadline."""
    from jsonschema.exceptions import ValidationError

    if not unique or not validator.is_type(instance, "array"):
        return
    first: dict[Any, int] = {}
    for i, item in enumerate(instance):
        if i % 256 == 0:
            _in_time()
        j = first.setdefault(_same(item), i)
        if j != i:
            yield ValidationError(f"has non-unique elements (items {j} and {i} are equal)")
            return


def _unevaluated_items(validator: Any, unevaluated: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``unevaluatedItems`` as jsonschema has it, but with the evaluated indexes in a set (jsonschema
    searches a list of them for each item: quadratic in the array)."""
    from jsonschema._utils import find_evaluated_item_indexes_by_schema  # (its own helper; jsonschema >= 4.18)
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "array"):
        return
    evaluated = set(find_evaluated_item_indexes_by_schema(validator, instance, schema))
    _in_time()
    extra = [i for i in range(len(instance)) if i not in evaluated]
    if extra:
        yield ValidationError(f"Unevaluated items are not allowed (items {_some(extra)} unexpected)")


def _unevaluated_properties(validator: Any, unevaluated: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``unevaluatedProperties`` as jsonschema has it, with the evaluated keys in a set (see above)."""
    from jsonschema._utils import find_evaluated_property_keys_by_schema
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    evaluated = set(find_evaluated_property_keys_by_schema(validator, instance, schema))
    _in_time()
    rest = (k for k in instance if k not in evaluated)
    bad = [k for k in rest if next(validator.descend(instance[k], unevaluated, path=k, schema_path=k), None)]
    if bad and unevaluated is False:
        yield ValidationError(f"Unevaluated properties are not allowed ({_some(sorted(bad))} unexpected)")
    elif bad:
        yield ValidationError(f"Unevaluated properties are not valid under the given schema ({_some(bad)})")


def _some(names: list[Any]) -> str:
    shown = ", ".join(repr(n)[:100] for n in names[:10])
    return shown + (f" and {len(names) - 10} more" if len(names) > 10 else "")


def _in_time() -> None:
    if time.monotonic() > _DEADLINE.get():
        raise _OutOfTime


def _timed(fn: Callable[..., Any]) -> Callable[..., Any]:
    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _in_time()
        return fn(validator, value, instance, schema)

    return keyword


_SAFE = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "uniqueItems": _unique_items,
    "unevaluatedItems": _unevaluated_items,
    "unevaluatedProperties": _unevaluated_properties,
}


@functools.cache
def _bounded(cls: Any) -> Any:
    """``cls`` (a jsonschema validator class) with the safe pattern keywords and a deadline on every keyword."""
    from jsonschema.validators import extend

    keywords = {k: _timed(_SAFE.get(k, fn)) for k, fn in cls.VALIDATORS.items()}
    return extend(cls, validators=keywords)


def validate(value: Any, schema: dict[str, Any], *, seconds: float = CHECK_S) -> list[str]:
    """Schema errors of ``value`` (empty: valid), at most 10, each with its JSON path; a check that
    runs past ``seconds`` or cannot resolve a reference says so as an error."""
    from jsonschema.validators import validator_for
    from referencing import Registry
    from referencing.exceptions import Unresolvable

    if values(value, MAX_VALUE_NODES) > MAX_VALUE_NODES:
        return [f"(root): the value holds more than {MAX_VALUE_NODES} values; it was not checked"]
    if depth(value, MAX_VALUE_DEPTH) > MAX_VALUE_DEPTH:
        return [f"(root): the value nests deeper than {MAX_VALUE_DEPTH} levels; it was not checked"]
    problem = schema_problem(schema)
    if problem is not None:
        return [f"(root): the schema was not used: {problem}"]
    checker = _bounded(validator_for(schema))(schema, registry=Registry())
    found: list[Any] = []
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        found.extend(itertools.islice(checker.iter_errors(value), MAX_ERRORS))
        stopped = None
    except _OutOfTime:
        stopped = (
            f"(root): not checked to the end: checking against json_schema took longer than {seconds:g} s "
            "(a pattern that backtracks, references that multiply the work, or a large value)"
        )
    except RecursionError:
        stopped = "(root): not checked: the schema refers to itself without end"
    except Unresolvable as e:
        stopped = f"(root): not checked: {str(e)[:200]} (only references inside the schema are followed)"
    finally:
        _DEADLINE.reset(token)
    out = [
        f"{'/'.join(str(p) for p in e.path) or '(root)'}: {e.message[:200]}"
        for e in sorted(found, key=lambda e: list(e.path))[:10]
    ]
    return ([stopped] if stopped else []) + out[: 9 if stopped else 10]
