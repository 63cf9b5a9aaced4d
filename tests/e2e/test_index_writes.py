"""Secondary indexes, the write side, through boto3: LSI and GSI maintenance, sparse indexes, wrong index key
types, ConsumedCapacity INDEXES of writes, item collection metrics and the item-collection limit."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.e2e.conftest import error_of, make_client, unique_name
from tests.e2e.server_process import ServerProcess


def _attr(name: str, kind: str) -> dict[str, str]:
    return {"AttributeName": name, "AttributeType": kind}


def _key(name: str, kind: str) -> dict[str, str]:
    return {"AttributeName": name, "KeyType": kind}


def create_indexed(ddb: Any) -> str:
    """pk/sk; LSI by_n (pk, n) KEYS_ONLY; GSI by_g (g) ALL."""
    name = unique_name()
    ddb.create_table(
        TableName=name,
        KeySchema=[_key("pk", "HASH"), _key("sk", "RANGE")],
        AttributeDefinitions=[_attr("pk", "S"), _attr("sk", "S"), _attr("n", "N"), _attr("g", "S")],
        BillingMode="PAY_PER_REQUEST",
        LocalSecondaryIndexes=[
            {
                "IndexName": "by_n",
                "KeySchema": [_key("pk", "HASH"), _key("n", "RANGE")],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        GlobalSecondaryIndexes=[
            {"IndexName": "by_g", "KeySchema": [_key("g", "HASH")], "Projection": {"ProjectionType": "ALL"}}
        ],
    )
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    return name


def query_gsi(ddb: Any, table: str, g: str) -> list[dict[str, Any]]:
    """The GSI's items for ``g`` once propagation has caught up (bounded wait: the lag is milliseconds)."""
    for _ in range(100):
        items: list[dict[str, Any]] = ddb.query(
            TableName=table,
            IndexName="by_g",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": g}},
        )["Items"]
        if items:
            return items
        time.sleep(0.02)
    return []


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    return create_indexed(ddb)


def test_put_reports_index_units_and_item_collection(ddb: Any, table: str) -> None:
    item = {"pk": {"S": "a"}, "sk": {"S": "1"}, "n": {"N": "5"}, "g": {"S": "G"}}
    out = ddb.put_item(TableName=table, Item=item, ReturnConsumedCapacity="INDEXES", ReturnItemCollectionMetrics="SIZE")
    assert out["ConsumedCapacity"] == {
        "TableName": table,
        "CapacityUnits": 3.0,
        "Table": {"CapacityUnits": 1.0},
        "LocalSecondaryIndexes": {"by_n": {"CapacityUnits": 1.0}},
        "GlobalSecondaryIndexes": {"by_g": {"CapacityUnits": 1.0}},
    }
    assert out["ItemCollectionMetrics"] == {"ItemCollectionKey": {"pk": {"S": "a"}}, "SizeEstimateRangeGB": [0.0, 1.0]}
    assert query_gsi(ddb, table, "G") == [item]


def test_update_moving_the_gsi_key_costs_two_writes(ddb: Any, table: str) -> None:
    ddb.put_item(TableName=table, Item={"pk": {"S": "u"}, "sk": {"S": "1"}, "g": {"S": "U1"}})
    out = ddb.update_item(
        TableName=table,
        Key={"pk": {"S": "u"}, "sk": {"S": "1"}},
        UpdateExpression="SET g = :g",
        ExpressionAttributeValues={":g": {"S": "U2"}},
        ReturnConsumedCapacity="INDEXES",
    )
    assert out["ConsumedCapacity"]["GlobalSecondaryIndexes"] == {"by_g": {"CapacityUnits": 2.0}}
    assert "LocalSecondaryIndexes" not in out["ConsumedCapacity"]  # not in the LSI before or after
    assert out["ConsumedCapacity"]["CapacityUnits"] == 3.0
    assert query_gsi(ddb, table, "U2")[0]["pk"] == {"S": "u"}
    assert (
        ddb.query(
            TableName=table,
            IndexName="by_g",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": "U1"}},
        )["Items"]
        == []
    )


def test_sparse_items_stay_out_and_keys_need_not_be_unique(ddb: Any, table: str) -> None:
    for sk in ("1", "2"):
        ddb.put_item(TableName=table, Item={"pk": {"S": "s"}, "sk": {"S": sk}, "g": {"S": "same"}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "s"}, "sk": {"S": "3"}})
    for _ in range(100):
        items = query_gsi(ddb, table, "same")
        if len(items) == 2:
            break
        time.sleep(0.02)
    assert sorted(i["sk"]["S"] for i in items) == ["1", "2"]
    lsi = ddb.query(
        TableName=table,
        IndexName="by_n",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "s"}},
    )
    assert lsi["Items"] == []  # no n: in no LSI entry


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        (
            {"g": {"N": "1"}},
            "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S Actual: N "
            "IndexName: by_g",
        ),
        (
            {"n": {"S": "x"}},
            "One or more parameter values were invalid: Type mismatch for Index Key n Expected: N Actual: S "
            "IndexName: by_n",
        ),
        (
            {"g": {"S": ""}},
            "One or more parameter values are not valid. A value specified for a secondary index key is not "
            "supported. The AttributeValue for a key attribute cannot contain an empty string value. "
            "IndexName: by_g, IndexKey: g",
        ),
    ],
)
def test_wrong_index_key_is_a_validation_error_and_nothing_is_written(
    ddb: Any, table: str, attrs: dict[str, Any], message: str
) -> None:
    key = {"pk": {"S": "bad"}, "sk": {"S": "1"}}
    code, text = error_of(lambda: ddb.put_item(TableName=table, Item={**key, **attrs}))
    assert (code, text) == ("ValidationException", message)
    assert "Item" not in ddb.get_item(TableName=table, Key=key)


