"""The values of DynamoDB's condition keys, read from a validated request without evaluating anything.

``dynamodb:LeadingKeys`` are the partition-key values a request touches (as text: a string itself, a number's
digits, a binary's base64); ``dynamodb:Attributes`` the top-level attribute names it names anywhere: the key,
an item's attributes, a projection, an update's paths, a condition or filter. Names are read from expressions
by a scan of their tokens (``#placeholders`` resolved, values, functions and keywords skipped), remembered per
expression text; a malformed expression is refused later by the operation itself, with its own error.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["expression_names", "key_text", "partition_equality"]

_TOKEN = re.compile(r"#[A-Za-z0-9_]+|:[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_]*|\S")
_KEYWORDS = frozenset({"and", "or", "not", "between", "in", "set", "remove", "add", "delete"})


# The raw top-level names (identifiers and #placeholders) of each expression text seen: a bounded memo of a pure
# function (clients send the same expressions over and over), so an expression is scanned once, not per request.
_RAW_NAMES: dict[str, tuple[str, ...]] = {}
_RAW_NAMES_MAX = 4096


def expression_names(expression: Any, placeholders: Any, out: set[str]) -> None:
    """Add the top-level attribute names of ``expression`` to ``out``."""
    if not isinstance(expression, str):
        return
    raw = _RAW_NAMES.get(expression)
    if raw is None:
        if len(_RAW_NAMES) >= _RAW_NAMES_MAX:
            _RAW_NAMES.clear()
        raw = _RAW_NAMES[expression] = _scan_names(expression)
    names = placeholders if isinstance(placeholders, dict) else {}
    for token in raw:
        if token[0] == "#":
            name = names.get(token)
            if isinstance(name, str):
                out.add(name)
        else:
            out.add(token)


def _scan_names(expression: str) -> tuple[str, ...]:
    """The identifiers and placeholders that begin a document path (not after ``.``), less keywords and
    function names."""
    found: list[str] = []
    tokens = _TOKEN.findall(expression)
    previous = ""
    for i, token in enumerate(tokens):
        first = token[0]
        if previous != "." and (first == "#" or first.isalpha() or first == "_"):
            following = tokens[i + 1] if i + 1 < len(tokens) else ""
            if first == "#" or (following != "(" and token.lower() not in _KEYWORDS):
                found.append(token)
        previous = token
    return tuple(found)


def key_text(value: Any) -> str | None:
    """A key attribute value as condition keys see it: S and B as sent, N as its digits."""
    if isinstance(value, dict) and len(value) == 1:
        for kind, text in value.items():
            if kind in ("S", "N", "B") and isinstance(text, str):
                return text
    return None


def partition_equality(req: dict[str, Any], partition_key: str) -> str | None:
    """The partition-key value a Query's key condition sets (KeyConditionExpression or KeyConditions)."""
    legacy = req.get("KeyConditions")
    if isinstance(legacy, dict):
        cond = legacy.get(partition_key)
        if isinstance(cond, dict) and cond.get("ComparisonOperator") == "EQ":
            values = cond.get("AttributeValueList")
            if isinstance(values, list) and values:
                return key_text(values[0])
        return None
    expression = req.get("KeyConditionExpression")
    if not isinstance(expression, str):
        return None
    names = req.get("ExpressionAttributeNames") or {}
    values = req.get("ExpressionAttributeValues") or {}
    tokens = _TOKEN.findall(expression)
    for i, token in enumerate(tokens):
        if token != "=" or i == 0 or i + 1 >= len(tokens):
            continue
        for name, value in ((tokens[i - 1], tokens[i + 1]), (tokens[i + 1], tokens[i - 1])):
            resolved = names.get(name) if name.startswith("#") else name
            if resolved == partition_key and value.startswith(":") and isinstance(values, dict):
                return key_text(values.get(value))
    return None
