"""CreateTable, UpdateTable and DeleteTable for the fuzz run, on a small pool of tables of their own (the data-plane
tables are left alone): every Long member of the throughput settings (ProvisionedThroughput, OnDemandThroughput,
WarmThroughput, of the table and of a GSI) at and just past DynamoDB's bounds (1, the per-table quota of 40,000,
10^12) and at and past every width edge (2^31, 2^63 - 1, 2^63, 2^64 and the negatives)."""

from __future__ import annotations

import random
from typing import Any

from tests.fuzz import values
from tests.fuzz.tables import KeyPart, Table

Body = dict[str, Any]
POOL = 6  # tables the pool cycles through: created, updated and deleted again and again
_BOUNDS = (1, 40000, 10**12)  # the bounds DynamoDB checks throughput values against


def _units(rng: random.Random) -> Any:
    if rng.random() < 0.3:
        return rng.choice((1, 5, 100))
    return values.long_value(rng, rng.choice((None, *_BOUNDS)), rng.choice((None, *_BOUNDS)))


def _pair(rng: random.Random, first: str, second: str) -> Body:
    out: Body = {}
    for member in (first, second):
        if rng.random() < 0.8:
            out[member] = _units(rng)
    return out


def _settings(rng: random.Random, body: Body) -> None:
    """Some of the three throughput settings, with values at the edges."""
    if rng.random() < 0.5:
        body["ProvisionedThroughput"] = _pair(rng, "ReadCapacityUnits", "WriteCapacityUnits")
    if rng.random() < 0.4:
        body["OnDemandThroughput"] = _pair(rng, "MaxReadRequestUnits", "MaxWriteRequestUnits")
    if rng.random() < 0.4:
        body["WarmThroughput"] = _pair(rng, "ReadUnitsPerSecond", "WriteUnitsPerSecond")


def pool_name(rng: random.Random, tables: tuple[Table, ...]) -> str:
    return f"{tables[0].name.rsplit('_', 1)[0]}_tp{rng.randrange(POOL)}"


def pool(tables: tuple[Table, ...]) -> tuple[Table, ...]:
    """The pool as tables, for requests built from botocore's model (which name a table of those given)."""
    prefix = tables[0].name.rsplit("_", 1)[0]
    return tuple(Table(f"{prefix}_tp{i}", KeyPart("pk", "S", False), None) for i in range(POOL))


def create_table(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    body: Body = {
        "TableName": pool_name(rng, tables),
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    }
    if rng.random() < 0.8:
        body["BillingMode"] = rng.choice(("PAY_PER_REQUEST", "PROVISIONED"))
    _settings(rng, body)
    if rng.random() < 0.3:
        body["AttributeDefinitions"].append({"AttributeName": "g", "AttributeType": "S"})
        index: Body = {
            "IndexName": "g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }
        _settings(rng, index)
        body["GlobalSecondaryIndexes"] = [index]
    return body


def update_table(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    body: Body = {"TableName": pool_name(rng, tables)}
    if rng.random() < 0.3:
        body["BillingMode"] = rng.choice(("PAY_PER_REQUEST", "PROVISIONED"))
    _settings(rng, body)
    if rng.random() < 0.2:
        update: Body = {"IndexName": "g"}
        _settings(rng, update)
        body["GlobalSecondaryIndexUpdates"] = [{"Update": update}]
    return body


def delete_table(rng: random.Random, tables: tuple[Table, ...]) -> Body:
    return {"TableName": pool_name(rng, tables)}


BUILDERS = {"CreateTable": create_table, "UpdateTable": update_table, "DeleteTable": delete_table}