def test_item_collection_limit_is_configurable() -> None:
    server = ServerProcess("--item-collection-size-limit", "200")
    try:
        ddb = make_client(server.url)
        table = create_indexed(ddb)
        big = {"pk": {"S": "c"}, "n": {"N": "1"}, "pad": {"S": "x" * 120}}
        ddb.put_item(TableName=table, Item={**big, "sk": {"S": "1"}})
        code, _ = error_of(lambda: ddb.put_item(TableName=table, Item={**big, "sk": {"S": "2"}}))
        assert code == "ItemCollectionSizeLimitExceededException"
        assert "Item" not in ddb.get_item(TableName=table, Key={"pk": {"S": "c"}, "sk": {"S": "2"}})
        ddb.put_item(TableName=table, Item={**big, "pk": {"S": "other"}, "sk": {"S": "2"}})  # another collection
        out = ddb.delete_item(
            TableName=table, Key={"pk": {"S": "c"}, "sk": {"S": "1"}}, ReturnItemCollectionMetrics="SIZE"
        )
        assert out["ItemCollectionMetrics"]["ItemCollectionKey"] == {"pk": {"S": "c"}}
        ddb.put_item(TableName=table, Item={**big, "sk": {"S": "2"}})  # room again once it shrank
    finally:
        server.stop()


def test_batch_write_reports_index_units_and_item_collections(ddb: Any, table: str) -> None:
    items = [
        {"pk": {"S": "bw"}, "sk": {"S": "1"}, "n": {"N": "1"}, "g": {"S": "BW"}},
        {"pk": {"S": "bw"}, "sk": {"S": "2"}, "n": {"N": "2"}},
        {"pk": {"S": "bx"}, "sk": {"S": "1"}},
    ]
    out = ddb.batch_write_item(
        RequestItems={table: [{"PutRequest": {"Item": item}} for item in items]},
        ReturnConsumedCapacity="INDEXES",
        ReturnItemCollectionMetrics="SIZE",
    )
    assert out["UnprocessedItems"] == {}
    assert out["ConsumedCapacity"] == [
        {
            "TableName": table,
            "CapacityUnits": 6.0,
            "Table": {"CapacityUnits": 3.0},
            "LocalSecondaryIndexes": {"by_n": {"CapacityUnits": 2.0}},
            "GlobalSecondaryIndexes": {"by_g": {"CapacityUnits": 1.0}},
        }
    ]
    collections = sorted(out["ItemCollectionMetrics"][table], key=lambda m: m["ItemCollectionKey"]["pk"]["S"])
    assert collections == [
        {"ItemCollectionKey": {"pk": {"S": "bw"}}, "SizeEstimateRangeGB": [0.0, 1.0]},
        {"ItemCollectionKey": {"pk": {"S": "bx"}}, "SizeEstimateRangeGB": [0.0, 1.0]},
    ]
    assert query_gsi(ddb, table, "BW") == [items[0]]


def test_transaction_reports_index_units_and_item_collections(ddb: Any, table: str) -> None:
    item = {"pk": {"S": "tw"}, "sk": {"S": "1"}, "n": {"N": "1"}, "g": {"S": "TW"}}
    out = ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": table, "Item": item}},
            {
                "ConditionCheck": {
                    "TableName": table,
                    "Key": {"pk": {"S": "tw"}, "sk": {"S": "2"}},
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
        ],
        ReturnConsumedCapacity="INDEXES",
        ReturnItemCollectionMetrics="SIZE",
    )
    assert out["ConsumedCapacity"] == [
        {
            "TableName": table,
            "CapacityUnits": 8.0,
            "Table": {"CapacityUnits": 4.0},
            "LocalSecondaryIndexes": {"by_n": {"CapacityUnits": 2.0}},
            "GlobalSecondaryIndexes": {"by_g": {"CapacityUnits": 2.0}},
        }
    ]
    assert out["ItemCollectionMetrics"] == {
        table: [{"ItemCollectionKey": {"pk": {"S": "tw"}}, "SizeEstimateRangeGB": [0.0, 1.0]}]
    }
    assert query_gsi(ddb, table, "TW") == [item]
