"""Shard iterators and GetRecords end to end: each iterator type, paging, expiry (15 minutes), retention
(24 hours), disabling and re-enabling a stream (a server of its own, on a manual clock)."""

from __future__ import annotations

import base64
import struct
import time
import zlib
from functools import partial
from typing import Any

from botocore.exceptions import ClientError

from tests.e2e.conftest import error_of
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.stream_reader import all_shards, stream_records, stream_table

# A server for each test: they move its clock by hours.
server = server_fixture("--manual-clock", scope="function")


def put(server: ServerProcess, name: str, *keys: str) -> None:
    for key in keys:
        server.ddb.put_item(TableName=name, Item={"pk": {"S": key}, "v": {"S": "x"}})


def one_shard_table(server: ServerProcess) -> tuple[str, str, str]:
    """A provisioned table (one partition, so one shard): (name, stream ARN, shard id)."""
    name, arn = stream_table(server, "KEYS_ONLY", wcu=5)
    (shard,) = all_shards(server.streams, arn)
    return name, arn, shard["ShardId"]


def iterator(server: ServerProcess, arn: str, shard: str, kind: str, seq: str | None = None) -> str:
    extra = {} if seq is None else {"SequenceNumber": seq}
    result: str = server.streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType=kind, **extra)[
        "ShardIterator"
    ]
    return result


def keys(page: dict[str, Any]) -> list[str]:
    return [r["dynamodb"]["Keys"]["pk"]["S"] for r in page["Records"]]


def test_iterator_types(server: ServerProcess) -> None:
    name, arn, shard = one_shard_table(server)
    put(server, name, "a", "b", "c")
    records = server.streams.get_records(ShardIterator=iterator(server, arn, shard, "TRIM_HORIZON"))["Records"]
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in records] == ["a", "b", "c"]
    second = records[1]["dynamodb"]["SequenceNumber"]
    at = server.streams.get_records(ShardIterator=iterator(server, arn, shard, "AT_SEQUENCE_NUMBER", second))
    assert keys(at) == ["b", "c"]
    after = server.streams.get_records(ShardIterator=iterator(server, arn, shard, "AFTER_SEQUENCE_NUMBER", second))
    assert keys(after) == ["c"]
    latest = iterator(server, arn, shard, "LATEST")
    page = server.streams.get_records(ShardIterator=latest)
    assert keys(page) == []
    put(server, name, "d")
    page = server.streams.get_records(ShardIterator=page["NextShardIterator"])
    assert keys(page) == ["d"]
    assert keys(server.streams.get_records(ShardIterator=page["NextShardIterator"])) == []


def test_limit_pages_records(server: ServerProcess) -> None:
    name, arn, shard = one_shard_table(server)
    put(server, name, *(f"k{i}" for i in range(5)))
    it: str | None = iterator(server, arn, shard, "TRIM_HORIZON")
    seen: list[str] = []
    sizes = []
    while it is not None:
        page = server.streams.get_records(ShardIterator=it, Limit=2)
        if not page["Records"]:
            break
        sizes.append(len(page["Records"]))
        seen.extend(keys(page))
        it = page["NextShardIterator"]
    assert sizes == [2, 2, 1]
    assert seen == [f"k{i}" for i in range(5)]


def test_get_records_errors(server: ServerProcess) -> None:
    _, arn, shard = one_shard_table(server)
    it = iterator(server, arn, shard, "TRIM_HORIZON")
    streams = server.streams
    assert error_of(lambda: streams.get_records(ShardIterator="not an iterator")) == (
        "ValidationException",
        "Invalid ShardIterator",
    )
    assert error_of(lambda: streams.get_records(ShardIterator=it[:-2] + "AA")) == (
        "ValidationException",
        "Invalid ShardIterator",
    )
    for limit, constraint in ((0, "greater than or equal to 1"), (1001, "less than or equal to 1000")):
        assert error_of(partial(streams.get_records, ShardIterator=it, Limit=limit)) == (
            "ValidationException",
            "1 validation error detected: Value at 'Limit' failed to satisfy constraint: "
            f"Member must have value {constraint}",
        )
    server.advance(15 * 60 + 1)
    code, message = error_of(lambda: streams.get_records(ShardIterator=it))
    assert code == "ExpiredIteratorException"
    assert message.startswith("Iterator expired. The iterator was created at time ")
    assert message.endswith("which is further in the future than the tolerated delay of 900000 milliseconds.")


