"""Capacity admission as a client sees it: the throttling errors with their bodies and messages, a batch and a
transaction on a fresh table, a failed condition's charge, and UpdateTable's daily limit on decreases. Handlers
run through ``dispatch.bind`` on an in-memory store with a ManualClock."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.errors import LimitExceededException, ProvisionedThroughputExceededException, ThrottlingException
from tests.unit.api.operations import call, create, make_ctx


def outcomes(fn: Any, count: int) -> list[str]:
    out = []
    for _ in range(count):
        try:
            fn()
            out.append("ok")
        except (ProvisionedThroughputExceededException, ThrottlingException) as e:
            out.append(type(e).__name__)
    return out


def test_a_fresh_small_table_takes_a_large_item_parallel_puts_a_batch_and_a_transaction() -> None:
    ctx, ops, _ = make_ctx()
    create(ops, "fresh", 5, 5)
    call(ops, "PutItem", TableName="fresh", Item={"pk": {"S": "big"}, "v": {"S": "x" * 350_000}})  # 342 units
    for i in range(20):
        call(ops, "PutItem", TableName="fresh", Item={"pk": {"S": f"p{i}"}})
    batch = [{"PutRequest": {"Item": {"pk": {"S": f"b{i}"}}}} for i in range(25)]
    assert call(ops, "BatchWriteItem", RequestItems={"fresh": batch})["UnprocessedItems"] == {}
    actions = [{"Put": {"TableName": "fresh", "Item": {"pk": {"S": f"t{i}"}}}} for i in range(25)]
    call(ops, "TransactWriteItems", TransactItems=actions)
    lane = ctx.capacity.find("fresh").base.writes[0]
    assert lane.consumed == 342 + 20 + 25 + 50
    assert lane.throttled == 0


def test_the_error_names_the_reason_and_the_resource() -> None:
    ctx, ops, _ = make_ctx()
    create(ops, "why", 1, 1)
    for _ in range(301):  # the burst credit of a new partition
        call(ops, "PutItem", TableName="why", Item={"pk": {"S": "a"}})
    with pytest.raises(ProvisionedThroughputExceededException) as e:
        call(ops, "PutItem", TableName="why", Item={"pk": {"S": "a"}})
    assert e.value.to_body() == {
        "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
        "message": "The level of configured provisioned throughput for the table was exceeded. "
        "Consider increasing your provisioning level with the UpdateTable API.",
        "ThrottlingReasons": [
            {
                "reason": "TableWriteProvisionedThroughputExceeded",
                "resource": "arn:aws:dynamodb:us-east-1:000000000000:table/why",
            }
        ],
    }


def test_a_failed_condition_still_consumes_capacity() -> None:
    ctx, ops, _ = make_ctx()
    create(ops, "cond", 10, 10)
    with pytest.raises(Exception, match="conditional"):
        call(ops, "PutItem", TableName="cond", Item={"pk": {"S": "a"}}, ConditionExpression="attribute_exists(pk)")
    assert ctx.capacity.find("cond").base.writes[0].consumed == 1


def test_on_demand_throttling_is_a_throttling_exception() -> None:
    ctx, ops, _ = make_ctx(partition_max_wcu=2)
    call(
        ops,
        "CreateTable",
        TableName="ondemand",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    with pytest.raises(ThrottlingException) as e:
        for _ in range(3):
            call(ops, "PutItem", TableName="ondemand", Item={"pk": {"S": "hot"}})
    body = e.value.to_body()
    assert body["__type"] == "com.amazon.coral.availability#ThrottlingException"
    assert body["message"].startswith("Throughput exceeds the current capacity of your table or index.")
    assert body["throttlingReasons"][0]["reason"] == "TableWriteKeyRangeThroughputExceeded"


def test_gsi_short_of_write_capacity_throttles_the_table_write() -> None:
    ctx, ops, _ = make_ctx()
    call(
        ops,
        "CreateTable",
        TableName="weather",
        KeySchema=[{"AttributeName": "station", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "station", "AttributeType": "S"},
            {"AttributeName": "intrusion", "AttributeType": "S"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 12000},
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-intrusion",
                "KeySchema": [{"AttributeName": "intrusion", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2},
            }
        ],
    )

    def put(i: int) -> None:
        call(ops, "PutItem", TableName="weather", Item={"station": {"S": f"s{i}"}, "intrusion": {"S": "False"}})

    results = []
    for i in range(604):
        try:
            put(i)
            results.append("ok")
        except ProvisionedThroughputExceededException as e:
            results.append(e.message or "")
            body = e.to_body()
    assert results[:602] == ["ok"] * 602  # the index's 2 WCU and its burst credit
    assert results[602] == (
        "The level of configured provisioned throughput for one or more global secondary indexes of the table was "
        "exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes "
        "with the UpdateTable API."
    )
    assert body["ThrottlingReasons"][0]["reason"] == "IndexWriteProvisionedThroughputExceeded"
    assert body["ThrottlingReasons"][0]["resource"].endswith(":table/weather/index/by-intrusion")
    st = ctx.capacity.find("weather")
    assert len(st.base.pmap) == 12
    assert sum(lane.consumed for lane in st.base.writes) == 602  # the refused writes took nothing from the table


def test_decrease_limit_through_update_table() -> None:
    ctx, ops, clock = make_ctx()
    create(ops, "dec", 100, 100)
    for units in (90, 80, 70, 60):
        call(
            ops,
            "UpdateTable",
            TableName="dec",
            ProvisionedThroughput={"ReadCapacityUnits": units, "WriteCapacityUnits": 100},
        )
        clock.advance(1)
    with pytest.raises(LimitExceededException):
        call(
            ops,
            "UpdateTable",
            TableName="dec",
            ProvisionedThroughput={"ReadCapacityUnits": 50, "WriteCapacityUnits": 100},
        )
    call(
        ops, "UpdateTable", TableName="dec", ProvisionedThroughput={"ReadCapacityUnits": 100, "WriteCapacityUnits": 100}
    )
