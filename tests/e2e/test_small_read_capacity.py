"""ConsumedCapacity of small Query and Scan pages, exactly.

A Query or Scan page consumes read units by the total size of the items it reads (before any filter or
projection), rounded up to 4 KB: one unit per 4 KB strongly consistent, half of that eventually consistent,
and at least one such read when the page reads nothing (Developer Guide, "Read capacity units"). Query and Scan
report only the aggregate ``CapacityUnits`` (and ``Table`` / the index under INDEXES), no read/write split.
"""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.model.item_size import item_size
from tests.e2e.conftest import create_table, unique_name

SMALL = {"pk": {"S": "a"}, "sk": {"S": "1"}, "g": {"S": "x"}, "d": {"S": "y" * 91}}


def units(consistent: bool, blocks: int = 1) -> float:
    """The read units of ``blocks`` 4 KB reads."""
    return blocks * (1.0 if consistent else 0.5)


@pytest.fixture(scope="module")
def indexed(ddb: Any) -> str:
    """pk/sk strings with a GSI ``by_g`` on g and an LSI ``lsi_g`` on pk/g, both projecting everything."""
    name = unique_name()
    ddb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": attr, "AttributeType": "S"} for attr in ("pk", "sk", "g")],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        LocalSecondaryIndexes=[
            {
                "IndexName": "lsi_g",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "g", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    return name


def scan(ddb: Any, table: str, **extra: Any) -> Any:
    return ddb.scan(TableName=table, **extra)


def query(ddb: Any, table: str, **extra: Any) -> Any:
    values = {":p": {"S": "a"}, **extra.pop("ExpressionAttributeValues", {})}
    return ddb.query(TableName=table, KeyConditionExpression="pk = :p", ExpressionAttributeValues=values, **extra)


READS = [scan, query]


def check_small_page(ddb: Any, table: str, count: int) -> None:
    for read in READS:
        for consistent in (False, True):
            want = units(consistent)
            total = read(ddb, table, ConsistentRead=consistent, ReturnConsumedCapacity="TOTAL")
            assert (total["Count"], total["ConsumedCapacity"]) == (count, {"TableName": table, "CapacityUnits": want})
            indexes = read(ddb, table, ConsistentRead=consistent, ReturnConsumedCapacity="INDEXES")
            assert indexes["ConsumedCapacity"] == {
                "TableName": table,
                "CapacityUnits": want,
                "Table": {"CapacityUnits": want},
            }
            none = read(ddb, table, ConsistentRead=consistent, ReturnConsumedCapacity="NONE")
            assert "ConsumedCapacity" not in none


def test_small_pages(ddb: Any, indexed: str) -> None:
    """Empty table: the minimum; then one 100-byte item; then five (500 bytes together); a Limit page; a filter."""
    check_small_page(ddb, indexed, 0)
    assert item_size(SMALL) == 100
    ddb.put_item(TableName=indexed, Item=SMALL)
    check_small_page(ddb, indexed, 1)
    for n in range(2, 6):
        ddb.put_item(TableName=indexed, Item={**SMALL, "sk": {"S": str(n)}})
    check_small_page(ddb, indexed, 5)
    for read in READS:
        page = read(ddb, indexed, Limit=2, ReturnConsumedCapacity="TOTAL")
        assert (page["Count"], page["ConsumedCapacity"]) == (2, {"TableName": indexed, "CapacityUnits": 0.5})
        assert "LastEvaluatedKey" in page
        # a filter that keeps nothing still pays for the items it read
        filtered = read(
            ddb,
            indexed,
            ConsistentRead=True,
            FilterExpression="d = :none",
            ExpressionAttributeValues={":none": {"S": "none"}},
            ReturnConsumedCapacity="TOTAL",
        )
        assert (filtered["Count"], filtered["ScannedCount"]) == (0, 5)
        assert filtered["ConsumedCapacity"] == {"TableName": indexed, "CapacityUnits": 1.0}


def test_small_index_pages(ddb: Any, indexed: str) -> None:
    """An index read names the index and reports the table at zero."""
    ddb.put_item(TableName=indexed, Item={**SMALL, "pk": {"S": "b"}})
    gsi = ddb.scan(TableName=indexed, IndexName="by_g", ReturnConsumedCapacity="INDEXES")
    assert gsi["ConsumedCapacity"] == {
        "TableName": indexed,
        "CapacityUnits": 0.5,
        "Table": {"CapacityUnits": 0.0},
        "GlobalSecondaryIndexes": {"by_g": {"CapacityUnits": 0.5}},
    }
    lsi = ddb.query(
        TableName=indexed,
        IndexName="lsi_g",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "b"}},
        ConsistentRead=True,
        ReturnConsumedCapacity="INDEXES",
    )
    assert lsi["ConsumedCapacity"] == {
        "TableName": indexed,
        "CapacityUnits": 1.0,
        "Table": {"CapacityUnits": 0.0},
        "LocalSecondaryIndexes": {"lsi_g": {"CapacityUnits": 1.0}},
    }
    empty = ddb.query(
        TableName=indexed,
        IndexName="by_g",
        KeyConditionExpression="g = :g",
        ExpressionAttributeValues={":g": {"S": "nothing"}},
        ReturnConsumedCapacity="TOTAL",
    )
    assert (empty["Count"], empty["ConsumedCapacity"]) == (0, {"TableName": indexed, "CapacityUnits": 0.5})


def test_just_over_4_kb_is_two_reads(ddb: Any) -> None:
    """Sizes add up across the page before rounding: two items of 2 KB + a few bytes are two 4 KB reads."""
    table = create_table(ddb, "S", "S")
    for n in range(2):
        ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "sk": {"S": str(n)}, "d": {"S": "z" * 2048}})
    for read in READS:
        for consistent in (False, True):
            page = read(ddb, table, ConsistentRead=consistent, ReturnConsumedCapacity="TOTAL")
            assert page["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": units(consistent, 2)}
        one = read(ddb, table, Limit=1, ConsistentRead=True, ReturnConsumedCapacity="TOTAL")
        assert one["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}
