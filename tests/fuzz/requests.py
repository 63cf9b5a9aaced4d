"""Data-plane requests shaped like DynamoDB's, built for the fuzz tables and mutated at DynamoDB's limits.

``build(rng, tables)`` returns ``(operation, body)``: a request that is often valid, and otherwise wrong in one or a
few places chosen from what DynamoDB limits (keys, index keys, names, numbers, nesting, expression size and
operators, set and list sizes, item size, batch and transaction counts, legacy parameters).
"""

from __future__ import annotations

import random
from typing import Any

from dynastore import limits
from tests.fuzz import values
from tests.fuzz.tables import KeyPart, Table

Body = dict[str, Any]

_COMPARATORS = ("EQ", "NE", "LE", "LT", "GE", "GT", "BETWEEN", "IN", "BEGINS_WITH", "CONTAINS", "NOT_CONTAINS")
_LEGACY_OPERATORS = (*_COMPARATORS, "NULL", "NOT_NULL", "BOGUS", None)


def _part_value(rng: random.Random, part: KeyPart) -> Any:
    limit = limits.MAX_RANGE_KEY_BYTES if part.is_range else limits.MAX_HASH_KEY_BYTES
    return values.key_value(rng, part.type, limit)


def key(rng: random.Random, table: Table) -> Any:
    """The table's key: usually right; sometimes a part missing, an extra attribute, or not a map."""
    out = {part.name: _part_value(rng, part) for part in table.key_parts}
    roll = rng.random()
    if roll < 0.05 and out:
        del out[rng.choice(list(out))]
    elif roll < 0.1:
        out[values.attribute_name(rng)] = values.attribute_value(rng)
    elif roll < 0.12:
        return rng.choice((None, [], "k", {}))
    return out


def item(rng: random.Random, table: Table) -> Any:
    """A full item: the key, index key attributes (at and past their limits), other attributes, sometimes
    near the 400 KB item limit."""
    out = key(rng, table)
    if not isinstance(out, dict):
        return out
    for index in table.indexes:
        for part in index.parts:
            if rng.random() < 0.6:
                out[part.name] = _part_value(rng, part)
    for _ in range(rng.choice((0, 1, 2, 3, 8))):
        out[values.attribute_name(rng)] = values.attribute_value(rng)
    if rng.random() < 0.05:
        out["deep"] = values.nested_maps(values.around(rng, limits.MAX_NESTING_DEPTH - 1))
    if rng.random() < 0.01:
        out["big"] = {"S": values.sized_text(rng, values.around(rng, limits.MAX_ITEM_BYTES - 64))}
    return out


# ---------------------------------------------------------------------------------------------- expressions


def _operand(rng: random.Random, names: dict[str, Any], vals: dict[str, Any]) -> str:
    roll = rng.random()
    if roll < 0.35:
        placeholder = ":" + rng.choice(("v", "w", "x" * values.around(rng, limits.MAX_PLACEHOLDER_BYTES - 1)))
        vals.setdefault(placeholder, values.attribute_value(rng))
        return placeholder
    if roll < 0.6:
        placeholder = "#" + rng.choice(("n", "m"))
        names.setdefault(placeholder, values.attribute_name(rng))
        return placeholder
    if roll < 0.7:
        depth = values.around(rng, limits.MAX_PATH_DEPTH)
        return "a" + "".join(rng.choice((".b", "[0]")) for _ in range(depth))
    return rng.choice(("a", "pk", "sk", "g", "h", "l", "m1", "attr", "size(a)", "a[1]", "a.b"))


def _comparison(rng: random.Random, names: dict[str, Any], vals: dict[str, Any]) -> str:
    left, right = _operand(rng, names, vals), _operand(rng, names, vals)
    form = rng.randrange(6)
    if form == 0:
        return f"{left} {rng.choice(('=', '<>', '<', '<=', '>', '>='))} {right}"
    if form == 1:
        return f"{left} BETWEEN {right} AND {_operand(rng, names, vals)}"
    if form == 2:
        return f"{left} IN ({right}, {_operand(rng, names, vals)})"
    if form == 3:
        return f"{rng.choice(('begins_with', 'contains', 'attribute_type'))}({left}, {right})"
    if form == 4:
        return f"{rng.choice(('attribute_exists', 'attribute_not_exists'))}({left})"
    return f"NOT {left} = {right}"