def test_get_shard_iterator_errors(server: ServerProcess) -> None:
    _, arn, shard = one_shard_table(server)
    streams = server.streams
    other = shard[:-8] + "0000ffff"
    assert error_of(lambda: streams.get_shard_iterator(StreamArn=arn, ShardId=other, ShardIteratorType="LATEST")) == (
        "ResourceNotFoundException",
        "Requested resource not found: Shard does not exist",
    )
    for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
        assert error_of(partial(iterator, server, arn, shard, kind)) == (
            "ValidationException",
            f"Must specify a sequence number with {kind} iterator type",
        )
    assert error_of(lambda: iterator(server, arn, shard, "LATEST", "1" * 21)) == (
        "ValidationException",
        "Sequence number must not be specified with LATEST iterator type",
    )
    code, message = error_of(lambda: iterator(server, arn, shard, "AT_SEQUENCE_NUMBER", "0" * 21))
    assert (code, message) == ("ValidationException", f"Invalid SequenceNumber {'0' * 21} for shard {shard}")
    assert error_of(
        lambda: streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="FROM_START")
    ) == (
        "ValidationException",
        "1 validation error detected: Value at 'ShardIteratorType' failed to satisfy constraint: Member must "
        "satisfy enum value set: [TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER, "
        "AT_TIMESTAMP]",
    )


def test_sequence_numbers_past_the_shard_are_invalid(server: ServerProcess) -> None:
    """Any sequence number of the model's length (21 to 40 digits) that the shard does not hold is a
    ValidationException, however large: one past the newest record, past 64 bits, forty nines."""
    name, arn, shard = one_shard_table(server)
    put(server, name, "a")
    (record,) = stream_records(server, arn)
    newest = int(record["dynamodb"]["SequenceNumber"])
    assert keys(
        server.streams.get_records(ShardIterator=iterator(server, arn, shard, "AT_SEQUENCE_NUMBER", str(newest)))
    ) == ["a"]
    for seq in (str(newest + 1), str(10**20 + 2**63), str(2**70), "9" * 21, "1" + "0" * 39, "9" * 40):
        for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
            assert error_of(partial(iterator, server, arn, shard, kind, seq)) == (
                "ValidationException",
                f"Invalid SequenceNumber {seq} for shard {shard}",
            )


def test_forged_iterators_are_invalid(server: ServerProcess) -> None:
    """An iterator whose checksum holds but whose position or time this server never issues (the checksum is no
    signature) is an invalid iterator, not a failure of the server."""
    _, arn, shard = one_shard_table(server)
    genuine = iterator(server, arn, shard, "TRIM_HORIZON")
    stream_arn, _, payload = genuine.rpartition("|1|")
    number = struct.unpack(">IqdI", base64.urlsafe_b64decode(payload))[0]
    for after, issued in ((-2, 0.0), (-(2**63), 0.0), (0, -1e300), (0, float("-inf")), (0, float("nan"))):
        body = struct.pack(">Iqd", number, after, issued)
        checksum = zlib.crc32(body, zlib.crc32(stream_arn.encode()))
        forged = stream_arn + "|1|" + base64.urlsafe_b64encode(body + checksum.to_bytes(4, "big")).decode()
        assert error_of(partial(server.streams.get_records, ShardIterator=forged)) == (
            "ValidationException",
            "Invalid ShardIterator",
        )


