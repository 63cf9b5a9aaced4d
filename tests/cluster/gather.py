"""What the checker reads from the healed cluster: every node's copy of the tables, the streams, the digests."""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import ClientError

from tests.cluster import nodes
from tests.cluster.checker import StreamRecord
from tests.cluster.clients import CHECK_CONFIG, client, until_done
from tests.cluster.cluster import Cluster
from tests.cluster.history import History
from tests.cluster.workloads import ACCOUNTS, BANK, REGISTER_COUNT, REGISTERS, STREAM, read_balances


def wait_caught_up(cluster: Cluster, timeout: float = 90) -> int:
    """The log head, once every node agrees on the leader and has applied the log up to it (twice in a row, a
    second apart, so that nothing was still arriving)."""
    deadline = time.monotonic() + timeout
    previous = None
    while time.monotonic() < deadline:
        head = cluster.caught_up()
        if head is not None and head == previous:
            return head
        previous = head
        time.sleep(1.0)
    states = [nodes.cluster_status(a) for a in cluster.addresses]
    raise AssertionError(f"the nodes did not catch up within {timeout} s: {states}")


def digests(cluster: Cluster, tries: int = 5) -> list[dict[str, Any]]:
    """Every node's digest, taken again while they were taken at different applied indexes."""
    taken: list[dict[str, Any]] = []
    for _ in range(tries):
        taken = [d for d in (nodes.digest(a) for a in cluster.addresses) if d is not None]
        if len(taken) == len(cluster.addresses) and len({d["appliedIndex"] for d in taken}) == 1:
            break
        time.sleep(1.0)
    return taken


def keys_on(url: str, table: str) -> dict[str, dict[str, Any]]:
    """Every item of ``table`` as the node at ``url`` holds it (an eventually consistent scan: its own replica)."""
    ddb = client(url, CHECK_CONFIG)
    items: dict[str, dict[str, Any]] = {}
    start: dict[str, Any] = {}
    while True:
        page = until_done(lambda: ddb.scan(TableName=table, ConsistentRead=False, **start))  # noqa: B023
        assert page is not None
        for item in page["Items"]:
            items[item["pk"]["S"]] = item
        if "LastEvaluatedKey" not in page:
            return items
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def final_register_reads(url: str, history: History) -> None:
    """A strongly consistent read of each register, appended to the history after everything else."""
    ddb = client(url, CHECK_CONFIG)
    for i in range(REGISTER_COUNT):
        key = f"r{i}"
        op = history.invoke(-1, "read", key)
        answer = until_done(lambda: ddb.get_item(TableName=REGISTERS, Key={"pk": {"S": key}}, ConsistentRead=True))  # noqa: B023
        assert answer is not None
        item = answer.get("Item")
        history.ok(op, (0, None) if item is None else (int(item["ver"]["N"]), item["token"]["S"]))


def final_balances(url: str) -> tuple[list[int], str]:
    """The balances once the load stopped: one transactional read, else (with what refused it) the strongly
    consistent read of each account (nothing moves money any more, so their sum is a snapshot's)."""
    ddb = client(url, CHECK_CONFIG)
    try:
        balances = until_done(lambda: read_balances(ddb), timeout=20)
        assert balances is not None
        return balances, ""
    except ClientError as e:
        refused = f"{e.response['Error']['Code']}: {e.response['Error'].get('Message', '')}"
    singles = []
    for i in range(ACCOUNTS):
        answer = until_done(lambda: ddb.get_item(TableName=BANK, Key={"pk": {"S": f"a{i}"}}, ConsistentRead=True))  # noqa: B023
        assert answer is not None
        singles.append(int(answer["Item"]["balance"]["N"]) if "Item" in answer else -(10**9))
    return singles, refused


def stream_records(url: str) -> list[StreamRecord]:
    """Every record of the stream table's stream, through the node at ``url``: shards in the order they were
    opened, each read from its trim horizon to its end (or, for the open shard, until it has nothing more)."""
    ddb, streams = client(url, CHECK_CONFIG), client(url, CHECK_CONFIG, "dynamodbstreams")
    arn = until_done(lambda: ddb.describe_table(TableName=STREAM))["Table"]["LatestStreamArn"]  # type: ignore[index]
    shards: list[dict[str, Any]] = []
    start: dict[str, Any] = {}
    while True:
        page = until_done(lambda: streams.describe_stream(StreamArn=arn, **start))["StreamDescription"]  # type: ignore[index]  # noqa: B023
        shards += page["Shards"]
        if "LastEvaluatedShardId" not in page:
            break
        start = {"ExclusiveStartShardId": page["LastEvaluatedShardId"]}
    shards.sort(key=lambda s: int(s["SequenceNumberRange"]["StartingSequenceNumber"]))
    records: list[StreamRecord] = []
    for shard in shards:
        closed = "EndingSequenceNumber" in shard["SequenceNumberRange"]
        records += _shard_records(streams, arn, shard["ShardId"], closed)
    return records


def _shard_records(streams: Any, arn: str, shard: str, closed: bool) -> list[StreamRecord]:
    iterator = until_done(lambda: streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                                             ShardIteratorType="TRIM_HORIZON"))["ShardIterator"]  # type: ignore[index]  # fmt: skip
    records: list[StreamRecord] = []
    while iterator:
        page = until_done(lambda: streams.get_records(ShardIterator=iterator, Limit=1000))  # noqa: B023
        assert page is not None
        records += [_record(r, shard) for r in page["Records"]]
        if not page["Records"] and not closed:
            break  # the open shard's end for now (a closed shard's iterator runs out at its end)
        iterator = page.get("NextShardIterator")
    return records


def _record(record: dict[str, Any], shard: str) -> StreamRecord:
    change = record["dynamodb"]
    return StreamRecord(
        sequence=int(change["SequenceNumber"]),
        key=change["Keys"]["pk"]["S"],
        shard=shard,
        new=change.get("NewImage", {}).get("w", {}).get("S"),
        old=change.get("OldImage", {}).get("w", {}).get("S"),
    )
