"""Evaluate a resolved condition against an item (wire-shaped dict), without copying the item.

Semantics (DynamoDB Developer Guide, "Comparison operator and function reference"):

* an operand whose path does not exist is *missing*; every comparison, BETWEEN, IN and function with
  a missing operand is false, except ``<>``, which is the negation of ``=`` and so true when either
  side is missing (a FilterExpression ``a <> :v`` keeps items without ``a``);
* values of different types are unequal and unordered (false, never an error); ``<`` etc. order N
  numerically, S and B by unsigned bytes, and are false for every other type;
* ``size``: S -> number of characters, B -> number of bytes, sets/L/M -> number of elements; other
  types make ``size`` missing;
* ``contains``: substring for S (and B), membership for sets (element of the set's type) and lists.
"""

from __future__ import annotations

from typing import Any

from dynastore.expressions.ast import (
    AndCondition,
    ArithOperand,
    BetweenCondition,
    Comparison,
    FunctionCondition,
    FunctionOperand,
    InCondition,
    NotCondition,
    OrCondition,
    PathOperand,
    ResolvedCondition,
    ResolvedNode,
    ResolvedOperand,
    ResolvedPath,
    ValueOperand,
)
from dynastore.model.values import AttributeValue, Item, compare_scalars, decode_binary, values_equal

__all__ = ["evaluate", "lookup", "operand_value"]

_ORDERED = frozenset({"N", "S", "B"})
_EMPTY: Item = {}


def lookup(item: Item, path: ResolvedPath) -> AttributeValue | None:
    """The value at ``path`` or None when any step does not exist or has the wrong type."""
    first = path[0]
    if not isinstance(first, str):
        return None
    current: Any = item.get(first)
    for element in path[1:]:
        if current is None:
            return None
        if isinstance(element, int):
            items = current.get("L")
            if items is None or element >= len(items):
                return None
            current = items[element]
        else:
            members = current.get("M")
            if members is None:
                return None
            current = members.get(element)
    result: AttributeValue | None = current
    return result


def _size(value: AttributeValue) -> AttributeValue | None:
    type_name, payload = next(iter(value.items()))
    if type_name == "S":
        return {"N": str(len(payload))}
    if type_name == "B":
        return {"N": str(len(decode_binary(payload)))}
    if type_name in ("SS", "NS", "BS", "L", "M"):
        return {"N": str(len(payload))}
    return None


def operand_value(operand: ResolvedOperand, item: Item) -> AttributeValue | None:
    """Value of a condition operand (paths, values, size()); None when missing."""
    if isinstance(operand, PathOperand):
        return lookup(item, operand.path)
    if isinstance(operand, ValueOperand):
        return operand.value
    if isinstance(operand, FunctionOperand) and operand.name == "size":
        inner = operand_value(operand.args[0], item)
        return None if inner is None else _size(inner)
    assert not isinstance(operand, ArithOperand | FunctionOperand), "update operand in a condition"
    return None


def _order(left: AttributeValue, right: AttributeValue) -> int | None:
    """Three-way comparison of two same-typed N/S/B values; None when they are not comparable."""
    lt, lv = next(iter(left.items()))
    rt, rv = next(iter(right.items()))
    if lt != rt or lt not in _ORDERED:
        return None
    return compare_scalars(lt, lv, rv)


def _compare(op: str, left: AttributeValue | None, right: AttributeValue | None) -> bool:
    if op == "=":
        return left is not None and right is not None and values_equal(left, right)
    if op == "<>":
        return left is None or right is None or not values_equal(left, right)
    if left is None or right is None:
        return False
    order = _order(left, right)
    if order is None:
        return False
    if op == "<":
        return order < 0
    if op == "<=":
        return order <= 0
    if op == ">":
        return order > 0
    return order >= 0


def _begins_with(value: AttributeValue, prefix: AttributeValue) -> bool:
    vt, vv = next(iter(value.items()))
    pt, pv = next(iter(prefix.items()))
    if vt != pt:
        return False
    if vt == "S":
        return bool(vv.startswith(pv))
    if vt == "B":
        return decode_binary(vv).startswith(decode_binary(pv))
    return False


def _contains(container: AttributeValue, member: AttributeValue) -> bool:
    ct, cv = next(iter(container.items()))
    mt, mv = next(iter(member.items()))
    if ct == "S":
        return mt == "S" and mv in cv
    if ct == "B":
        return mt == "B" and decode_binary(mv) in decode_binary(cv)
    if ct == "L":
        return any(values_equal(element, member) for element in cv)
    if ct in ("SS", "NS", "BS") and ct[0] == mt:
        return any(values_equal({mt: element}, member) for element in cv)
    return False


def _function(node: FunctionCondition, item: Item) -> bool:
    name, args = node.name, node.args
    if name == "attribute_exists":
        return operand_value(args[0], item) is not None
    if name == "attribute_not_exists":
        return operand_value(args[0], item) is None
    first = operand_value(args[0], item)
    second = operand_value(args[1], item) if len(args) > 1 else None
    if first is None or second is None:
        return False
    if name == "attribute_type":
        return second.get("S") == next(iter(first))
    if name == "begins_with":
        return _begins_with(first, second)
    if name == "contains":
        return _contains(first, second)
    return False


def _between(node: BetweenCondition, item: Item) -> bool:
    value = operand_value(node.operand, item)
    low = operand_value(node.low, item)
    high = operand_value(node.high, item)
    if value is None or low is None or high is None:
        return False
    lower = _order(low, value)
    upper = _order(value, high)
    return lower is not None and upper is not None and lower <= 0 and upper <= 0


def _evaluate(node: ResolvedNode, item: Item) -> bool:
    if isinstance(node, Comparison):
        return _compare(node.op, operand_value(node.left, item), operand_value(node.right, item))
    if isinstance(node, AndCondition):
        return _evaluate(node.left, item) and _evaluate(node.right, item)
    if isinstance(node, OrCondition):
        return _evaluate(node.left, item) or _evaluate(node.right, item)
    if isinstance(node, NotCondition):
        return not _evaluate(node.operand, item)
    if isinstance(node, FunctionCondition):
        return _function(node, item)
    if isinstance(node, BetweenCondition):
        return _between(node, item)
    assert isinstance(node, InCondition)
    value = operand_value(node.operand, item)
    if value is None:
        return False
    for option in node.options:
        candidate = operand_value(option, item)
        if candidate is not None and values_equal(value, candidate):
            return True
    return False


def evaluate(condition: ResolvedCondition, item: Item | None) -> bool:
    """True when ``item`` satisfies ``condition``; ``item=None`` means the item does not exist."""
    return _evaluate(condition.root, _EMPTY if item is None else item)
