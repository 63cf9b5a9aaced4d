"""Legacy conditional parameters converted to the resolved objects of the expression pipeline.

``Expected``, ``QueryFilter``/``ScanFilter``, ``AttributeUpdates``, ``AttributesToGet`` and
``KeyConditions`` become ResolvedCondition / ResolvedUpdate / ResolvedProjection / KeyCondition, so
one evaluator serves both styles. Validation texts are dynalite's (``validations/index.js``,
``validations/updateItem.js`` and its tests). Semantics from the Developer Guide's "Legacy conditional
parameters" and from test suites run against DynamoDB: ``NE`` is true for a missing attribute while
``NOT_CONTAINS`` is false there (both CONTAINS and NOT_CONTAINS fail), ``NULL``/``NOT_NULL`` test
existence, ``Exists: false`` means attribute_not_exists. ``Expected`` operands are validated as the
filters' are (count, then types, one type per list, BETWEEN bounds in order) before anything is read:
a list operand of LT, a number for BEGINS_WITH, mixed IN types are ValidationExceptions, not a failed
condition. Guess: operand-type errors are reported before argument-count errors of later attributes
(each attribute in turn).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dynastore import messages
from dynastore.errors import ValidationException
from dynastore.expressions.ast import (
    AndCondition,
    BetweenCondition,
    Comparison,
    FunctionCondition,
    InCondition,
    NotCondition,
    OrCondition,
    PathOperand,
    ResolvedCondition,
    ResolvedNode,
    ResolvedPath,
    ResolvedProjection,
    ResolvedUpdate,
    ValueOperand,
)
from dynastore.expressions.key_condition import KeyCondition
from dynastore.model.values import AttributeValue, compare_scalars

__all__ = [
    "attribute_updates",
    "attributes_to_get",
    "check_key_conditions",
    "expected_condition",
    "key_conditions",
    "query_filter",
    "scan_filter",
]

_COMPARATORS = {"EQ": "=", "NE": "<>", "LE": "<=", "LT": "<", "GE": ">=", "GT": ">"}
_SCALARS = ("S", "N", "B")
# operator -> (allowed AttributeValue types or None for any, argument count rule)
_OPERAND_TYPES: dict[str, tuple[str, ...] | None] = {
    "EQ": None,
    "NE": None,
    "IN": _SCALARS,
    "LE": _SCALARS,
    "LT": _SCALARS,
    "GE": _SCALARS,
    "GT": _SCALARS,
    "BETWEEN": _SCALARS,
    "CONTAINS": _SCALARS,
    "NOT_CONTAINS": _SCALARS,
    "BEGINS_WITH": ("S", "B"),
    "NULL": None,
    "NOT_NULL": None,
}


def _count_ok(op: str, count: int) -> bool:
    if op in ("NULL", "NOT_NULL"):
        return count == 0
    if op == "IN":
        return count > 0
    if op == "BETWEEN":
        return count == 2
    return count == 1


def _node(name: str, op: str, values: Sequence[AttributeValue]) -> ResolvedNode:
    path = PathOperand((name,))
    operands = tuple(ValueOperand(v) for v in values)
    if op in _COMPARATORS:
        return Comparison(_COMPARATORS[op], path, operands[0])
    if op == "NULL":
        return FunctionCondition("attribute_not_exists", (path,))
    if op == "NOT_NULL":
        return FunctionCondition("attribute_exists", (path,))
    if op == "CONTAINS":
        return FunctionCondition("contains", (path, operands[0]))
    if op == "NOT_CONTAINS":
        # DynamoDB: NOT_CONTAINS on a missing attribute is false, unlike NE.
        return AndCondition(
            FunctionCondition("attribute_exists", (path,)),
            NotCondition(FunctionCondition("contains", (path, operands[0]))),
        )
    if op == "BEGINS_WITH":
        return FunctionCondition("begins_with", (path, operands[0]))
    if op == "IN":
        return InCondition(path, operands)
    return BetweenCondition(path, operands[0], operands[1])


def _combine(nodes: list[ResolvedNode], conditional_operator: str | None) -> ResolvedCondition | None:
    if not nodes:
        return None
    root = nodes[0]
    for node in nodes[1:]:
        root = OrCondition(root, node) if conditional_operator == "OR" else AndCondition(root, node)
    return ResolvedCondition(root)


def _invalid(detail: str) -> ValidationException:
    return ValidationException(detail)


def expected_condition(expected: dict[str, Any], conditional_operator: str | None = None) -> ResolvedCondition | None:
    """``Expected`` (+ ``ConditionalOperator``) -> condition; None for an empty map."""
    nodes: list[ResolvedNode] = []
    for name, condition in expected.items():
        if "ComparisonOperator" in condition:
            op = condition["ComparisonOperator"]
            if "Exists" in condition:
                raise _invalid(messages.LEGACY_EXISTS_WITH_OPERATOR.format(name=name))
            if "AttributeValueList" in condition and "Value" in condition:
                raise _invalid(messages.LEGACY_VALUE_WITH_LIST.format(name=name))
            values = condition.get("AttributeValueList")
            if values is None:
                values = [condition["Value"]] if condition.get("Value") is not None else []
            if not _count_ok(op, len(values)):
                raise _invalid(messages.LEGACY_ARGUMENT_COUNT.format(op=op))
            _check_operands(op, values)
            nodes.append(_node(name, op, values))
        elif "AttributeValueList" in condition:
            raise _invalid(messages.LEGACY_LIST_WITHOUT_OPERATOR.format(name=name))
        else:
            exists = condition.get("Exists")
            value = condition.get("Value")
            if (exists is None or exists) and value is None:
                shown = "null" if exists is None else "true"
                raise _invalid(messages.LEGACY_VALUE_REQUIRED.format(exists=shown, name=name))
            if exists is False and value is not None:
                raise _invalid(messages.LEGACY_VALUE_WITH_EXISTS_FALSE.format(name=name))
            nodes.append(
                FunctionCondition("attribute_not_exists", (PathOperand((name,)),))
                if exists is False
                else Comparison("=", PathOperand((name,)), ValueOperand(value))
            )
    return _combine(nodes, conditional_operator)


def _check_filter(op: str, values: Sequence[AttributeValue]) -> None:
    if not _count_ok(op, len(values)):
        raise _invalid(messages.LEGACY_FILTER_ARGUMENT_COUNT)
    _check_operands(op, values)


def _check_operands(op: str, values: Sequence[AttributeValue]) -> None:
    """Operand types of a legacy condition whose count is right: a request error, never a failed condition."""
    allowed = _OPERAND_TYPES.get(op)
    for value in values:
        type_name = next(iter(value))
        if allowed is not None and type_name not in allowed:
            raise _invalid(messages.LEGACY_OPERATOR_TYPE.format(op=op, type=type_name))
    if op in ("IN", "BETWEEN") and len({next(iter(v)) for v in values}) > 1:
        raise _invalid(messages.LEGACY_LIST_TYPES)
    if op == "BETWEEN":
        type_name = next(iter(values[0]))
        if compare_scalars(type_name, values[0][type_name], values[1][type_name]) > 0:
            raise _invalid(messages.LEGACY_BETWEEN_ORDER)


def _filter(conditions: dict[str, Any], conditional_operator: str | None) -> ResolvedCondition | None:
    nodes: list[ResolvedNode] = []
    for name, condition in conditions.items():
        op = condition["ComparisonOperator"]
        values = condition.get("AttributeValueList") or []
        _check_filter(op, values)
        nodes.append(_node(name, op, values))
    return _combine(nodes, conditional_operator)


def query_filter(conditions: dict[str, Any], conditional_operator: str | None = None) -> ResolvedCondition | None:
    return _filter(conditions, conditional_operator)


def scan_filter(conditions: dict[str, Any], conditional_operator: str | None = None) -> ResolvedCondition | None:
    return _filter(conditions, conditional_operator)


def attribute_updates(updates: dict[str, Any]) -> ResolvedUpdate:
    """``AttributeUpdates`` (top-level PUT / ADD / DELETE) -> update; type errors use the legacy text."""
    sets: list[tuple[ResolvedPath, Any]] = []
    removes: list[ResolvedPath] = []
    adds: list[tuple[ResolvedPath, AttributeValue]] = []
    deletes: list[tuple[ResolvedPath, AttributeValue]] = []
    for name, update in updates.items():
        action = update.get("Action") or "PUT"
        value = update.get("Value")
        path: ResolvedPath = (name,)
        if value is None:
            if action != "DELETE":
                raise _invalid(messages.LEGACY_UPDATE_VALUE_REQUIRED)
            removes.append(path)
            continue
        type_name = next(iter(value))
        if action == "DELETE":
            if type_name not in ("SS", "NS", "BS"):
                raise _invalid(messages.LEGACY_UPDATE_DELETE_TYPE.format(type=type_name))
            deletes.append((path, value))
        elif action == "ADD":
            if type_name not in ("L", "SS", "NS", "BS", "N"):
                raise _invalid(messages.LEGACY_UPDATE_ADD_NOT_SUPPORTED.format(type=type_name))
            adds.append((path, value))
        else:
            sets.append((path, ValueOperand(value)))
    paths = tuple((name,) for name in updates)
    return ResolvedUpdate(tuple(sets), tuple(removes), tuple(adds), tuple(deletes), paths, legacy=True)


def attributes_to_get(names: list[str]) -> ResolvedProjection:
    return ResolvedProjection(tuple((name,) for name in names))


def check_key_conditions(conditions: dict[str, Any]) -> None:
    """The checks of ``KeyConditions`` that need no key schema (DynamoDB makes them before it looks the table
    up): at most two conditions, operand counts and types, operators a key can take."""
    if len(conditions) > 2:
        raise _invalid(messages.LEGACY_CONDITIONS_LENGTH)
    for condition in conditions.values():
        _check_filter(condition["ComparisonOperator"], condition.get("AttributeValueList") or [])
    for condition in conditions.values():
        if condition["ComparisonOperator"] in ("NULL", "NOT_NULL", "CONTAINS", "NOT_CONTAINS", "IN", "NE"):
            raise _invalid(messages.LEGACY_NOT_INDEXABLE)


def key_conditions(
    conditions: dict[str, Any], hash_key: tuple[str, str], range_key: tuple[str, str] | None = None
) -> KeyCondition:
    """``KeyConditions`` -> KeyCondition, with the legacy texts (no colon after ``element``)."""
    check_key_conditions(conditions)
    hash_name, hash_type = hash_key
    if hash_name not in conditions:
        raise _invalid(messages.LEGACY_MISSED_ELEMENT.format(name=hash_name))
    extra = [name for name in conditions if name != hash_name and (range_key is None or name != range_key[0])]
    if extra:
        if range_key is not None:
            raise _invalid(messages.LEGACY_MISSED_ELEMENT.format(name=range_key[0]))
        raise _invalid(messages.KEY_NOT_SUPPORTED)
    hash_condition = conditions[hash_name]
    if hash_condition["ComparisonOperator"] != "EQ":
        raise _invalid(messages.KEY_NOT_SUPPORTED)
    hash_value = hash_condition["AttributeValueList"][0]
    if hash_type not in hash_value:
        raise _invalid(messages.KEY_TYPE_MISMATCH)
    if range_key is None or range_key[0] not in conditions:
        return KeyCondition(hash_value, None, ())
    range_condition = conditions[range_key[0]]
    values = tuple(range_condition["AttributeValueList"])
    for value in values:
        if range_key[1] not in value:
            raise _invalid(messages.KEY_TYPE_MISMATCH)
    op = range_condition["ComparisonOperator"]
    range_op = _COMPARATORS.get(op) or ("begins_with" if op == "BEGINS_WITH" else "BETWEEN")
    return KeyCondition(hash_value, range_op, values)