def condition(rng: random.Random, names: dict[str, Any], vals: dict[str, Any]) -> str:
    """A condition with an operator count and a length at and around DynamoDB's 300 operators and 4 KB."""
    count = rng.choice((1, 1, 2, 3, values.around(rng, limits.MAX_EXPRESSION_OPERATORS // 2)))
    text = " AND ".join(_comparison(rng, names, vals) for _ in range(count))
    if rng.random() < 0.05:
        text += " " * values.around(rng, limits.MAX_EXPRESSION_BYTES - len(text))
    if rng.random() < 0.05:
        text = text[: rng.randrange(len(text) + 1)] + rng.choice(("(", ")", ",", "AND", "=", "#", ":", "", "\u0000"))
    return text


def update_expression(rng: random.Random, names: dict[str, Any], vals: dict[str, Any]) -> str:
    clauses = []
    if rng.random() < 0.1:
        # A SET deep inside an item's nested maps: the result may nest past DynamoDB's 32 levels.
        vals[":deep"] = values.nested_maps(rng.choice((1, 2, 3)))
        clauses.append("SET deep" + ".k" * values.around(rng, limits.MAX_NESTING_DEPTH - 2) + " = :deep")
    for _ in range(rng.choice((1, 1, 2, 4))):
        action = rng.choice(("SET", "REMOVE", "ADD", "DELETE"))
        target = _operand(rng, names, vals)
        if action == "SET":
            source = _operand(rng, names, vals)
            form = rng.randrange(4)
            if form == 1:
                source = f"{source} + {_operand(rng, names, vals)}"
            elif form == 2:
                source = f"if_not_exists({target}, {source})"
            elif form == 3:
                source = f"list_append({source}, {_operand(rng, names, vals)})"
            clauses.append(f"SET {target} = {source}")
        elif action == "REMOVE":
            clauses.append(f"REMOVE {target}")
        else:
            clauses.append(f"{action} {target} {_operand(rng, names, vals)}")
    return " ".join(clauses)


def projection(rng: random.Random, names: dict[str, Any], vals: dict[str, Any]) -> str:
    return ", ".join(_operand(rng, names, {}) for _ in range(rng.choice((1, 2, 5))))


def _with_maps(body: Body, names: dict[str, Any], vals: dict[str, Any], rng: random.Random) -> Body:
    if names or rng.random() < 0.05:
        body["ExpressionAttributeNames"] = names
    if vals or rng.random() < 0.05:
        body["ExpressionAttributeValues"] = vals
    return body


# ---------------------------------------------------------------------------------------------- legacy parameters


def legacy_conditions(rng: random.Random, table: Table, *, with_value: bool) -> dict[str, Any]:
    """Expected / QueryFilter / ScanFilter maps: operators with right and wrong argument counts and values."""
    out: dict[str, Any] = {}
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        condition: dict[str, Any] = {}
        operator = rng.choice(_LEGACY_OPERATORS)
        if operator is not None:
            condition["ComparisonOperator"] = operator
        if rng.random() < 0.8:
            condition["AttributeValueList"] = [values.attribute_value(rng) for _ in range(rng.choice((0, 1, 1, 2, 3)))]
        if with_value and rng.random() < 0.4:
            condition["Value"] = values.attribute_value(rng)
        if with_value and rng.random() < 0.2:
            condition["Exists"] = rng.choice((True, False, None, "x"))
        out[values.attribute_name(rng)] = condition if rng.random() > 0.03 else None
    return out


def key_conditions(rng: random.Random, parts: tuple[KeyPart, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        if rng.random() < 0.9:
            operator = "EQ" if not part.is_range or rng.random() < 0.4 else rng.choice(_COMPARATORS)
            count = 2 if operator == "BETWEEN" else 1
            if rng.random() < 0.1:
                count = rng.randrange(4)
            out[part.name] = {
                "ComparisonOperator": operator,
                "AttributeValueList": [_part_value(rng, part) for _ in range(count)],
            }
    if rng.random() < 0.05:
        out[values.attribute_name(rng)] = {"ComparisonOperator": "EQ", "AttributeValueList": [values.scalar(rng)]}
    return out


def attribute_updates(rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for _ in range(rng.choice((0, 1, 2, 3))):
        update: dict[str, Any] = {}
        if rng.random() < 0.8:
            update["Action"] = rng.choice(("PUT", "ADD", "DELETE", "BOGUS"))
        if rng.random() < 0.8:
            update["Value"] = values.attribute_value(rng)
        out[values.attribute_name(rng)] = update
    return out


def attributes_to_get(rng: random.Random) -> list[Any]:
    names = [values.attribute_name(rng) for _ in range(rng.choice((0, 1, 2, 3)))]
    if rng.random() < 0.05:
        names.append(None)
    if names and rng.random() < 0.05:
        names.append(names[0])
    return names
