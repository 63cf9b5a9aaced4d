"""A consumer that follows shard lineage (parents before children) sees every change of a random workload (puts,
updates, deletes, batches, transactions, TTL deletions) exactly once, in order per key, across partition splits,
shard rollovers and a restart after kill -9, and nothing of the transactions that were cancelled (among them the
first change after a shard's four hours, whose rollover is taken back with it)."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from dynastore.limits import STREAM_SHARD_ROLLOVER_SECONDS
from tests.e2e.server_process import ServerProcess
from tests.e2e.stream_reader import Consumer, stream_table

KEYS = [f"k{i:02d}" for i in range(40)]
PAD = "x" * 150  # partitions of 2,000 bytes split after a dozen items


Expected = dict[str, list[tuple[str, dict[str, Any] | None]]]  # key -> (eventName, NewImage) in order


def _changed(key: str, new: dict[str, Any] | None, state: dict[str, Any], out: Expected) -> None:
    """What the stream must show for ``key`` becoming ``new`` (None: deleted), if anything changed."""
    old = state.get(key)
    if old == new:
        return  # nothing changed: no record
    event = "INSERT" if old is None else "REMOVE" if new is None else "MODIFY"
    out.setdefault(key, []).append((event, new))
    if new is None:
        state.pop(key, None)
    else:
        state[key] = new


def _item(key: str, rng: random.Random) -> dict[str, Any]:
    return {"pk": {"S": key}, "v": {"N": str(rng.randrange(3))}, "pad": {"S": PAD}}


def workload(
    server: ServerProcess, name: str, rng: random.Random, count: int, state: dict[str, Any], out: Expected
) -> None:
    """``count`` random puts, updates, deletes, batches and transactions; what each must have written to the
    stream goes to ``out``."""
    for _ in range(count):
        key = rng.choice(KEYS)
        roll = rng.random()
        if roll < 0.35:
            new = _item(key, rng)
            server.ddb.put_item(TableName=name, Item=new)
            _changed(key, new, state, out)
        elif roll < 0.6:
            value = {"N": str(rng.randrange(3))}
            server.ddb.update_item(
                TableName=name,
                Key={"pk": {"S": key}},
                UpdateExpression="SET v = :v",
                ExpressionAttributeValues={":v": value},
            )
            _changed(key, dict(state.get(key) or {}) | {"pk": {"S": key}, "v": value}, state, out)
        elif roll < 0.75:
            server.ddb.delete_item(TableName=name, Key={"pk": {"S": key}})
            _changed(key, None, state, out)
        elif roll < 0.82:
            cancelled_transaction(server, name, rng, key, state)
        elif roll < 0.9:
            keys = rng.sample(KEYS, 3)  # distinct keys: one storage transaction, records in request order
            news: list[dict[str, Any] | None] = [_item(k, rng) if rng.random() < 0.6 else None for k in keys]
            requests = [
                {"PutRequest": {"Item": item}} if item is not None else {"DeleteRequest": {"Key": {"pk": {"S": k}}}}
                for k, item in zip(keys, news, strict=True)
            ]
            response = server.ddb.batch_write_item(RequestItems={name: requests})
            assert response["UnprocessedItems"] == {}
            for k, after in zip(keys, news, strict=True):
                _changed(k, after, state, out)
        else:
            first, second = rng.sample(KEYS, 2)
            put = _item(first, rng)
            value = {"N": str(rng.randrange(3))}
            update = {
                "TableName": name,
                "Key": {"pk": {"S": second}},
                "UpdateExpression": "SET v = :v",
                "ExpressionAttributeValues": {":v": value},
            }
            server.ddb.transact_write_items(
                TransactItems=[{"Put": {"TableName": name, "Item": put}}, {"Update": update}]
            )
            _changed(first, put, state, out)
            _changed(second, dict(state.get(second) or {}) | {"pk": {"S": second}, "v": value}, state, out)


def cancelled_transaction(
    server: ServerProcess, name: str, rng: random.Random, key: str, state: dict[str, Any]
) -> None:
    """A TransactWriteItems that puts ``key`` and is cancelled by its second item's condition: no change."""
    other = rng.choice([k for k in KEYS if k != key])
    condition = "attribute_not_exists(pk)" if other in state else "attribute_exists(pk)"  # false: cancels
    try:
        server.ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": name, "Item": _item(key, rng)}},
                {"ConditionCheck": {"TableName": name, "Key": {"pk": {"S": other}}, "ConditionExpression": condition}},
            ]
        )
    except ClientError as cancelled:
        assert cancelled.response["Error"] == {
            "Code": "TransactionCanceledException",
            "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons "
            "[None, ConditionalCheckFailed]",
        }
    else:
        raise AssertionError("the transaction was not cancelled")


