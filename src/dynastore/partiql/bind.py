"""Binding: the values of a statement (literals and ``?`` parameters) as AttributeValues.

Parameters arrive already checked by the request's shape (``validation``); literals are checked here with
DynamoDB's texts, a number's naming where in the value it is (``under root.a[1]``).
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.errors import ValidationException
from dynastore.model.values import AttributeValue, NumberError, normalize_number
from dynastore.partiql import ast

__all__ = ["bind_value"]


def bind_value(value: ast.Value, params: list[AttributeValue], path: str = "root") -> AttributeValue:
    """The AttributeValue of a literal or parameter (``params`` holds at least as many values as the statement
    has ``?``: checked before binding)."""
    if isinstance(value, ast.Literal):
        kind, payload = value.value
        if kind == "N":
            return {"N": _number(str(payload), path)}
        return {kind: payload}
    if isinstance(value, ast.Param):
        return params[value.index]
    if isinstance(value, ast.ListValue):
        return {"L": [bind_value(item, params, f"{path}[{index}]") for index, item in enumerate(value.items)]}
    if isinstance(value, ast.MapValue):
        return {"M": {key: bind_value(item, params, f"{path}.{key}") for key, item in value.entries}}
    return _bag(value, params, path)


def _number(text: str, path: str) -> str:
    try:
        return normalize_number(text)
    except NumberError as e:
        raise ValidationException(messages.PARTIQL_NUMBER_AT.format(detail=e.message, path=path), bare=True) from None


def _bag(value: ast.SetValue, params: list[AttributeValue], path: str) -> AttributeValue:
    if not value.items:
        raise ValidationException(messages.PARTIQL_EMPTY_BAG, bare=True)
    members = [bind_value(item, params, path) for item in value.items]
    kinds = {next(iter(member)) for member in members}
    if len(kinds) != 1:
        raise ValidationException(messages.PARTIQL_BAG_TYPES, bare=True)
    kind = kinds.pop()
    payloads: list[Any] = [member[kind] for member in members]
    if len(set(payloads)) != len(payloads):
        raise ValidationException(messages.PARTIQL_BAG_DUPLICATES.format(members=", ".join(payloads)), bare=True)
    return {kind + "S": payloads}
