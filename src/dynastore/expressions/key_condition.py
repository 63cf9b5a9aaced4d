"""KeyConditionExpression: a resolved condition reduced to (hash value, range operator, range bounds).

The expression goes through the ordinary condition parser and passes first; this post-pass applies
the key-condition restrictions (dynalite ``convertKeyCondition`` texts, which DynamoDB sends without
the ``Invalid KeyConditionExpression:`` prefix):

1. any OR / NOT / IN / ``<>`` / function other than begins_with -> ``Invalid operator used in
   KeyConditionExpression: <op>`` (first in source order);
2. per condition, left to right: BETWEEN / begins_with must start with the key attribute; a function
   operand is a nested operation; a second, different path is "multiple attribute names"; a nested path
   is a nested attribute; no path at all is "no key attribute"; a second condition on one attribute is
   "one condition per key";
3. against the schema: missing hash condition, an attribute outside the key schema, a hash condition
   other than ``=``, a value whose type differs from the key attribute's type.

Guess: an attribute outside the key schema reports the missing range key when the table has one and
it has no condition, else ``Query key condition not supported``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dynastore import messages
from dynastore.expressions.ast import (
    AndCondition,
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
    ValueOperand,
    iter_conditions,
)
from dynastore.expressions.tokens import ExpressionError
from dynastore.model.values import AttributeValue

__all__ = ["KeyCondition", "build_key_condition", "build_multi_key_condition"]

_FLIPPED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(frozen=True, slots=True)
class KeyCondition:
    """A key condition as byte ranges need it. With a multi-attribute index key, ``more_hash`` holds the values
    of the partition attributes after the first, ``sort_prefix`` the equality values of the leading sort
    attributes, and ``range_op``/``range_values`` apply to the sort attribute that follows them."""

    hash_value: AttributeValue
    range_op: str | None  # None | "=" | "<" | "<=" | ">" | ">=" | "BETWEEN" | "begins_with"
    range_values: tuple[AttributeValue, ...]
    more_hash: tuple[AttributeValue, ...] = ()
    sort_prefix: tuple[AttributeValue, ...] = ()

    @property
    def hash_values(self) -> tuple[AttributeValue, ...]:
        return (self.hash_value, *self.more_hash)


def _fail(detail: str) -> ExpressionError:
    return ExpressionError(detail, prefixed=False)


def _invalid_operator(node: ResolvedNode) -> str | None:
    if isinstance(node, OrCondition):
        return "OR"
    if isinstance(node, NotCondition):
        return "NOT"
    if isinstance(node, InCondition):
        return "IN"
    if isinstance(node, Comparison) and node.op == "<>":
        return "<>"
    if isinstance(node, FunctionCondition) and node.name != "begins_with":
        return node.name
    return None


def _leaves(node: ResolvedNode) -> list[ResolvedNode]:
    if isinstance(node, AndCondition):
        return _leaves(node.left) + _leaves(node.right)
    return [node]


def _single(node: ResolvedNode) -> tuple[str, str, tuple[AttributeValue, ...]]:
    """(attribute, operator, values) of one simple key condition."""
    operands: tuple[ResolvedOperand, ...]
    if isinstance(node, Comparison):
        op, operands = node.op, (node.left, node.right)
    elif isinstance(node, BetweenCondition):
        op, operands = "BETWEEN", (node.operand, node.low, node.high)
    else:
        assert isinstance(node, FunctionCondition)
        op, operands = node.name, node.args
    if op in ("BETWEEN", "begins_with") and isinstance(operands[0], ValueOperand):
        raise _fail(messages.KEY_FIRST_OPERAND.format(op=op))
    key: PathOperand | None = None
    for operand in operands:
        if isinstance(operand, FunctionOperand):
            raise _fail(messages.KEY_NESTED_OPERATION)
        if isinstance(operand, PathOperand):
            if key is not None and operand.path != key.path:
                raise _fail(messages.KEY_MULTIPLE_NAMES)
            if len(operand.path) > 1:
                raise _fail(messages.KEY_NESTED_ATTRIBUTE)
            key = operand
    if key is None:
        raise _fail(messages.KEY_NO_ATTRIBUTE)
    values = tuple(o.value for o in operands if isinstance(o, ValueOperand))
    if isinstance(node, Comparison) and isinstance(node.left, ValueOperand):
        op = _FLIPPED[op]
    name = key.path[0]
    assert isinstance(name, str)
    return name, op, values


def _conditions_by_name(condition: ResolvedCondition) -> dict[str, tuple[str, tuple[AttributeValue, ...]]]:
    for node in iter_conditions(condition.root):
        op = _invalid_operator(node)
        if op is not None:
            raise _fail(messages.KEY_INVALID_OPERATOR.format(op=op))
    by_name: dict[str, tuple[str, tuple[AttributeValue, ...]]] = {}
    for leaf in _leaves(condition.root):
        name, op, values = _single(leaf)
        if name in by_name:
            raise _fail(messages.KEY_ONE_PER_KEY)
        by_name[name] = (op, values)
    return by_name


def build_key_condition(
    condition: ResolvedCondition, hash_key: tuple[str, str], range_key: tuple[str, str] | None
) -> KeyCondition:
    """Raises ExpressionError (``prefixed=False``) with DynamoDB's key-condition texts."""
    by_name = _conditions_by_name(condition)
    hash_name, hash_type = hash_key
    if hash_name not in by_name:
        raise _fail(messages.KEY_MISSED_ELEMENT.format(name=hash_name))
    range_name = range_key[0] if range_key else None
    extra = [name for name in by_name if name not in (hash_name, range_name)]
    if extra:
        if range_key is not None and range_name not in by_name:
            raise _fail(messages.KEY_MISSED_ELEMENT.format(name=range_name))
        raise _fail(messages.KEY_NOT_SUPPORTED)
    hash_op, hash_values = by_name[hash_name]
    if hash_op != "=":
        raise _fail(messages.KEY_NOT_SUPPORTED)
    _check_types(hash_values, hash_type)
    if range_key is None or range_name not in by_name:
        return KeyCondition(hash_values[0], None, ())
    range_op, range_values = by_name[range_key[0]]
    _check_types(range_values, range_key[1])
    return KeyCondition(hash_values[0], range_op, range_values)