def expire(server: ServerProcess, name: str, rng: random.Random, state: dict[str, Any], out: Expected) -> None:
    """Items whose time to live has passed, deleted by the service: REMOVE records, in order with the rest."""
    server.ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    past = {"N": str(int(server.now()) - 100)}
    keys = rng.sample(KEYS, 5)
    for key in keys:
        item = _item(key, rng) | {"exp": past}
        server.ddb.put_item(TableName=name, Item=item)
        _changed(key, item, state, out)
    for _ in range(400):  # the sweep runs in the background, a pass every half second
        if not any("Item" in server.ddb.get_item(TableName=name, Key={"pk": {"S": k}}) for k in keys):
            break
        time.sleep(0.05)
    for key in keys:
        _changed(key, None, state, out)


def seen(consumer: Consumer) -> Expected:
    out: Expected = {}
    for record in consumer.records:
        data = record["dynamodb"]
        out.setdefault(data["Keys"]["pk"]["S"], []).append((record["eventName"], data.get("NewImage")))
    return out


def test_every_change_once_in_order_across_splits_and_a_restart(tmp_path: Path) -> None:
    rng = random.Random(7)
    args = ("--partition-size-limit", "2000")
    server = ServerProcess("--manual-clock", *args, data_dir=tmp_path)
    state: dict[str, Any] = {}
    expected: Expected = {}
    try:
        name, arn = stream_table(server, "NEW_AND_OLD_IMAGES", wcu=5)
        consumer = Consumer(arn)
        for _ in range(6):  # reading open shards as they fill, close and split
            workload(server, name, rng, 25, state, expected)
            consumer.poll(server.streams)
        workload(server, name, rng, 150, state, expected)  # left unread until after the restart
        server.advance(STREAM_SHARD_ROLLOVER_SECONDS)  # every open shard is due to roll over at its next change
        for key in KEYS:  # which is a cancelled transaction's, for every shard: the rollover goes with it
            cancelled_transaction(server, name, rng, key, state)
        for key in rng.sample(sorted(state), 10):  # the next changes roll the shards over (no item grows: no split)
            value = {"N": str(rng.randrange(3, 6))}
            server.ddb.update_item(
                TableName=name,
                Key={"pk": {"S": key}},
                UpdateExpression="SET v = :v",
                ExpressionAttributeValues={":v": value},
            )
            _changed(key, state[key] | {"v": value}, state, expected)
    finally:
        server.kill()  # kill -9: every acknowledged write and its record survive
    server = ServerProcess("--manual-clock", *args, data_dir=tmp_path)
    try:
        workload(server, name, rng, 150, state, expected)
        expire(server, name, rng, state, expected)
        consumer.poll(server.streams)
        consumer.poll(server.streams)  # nothing new: nothing twice
        shards = server.streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        parent = next(s["ParentShardId"] for s in shards if "ParentShardId" in s)
        children = server.streams.describe_stream(
            StreamArn=arn, ShardFilter={"Type": "CHILD_SHARDS", "ShardId": parent}
        )["StreamDescription"]["Shards"]
    finally:
        server.stop()
    assert sum("ParentShardId" in s for s in shards) >= 4, "the partitions split: shards have children"
    assert children == [s for s in shards if s.get("ParentShardId") == parent]
    parent_end = next(s for s in shards if s["ShardId"] == parent)["SequenceNumberRange"]["EndingSequenceNumber"]
    assert all(c["SequenceNumberRange"]["StartingSequenceNumber"] > parent_end for c in children)
    numbers = [r["dynamodb"]["SequenceNumber"] for r in consumer.records]
    assert len(numbers) == len(set(numbers)) == sum(len(v) for v in expected.values())
    assert seen(consumer) == expected
    by_service = [r for r in consumer.records if "userIdentity" in r]
    assert len(by_service) == 5 and all(r["eventName"] == "REMOVE" for r in by_service)
    assert all(r["userIdentity"] == {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"} for r in by_service)
