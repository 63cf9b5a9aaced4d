"""A consumer that follows shard lineage (parents before children) sees every change of a random workload exactly
once, in order per key, across partition splits and across a restart after kill -9."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from tests.e2e.stream_reader import Consumer, Server

KEYS = [f"k{i:02d}" for i in range(40)]
PAD = "x" * 150  # partitions of 2,000 bytes split after a dozen items


Expected = dict[str, list[tuple[str, dict[str, Any] | None]]]  # key -> (eventName, NewImage) in order


def workload(server: Server, name: str, rng: random.Random, count: int, state: dict[str, Any], out: Expected) -> None:
    """``count`` random puts, updates and deletes; what each must have written to the stream goes to ``out``."""
    for _ in range(count):
        key = rng.choice(KEYS)
        old = state.get(key)
        roll = rng.random()
        new: dict[str, Any] | None
        if roll < 0.45:
            new = {"pk": {"S": key}, "v": {"N": str(rng.randrange(3))}, "pad": {"S": PAD}}
            server.ddb.put_item(TableName=name, Item=new)
        elif roll < 0.8:
            value = {"N": str(rng.randrange(3))}
            server.ddb.update_item(
                TableName=name,
                Key={"pk": {"S": key}},
                UpdateExpression="SET v = :v",
                ExpressionAttributeValues={":v": value},
            )
            new = ({} if old is None else dict(old)) | {"pk": {"S": key}, "v": value}
        else:
            server.ddb.delete_item(TableName=name, Key={"pk": {"S": key}})
            new = None
        if old == new:
            continue  # nothing changed: no record
        event = "INSERT" if old is None else "REMOVE" if new is None else "MODIFY"
        out.setdefault(key, []).append((event, new))
        if new is None:
            state.pop(key, None)
        else:
            state[key] = new


def seen(consumer: Consumer) -> Expected:
    out: Expected = {}
    for record in consumer.records:
        data = record["dynamodb"]
        out.setdefault(data["Keys"]["pk"]["S"], []).append((record["eventName"], data.get("NewImage")))
    return out


def test_every_change_once_in_order_across_splits_and_a_restart(tmp_path: Path) -> None:
    rng = random.Random(7)
    args = ("--partition-size-limit", "2000")
    server = Server(*args, data_dir=tmp_path)
    state: dict[str, Any] = {}
    expected: Expected = {}
    try:
        name, arn = server.stream_table("NEW_AND_OLD_IMAGES", wcu=5)
        consumer = Consumer(arn)
        for _ in range(6):  # reading open shards as they fill, close and split
            workload(server, name, rng, 25, state, expected)
            consumer.poll(server.streams)
        workload(server, name, rng, 150, state, expected)  # left unread until after the restart
    finally:
        server.process.kill()  # kill -9: every acknowledged write and its record survive
    server = Server(*args, data_dir=tmp_path)
    try:
        workload(server, name, rng, 150, state, expected)
        consumer.poll(server.streams)
        consumer.poll(server.streams)  # nothing new: nothing twice
        shards = server.streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        parent = next(s["ParentShardId"] for s in shards if "ParentShardId" in s)
        children = server.streams.describe_stream(
            StreamArn=arn, ShardFilter={"Type": "CHILD_SHARDS", "ShardId": parent}
        )["StreamDescription"]["Shards"]
    finally:
        server.process.stop()
    assert sum("ParentShardId" in s for s in shards) >= 4, "the partitions split: shards have children"
    assert children == [s for s in shards if s.get("ParentShardId") == parent]
    parent_end = next(s for s in shards if s["ShardId"] == parent)["SequenceNumberRange"]["EndingSequenceNumber"]
    assert all(c["SequenceNumberRange"]["StartingSequenceNumber"] > parent_end for c in children)
    numbers = [r["dynamodb"]["SequenceNumber"] for r in consumer.records]
    assert len(numbers) == len(set(numbers)) == sum(len(v) for v in expected.values())
    assert seen(consumer) == expected
