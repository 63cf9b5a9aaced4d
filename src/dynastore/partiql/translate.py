"""Translation of a statement's parts into the expression language's resolved objects, so that conditions,
filters, updates and projections run on the one evaluator every DynamoDB operation uses (expressions/).

* conditions: ``IS MISSING`` is ``attribute_not_exists``, ``IS NULL`` is ``attribute_type(x, 'NULL')``, the
  other predicates and functions map one to one;
* updates: ``SET p = set_add(p, <<..>>)`` is ``ADD p``, ``set_delete`` is ``DELETE p``, ``list_append`` and
  ``+``/``-`` are the update expression's own;
* keys: ``split_key`` takes the key equalities out of a WHERE clause (UPDATE, DELETE, single-item reads), and
  ``plan_read`` finds the partition values and the sort-key range a SELECT can read as a Query.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Final, TypeVar

from dynastore import messages
from dynastore.errors import ValidationException
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
    ResolvedProjection,
    ResolvedUpdate,
    ValueOperand,
)
from dynastore.expressions.semantics import check_paths
from dynastore.expressions.tokens import ExpressionError
from dynastore.limits import MAX_PARTIQL_KEY_PARTITIONS
from dynastore.model.values import AttributeValue, Item, compare_scalars
from dynastore.partiql import ast
from dynastore.partiql.bind import bind_value

__all__ = [
    "ReadPlan",
    "conjoin",
    "translate_condition",
    "translate_projection",
    "translate_update",
    "key_equality",
    "partition_equality",
    "plan_read",
    "split_key",
]

_T = TypeVar("_T")
_FLIPPED: Final = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_SET_TYPES: Final = frozenset({"SS", "NS", "BS"})


# ---------------------------------------------------------------- conditions


def translate_condition(node: ast.Condition, params: list[AttributeValue]) -> ResolvedNode:
    if isinstance(node, ast.And):
        return AndCondition(translate_condition(node.left, params), translate_condition(node.right, params))
    if isinstance(node, ast.Or):
        return OrCondition(translate_condition(node.left, params), translate_condition(node.right, params))
    if isinstance(node, ast.Not):
        return NotCondition(translate_condition(node.operand, params))
    if isinstance(node, ast.Compare):
        return Comparison(node.op, _operand(node.left, params), _operand(node.right, params))
    if isinstance(node, ast.Between):
        return BetweenCondition(_operand(node.operand, params), _operand(node.low, params), _operand(node.high, params))
    if isinstance(node, ast.In):
        return InCondition(_operand(node.operand, params), tuple(_operand(o, params) for o in node.options))
    if isinstance(node, ast.IsCheck):
        operand = _operand(node.operand, params)
        if node.kind == "MISSING":
            return FunctionCondition("attribute_exists" if node.negated else "attribute_not_exists", (operand,))
        is_null = FunctionCondition("attribute_type", (operand, ValueOperand({"S": "NULL"})))
        return NotCondition(is_null) if node.negated else is_null
    return FunctionCondition(node.name, tuple(_operand(arg, params) for arg in node.args))


def _operand(node: ast.Operand, params: list[AttributeValue]) -> ResolvedOperand:
    if isinstance(node, ast.Path):
        return PathOperand(node.elements)
    if isinstance(node, ast.Call):
        return FunctionOperand(node.name, tuple(_operand(arg, params) for arg in node.args))
    if isinstance(node, ast.Arith):
        return ArithOperand(node.op, _operand(node.left, params), _operand(node.right, params))
    return ValueOperand(bind_value(node, params))


def conjoin(nodes: list[ResolvedNode]) -> ResolvedCondition | None:
    """The AND of ``nodes`` (None when there are none)."""
    if not nodes:
        return None
    root = nodes[0]
    for node in nodes[1:]:
        root = AndCondition(root, node)
    return ResolvedCondition(root)


def _conjuncts(node: ResolvedNode) -> list[ResolvedNode]:
    out: list[ResolvedNode] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, AndCondition):
            stack.append(current.right)
            stack.append(current.left)
        else:
            out.append(current)
    return out


# ---------------------------------------------------------------- projection and update


def translate_projection(paths: tuple[ast.Path, ...] | None) -> ResolvedProjection | None:
    if paths is None:
        return None
    resolved = tuple(path.elements for path in paths)
    _check_paths(resolved)
    return ResolvedProjection(resolved)


def _check_paths(paths: tuple[ResolvedPath, ...]) -> None:
    try:
        check_paths(paths)
    except ExpressionError as e:
        raise ValidationException(e.detail, bare=True) from None


def translate_update(actions: tuple[ast.Set | ast.Remove, ...], params: list[AttributeValue]) -> ResolvedUpdate:
    sets: list[tuple[ResolvedPath, ResolvedOperand]] = []
    removes: list[ResolvedPath] = []
    adds: list[tuple[ResolvedPath, AttributeValue]] = []
    deletes: list[tuple[ResolvedPath, AttributeValue]] = []
    paths: list[ResolvedPath] = []
    for action in actions:
        path = action.path.elements
        paths.append(path)
        if isinstance(action, ast.Remove):
            removes.append(path)
            continue
        value = action.value
        if isinstance(value, ast.Call) and value.name in ("set_add", "set_delete"):
            (adds if value.name == "set_add" else deletes).append((path, _set_operand(action.path, value, params)))
        else:
            sets.append((path, _update_operand(value, params)))
    resolved = tuple(paths)
    _check_paths(resolved)
    return ResolvedUpdate(tuple(sets), tuple(removes), tuple(adds), tuple(deletes), resolved)


def _update_operand(node: ast.Operand, params: list[AttributeValue]) -> ResolvedOperand:
    if isinstance(node, ast.Call):
        # list_append is the one function a SET value may call besides set_add / set_delete (the parser knows
        # no other); those two only as the whole value.
        if node.name != "list_append":
            raise ValidationException(
                messages.PARTIQL_UNRECOGNIZED_FUNCTION.format(name=node.name, at=node.at), bare=True
            )
        if len(node.args) != 2:
            raise ValidationException(
                messages.PARTIQL_OPERAND_COUNT.format(name=node.name, count=len(node.args)), bare=True
            )
        return FunctionOperand("list_append", tuple(_update_operand(arg, params) for arg in node.args))
    if isinstance(node, ast.Arith):
        return ArithOperand(node.op, _update_operand(node.left, params), _update_operand(node.right, params))
    if isinstance(node, ast.Path):
        return PathOperand(node.elements)
    return ValueOperand(bind_value(node, params, "root"))


def _set_operand(target: ast.Path, call: ast.Call, params: list[AttributeValue]) -> AttributeValue:
    name = call.name.upper()
    if len(call.args) != 2:
        raise ValidationException(messages.PARTIQL_SET_FUNCTION_ARGS.format(name=name, at=call.at), bare=True)
    first, second = call.args
    if not isinstance(first, ast.Path) or first.elements != target.elements:
        raise ValidationException(messages.PARTIQL_SET_FUNCTION_TARGET.format(name=name, at=call.at), bare=True)
    if isinstance(second, ast.Path | ast.Call | ast.Arith):
        raise ValidationException(messages.PARTIQL_SET_FUNCTION_SET.format(name=name, at=first.at), bare=True)
    value = bind_value(second, params)
    if next(iter(value)) not in _SET_TYPES:
        raise ValidationException(messages.PARTIQL_SET_FUNCTION_SET.format(name=name, at=first.at), bare=True)
    return value


# ---------------------------------------------------------------- keys


def _key_equality(node: ResolvedNode, name: str) -> AttributeValue | None:
    """The value of ``name = value`` (either way round), else None."""
    if not isinstance(node, Comparison) or node.op != "=":
        return None
    # Either way round. No swap of narrowed variables: a compiled module would check the narrowed types.
    path, value = (node.right, node.left) if isinstance(node.right, PathOperand) else (node.left, node.right)
    if isinstance(path, PathOperand) and path.path == (name,) and isinstance(value, ValueOperand):
        return value.value
    return None


def split_key(root: ResolvedNode | None, key_names: tuple[str, ...]) -> tuple[Item, ResolvedNode | None] | None:
    """The key the top-level AND of ``root`` names by equalities on every key attribute, and the rest of the
    condition; None when an attribute has no equality."""
    if root is None:
        return None
    conjuncts = _conjuncts(root)
    key: Item = {}
    used: set[int] = set()
    for name in key_names:
        for index, node in enumerate(conjuncts):
            if index in used:
                continue
            value = _key_equality(node, name)
            if value is not None:
                key[name] = value
                used.add(index)
                break
        else:
            return None
    rest = [node for index, node in enumerate(conjuncts) if index not in used]
    condition = conjoin(rest)
    return key, condition.root if condition is not None else None


class ReadPlan:
    """How a SELECT reads: the partition values it queries (None: a Scan), the sort-key operator and values that
    narrow each partition, and the filter left over."""

    __slots__ = ("hash_values", "range_op", "range_values", "filter", "partitions", "sort_prefix")

    def __init__(
        self,
        hash_values: list[AttributeValue] | None,
        range_op: str | None,
        range_values: tuple[AttributeValue, ...],
        filter: ResolvedCondition | None,
        partitions: list[tuple[AttributeValue, ...]] | None = None,
        sort_prefix: tuple[AttributeValue, ...] = (),
    ) -> None:
        self.hash_values = hash_values
        self.range_op = range_op
        self.range_values = range_values
        self.filter = filter
        # A multi-attribute key: the partition attributes' values of each partition read (KeySchema order), the
        # equalities on leading sort attributes, and range_op/range_values on the sort attribute after them.
        self.partitions = partitions
        self.sort_prefix = sort_prefix


def plan_read(root: ResolvedNode | None, hash_key: tuple[str, str], range_key: tuple[str, str] | None) -> ReadPlan:
    """A Query when the top-level AND holds an equality, an IN or an OR of equalities on the partition key with
    values of its type; otherwise a Scan with the whole WHERE as its filter."""
    if root is None:
        return ReadPlan(None, None, (), None)
    conjuncts = _conjuncts(root)
    for index, node in enumerate(conjuncts):
        values = _hash_values(node, hash_key)
        if values is not None:
            rest = conjuncts[:index] + conjuncts[index + 1 :]
            break
    else:
        return ReadPlan(None, None, (), ResolvedCondition(root))
    range_op: str | None = None
    range_values: tuple[AttributeValue, ...] = ()
    if range_key is not None:
        for index, node in enumerate(rest):
            found = _range_condition(node, range_key)
            if found is not None:
                range_op, range_values = found
                rest = rest[:index] + rest[index + 1 :]
                break
    return ReadPlan(values, range_op, range_values, conjoin(rest))


def plan_multi_read(
    root: ResolvedNode | None,
    hash_keys: tuple[tuple[str, str], ...],
    range_keys: tuple[tuple[str, str], ...],
) -> ReadPlan:
    """The read of a multi-attribute index key: a Query of each combination of partition values when the
    top-level AND holds an equality, an IN or an OR of equalities on every partition attribute (at most
    ``MAX_PARTIQL_KEY_PARTITIONS`` combinations), narrowed by equalities on the leading sort attributes and one
    condition on the sort attribute after them; otherwise a Scan with the whole WHERE as its filter."""
    if root is None:
        return ReadPlan(None, None, (), None)
    rest = _conjuncts(root)
    per_attribute: list[list[AttributeValue]] = []
    for hash_key in hash_keys:
        found = _take(rest, functools.partial(_hash_values, hash_key=hash_key))
        if found is None:
            return ReadPlan(None, None, (), ResolvedCondition(root))
        values, rest = found
        per_attribute.append(values)
    if math.prod(len(values) for values in per_attribute) > MAX_PARTIQL_KEY_PARTITIONS:  # counted, not built
        return ReadPlan(None, None, (), ResolvedCondition(root))
    partitions = list(itertools.product(*per_attribute))
    sort_prefix: list[AttributeValue] = []
    range_op: str | None = None
    range_values: tuple[AttributeValue, ...] = ()
    for position, range_key in enumerate(range_keys):
        condition = _take(rest, functools.partial(_range_condition, range_key=range_key))
        if condition is None:
            break
        (op, operands), rest = condition
        if op != "=" or position == len(range_keys) - 1:
            range_op, range_values = op, operands
            break
        sort_prefix.append(operands[0])
    if range_op is None and sort_prefix:  # equalities only: the last one is the condition after the others
        range_op, range_values = "=", (sort_prefix.pop(),)
    return ReadPlan(None, range_op, range_values, conjoin(rest), partitions, tuple(sort_prefix))


def _take(
    nodes: list[ResolvedNode], match: Callable[[ResolvedNode], _T | None]
) -> tuple[_T, list[ResolvedNode]] | None:
    """The first match among ``nodes`` and the nodes without it."""
    for index, node in enumerate(nodes):
        found = match(node)
        if found is not None:
            return found, nodes[:index] + nodes[index + 1 :]
    return None


def partition_equality(
    where: ast.Condition | None, params: list[AttributeValue], hash_key: tuple[str, str]
) -> ReadPlan | None:
    """The plan of the most common SELECT, ``WHERE <partition key> = value``, read off the syntax tree without
    translating it (the hot path of a key lookup); None for any other WHERE clause."""
    value = _equal_value(where, params, hash_key)
    return None if value is None else ReadPlan([value], None, (), None)


def key_equality(
    where: ast.Condition | None,
    params: list[AttributeValue],
    hash_key: tuple[str, str],
    range_key: tuple[str, str] | None,
) -> ReadPlan | None:
    """``partition_equality``, and on a table with a sort key also ``WHERE <partition key> = v AND <sort key> = w``
    (either way round): the plan of a SELECT of one item by its whole key, read off the syntax tree; None for any
    other WHERE clause."""
    if range_key is None or not isinstance(where, ast.And):
        return partition_equality(where, params, hash_key)
    for hash_side, range_side in ((where.left, where.right), (where.right, where.left)):
        hash_value = _equal_value(hash_side, params, hash_key)
        if hash_value is not None:
            range_value = _equal_value(range_side, params, range_key)
            return None if range_value is None else ReadPlan([hash_value], "=", (range_value,), None)
    return None


def _equal_value(
    where: ast.Condition | None, params: list[AttributeValue], key: tuple[str, str]
) -> AttributeValue | None:
    """The value of ``<key> = value`` (either way round), a parameter or a literal of the key's type; None for any
    other condition. (Every request of a repeated key lookup runs this: no plan or tuple is made on the way.)"""
    if not isinstance(where, ast.Compare) or where.op != "=":
        return None
    path, operand = (where.right, where.left) if isinstance(where.right, ast.Path) else (where.left, where.right)
    if not isinstance(path, ast.Path) or len(path.elements) != 1 or path.elements[0] != key[0]:
        return None
    if isinstance(operand, ast.Param):
        value = params[operand.index]
    elif isinstance(operand, ast.Literal):
        value = bind_value(operand, params)
    else:
        return None
    return value if key[1] in value else None


def _hash_values(node: ResolvedNode, hash_key: tuple[str, str]) -> list[AttributeValue] | None:
    name, type_name = hash_key
    found: list[AttributeValue] = []
    if isinstance(node, InCondition):
        operand = node.operand
        if not isinstance(operand, PathOperand) or operand.path != (name,):
            return None
        for option in node.options:
            if not isinstance(option, ValueOperand) or type_name not in option.value:
                return None
            found.append(option.value)
    elif isinstance(node, OrCondition):
        for leaf in (node.left, node.right):
            values = _hash_values(leaf, hash_key)
            if values is None:
                return None
            found.extend(values)
    else:
        value = _key_equality(node, name)
        if value is None or type_name not in value:
            return None
        found.append(value)
    unique: list[AttributeValue] = []
    for value in found:
        if value not in unique:
            unique.append(value)
    return unique


def _range_condition(node: ResolvedNode, range_key: tuple[str, str]) -> tuple[str, tuple[AttributeValue, ...]] | None:
    name, type_name = range_key
    if isinstance(node, Comparison) and node.op in _FLIPPED:
        flipped = isinstance(node.right, PathOperand)
        path, value = (node.right, node.left) if flipped else (node.left, node.right)
        op = _FLIPPED[node.op] if flipped else node.op
        on_key = isinstance(path, PathOperand) and path.path == (name,)
        if on_key and isinstance(value, ValueOperand) and type_name in value.value:
            return op, (value.value,)
        return None
    if isinstance(node, BetweenCondition):
        operand, low, high = node.operand, node.low, node.high
        if (
            isinstance(operand, PathOperand)
            and operand.path == (name,)
            and isinstance(low, ValueOperand)
            and isinstance(high, ValueOperand)
            and type_name in low.value
            and type_name in high.value
            and compare_scalars(type_name, low.value[type_name], high.value[type_name]) <= 0
        ):
            return "BETWEEN", (low.value, high.value)
        return None
    if isinstance(node, FunctionCondition) and node.name == "begins_with" and type_name in ("S", "B"):
        target, prefix = node.args
        on_key = isinstance(target, PathOperand) and target.path == (name,)
        if on_key and isinstance(prefix, ValueOperand) and type_name in prefix.value:
            return "begins_with", (prefix.value,)
    return None
