"""One builder per data-plane operation, a shape-driven builder from botocore's model, and generic mutations."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from dynastore import limits
from tests.fuzz import requests as r
from tests.fuzz import values
from tests.fuzz.tables import Table

Body = dict[str, Any]


def _plain_key(table: Table, index: int) -> dict[str, Any]:
    """A valid key (most members of a large batch are plain: one or two wrong ones find the same bugs cheaper)."""
    values_by_type = {"S": {"S": f"k{index % 7}"}, "N": {"N": str(index % 7)}, "B": {"B": "AQ=="}}
    return {part.name: values_by_type[part.type] for part in table.key_parts}


def _odd(rng: random.Random, count: int) -> bool:
    """Whether one member of a ``count``-member batch is built with the full set of mutations."""
    return count < 5 or rng.random() < 3 / count


def _table(rng: random.Random, tables: tuple[Table, ...]) -> Table:
    return rng.choice(tables)


def _name(rng: random.Random, table: Table) -> Any:
    return table.name if rng.random() > 0.02 else rng.choice(("", "no_such_table", "x" * 256, None, 7))


def _condition_params(
    rng: random.Random, table: Table, body: Body, names: dict[str, Any], vals: dict[str, Any]
) -> None:
    roll = rng.random()
    if roll < 0.3:
        body["ConditionExpression"] = r.condition(rng, names, vals)
    elif roll < 0.5:
        body["Expected"] = r.legacy_conditions(rng, table, with_value=True)
        if rng.random() < 0.3:
            body["ConditionalOperator"] = rng.choice(("AND", "OR", "XOR"))


def put_item(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    table = _table(rng, tables)
    body: Body = {"TableName": _name(rng, table), "Item": r.item(rng, table)}
    names: dict[str, Any] = {}
    vals: dict[str, Any] = {}
    _condition_params(rng, table, body, names, vals)
    if rng.random() < 0.2:
        body["ReturnValues"] = rng.choice(("NONE", "ALL_OLD", "ALL_NEW", "BOGUS"))
    return r._with_maps(body, names, vals, rng)


def get_item(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    table = _table(rng, tables)
    body: Body = {"TableName": _name(rng, table), "Key": r.key(rng, table)}
    names: dict[str, Any] = {}
    roll = rng.random()
    if roll < 0.3:
        body["ProjectionExpression"] = r.projection(rng, names, {})
    elif roll < 0.5:
        body["AttributesToGet"] = r.attributes_to_get(rng)
    if rng.random() < 0.3:
        body["ConsistentRead"] = True
    return r._with_maps(body, names, {}, rng)


def update_item(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    table = _table(rng, tables)
    body: Body = {"TableName": _name(rng, table), "Key": r.key(rng, table)}
    names: dict[str, Any] = {}
    vals: dict[str, Any] = {}
    if rng.random() < 0.6:
        body["UpdateExpression"] = r.update_expression(rng, names, vals)
    else:
        body["AttributeUpdates"] = r.attribute_updates(rng)
    _condition_params(rng, table, body, names, vals)
    if rng.random() < 0.2:
        body["ReturnValues"] = rng.choice(("NONE", "ALL_OLD", "ALL_NEW", "UPDATED_OLD", "UPDATED_NEW"))
    return r._with_maps(body, names, vals, rng)


def delete_item(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    table = _table(rng, tables)
    body: Body = {"TableName": _name(rng, table), "Key": r.key(rng, table)}
    names: dict[str, Any] = {}
    vals: dict[str, Any] = {}
    _condition_params(rng, table, body, names, vals)
    return r._with_maps(body, names, vals, rng)


def _read_params(rng: random.Random, table: Table, body: Body, names: dict[str, Any], vals: dict[str, Any]) -> None:
    roll = rng.random()
    if roll < 0.25:
        body["FilterExpression"] = r.condition(rng, names, vals)
    elif roll < 0.4:
        body["QueryFilter" if "KeyConditions" in body or "KeyConditionExpression" in body else "ScanFilter"] = (
            r.legacy_conditions(rng, table, with_value=False)
        )
    roll = rng.random()
    if roll < 0.2:
        body["ProjectionExpression"] = r.projection(rng, names, vals)
    elif roll < 0.3:
        body["AttributesToGet"] = r.attributes_to_get(rng)
    if rng.random() < 0.2:
        body["Select"] = rng.choice(("ALL_ATTRIBUTES", "COUNT", "SPECIFIC_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES"))
    if rng.random() < 0.3:
        body["Limit"] = rng.choice((1, 5, 100)) if rng.random() < 0.7 else values.long_value(rng, 1)
    if rng.random() < 0.2:
        start = r.key(rng, table)
        if isinstance(start, dict) and body.get("IndexName") is not None:
            index = next((i for i in table.indexes if i.name == body["IndexName"]), None)
            for part in () if index is None else index.parts:
                start[part.name] = r._part_value(rng, part)
        body["ExclusiveStartKey"] = start


def query(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    table = _table(rng, tables)
    body: Body = {"TableName": _name(rng, table)}
    parts = table.key_parts
    if table.indexes and rng.random() < 0.5:
        index = rng.choice(table.indexes)
        body["IndexName"] = index.name
        parts = index.parts
    names: dict[str, Any] = {}
    vals: dict[str, Any] = {}
    if rng.random() < 0.6:
        clauses = []
        for part in parts:
            if rng.random() < 0.92:
                placeholder = f":k{len(vals)}"
                vals[placeholder] = r._part_value(rng, part)
                op = "=" if not part.is_range else rng.choice(("=", "<", "<=", ">", ">=", "begins_with", "BETWEEN"))
                if op == "begins_with":
                    clauses.append(f"begins_with({part.name}, {placeholder})")
                elif op == "BETWEEN":
                    vals[placeholder + "b"] = r._part_value(rng, part)
                    clauses.append(f"{part.name} BETWEEN {placeholder} AND {placeholder}b")
                else:
                    clauses.append(f"{part.name} {op} {placeholder}")
        body["KeyConditionExpression"] = " AND ".join(clauses) if clauses else rng.choice(("", "pk"))
    else:
        body["KeyConditions"] = r.key_conditions(rng, parts)
    _read_params(rng, table, body, names, vals)
    if rng.random() < 0.2:
        body["ScanIndexForward"] = False
    return r._with_maps(body, names, vals, rng)


def scan(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    table = _table(rng, tables)
    body: Body = {"TableName": _name(rng, table)}
    if table.indexes and rng.random() < 0.3:
        body["IndexName"] = rng.choice(table.indexes).name
    names: dict[str, Any] = {}
    vals: dict[str, Any] = {}
    _read_params(rng, table, body, names, vals)
    if rng.random() < 0.2:
        total = rng.choice((1, 2, 4, 1000000, 1000001, 0))
        body["TotalSegments"] = total
        body["Segment"] = (
            rng.choice((0, max(total - 1, 0), total, -1)) if rng.random() < 0.9 else values.long_value(rng)
        )
    return r._with_maps(body, names, vals, rng)


def batch_get_item(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    request_items: dict[str, Any] = {}
    for table in rng.sample(tables, rng.randrange(1, len(tables) + 1)):
        count = rng.choice((0, 1, 2, 5, values.around(rng, limits.MAX_BATCH_GET)))
        spec: dict[str, Any] = {
            "Keys": [r.key(rng, table) if _odd(rng, count) else _plain_key(table, i) for i in range(count)]
        }
        if count and rng.random() < 0.1:
            spec["Keys"].append(spec["Keys"][0])
        if rng.random() < 0.2:
            spec["AttributesToGet"] = r.attributes_to_get(rng)
        request_items[_name(rng, table)] = spec
    return {"RequestItems": request_items}


def batch_write_item(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    request_items: dict[str, Any] = {}
    for table in rng.sample(tables, rng.randrange(1, len(tables) + 1)):
        count = rng.choice((0, 1, 2, 5, values.around(rng, limits.MAX_BATCH_WRITE)))
        writes = []
        for i in range(count):
            if not _odd(rng, count):
                writes.append({"PutRequest": {"Item": _plain_key(table, i)}})
            elif rng.random() < 0.7:
                writes.append({"PutRequest": {"Item": r.item(rng, table)}})
            else:
                writes.append({"DeleteRequest": {"Key": r.key(rng, table)}})
        request_items[_name(rng, table)] = writes
    return {"RequestItems": request_items}


def transact_get_items(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    count = rng.choice((0, 1, 2, 5, values.around(rng, limits.MAX_TRANSACT_ITEMS)))
    out = []
    for i in range(count):
        table = _table(rng, tables)
        if not _odd(rng, count):
            out.append({"Get": {"TableName": table.name, "Key": _plain_key(table, i)}})
            continue
        get: dict[str, Any] = {"TableName": _name(rng, table), "Key": r.key(rng, table)}
        if rng.random() < 0.2:
            names: dict[str, Any] = {}
            get["ProjectionExpression"] = r.projection(rng, names, {})
            r._with_maps(get, names, {}, rng)
        out.append({"Get": get})
    return {"TransactItems": out}


def transact_write_items(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    count = rng.choice((0, 1, 2, 5, values.around(rng, limits.MAX_TRANSACT_ITEMS)))
    out = []
    for i in range(count):
        table = _table(rng, tables)
        if not _odd(rng, count):
            out.append({"Put": {"TableName": table.name, "Item": _plain_key(table, i + 100)}})
            continue
        names: dict[str, Any] = {}
        vals: dict[str, Any] = {}
        kind = rng.choice(("Put", "Update", "Delete", "ConditionCheck"))
        action: Body = {"TableName": _name(rng, table)}
        if kind == "Put":
            action["Item"] = r.item(rng, table)
        else:
            action["Key"] = r.key(rng, table)
        if kind == "Update":
            action["UpdateExpression"] = r.update_expression(rng, names, vals)
        if kind == "ConditionCheck" or rng.random() < 0.3:
            action["ConditionExpression"] = r.condition(rng, names, vals)
        out.append({kind: r._with_maps(action, names, vals, rng)})
    body: Body = {"TransactItems": out}
    if rng.random() < 0.1:
        body["ClientRequestToken"] = values.sized_text(rng, values.around(rng, 36))
    return body


BUILDERS: dict[str, Callable[[random.Random, tuple[Table, ...]], Body]] = {
    "PutItem": put_item,
    "GetItem": get_item,
    "UpdateItem": update_item,
    "DeleteItem": delete_item,
    "Query": query,
    "Scan": scan,
    "BatchGetItem": batch_get_item,
    "BatchWriteItem": batch_write_item,
    "TransactGetItems": transact_get_items,
    "TransactWriteItems": transact_write_items,
}
