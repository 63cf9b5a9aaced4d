"""Condition operators of policies, evaluated as IAM evaluates them.

A ``Condition`` block is a conjunction: every operator, and under each every key, must hold; the values listed
for one key are alternatives (any may match; for a negated operator, the key may match none of them).

Keys the request lacks: a positive operator is false, a negated one (``StringNotEquals``, ``StringNotLike``,
``NumericNotEquals``, ``DateNotEquals``, ``ArnNotEquals``, ``ArnNotLike``) is true, and any operator with the
``IfExists`` suffix is true. ``Null`` tests presence itself (an empty set counts as absent).

Set operators on multivalued keys (``dynamodb:LeadingKeys``, ``dynamodb:Attributes``): ``ForAllValues:`` holds
when every value of the request matches (so it holds for a missing key or an empty set), ``ForAnyValue:`` when at
least one does (so never for a missing key or an empty set).

IAM requires a set operator on a multivalued key and does not define a plain (single-valued) one there, so such a
condition fails closed, by the effect of its statement: in an ``Allow`` it holds only when every value of the
request satisfies the operator on its own (a request naming one value the condition does not allow is not allowed
by it), in a ``Deny`` when any value does; an empty set satisfies a negated operator only.

``UNKNOWN`` is the value of a multivalued key a request cannot state (a PartiQL SELECT that scans has no leading
keys to name, yet reads every partition): every condition on it fails closed, false in an ``Allow``, true in a
``Deny``, whatever its operator.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime

from dynastore.security.patterns import VARIABLE, Pattern, VariableLookup, compile_pattern

__all__ = [
    "MULTIVALUED_KEYS",
    "UNKNOWN",
    "Condition",
    "ConditionValue",
    "UnknownOperator",
    "UnknownValues",
    "compile_condition",
    "is_single_valued_on_multivalued",
]


class UnknownValues:
    """The type of ``UNKNOWN``: the values of a multivalued key that the request cannot state."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = UnknownValues()

# A context value: one string, a tuple of strings (a multivalued key), UNKNOWN, or None (absent).
ConditionValue = str | tuple[str, ...] | UnknownValues | None

# The multivalued condition keys a request may carry, by lower-case name: DynamoDB's two (ArrayOfString in the
# service authorization reference) and AWS's global ones.
MULTIVALUED_KEYS = frozenset(
    {
        "dynamodb:leadingkeys",
        "dynamodb:attributes",
        "aws:tagkeys",
        "aws:calledvia",
        "aws:principalorgpaths",
        "aws:principalservicenameslist",
    }
)


def is_single_valued_on_multivalued(operator: str, key: str) -> bool:
    """Whether a condition applies an operator without ``ForAllValues:`` / ``ForAnyValue:`` to a multivalued key
    (``Null`` tests presence, not values: it needs no set operator)."""
    if operator.startswith(("ForAllValues:", "ForAnyValue:")) or operator in ("Null", "NullIfExists"):
        return False
    return key.lower() in MULTIVALUED_KEYS


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
    """One key under one operator of a statement (``deny``: a Deny statement's): ``holds(value, lookup)``."""

    __slots__ = ("key", "_deny", "_negated", "_set", "_if_exists", "_null_means_absent", "_matchers")

    def __init__(self, operator: str, key: str, values: list[str], variables: bool = True, deny: bool = False) -> None:
        self.key = key.lower()
        self._deny = deny
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
        if isinstance(actual, UnknownValues):
            return self._deny  # fail closed: an Allow does not apply, a Deny does
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
        if isinstance(actual, str):
            return self._one(actual, lookup)
        if not actual:
            if self._set:
                return self._set == "ForAllValues"
            return self._negated  # no value satisfies a positive operator
        one = self._one
        # Every value must satisfy ForAllValues, and a plain operator in an Allow (fail closed); any value
        # ForAnyValue, and a plain operator in a Deny. Loops, not generators: this runs for every request.
        if self._set == "ForAllValues" or (not self._set and not self._deny):
            for value in actual:  # noqa: SIM110
                if not one(value, lookup):
                    return False
            return True
        for value in actual:  # noqa: SIM110
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


def compile_condition(
    operator: str, key: str, values: list[str], variables: bool = True, deny: bool = False
) -> Condition:
    """``variables``: whether ``${...}`` are policy variables (policy language 2012-10-17) or plain text;
    ``deny``: whether the condition is a Deny statement's (a plain operator on a multivalued key fails closed)."""
    return Condition(operator, key, values, variables, deny)
