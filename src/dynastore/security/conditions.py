"""Condition operators of policies, evaluated as IAM evaluates them.

A ``Condition`` block is a conjunction: every operator, and under each every key, must hold; the values listed
for one key are alternatives (any may match; for a negated operator, the key may match none of them).

Keys the request lacks: a positive operator is false, a negated one (``StringNotEquals``, ``StringNotLike``,
``NumericNotEquals``, ``DateNotEquals``, ``ArnNotEquals``, ``ArnNotLike``) is true, and any operator with the
``IfExists`` suffix is true. ``Null`` tests presence itself (an empty set counts as absent).

Set operators on multivalued keys (``dynamodb:LeadingKeys``, ``dynamodb:Attributes``): ``ForAllValues:`` holds
when every value of the request matches (so it holds for a missing key or an empty set), ``ForAnyValue:`` when at
least one does (so never for a missing key or an empty set). A plain operator on a multivalued key holds when any
of its values matches (for a negated operator: when none does).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime

from dynastore.security.patterns import VARIABLE, Pattern, VariableLookup, compile_pattern

__all__ = ["Condition", "ConditionValue", "UnknownOperator", "compile_condition"]

# A context value: one string, a tuple of strings (a multivalued key), or None (absent).
ConditionValue = str | tuple[str, ...] | None


class UnknownOperator(Exception):
    pass


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def _date(text: str) -> float | None:
    number = _number(text)
    if number is not None:
        return number
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


_NUMERIC: dict[str, Callable[[float, float], bool]] = {
    "Equals": lambda a, b: a == b,
    "NotEquals": lambda a, b: a == b,  # negated by the operator
    "LessThan": lambda a, b: a < b,
    "LessThanEquals": lambda a, b: a <= b,
    "GreaterThan": lambda a, b: a > b,
    "GreaterThanEquals": lambda a, b: a >= b,
}

# Base operator -> (negated, kind). Kinds: str (exact), istr (case-insensitive), like (wildcards), num, date,
# bool, arn (ArnEquals and ArnLike both take wildcards), ip.
_OPERATORS: dict[str, tuple[bool, str]] = {
    "StringEquals": (False, "str"),
    "StringNotEquals": (True, "str"),
    "StringEqualsIgnoreCase": (False, "istr"),
    "StringNotEqualsIgnoreCase": (True, "istr"),
    "StringLike": (False, "like"),
    "StringNotLike": (True, "like"),
    "Bool": (False, "bool"),
    "ArnEquals": (False, "arn"),
    "ArnLike": (False, "arn"),
    "ArnNotEquals": (True, "arn"),
    "ArnNotLike": (True, "arn"),
    "BinaryEquals": (False, "str"),
    "IpAddress": (False, "ip"),
    "NotIpAddress": (True, "ip"),
}
for _suffix in _NUMERIC:
    _OPERATORS["Numeric" + _suffix] = (_suffix == "NotEquals", "num:" + _suffix)
    _OPERATORS["Date" + _suffix] = (_suffix == "NotEquals", "date:" + _suffix)


class _Matcher:
    """One value of a condition, ready to test a request's value."""

    __slots__ = ("_kind", "_pattern", "_number", "_compare")

    def __init__(self, kind: str, value: str, variables: bool) -> None:
        self._kind = kind
        self._pattern: Pattern | None = None
        self._number: float | None = None
        self._compare: Callable[[float, float], bool] | None = None
        if kind in ("str", "istr") and not variables:
            self._pattern = compile_pattern(value, fold=kind == "istr", literal=True)
        elif kind in ("str", "istr", "like", "arn"):
            text = value if kind in ("like", "arn") else _escape_globs(value)
            self._pattern = compile_pattern(text, arn=kind == "arn", fold=kind == "istr", use_variables=variables)
        elif kind.startswith(("num:", "date:")):
            family, suffix = kind.split(":")
            self._number = _number(value) if family == "num" else _date(value)
            self._compare = _NUMERIC[suffix]
            self._kind = family
        elif kind == "bool":
            self._pattern = compile_pattern(value, fold=True, use_variables=False)

    def matches(self, actual: str, lookup: VariableLookup) -> bool:
        pattern = self._pattern
        if pattern is not None:
            return pattern.matches(actual, lookup)
        if self._compare is not None:
            if self._number is None:
                return False
            number = _number(actual) if self._kind == "num" else _date(actual)
            return number is not None and self._compare(number, self._number)
        return False  # ip: the request context carries no source address


def _escape_globs(value: str) -> str:
    """An exact-match value as a pattern: its ``*`` and ``?`` are literal characters (variables still apply)."""

    def literal(text: str) -> str:
        return text.replace("*", "${*}").replace("?", "${?}")

    out: list[str] = []
    pos = 0
    for match in VARIABLE.finditer(value):
        out.append(literal(value[pos : match.start()]))
        out.append(match.group(0))
        pos = match.end()
    out.append(literal(value[pos:]))
    return "".join(out)


_NO_MATCHERS: tuple[_Matcher, ...] = ()


class Condition:
    """One key under one operator: ``holds(lookup_context, lookup_variable)``."""

    __slots__ = ("key", "_negated", "_set", "_if_exists", "_null_means_absent", "_matchers")

    def __init__(self, operator: str, key: str, values: list[str], variables: bool = True) -> None:
        self.key = key.lower()
        self._set = ""
        base = operator
        for prefix in ("ForAllValues:", "ForAnyValue:"):
            if base.startswith(prefix):
                self._set, base = prefix[:-1], base[len(prefix) :]
        self._if_exists = base.endswith("IfExists") and base != "IfExists"
        if self._if_exists:
            base = base[: -len("IfExists")]
        self._null_means_absent: bool | None = None
        if base == "Null" and not self._if_exists and not self._set:
            self._null_means_absent = any(v.lower() == "true" for v in values)
            self._negated, self._matchers = False, _NO_MATCHERS
            return
        spec = _OPERATORS.get(base)
        if spec is None:
            raise UnknownOperator(operator)
        self._negated = spec[0]
        self._matchers = tuple(_Matcher(spec[1], v, variables) for v in values)

    def holds(self, actual: ConditionValue, lookup: VariableLookup) -> bool:
        if self._null_means_absent is not None:
            absent = actual is None or actual == ()
            return absent == self._null_means_absent
        if actual is None:
            if self._if_exists:
                return True
            if self._set == "ForAllValues":
                return True
            if self._set == "ForAnyValue":
                return False
            return self._negated
        values = (actual,) if isinstance(actual, str) else actual
        if not values:
            return self._set != "ForAnyValue" and (self._set == "ForAllValues" or self._negated)
        one = self._one
        # Loops, not generators: this runs for every request a condition applies to.
        if self._set == "ForAllValues":
            for value in values:  # noqa: SIM110
                if not one(value, lookup):
                    return False
            return True
        for value in values:  # noqa: SIM110
            if one(value, lookup):
                return True
        return False

    def _one(self, value: str, lookup: VariableLookup) -> bool:
        matched = False
        for matcher in self._matchers:
            if matcher.matches(value, lookup):
                matched = True
                break
        return not matched if self._negated else matched


def compile_condition(operator: str, key: str, values: list[str], variables: bool = True) -> Condition:
    """``variables``: whether ``${...}`` are policy variables (policy language 2012-10-17) or plain text."""
    return Condition(operator, key, values, variables)
