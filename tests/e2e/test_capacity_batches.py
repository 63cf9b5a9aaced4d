"""Throttling of BatchWriteItem, BatchGetItem, TransactWriteItems and TransactGetItems, end to end over boto3 with
retries off: the throttled part of a batch in UnprocessedItems / UnprocessedKeys, a batch refused whole when
nothing could be processed, transactions cancelled with the throttling reason at the item's position, and
report mode throttling nothing.

dynastore-only (extension endpoints, server options): partitions of 60 RCU / 20 WCU so a few requests reach
them, and a manual clock that only the tests move, so nothing sleeps and bucket contents are exact. Every table
here has its burst credit spent as it is created (a new partition starts with 300 seconds of it), so each
partition holds one second of its share.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.test_capacity import PTEE_INDEX, PTEE_TABLE, partition_hash, partitions, spend_burst

THROTTLED_ON_DEMAND = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table "
    "or index so please try again shortly. If exceptions persist, check if you have a hot key: "
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
)
ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/"
NONE = {"Code": "None"}


server = server_fixture("--manual-clock", "--partition-max-rcu", "60", "--partition-max-wcu", "20")


def keyed_table(server: ServerProcess, read: int | None = None, write: int | None = None, **extra: Any) -> str:
    """A table with hash key `pk` (S) and range key `sk` (N): provisioned when given units, else on demand."""
    name = f"capb_{uuid.uuid4().hex[:10]}"
    billing: dict[str, Any] = {"BillingMode": "PAY_PER_REQUEST"}
    if read is not None and write is not None:
        billing = {"ProvisionedThroughput": {"ReadCapacityUnits": read, "WriteCapacityUnits": write}}
    server.ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
        ],
        **billing,
        **extra,
    )
    spend_burst(server, name)
    return name


def item(pk: str, sk: int) -> dict[str, Any]:
    """A small item: one write unit, one read unit."""
    return {"pk": {"S": pk}, "sk": {"N": str(sk)}, "v": {"S": "x" * 50}}


def key(pk: str, sk: int) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"N": str(sk)}}


def puts(pk: str, count: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"PutRequest": {"Item": item(pk, sk)}} for sk in range(start, start + count)]


def table_with_gsi(server: ServerProcess) -> str:
    """Like ``keyed_table(server, 2, 20)``, with a GSI on `flag` of 1 RCU / 2 WCU."""
    name = f"capb_{uuid.uuid4().hex[:10]}"
    server.ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "flag", "AttributeType": "S"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 20},
        GlobalSecondaryIndexes=[
            {
                "IndexName": "flag",
                "KeySchema": [{"AttributeName": "flag", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2},
            }
        ],
    )
    spend_burst(server, name)
    return name


def partition_of(server: ServerProcess, table: str, pk: str) -> int:
    h = partition_hash(pk)
    for p in partitions(server, table)["partitions"]:
        lo, hi = (int(bound, 16) for bound in p["hash_range"])
        if lo <= h <= hi:
            return int(p["partition"])
    raise AssertionError("no partition holds the key")


def spread_keys(server: ServerProcess, table: str, count: int) -> list[str]:
    """Partition keys that fall in ``count`` different partitions of ``table``."""
    found: dict[int, str] = {}
    for n in range(10_000):
        found.setdefault(partition_of(server, table, f"k{n}"), f"k{n}")
        if len(found) == count:
            return list(found.values())
    raise AssertionError("not enough partitions")


def error(call: Any) -> dict[str, Any]:
    """The error response of ``call``, which must fail."""
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as info:
        call()
    response: dict[str, Any] = info.value.response
    return response


def consumed(server: ServerProcess, table: str, direction: str) -> list[float]:
    return [p["consumed"][direction] for p in partitions(server, table)["partitions"]]


# ---------------------------------------------------------------- BatchWriteItem


class TestBatchWriteItem:
    def test_throttled_requests_come_back_unprocessed_and_unwritten(self, server: ServerProcess) -> None:
        name = keyed_table(server, 2, 20)  # one partition of 20 WCU
        requests = puts("hot", 25)
        response = server.ddb.batch_write_item(RequestItems={name: requests}, ReturnConsumedCapacity="TOTAL")
        assert response["UnprocessedItems"] == {name: requests[20:]}
        assert response["ConsumedCapacity"] == [{"TableName": name, "CapacityUnits": 20.0}]
        view = partitions(server, name)
        assert view["partitions"][0]["items"] == 20 and view["partitions"][0]["throttled"]["write"] == 5
        # settled after the batch: the partitions hold what DescribeTable counts
        assert view["item_count"] == 20 and view["partitions"][0]["bytes"] == view["size_bytes"] > 0

        server.advance(1)  # the client's retry of what came back, a second later
        again = server.ddb.batch_write_item(RequestItems=response["UnprocessedItems"])
        assert again["UnprocessedItems"] == {}
        assert partitions(server, name)["partitions"][0]["items"] == 25

    def test_nothing_processed_is_provisioned_throughput_exceeded(self, server: ServerProcess) -> None:
        name = keyed_table(server, 2, 20)  # its one partition's share is the partition maximum
        assert server.ddb.batch_write_item(RequestItems={name: puts("hot", 20)})["UnprocessedItems"] == {}
        response = error(lambda: server.ddb.batch_write_item(RequestItems={name: puts("hot", 3, start=100)}))
        assert response["Error"] == {"Code": "ProvisionedThroughputExceededException", "Message": PTEE_TABLE}
        assert response["ThrottlingReasons"] == [
            {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": ARN + name}
        ]
        assert partitions(server, name)["item_count"] == 20  # nothing of the refused batch was written

    def test_on_demand_nothing_processed_is_throttling_exception(self, server: ServerProcess) -> None:
        name = keyed_table(server)  # on demand: each partition at most 20 WCU here
        response = server.ddb.batch_write_item(RequestItems={name: puts("hot", 25)})
        assert len(response["UnprocessedItems"][name]) == 5
        response = error(lambda: server.ddb.batch_write_item(RequestItems={name: puts("hot", 2, start=100)}))
        assert response["Error"] == {"Code": "ThrottlingException", "Message": THROTTLED_ON_DEMAND}
        assert response["throttlingReasons"] == [
            {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": ARN + name}
        ]

    def test_deletes_are_admitted_and_settled(self, server: ServerProcess) -> None:
        name = keyed_table(server, 2, 20)
        server.ddb.batch_write_item(RequestItems={name: puts("d", 10)})
        deletes = [{"DeleteRequest": {"Key": key("d", sk)}} for sk in range(12)]  # two of them find nothing
        response = server.ddb.batch_write_item(RequestItems={name: deletes})
        assert response["UnprocessedItems"] == {name: deletes[10:]}
        view = partitions(server, name)
        assert view["item_count"] == 0 and view["partitions"][0]["bytes"] == 0

    def test_a_hot_key_throttles_and_write_sharding_does_not(self, server: ServerProcess) -> None:
        hot = keyed_table(server, 1, 80)  # four partitions of 20 WCU
        response = server.ddb.batch_write_item(RequestItems={hot: puts("2014-07-09", 25)})
        assert len(response["UnprocessedItems"][hot]) == 5
        assert sorted(p["throttled"]["write"] for p in partitions(server, hot)["partitions"]) == [0, 0, 0, 5]

        sharded = keyed_table(server, 1, 80)
        # the seeds' calculated suffix: [key]#(OrderId % 40 + 1)
        requests = [{"PutRequest": {"Item": item(f"2014-07-09#{order % 40 + 1}", order)}} for order in range(25)]
        assert server.ddb.batch_write_item(RequestItems={sharded: requests})["UnprocessedItems"] == {}
        view = partitions(server, sharded)
        assert all(p["throttled"]["write"] == 0 and p["consumed"]["write"] > 0 for p in view["partitions"])

    def test_a_throttled_gsi_leaves_the_request_unprocessed(self, server: ServerProcess) -> None:
        name = table_with_gsi(server)
        requests = [{"PutRequest": {"Item": {**item("g", sk), "flag": {"S": "False"}}}} for sk in range(4)]
        response = server.ddb.batch_write_item(RequestItems={name: requests})
        assert response["UnprocessedItems"] == {name: requests[2:]}  # the index takes 2 WCU a second
        view = partitions(server, name)
        assert view["item_count"] == 2 and view["indexes"][0]["partitions"][0]["throttled"]["write"] == 2


# ---------------------------------------------------------------- BatchGetItem


class TestBatchGetItem:
    def test_throttled_keys_come_back_with_the_tables_parameters(self, server: ServerProcess) -> None:
        name = keyed_table(server, 2, 20)  # one partition of 2 RCU
        server.ddb.batch_write_item(RequestItems={name: puts("r", 3)})
        keys = [key("r", sk) for sk in range(6)]  # three items of one read unit, three missing keys
        spec = {"Keys": keys, "ConsistentRead": True, "ProjectionExpression": "pk, sk"}
        response = server.ddb.batch_get_item(RequestItems={name: spec}, ReturnConsumedCapacity="TOTAL")
        assert response["Responses"] == {name: keys[:2]}
        assert response["UnprocessedKeys"] == {name: {**spec, "Keys": keys[2:]}}
        assert response["ConsumedCapacity"] == [{"TableName": name, "CapacityUnits": 2.0}]
        assert partitions(server, name)["partitions"][0]["throttled"]["read"] == 4

        response = error(lambda: server.ddb.batch_get_item(RequestItems={name: {"Keys": keys[2:]}}))
        assert response["Error"] == {"Code": "ProvisionedThroughputExceededException", "Message": PTEE_TABLE}
        assert response["ThrottlingReasons"] == [
            {"reason": "TableReadProvisionedThroughputExceeded", "resource": ARN + name}
        ]

        server.advance(1)
        again = server.ddb.batch_get_item(RequestItems={name: {"Keys": keys[2:], "ConsistentRead": False}})
        assert again["Responses"][name] == [item("r", 2)]  # eventually consistent: four keys for two units
        assert again["UnprocessedKeys"] == {}

    def test_on_demand_nothing_processed_is_throttling_exception(self, server: ServerProcess) -> None:
        name = keyed_table(server)  # on demand: each partition at most 60 RCU here
        big = {**key("big", 0), "blob": {"S": "b" * (230 * 1024)}}  # 58 units read strongly consistent
        server.ddb.put_item(TableName=name, Item=big)
        request = {name: {"Keys": [key("big", 0)], "ConsistentRead": True, "ProjectionExpression": "pk"}}
        for _ in range(2):  # the second starts while the partition is under its maximum (2 units left)
            assert server.ddb.batch_get_item(RequestItems=request)["Responses"] == {name: [{"pk": {"S": "big"}}]}
        response = error(lambda: server.ddb.batch_get_item(RequestItems=request))
        assert response["Error"] == {"Code": "ThrottlingException", "Message": THROTTLED_ON_DEMAND}
        assert response["throttlingReasons"] == [
            {"reason": "TableReadKeyRangeThroughputExceeded", "resource": ARN + name}
        ]

    def test_keys_of_other_partitions_are_still_read(self, server: ServerProcess) -> None:
        name = keyed_table(server, 8, 80)  # five partitions of 1.6 RCU: one strongly consistent read each
        hot, cold = spread_keys(server, name, 2)
        keys = [key(hot, sk) for sk in range(4)] + [key(cold, 0)]
        response = server.ddb.batch_get_item(RequestItems={name: {"Keys": keys, "ConsistentRead": True}})
        assert response["UnprocessedKeys"][name]["Keys"] == keys[1:4]


# ---------------------------------------------------------------- transactions


class TestTransactWriteItems:
    def test_throttled_item_cancels_with_the_reason_at_its_position(self, server: ServerProcess) -> None:
        name = keyed_table(server, 1, 80)  # four partitions of 20 WCU
        hot, a, b = spread_keys(server, name, 3)
        assert server.ddb.batch_write_item(RequestItems={name: puts(hot, 20)})["UnprocessedItems"] == {}
        before = consumed(server, name, "write")
        items = [
            {"Put": {"TableName": name, "Item": item(a, 0)}},
            {"Update": {"TableName": name, "Key": key(hot, 0), "UpdateExpression": "SET n = :n",
                        "ExpressionAttributeValues": {":n": {"N": "1"}}}},
            {"Put": {"TableName": name, "Item": item(b, 0)}},
        ]  # fmt: skip
        response = error(lambda: server.ddb.transact_write_items(TransactItems=items))
        assert response["Error"]["Code"] == "TransactionCanceledException"
        assert response["Error"]["Message"] == (
            "Transaction cancelled, please refer cancellation reasons for specific reasons "
            "[None, ProvisionedThroughputExceeded, None]"
        )
        assert response["CancellationReasons"] == [
            NONE,
            {"Code": "ProvisionedThroughputExceeded", "Message": PTEE_TABLE},
            NONE,
        ]
        assert consumed(server, name, "write") == before  # what the other items took was given back
        assert partitions(server, name)["item_count"] == 20

        server.advance(1)
        server.ddb.transact_write_items(TransactItems=items)
        after = consumed(server, name, "write")
        changes = sorted(round(x - y, 3) for x, y in zip(after, before, strict=True))
        assert changes == [0, 2, 2, 2]  # one write unit each, doubled: prepare and commit

    def test_transactional_cost_is_charged_at_the_real_size(self, server: ServerProcess) -> None:
        name = keyed_table(server, 2, 20)
        big = {**key("t", 0), "blob": {"S": "b" * 3000}}  # 3 write units
        server.ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": name, "Item": big}},
                {"ConditionCheck": {"TableName": name, "Key": key("t", 1),
                                    "ConditionExpression": "attribute_not_exists(pk)"}},
            ]
        )  # fmt: skip
        assert consumed(server, name, "write") == [2 * 3 + 2 * 1]
        server.ddb.transact_write_items(TransactItems=[{"Delete": {"TableName": name, "Key": key("t", 0)}}])
        assert consumed(server, name, "write") == [8 + 2 * 3]  # a delete costs the size of the item it removed
        assert partitions(server, name)["item_count"] == 0

    def test_on_demand_throttling_error(self, server: ServerProcess) -> None:
        name = keyed_table(server)  # on demand: each partition at most 20 WCU here
        assert len(server.ddb.batch_write_item(RequestItems={name: puts("hot", 21)})["UnprocessedItems"][name]) == 1
        items = [{"Put": {"TableName": name, "Item": item("hot", 100)}}]
        response = error(lambda: server.ddb.transact_write_items(TransactItems=items))
        assert response["CancellationReasons"] == [{"Code": "ThrottlingError", "Message": THROTTLED_ON_DEMAND}]

    def test_a_throttled_gsi_cancels_with_the_index_text(self, server: ServerProcess) -> None:
        name = table_with_gsi(server)  # the index takes 2 WCU a second: one transactional write
        put = {"Put": {"TableName": name, "Item": {**item("g", 0), "flag": {"S": "False"}}}}
        server.ddb.transact_write_items(TransactItems=[put])
        put["Put"]["Item"] = {**item("g", 1), "flag": {"S": "False"}}
        response = error(lambda: server.ddb.transact_write_items(TransactItems=[put]))
        assert response["CancellationReasons"] == [{"Code": "ProvisionedThroughputExceeded", "Message": PTEE_INDEX}]


class TestTransactGetItems:
    def test_throttled_read_cancels_and_gives_back_the_others(self, server: ServerProcess) -> None:
        name = keyed_table(server, 2, 20)  # one partition of 2 RCU: one transactional read of one unit
        gets = [{"Get": {"TableName": name, "Key": key("g", sk)}} for sk in range(2)]
        response = error(lambda: server.ddb.transact_get_items(TransactItems=gets))
        assert response["CancellationReasons"] == [
            NONE,
            {"Code": "ProvisionedThroughputExceeded", "Message": PTEE_TABLE},
        ]
        assert consumed(server, name, "read") == [0]
        assert server.ddb.transact_get_items(TransactItems=gets[:1])["Responses"] == [{}]
        assert consumed(server, name, "read") == [2]  # a strongly consistent read unit, doubled


# ---------------------------------------------------------------- report mode


def test_report_mode_throttles_none_of_them() -> None:
    server = ServerProcess(
        "--manual-clock", "--capacity", "report", "--partition-max-rcu", "60", "--partition-max-wcu", "20"
    )
    try:
        name = keyed_table(server, 2, 20)
        assert server.ddb.batch_write_item(RequestItems={name: puts("hot", 25)})["UnprocessedItems"] == {}
        keys = [key("hot", sk) for sk in range(25)]
        response = server.ddb.batch_get_item(RequestItems={name: {"Keys": keys, "ConsistentRead": True}})
        assert len(response["Responses"][name]) == 25 and response["UnprocessedKeys"] == {}
        server.ddb.transact_write_items(TransactItems=[{"Put": {"TableName": name, "Item": item("hot", 99)}}])
        gets = [{"Get": {"TableName": name, "Key": k}} for k in keys[:3]]
        assert len(server.ddb.transact_get_items(TransactItems=gets)["Responses"]) == 3
        partition = partitions(server, name)["partitions"][0]
        assert partition["items"] == 26
        assert partition["throttled"] == {"read": 23 + 3, "write": 5 + 1}
    finally:
        server.stop()
