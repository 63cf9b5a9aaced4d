"""The DynamoDB Streams API end to end through boto3's ``dynamodbstreams`` client: every call, its errors, and the
records of each kind of write in each view type (a server of its own, on a manual clock)."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import pytest

from tests.e2e.conftest import create_table, error_of, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.stream_reader import stream_records, stream_table

VIEW_TYPES = ["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]


server = server_fixture("--manual-clock")


def item(pk: str, **values: str) -> dict[str, Any]:
    return {"pk": {"S": pk}} | {k: {"S": v} for k, v in values.items()}


def events(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"]) for r in records]


# ---- ListStreams -------------------------------------------------------------------------------------------------
def test_list_streams_pages_through_arn_order(server: ServerProcess) -> None:
    arns = sorted(stream_table(server)[1] for _ in range(3))
    listed: list[dict[str, Any]] = []
    start: dict[str, Any] = {}
    while True:
        page = server.streams.list_streams(Limit=1, **start)
        listed.extend(page["Streams"])
        if "LastEvaluatedStreamArn" not in page:
            break
        assert page["LastEvaluatedStreamArn"] == page["Streams"][-1]["StreamArn"]
        start = {"ExclusiveStartStreamArn": page["LastEvaluatedStreamArn"]}
    mine = [s for s in listed if s["StreamArn"] in arns]
    assert [s["StreamArn"] for s in mine] == arns
    for s in mine:
        assert (
            s["StreamArn"]
            == f"arn:aws:dynamodb:us-east-1:000000000000:table/{s['TableName']}/stream/{s['StreamLabel']}"
        )
    assert [s["StreamArn"] for s in listed] == sorted(s["StreamArn"] for s in listed)


def test_list_streams_of_one_table(server: ServerProcess) -> None:
    name, arn = stream_table(server)
    assert server.streams.list_streams(TableName=name)["Streams"] == [
        {"StreamArn": arn, "TableName": name, "StreamLabel": arn.rsplit("/", 1)[1]}
    ]
    plain = create_table(server.ddb)
    assert server.streams.list_streams(TableName=plain)["Streams"] == []


def test_list_streams_errors(server: ServerProcess) -> None:
    missing = unique_name()
    assert error_of(lambda: server.streams.list_streams(TableName=missing)) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Table: {missing} not found",
    )
    for limit, constraint in ((0, "greater than or equal to 1"), (101, "less than or equal to 100")):
        assert error_of(partial(server.streams.list_streams, Limit=limit)) == (
            "ValidationException",
            "1 validation error detected: Value at 'Limit' failed to satisfy constraint: "
            f"Member must have value {constraint}",
        )


def test_list_streams_start_arn_errors(server: ServerProcess) -> None:
    assert error_of(
        lambda: server.streams.list_streams(ExclusiveStartStreamArn="arn:aws:dynamodb:us-east-1:0:table/xyz/stream/x")
    ) == (
        "ValidationException",
        "Invalid ExclusiveStartStreamArn",
    )
    for bad, constraint in (("a" * 36, "greater than or equal to 37"), ("a" * 1025, "less than or equal to 1024")):
        assert error_of(partial(server.streams.list_streams, ExclusiveStartStreamArn=bad)) == (
            "ValidationException",
            f"1 validation error detected: Value at 'ExclusiveStartStreamArn' failed to satisfy constraint: Member "
            f"must have length {constraint}",
        )
        assert error_of(partial(server.streams.list_streams, ExclusiveStartStreamArn=bad, Limit=0)) == (
            "ValidationException",  # the first failure in the service model's order
            "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value "
            "greater than or equal to 1",
        )
    _, arn = stream_table(server)
    after = server.streams.list_streams(ExclusiveStartStreamArn=arn)["Streams"]  # a well-formed ARN is a position
    assert all(stream["StreamArn"] > arn for stream in after)


# ---- DescribeStream ----------------------------------------------------------------------------------------------
def test_describe_stream(server: ServerProcess) -> None:
    name, arn = stream_table(server, "NEW_IMAGE")
    table = server.ddb.describe_table(TableName=name)["Table"]
    description = server.streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert description["StreamArn"] == arn
    assert description["StreamLabel"] == table["LatestStreamLabel"]
    assert description["StreamStatus"] == "ENABLED"
    assert description["StreamViewType"] == "NEW_IMAGE"
    assert description["TableName"] == name
    assert description["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    assert abs(description["CreationRequestDateTime"].timestamp() - table["CreationDateTime"].timestamp()) < 1
    shards = description["Shards"]
    assert shards, "an enabled stream shows its shards before its first change"
    for shard in shards:
        assert re.fullmatch(r"shardId-\d{20}-[0-9a-f]{8}", shard["ShardId"])
        assert "ParentShardId" not in shard
        starting = shard["SequenceNumberRange"]["StartingSequenceNumber"]
        assert starting.isdigit() and len(starting) >= 21
        assert "EndingSequenceNumber" not in shard["SequenceNumberRange"]
    assert "LastEvaluatedShardId" not in description


def test_describe_stream_pages_shards(server: ServerProcess) -> None:
    _, arn = stream_table(server)
    every = server.streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    assert len(every) > 1
    first = server.streams.describe_stream(StreamArn=arn, Limit=1)["StreamDescription"]
    assert first["Shards"] == every[:1]
    assert first["LastEvaluatedShardId"] == every[0]["ShardId"]
    rest = server.streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=every[0]["ShardId"])
    assert rest["StreamDescription"]["Shards"] == every[1:]


def test_describe_stream_errors(server: ServerProcess) -> None:
    _, arn = stream_table(server)
    assert error_of(lambda: server.streams.describe_stream(StreamArn="arn:aws:dynamodb:us-east-1:0:table/xyz/s")) == (
        "ValidationException",
        "Invalid StreamArn",
    )
    unknown = arn.rsplit("/", 1)[0] + "/2000-01-01T00:00:00.000"
    assert error_of(lambda: server.streams.describe_stream(StreamArn=unknown)) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Stream: {unknown} not found",
    )
    assert error_of(lambda: server.streams.describe_stream(StreamArn=arn, Limit=101)) == (
        "ValidationException",
        "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value "
        "less than or equal to 100",
    )
    assert error_of(lambda: server.streams.describe_stream(StreamArn="short")) == (
        "ValidationException",
        "1 validation error detected: Value at 'StreamArn' failed to satisfy constraint: "
        "Member must have length greater than or equal to 37",
    )
    for shard_id in ("shardId-0000000000000000000x-0000000a", "s" * 28):
        assert error_of(partial(server.streams.describe_stream, StreamArn=arn, ExclusiveStartShardId=shard_id)) == (
            "ValidationException",
            "Invalid ShardId",
        )
        child_filter = {"Type": "CHILD_SHARDS", "ShardId": shard_id}
        assert error_of(partial(server.streams.describe_stream, StreamArn=arn, ShardFilter=child_filter)) == (
            "ValidationException",
            "Invalid ShardId",
        )
    for shard_id, constraint in (("s" * 27, "greater than or equal to 28"), ("s" * 66, "less than or equal to 65")):
        assert error_of(partial(server.streams.describe_stream, StreamArn=arn, ExclusiveStartShardId=shard_id)) == (
            "ValidationException",
            f"1 validation error detected: Value at 'ExclusiveStartShardId' failed to satisfy constraint: Member "
            f"must have length {constraint}",
        )


# ---- records of each kind of write -------------------------------------------------------------------------------
def test_put_update_delete_records(server: ServerProcess) -> None:
    name, arn = stream_table(server)
    ddb = server.ddb
    ddb.put_item(TableName=name, Item=item("a", v="1"))
    ddb.update_item(
        TableName=name,
        Key={"pk": {"S": "a"}},
        UpdateExpression="SET v = :v",
        ExpressionAttributeValues={":v": {"S": "2"}},
    )
    ddb.delete_item(TableName=name, Key={"pk": {"S": "a"}})
    records = stream_records(server, arn)
    assert events(records) == [("INSERT", "a"), ("MODIFY", "a"), ("REMOVE", "a")]
    insert, modify, remove = records
    assert insert["dynamodb"]["NewImage"] == item("a", v="1") and "OldImage" not in insert["dynamodb"]
    assert modify["dynamodb"]["OldImage"] == item("a", v="1")
    assert modify["dynamodb"]["NewImage"] == item("a", v="2")
    assert remove["dynamodb"]["OldImage"] == item("a", v="2") and "NewImage" not in remove["dynamodb"]
    for record in records:
        assert record["eventVersion"] == "1.1"
        assert record["eventSource"] == "aws:dynamodb"
        assert record["awsRegion"] == "us-east-1"
        assert "userIdentity" not in record
        assert record["dynamodb"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
        assert record["dynamodb"]["Keys"] == {"pk": {"S": "a"}}
        assert abs(record["dynamodb"]["ApproximateCreationDateTime"].timestamp() - server.now()) < 2
    assert len({r["eventID"] for r in records}) == 3
    sequence_numbers = [r["dynamodb"]["SequenceNumber"] for r in records]
    assert sequence_numbers == sorted(sequence_numbers) and len(set(sequence_numbers)) == 3
    assert [r["dynamodb"]["SizeBytes"] for r in records] == [8, 13, 8]  # keys (3 bytes) and images (5 each)


def test_batch_and_transaction_records(server: ServerProcess) -> None:
    name, arn = stream_table(server)
    ddb = server.ddb
    ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": item(k, v="1")}} for k in ("a", "b")]})
    ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": name, "Item": item("c", v="1")}},
            {"Delete": {"TableName": name, "Key": {"pk": {"S": "a"}}}},
            {
                "Update": {
                    "TableName": name,
                    "Key": {"pk": {"S": "b"}},
                    "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": {"S": "2"}},
                }
            },
            {
                "ConditionCheck": {
                    "TableName": name,
                    "Key": {"pk": {"S": "d"}},
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
        ]
    )
    got = sorted(events(stream_records(server, arn)))
    assert got == [("INSERT", "a"), ("INSERT", "b"), ("INSERT", "c"), ("MODIFY", "b"), ("REMOVE", "a")]


def test_a_write_that_changes_nothing_writes_no_record(server: ServerProcess) -> None:
    name, arn = stream_table(server)
    ddb = server.ddb
    ddb.put_item(TableName=name, Item=item("a", v="1"))
    ddb.put_item(TableName=name, Item=item("a", v="1"))  # the same item again
    ddb.delete_item(TableName=name, Key={"pk": {"S": "missing"}})
    ddb.update_item(
        TableName=name,
        Key={"pk": {"S": "a"}},
        UpdateExpression="SET v = :v",
        ExpressionAttributeValues={":v": {"S": "1"}},
    )
    assert events(stream_records(server, arn)) == [("INSERT", "a")]


def test_an_overwrite_with_the_same_values_written_otherwise_writes_no_record(server: ServerProcess) -> None:
    name, arn = stream_table(server)
    ddb = server.ddb
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "n": {"N": "1"}, "s": {"SS": ["x", "y"]}})
    # The same values in other words: attributes in another order, the set's members reordered.
    ddb.put_item(TableName=name, Item={"s": {"SS": ["y", "x"]}, "n": {"N": "1.0"}, "pk": {"S": "a"}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "n": {"N": "2"}, "s": {"SS": ["x", "y"]}})
    records = stream_records(server, arn)
    assert events(records) == [("INSERT", "a"), ("MODIFY", "a")]
    modify = records[1]["dynamodb"]
    assert modify["OldImage"]["n"] == {"N": "1"} and sorted(modify["OldImage"]["s"]["SS"]) == ["x", "y"]
    assert modify["NewImage"] == {"pk": {"S": "a"}, "n": {"N": "2"}, "s": {"SS": ["x", "y"]}}


@pytest.mark.parametrize("view_type", VIEW_TYPES)
def test_images_by_view_type(server: ServerProcess, view_type: str) -> None:
    name, arn = stream_table(server, view_type)
    server.ddb.put_item(TableName=name, Item=item("a", v="1"))
    server.ddb.put_item(TableName=name, Item=item("a", v="2"))
    insert, modify = (r["dynamodb"] for r in stream_records(server, arn))
    new, old = view_type in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES"), view_type in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES")
    assert ("NewImage" in modify, "OldImage" in modify) == (new, old)
    assert ("NewImage" in insert, "OldImage" in insert) == (new, False)
    assert modify["StreamViewType"] == view_type
    assert modify["Keys"] == {"pk": {"S": "a"}}
    assert modify["SizeBytes"] == 3 + 5 * (new + old)  # keys (3 bytes) and each image (5)


def test_a_ttl_deletion_is_the_service_s(server: ServerProcess) -> None:
    name, arn = stream_table(server)
    server.ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    now = int(server.now())
    server.ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "exp": {"N": str(now + 100)}})
    server.advance(101)
    deadline = 200
    records = stream_records(server, arn)
    while len(records) < 2 and deadline:
        records = stream_records(server, arn)
        deadline -= 1
    assert events(records) == [("INSERT", "a"), ("REMOVE", "a")]
    assert records[1]["userIdentity"] == {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}
    assert "userIdentity" not in records[0]