def _check_types(values: tuple[AttributeValue, ...], type_name: str) -> None:
    for value in values:
        if type_name not in value:
            raise _fail(messages.KEY_TYPE_MISMATCH)


def build_multi_key_condition(
    condition: ResolvedCondition, hash_keys: tuple[tuple[str, str], ...], range_keys: tuple[tuple[str, str], ...]
) -> KeyCondition:
    """The key condition of a Query on a multi-attribute index key (DynamoDB's rules: ``=`` on every partition
    attribute; sort attributes left to right without gaps, ``=`` on all but the last one conditioned)."""
    by_name = _conditions_by_name(condition)
    if len(hash_keys) == 1 and hash_keys[0][0] not in by_name:
        raise _fail(messages.KEY_MISSED_ELEMENT.format(name=hash_keys[0][0]))
    sort_names = [name for name, _ in range_keys]
    if any(name not in sort_names and name not in {h for h, _ in hash_keys} for name in by_name):
        raise _fail(messages.KEY_NOT_SUPPORTED)
    hash_values: list[AttributeValue] = []
    for name, type_name in hash_keys:
        op, values = by_name.get(name, ("", ()))
        if op != "=":  # missing, or not an equality
            if len(hash_keys) == 1:
                raise _fail(messages.KEY_NOT_SUPPORTED)
            raise _fail(messages.KEY_HASH_NEEDS_EQUALITY.format(name=name))
        _check_types(values, type_name)
        hash_values.append(values[0])
    used = [i for i, name in enumerate(sort_names) if name in by_name]
    if used and used[-1] != len(used) - 1:
        missing = next(i for i in range(len(sort_names)) if i not in used)
        after = next(i for i in used if i > missing)
        raise _fail(messages.KEY_RANGE_NEEDS_EQUALITY.format(prior=sort_names[missing], later=sort_names[after]))
    sort_prefix: list[AttributeValue] = []
    for index, position in enumerate(used):
        name, type_name = range_keys[position]
        op, values = by_name[name]
        _check_types(values, type_name)
        if position < len(used) - 1:
            if op != "=":
                raise _fail(messages.KEY_RANGE_NEEDS_EQUALITY.format(prior=name, later=sort_names[used[index + 1]]))
            sort_prefix.append(values[0])
    if not used:
        return KeyCondition(hash_values[0], None, (), tuple(hash_values[1:]))
    last_op, last_values = by_name[sort_names[used[-1]]]
    return KeyCondition(hash_values[0], last_op, last_values, tuple(hash_values[1:]), tuple(sort_prefix))
