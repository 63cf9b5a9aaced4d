"""Wildcard patterns of policies (``*`` any run of characters, ``?`` one character) with policy variables.

A pattern is compiled once, when its document is parsed: without variables to a regular expression (or to plain
text when it has no wildcard either); with variables to a list of parts that a request's values complete.
``${name}`` is a variable (``${name, 'default'}`` with a default), ``${*}``, ``${?}`` and ``${$}`` are the
literal characters ``*``, ``?`` and ``$``. A variable whose key the request lacks (and that has no default) makes
the pattern match nothing, as IAM does.

ARN patterns (``arn=True``) keep a wildcard in one of the first five colon-separated parts of an ARN inside that
part; in the resource part (after the fifth colon) a ``*`` spans ``/`` too, so ``table/Music*`` covers the table's
indexes and streams.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["VARIABLE", "Pattern", "VariableLookup", "compile_pattern", "has_variables"]

# A request's value for a variable name (lower case), or None when the request has none.
VariableLookup = Callable[[str], "str | None"]

VARIABLE = re.compile(r"\$\{([^}]*)\}")
_ESCAPES = {"*": "*", "?": "?", "$": "$"}
_DEFAULT = re.compile(r"^\s*([^,]+?)\s*,\s*'([^']*)'\s*$")

# Resolutions of one pattern with variables kept at most (one per distinct set of values, e.g. per user).
_RESOLVED_PER_PATTERN = 256


_ANYTHING = re.compile(".*", re.DOTALL)


def has_variables(text: str) -> bool:
    return "${" in text


class Pattern:
    """A compiled pattern: ``matches(value, lookup)``; ``text`` is the pattern as the policy wrote it."""

    __slots__ = ("text", "_literal", "_regex", "_parts", "_variables", "_arn", "_fold", "_globs", "_resolved")

    def __init__(self, text: str, *, arn: bool, fold: bool, use_variables: bool, literal: bool = False) -> None:
        self.text = text
        self._arn = arn
        self._fold = fold  # case-insensitive (actions, StringEqualsIgnoreCase)
        self._literal: str | None = None
        self._regex: re.Pattern[str] | None = None
        self._parts: list[tuple[str, str]] | None = None
        self._variables: tuple[tuple[str, str | None], ...] = ()
        self._globs = False  # whether the parts hold wildcards (else a resolved pattern is plain text)
        self._resolved: dict[tuple[str, ...], re.Pattern[str] | str] = {}  # by the variables' values
        if literal:
            self._literal = text.lower() if fold else text
        elif text == "*":
            self._regex = _ANYTHING
        elif use_variables and has_variables(text):
            self._parts = _split_variables(text)
            # each variable as (lower-case name, default or None), parsed once
            self._variables = tuple(_variable_spec(t) for kind, t in self._parts if kind == "var")
            self._globs = any(kind == "glob" and ("*" in t or "?" in t) for kind, t in self._parts)
        elif "*" in text or "?" in text:
            self._regex = _compile(_glob_regex([("glob", text)], arn), fold)
        else:
            self._literal = text.lower() if fold else text

    @property
    def has_variables(self) -> bool:
        """Whether matching reads the request's values (``lookup``)."""
        return self._parts is not None

    def matches(self, value: str, lookup: VariableLookup) -> bool:
        literal = self._literal
        if literal is not None:
            return (value.lower() if self._fold else value) == literal
        regex = self._regex
        if regex is not None:
            return regex.fullmatch(value) is not None
        resolved = self._resolve(lookup)
        if resolved is None:
            return False
        if isinstance(resolved, str):
            return (value.lower() if self._fold else value) == resolved
        return resolved.fullmatch(value) is not None

    def _resolve(self, lookup: VariableLookup) -> re.Pattern[str] | str | None:
        """The pattern with the request's variable values: plain text when it has no wildcards, else a regular
        expression (remembered per distinct values, a few per pattern); None if a variable has no value."""
        assert self._parts is not None
        values: list[str] = []
        for name, default in self._variables:
            value = lookup(name)
            if value is None:
                if default is None:
                    return None
                value = default
            values.append(value)
        key = tuple(values)
        found = self._resolved.get(key)
        if found is not None:
            return found
        parts: list[tuple[str, str]] = []
        taken = iter(values)
        for kind, text in self._parts:
            parts.append(("text", next(taken)) if kind == "var" else (kind, text))
        if self._globs:
            resolved: re.Pattern[str] | str = _compile(_glob_regex(parts, self._arn), self._fold)
        else:
            plain = "".join(text for _, text in parts)
            resolved = plain.lower() if self._fold else plain
        if len(self._resolved) >= _RESOLVED_PER_PATTERN:
            self._resolved.clear()  # many distinct callers share this policy: keep only the recent ones
        self._resolved[key] = resolved
        return resolved


def compile_pattern(
    text: str, *, arn: bool = False, fold: bool = False, use_variables: bool = True, literal: bool = False
) -> Pattern:
    """``literal``: the text itself, wildcards and all (an exact-match value of a policy without variables)."""
    return Pattern(text, arn=arn, fold=fold, use_variables=use_variables, literal=literal)


def _variable_spec(spec: str) -> tuple[str, str | None]:
    """``aws:username`` or ``aws:username, 'default'`` as (lower-case name, default)."""
    default = _DEFAULT.match(spec)
    if default is not None:
        return default.group(1).strip().lower(), default.group(2)
    return spec.strip().lower(), None


def _split_variables(text: str) -> list[tuple[str, str]]:
    """``text`` as ("glob", pattern text) / ("text", literal) / ("var", variable spec) parts."""
    parts: list[tuple[str, str]] = []
    pos = 0
    for match in VARIABLE.finditer(text):
        if match.start() > pos:
            parts.append(("glob", text[pos : match.start()]))
        spec = match.group(1)
        escaped = _ESCAPES.get(spec)
        parts.append(("text", escaped) if escaped is not None else ("var", spec))
        pos = match.end()
    if pos < len(text):
        parts.append(("glob", text[pos:]))
    return parts


def _glob_regex(parts: list[tuple[str, str]], arn: bool) -> str:
    """The regular expression of glob and literal parts; in an ARN, a wildcard before the fifth colon stays
    inside its part."""
    out: list[str] = []
    colons = 0
    for kind, text in parts:
        if kind == "text":
            out.append(re.escape(text))
            colons += text.count(":")
            continue
        for ch in text:
            if ch == "*":
                out.append("[^:]*" if arn and colons < 5 else ".*")
            elif ch == "?":
                out.append("[^:]" if arn and colons < 5 else ".")
            else:
                if ch == ":":
                    colons += 1
                out.append(re.escape(ch))
    return "".join(out)


def _compile(source: str, fold: bool) -> re.Pattern[str]:
    return re.compile(source, re.DOTALL | (re.IGNORECASE if fold else 0))