def test_disable_keeps_the_old_stream_and_enable_makes_a_new_one(server: ServerProcess) -> None:
    name, old_arn, _ = one_shard_table(server)
    put(server, name, "a")
    server.ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    put(server, name, "b")  # no stream: no record
    old = server.streams.describe_stream(StreamArn=old_arn)["StreamDescription"]
    assert old["StreamStatus"] == "DISABLED"
    assert old["StreamViewType"] == "KEYS_ONLY"
    (shard,) = old["Shards"]
    assert "EndingSequenceNumber" in shard["SequenceNumberRange"]
    page = server.streams.get_records(ShardIterator=iterator(server, old_arn, shard["ShardId"], "TRIM_HORIZON"))
    assert keys(page) == ["a"]
    assert "NextShardIterator" not in page  # a closed shard read to its end
    server.ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    new_arn = server.ddb.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    assert new_arn > old_arn  # a later label, though the (manual) clock has not moved
    put(server, name, "c")
    listed = server.streams.list_streams(TableName=name)["Streams"]
    assert sorted(s["StreamArn"] for s in listed) == sorted([old_arn, new_arn])
    new = server.streams.describe_stream(StreamArn=new_arn)["StreamDescription"]
    assert (new["StreamStatus"], new["StreamViewType"]) == ("ENABLED", "NEW_IMAGE")
    (new_shard,) = new["Shards"]
    page = server.streams.get_records(ShardIterator=iterator(server, new_arn, new_shard["ShardId"], "TRIM_HORIZON"))
    assert keys(page) == ["c"]


def test_retention_trims_records_and_ended_streams(server: ServerProcess) -> None:
    name, arn, shard = one_shard_table(server)
    put(server, name, "a")
    first = server.streams.get_records(ShardIterator=iterator(server, arn, shard, "TRIM_HORIZON"))["Records"][0]
    early = iterator(server, arn, shard, "TRIM_HORIZON")
    server.advance(24 * 3600 - 60)
    put(server, name, "b")
    early_again = iterator(server, arn, shard, "TRIM_HORIZON")  # at "a", which is trimmed before it is used
    server.advance(120)  # "a" is past the retention period, "b" is not
    first_seq = first["dynamodb"]["SequenceNumber"]
    for _ in range(400):  # the trim runs in the background, every half second
        try:
            iterator(server, arn, shard, "AT_SEQUENCE_NUMBER", first_seq)
        except ClientError:
            break
        time.sleep(0.01)
    # "b" went to the shard that succeeded the first one four hours on (a rollover)
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in stream_records(server, arn)] == ["b"]
    assert error_of(lambda: server.streams.get_records(ShardIterator=early_again)) == (
        "TrimmedDataAccessException",
        "The data you are trying to access has been trimmed",
    )
    assert error_of(lambda: iterator(server, arn, shard, "AT_SEQUENCE_NUMBER", first_seq)) == (
        "TrimmedDataAccessException",
        "The data you are trying to access has been trimmed",
    )
    assert early  # older than 15 minutes: expired before it could be trimmed
    assert error_of(lambda: server.streams.get_records(ShardIterator=early))[0] == "ExpiredIteratorException"
    server.ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    assert len(server.streams.list_streams(TableName=name)["Streams"]) == 1
    server.advance(24 * 3600 + 1)
    assert server.streams.list_streams(TableName=name)["Streams"] == []
    assert error_of(lambda: server.streams.describe_stream(StreamArn=arn)) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Stream: {arn} not found",
    )


def test_a_deleted_table_s_stream_stays_readable_for_24_hours(server: ServerProcess) -> None:
    name, arn, shard = one_shard_table(server)
    put(server, name, "a")
    server.ddb.delete_table(TableName=name)
    server.ddb.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    listed = server.streams.list_streams(TableName=name)["Streams"]
    assert [s["StreamArn"] for s in listed] == [arn]
    description = server.streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert (description["StreamStatus"], description["TableName"]) == ("DISABLED", name)
    page = server.streams.get_records(ShardIterator=iterator(server, arn, shard, "TRIM_HORIZON"))
    assert keys(page) == ["a"]
    assert "NextShardIterator" not in page
    server.advance(24 * 3600 + 1)
    assert error_of(lambda: server.streams.list_streams(TableName=name)) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Table: {name} not found",
    )
    assert error_of(lambda: server.streams.describe_stream(StreamArn=arn))[0] == "ResourceNotFoundException"
