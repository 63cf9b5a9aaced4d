"""Secondary index definitions end to end: CreateTable LSIs/GSIs (multi-attribute GSI keys included), the limits,
DescribeTable's index shape, and the online lifecycle of UpdateTable Create/Delete (CREATING with Backfilling,
ACTIVE, DELETING, gone) on a server with a manual clock."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from tests.e2e.conftest import error_of, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture

INVALID = "One or more parameter values were invalid: "
PT = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}


def key(*specs: str) -> list[dict[str, str]]:
    """``key("a:HASH", "b:RANGE")``."""
    return [{"AttributeName": s.split(":")[0], "KeyType": s.split(":")[1]} for s in specs]


def defs(*names: str, kind: str = "S") -> list[dict[str, str]]:
    return [{"AttributeName": name, "AttributeType": kind} for name in names]


def gsi(name: str, *specs: str, projection: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": key(*specs),
        "Projection": projection or {"ProjectionType": "ALL"},
        **extra,
    }


def create(ddb: Any, **request: Any) -> dict[str, Any]:
    request.setdefault("TableName", unique_name())
    request.setdefault("KeySchema", key("pk:HASH", "sk:RANGE"))
    request.setdefault("BillingMode", "PAY_PER_REQUEST")
    return ddb.create_table(**request)["TableDescription"]  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------- CreateTable


def test_describe_shows_every_index(ddb: Any) -> None:
    name = unique_name()
    created = create(
        ddb,
        TableName=name,
        BillingMode="PROVISIONED",
        ProvisionedThroughput=PT,
        AttributeDefinitions=defs("pk", "sk", "l", "g"),
        LocalSecondaryIndexes=[
            {"IndexName": "lsi", "KeySchema": key("pk:HASH", "l:RANGE"), "Projection": {"ProjectionType": "KEYS_ONLY"}}
        ],
        GlobalSecondaryIndexes=[
            gsi(
                "gsi",
                "g:HASH",
                projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": ["b", "a"]},
                ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
            )
        ],
    )
    assert created["GlobalSecondaryIndexes"][0]["IndexStatus"] == "CREATING"
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    table = ddb.describe_table(TableName=name)["Table"]
    arn = table["TableArn"]
    assert table["LocalSecondaryIndexes"] == [
        {
            "IndexName": "lsi",
            "KeySchema": key("pk:HASH", "l:RANGE"),
            "Projection": {"ProjectionType": "KEYS_ONLY"},
            "IndexSizeBytes": 0,
            "ItemCount": 0,
            "IndexArn": f"{arn}/index/lsi",
        }
    ]
    assert table["GlobalSecondaryIndexes"] == [
        {
            "IndexName": "gsi",
            "KeySchema": key("g:HASH"),
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b"]},
            "IndexStatus": "ACTIVE",  # no Backfilling: created with the table
            "ProvisionedThroughput": {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
            "IndexSizeBytes": 0,
            "ItemCount": 0,
            "IndexArn": f"{arn}/index/gsi",
            "WarmThroughput": {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"},
        }
    ]


def test_multi_attribute_gsi_keys_round_trip(ddb: Any) -> None:
    schema = key("a:HASH", "b:HASH", "c:HASH", "d:HASH", "e:RANGE", "f:RANGE", "g:RANGE", "h:RANGE")
    desc = create(
        ddb,
        KeySchema=key("pk:HASH"),
        AttributeDefinitions=defs("pk", *"abcdefgh"),
        GlobalSecondaryIndexes=[gsi("multi", *(f"{k['AttributeName']}:{k['KeyType']}" for k in schema))],
    )
    assert desc["GlobalSecondaryIndexes"][0]["KeySchema"] == schema
    assert ddb.describe_table(TableName=desc["TableName"])["Table"]["GlobalSecondaryIndexes"][0]["KeySchema"] == schema


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (
            ("a:HASH", "b:HASH", "c:HASH", "d:HASH", "e:HASH"),
            INVALID + "The KeySchema exceeds the maximum allowed number of HASH key attributes",
        ),
        (
            ("a:HASH", "b:RANGE", "c:RANGE", "d:RANGE", "e:RANGE", "f:RANGE"),
            INVALID + "The KeySchema exceeds the maximum allowed number of RANGE key attributes",
        ),
        (
            ("a:HASH", "b:RANGE", "c:HASH"),
            INVALID + "All HASH key attributes must precede RANGE key attributes in the KeySchema",
        ),
        (("a:HASH", "b:HASH", "a:RANGE"), "The KeySchema contains multiple key attributes with the same name"),
        (("a:HASH", "a:RANGE"), "Both the Hash Key and the Range Key element in the KeySchema have the same name"),
        (("b:RANGE", "a:HASH"), "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"),
    ],
)
def test_multi_attribute_key_rules(ddb: Any, specs: tuple[str, ...], message: str) -> None:
    names = sorted({s.split(":")[0] for s in specs})
    code, text = error_of(
        lambda: create(
            ddb,
            KeySchema=key("pk:HASH"),
            AttributeDefinitions=defs("pk", *names),
            GlobalSecondaryIndexes=[gsi("bad", *specs)],
        )
    )
    assert (code, text) == ("ValidationException", message)


def test_an_lsi_key_has_at_most_two_elements(ddb: Any) -> None:
    code, text = error_of(
        lambda: create(
            ddb,
            AttributeDefinitions=defs("pk", "sk", "l", "m"),
            LocalSecondaryIndexes=[
                {
                    "IndexName": "lsi",
                    "KeySchema": key("pk:HASH", "l:RANGE", "m:RANGE"),
                    "Projection": {"ProjectionType": "ALL"},
                }
            ],
        )
    )
    assert code == "ValidationException"
    assert "failed to satisfy constraint: Member must have length less than or equal to 2" in text


def test_index_count_limits(ddb: Any) -> None:
    lsis = [
        {"IndexName": f"lsi{i}", "KeySchema": key("pk:HASH", f"r{i}:RANGE"), "Projection": {"ProjectionType": "ALL"}}
        for i in range(6)
    ]
    code, text = error_of(
        lambda: create(
            ddb, AttributeDefinitions=defs("pk", "sk", *(f"r{i}" for i in range(6))), LocalSecondaryIndexes=lsis
        )
    )
    assert (code, text) == (
        "ValidationException",
        INVALID + "Number of LocalSecondaryIndexes exceeds per-table limit of 5",
    )
    gsis = [gsi(f"gsi{i:02}", f"h{i}:HASH") for i in range(21)]
    code, text = error_of(
        lambda: create(
            ddb,
            KeySchema=key("pk:HASH"),
            AttributeDefinitions=defs("pk", *(f"h{i}" for i in range(21))),
            GlobalSecondaryIndexes=gsis,
        )
    )
    assert (code, text) == (
        "ValidationException",
        INVALID + "GlobalSecondaryIndex count exceeds the per-table limit of 20",
    )
    desc = create(
        ddb,
        KeySchema=key("pk:HASH"),
        AttributeDefinitions=defs("pk", *(f"h{i}" for i in range(20))),
        GlobalSecondaryIndexes=gsis[:20],
    )
    assert len(desc["GlobalSecondaryIndexes"]) == 20


def test_at_most_100_projected_attributes_across_indexes(ddb: Any) -> None:
    def include(name: str, hash_name: str, count: int, offset: int) -> dict[str, Any]:
        attrs = [f"x{offset + i}" for i in range(count)]
        return gsi(
            f"idx_{name}", f"{hash_name}:HASH", projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": attrs}
        )

    too_many = [include(f"g{i}", f"h{i}", 20, 0) for i in range(5)] + [include("g5", "h5", 1, 0)]
    code, text = error_of(
        lambda: create(
            ddb,
            KeySchema=key("pk:HASH"),
            AttributeDefinitions=defs("pk", *(f"h{i}" for i in range(6))),
            GlobalSecondaryIndexes=too_many,
        )
    )
    assert (code, text) == (
        "ValidationException",
        INVALID + "Number of projected attributes in all indexes exceeds limit of 100",
    )
    exactly = [include(f"g{i}", f"h{i}", 20, 0) for i in range(5)]  # the same names in 5 indexes count 5 times
    desc = create(
        ddb,
        KeySchema=key("pk:HASH"),
        AttributeDefinitions=defs("pk", *(f"h{i}" for i in range(5))),
        GlobalSecondaryIndexes=exactly,
    )
    name = desc["TableName"]
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    code, text = error_of(
        lambda: ddb.update_table(
            TableName=name,
            AttributeDefinitions=defs("h5"),
            GlobalSecondaryIndexUpdates=[{"Create": include("g5", "h5", 1, 50)}],
        )
    )
    assert (code, text) == (
        "ValidationException",
        INVALID + "Number of projected attributes in all indexes exceeds limit of 100",
    )


def test_update_table_checks_multi_attribute_keys(ddb: Any) -> None:
    desc = create(ddb, KeySchema=key("pk:HASH"), AttributeDefinitions=defs("pk"))
    name = desc["TableName"]
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    code, text = error_of(
        lambda: ddb.update_table(
            TableName=name,
            AttributeDefinitions=defs(*"abcde"),
            GlobalSecondaryIndexUpdates=[{"Create": gsi("bad", "a:HASH", *(f"{c}:RANGE" for c in "bcde"), "a:RANGE")}],
        )
    )
    assert (code, text) == ("ValidationException", "The KeySchema contains multiple key attributes with the same name")


# ---------------------------------------------------------------------------------------------- online lifecycle


# A server whose clock moves only when a test says so; UpdateTable transitions take 10 s, backfills copy one item
# per 5 s.
server = server_fixture(
    "--manual-clock", "--update-table-delay", "10", "--gsi-backfill-chunk", "1", "--gsi-backfill-interval", "5"
)


def gsis(server: ServerProcess, table: str) -> dict[str, dict[str, Any]]:
    desc = server.ddb.describe_table(TableName=table)["Table"]
    return {g["IndexName"]: g for g in desc.get("GlobalSecondaryIndexes", [])}


def until(server: ServerProcess, table: str, index: str, predicate: Any, step: float = 5.0) -> dict[str, Any] | None:
    """Advance the clock until ``predicate(description or None)``; the background loop runs in between."""
    for _ in range(200):
        got = gsis(server, table).get(index)
        if predicate(got):
            return got
        server.advance(step)
        time.sleep(0.02)  # lets the server's maintenance loop run (no timing is asserted)
    raise AssertionError(f"{index} never reached the expected state")


def _table_with_items(server: ServerProcess, count: int) -> str:
    name = f"ix_{uuid.uuid4().hex[:10]}"
    server.ddb.create_table(
        TableName=name, KeySchema=key("pk:HASH"), AttributeDefinitions=defs("pk"), BillingMode="PAY_PER_REQUEST"
    )
    for i in range(count):
        server.ddb.put_item(TableName=name, Item={"pk": {"S": f"p{i}"}, "g": {"S": f"g{i % 2}"}})
    return name


def test_online_create_backfills_then_turns_active(server: ServerProcess) -> None:
    name = _table_with_items(server, 4)
    out = server.ddb.update_table(
        TableName=name, AttributeDefinitions=defs("g"), GlobalSecondaryIndexUpdates=[{"Create": gsi("byg", "g:HASH")}]
    )["TableDescription"]
    assert out["TableStatus"] == "UPDATING"
    created = out["GlobalSecondaryIndexes"][0]
    assert (created["IndexStatus"], created["Backfilling"]) == ("CREATING", True)
    assert created["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    code, text = error_of(
        lambda: server.ddb.query(
            TableName=name,
            IndexName="byg",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": "g0"}},
        )
    )
    assert (code, text) == ("ValidationException", "Cannot read from backfilling global secondary index")

    def second_create() -> Any:
        return server.ddb.update_table(
            TableName=name,
            AttributeDefinitions=defs("h"),
            GlobalSecondaryIndexUpdates=[{"Create": gsi("byh", "h:HASH")}],
        )

    code, _ = error_of(second_create)
    assert code == "ResourceInUseException"  # the table is UPDATING
    server.advance(10)
    assert server.ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"
    backfilling = gsis(server, name)["byg"]
    assert (backfilling["IndexStatus"], backfilling["Backfilling"]) == ("CREATING", True)  # 1 item per 5 s
    assert error_of(second_create) == (
        "LimitExceededException",
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    )
    active = until(server, name, "byg", lambda g: g is not None and g["IndexStatus"] == "ACTIVE")
    assert active is not None and "Backfilling" not in active
    assert server.ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"
    got = server.ddb.query(
        TableName=name, IndexName="byg", KeyConditionExpression="g = :g", ExpressionAttributeValues={":g": {"S": "g0"}}
    )
    assert sorted(i["pk"]["S"] for i in got["Items"]) == ["p0", "p2"]


def test_delete_is_deleting_then_gone(server: ServerProcess) -> None:
    name = _table_with_items(server, 0)
    server.ddb.update_table(
        TableName=name, AttributeDefinitions=defs("g"), GlobalSecondaryIndexUpdates=[{"Create": gsi("byg", "g:HASH")}]
    )
    until(server, name, "byg", lambda g: g is not None and g["IndexStatus"] == "ACTIVE")
    out = server.ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "byg"}}])
    assert out["TableDescription"]["GlobalSecondaryIndexes"][0]["IndexStatus"] == "DELETING"
    code, _ = error_of(lambda: server.ddb.scan(TableName=name, IndexName="byg"))
    assert code == "ValidationException"
    assert until(server, name, "byg", lambda g: g is None) is None
    table = server.ddb.describe_table(TableName=name)["Table"]
    assert "GlobalSecondaryIndexes" not in table
    assert table["AttributeDefinitions"] == defs("pk")  # the index's key attribute left with it
    code, text = error_of(lambda: server.ddb.scan(TableName=name, IndexName="byg"))
    assert (code, text) == ("ValidationException", "The table does not have the specified index: byg")


def test_an_index_can_be_deleted_while_it_backfills(server: ServerProcess) -> None:
    name = _table_with_items(server, 4)
    server.ddb.update_table(
        TableName=name, AttributeDefinitions=defs("g"), GlobalSecondaryIndexUpdates=[{"Create": gsi("byg", "g:HASH")}]
    )
    server.advance(10)  # the table is ACTIVE again; the backfill copies one item per 5 s
    assert gsis(server, name)["byg"]["Backfilling"] is True
    out = server.ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "byg"}}])
    assert out["TableDescription"]["GlobalSecondaryIndexes"][0]["IndexStatus"] == "DELETING"
    assert until(server, name, "byg", lambda g: g is None) is None
