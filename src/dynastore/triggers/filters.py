"""FilterCriteria: Lambda's event-filter patterns over a stream record's JSON.

A pattern is a JSON object shaped like the record: a nested object descends into the record's object of the same
key; a list at a leaf holds the matchers, any of which may match the record's value there (every key of the
pattern must match; a record matches the set when any pattern does). Matchers:

* a literal (string, number, true/false, null): equality; ``{"prefix": s}``, ``{"suffix": s}``,
  ``{"equals-ignore-case": s}``;
* ``{"anything-but": v}``: v a literal, a list of literals or ``{"prefix": s}`` / ``{"suffix": s}``; the value must
  be present;
* ``{"numeric": [op, n, (op, n)]}`` with ``=``, ``<``, ``<=``, ``>``, ``>=``: a number, or a numeric string (the
  ``N`` values of DynamoDB's records are strings);
* ``{"exists": true|false}``: whether the key is present.

When the record's value is an array, the leaf matches when any element does. Patterns are checked when the
trigger is configured: a wrong one is a configuration error.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["FilterSet", "matches"]

_ABSENT = object()
_NUMERIC_OPS: dict[str, Callable[[float, float], bool]] = {
    "=": operator.eq,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class FilterSet:
    """Compiled (checked) patterns; a record passes when any matches."""

    __slots__ = ("patterns",)

    def __init__(self, patterns: list[Any]) -> None:
        if not patterns:
            raise ValueError("FilterCriteria holds no filter")
        for pattern in patterns:
            _check(pattern, "pattern")
        self.patterns = patterns

    def passes(self, record: Mapping[str, Any]) -> bool:
        return any(matches(pattern, record) for pattern in self.patterns)


def _check(pattern: Any, where: str) -> None:
    if not isinstance(pattern, dict) or not pattern:
        raise ValueError(f"a filter {where} must be a non-empty JSON object")
    for key, value in pattern.items():
        if isinstance(value, dict):
            _check(value, f"pattern under {key!r}")
        elif isinstance(value, list) and value:
            for matcher in value:
                _check_matcher(key, matcher)
        else:
            raise ValueError(f"the filter value of {key!r} must be an object or a non-empty list of matchers")


def _check_matcher(key: str, matcher: Any) -> None:
    if not isinstance(matcher, dict):
        if isinstance(matcher, list):
            raise ValueError(f"a matcher of {key!r} is a list")
        return
    if len(matcher) != 1:
        raise ValueError(f"a matcher of {key!r} must have exactly one operator")
    op, arg = next(iter(matcher.items()))
    if op in ("prefix", "suffix", "equals-ignore-case"):
        ok = isinstance(arg, str)
    elif op == "exists":
        ok = isinstance(arg, bool)
    elif op == "anything-but":
        ok = _literal(arg) or (isinstance(arg, list) and bool(arg) and all(_literal(a) for a in arg)) or (
            isinstance(arg, dict) and len(arg) == 1 and next(iter(arg)) in ("prefix", "suffix")
            and isinstance(next(iter(arg.values())), str)
        )  # fmt: skip
    elif op == "numeric":
        ok = _numeric_ok(arg)
    else:
        raise ValueError(f"unknown filter operator {op!r} for {key!r}")
    if not ok:
        raise ValueError(f"the {op!r} matcher of {key!r} is malformed")


def _literal(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _numeric_ok(arg: Any) -> bool:
    if not isinstance(arg, list) or len(arg) not in (2, 4):
        return False
    pairs = [arg[i : i + 2] for i in range(0, len(arg), 2)]
    return all(
        op in _NUMERIC_OPS and isinstance(n, int | float) and not isinstance(n, bool) for op, n in pairs
    ) and not (len(pairs) == 2 and "=" in (pairs[0][0], pairs[1][0]))


# ---------------------------------------------------------------- matching


def matches(pattern: Mapping[str, Any], value: Any) -> bool:
    """Whether the record (or the part of it under a nested pattern) ``value`` matches ``pattern``."""
    obj = value if isinstance(value, Mapping) else {}
    for key, sub in pattern.items():
        found = obj.get(key, _ABSENT)
        if isinstance(sub, dict):
            if found is not _ABSENT and not isinstance(found, Mapping):
                return False
            if not matches(sub, {} if found is _ABSENT else found):
                return False
        elif not _leaf(sub, found):
            return False
    return True


def _leaf(matchers: list[Any], found: Any) -> bool:
    values = found if isinstance(found, list) else [found]
    return any(_one(m, v) for m in matchers for v in values) if values else any(_one(m, _ABSENT) for m in matchers)


def _one(matcher: Any, value: Any) -> bool:
    if not isinstance(matcher, dict):
        return value is not _ABSENT and _equal(matcher, value)
    op, arg = next(iter(matcher.items()))
    if op == "exists":
        return (value is not _ABSENT) is bool(arg)
    if value is _ABSENT:
        return False
    if op == "prefix":
        return isinstance(value, str) and value.startswith(arg)
    if op == "suffix":
        return isinstance(value, str) and value.endswith(arg)
    if op == "equals-ignore-case":
        return isinstance(value, str) and value.casefold() == arg.casefold()
    if op == "numeric":
        number = _number(value)
        return number is not None and all(
            _NUMERIC_OPS[arg[i]](number, float(arg[i + 1])) for i in range(0, len(arg), 2)
        )
    # anything-but
    if isinstance(arg, dict):
        how, text = next(iter(arg.items()))
        if not isinstance(value, str):
            return True
        return not (value.startswith(text) if how == "prefix" else value.endswith(text))
    excluded = arg if isinstance(arg, list) else [arg]
    return not any(_equal(x, value) for x in excluded)


def _equal(literal: Any, value: Any) -> bool:
    if isinstance(literal, bool) or isinstance(value, bool) or literal is None or value is None:
        return literal is value or (literal is None and value is None)
    if isinstance(literal, int | float) and isinstance(value, int | float):
        return float(literal) == float(value)
    return type(literal) is type(value) and literal == value


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None
