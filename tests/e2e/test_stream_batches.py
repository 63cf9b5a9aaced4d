"""The changes of a BatchWriteItem or a TransactWriteItems are stored as one change log record (a group), and a
stream reader still sees each change as a record of its own: read a few at a time, from a sequence number inside
the batch, and again after kill -9 and a restart, with nothing missing, repeated or out of order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.server_process import ServerProcess
from tests.e2e.stream_reader import all_shards, read_shard, stream_table


def _write(server: ServerProcess, name: str) -> list[tuple[str, str]]:
    """A batch of 25 new items, a transaction overwriting 10 of them: the (event, key) each shard should show."""
    server.ddb.batch_write_item(
        RequestItems={name: [{"PutRequest": {"Item": {"pk": {"S": f"k{i:02d}"}, "v": {"N": "1"}}}} for i in range(25)]}
    )
    server.ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": name, "Item": {"pk": {"S": f"k{i:02d}"}, "v": {"N": "2"}}}} for i in range(10)
        ]
    )
    return [("INSERT", f"k{i:02d}") for i in range(25)] + [("MODIFY", f"k{i:02d}") for i in range(10)]


def _read(server: ServerProcess, arn: str, limit: int) -> dict[str, list[dict[str, Any]]]:
    return {
        s["ShardId"]: read_shard(server.streams, arn, s["ShardId"], None, limit)
        for s in all_shards(server.streams, arn)
    }


def _events(records: dict[str, list[dict[str, Any]]]) -> list[tuple[str, str]]:
    every = [r for shard in records.values() for r in shard]
    every.sort(key=lambda r: int(r["dynamodb"]["SequenceNumber"]))
    return [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"]) for r in every]


def _check(records: dict[str, list[dict[str, Any]]], expected: list[tuple[str, str]]) -> None:
    assert _events(records) == expected
    for shard in records.values():
        numbers = [int(r["dynamodb"]["SequenceNumber"]) for r in shard]
        assert numbers == sorted(set(numbers))
    assert len({r["dynamodb"]["SequenceNumber"] for shard in records.values() for r in shard}) == len(expected)


def test_a_batch_and_a_transaction_read_change_by_change_across_a_restart(tmp_path: Path) -> None:
    server = ServerProcess(data_dir=tmp_path)
    try:
        name, arn = stream_table(server)
        expected = _write(server, name)
        first = _read(server, arn, 3)
        _check(first, expected)
        assert _read(server, arn, 1000) == first
        shard, records = max(first.items(), key=lambda entry: len(entry[1]))
        assert len(records) >= 3  # eight shards on demand: one of them holds at least three of the 35 changes
        middle = records[1]["dynamodb"]["SequenceNumber"]
        assert read_shard(server.streams, arn, shard, middle, 2) == records[2:]
    finally:
        server.kill()  # kill -9: acknowledged writes and their records survive
    server = ServerProcess(data_dir=tmp_path)
    try:
        again = _read(server, arn, 4)
        assert read_shard(server.streams, arn, shard, middle, 1) == records[2:]
        server.ddb.batch_write_item(
            RequestItems={name: [{"DeleteRequest": {"Key": {"pk": {"S": f"k{i:02d}"}}}} for i in range(20, 25)]}
        )
        after = _read(server, arn, 5)
    finally:
        server.stop()
    assert again == first
    _check(after, expected + [("REMOVE", f"k{i:02d}") for i in range(20, 25)])
