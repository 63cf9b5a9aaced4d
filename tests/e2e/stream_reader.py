"""A DynamoDB Streams consumer for the end-to-end tests: reads every shard of a stream, parents before children,
and remembers how far it read each one so that it can go on (even against a restarted server)."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import unique_name
from tests.e2e.server_process import ServerProcess


def all_shards(streams: Any, arn: str) -> list[dict[str, Any]]:
    """Every shard of the stream, following LastEvaluatedShardId."""
    shards: list[dict[str, Any]] = []
    start: dict[str, Any] = {}
    while True:
        description = streams.describe_stream(StreamArn=arn, Limit=100, **start)["StreamDescription"]
        shards.extend(description["Shards"])
        last = description.get("LastEvaluatedShardId")
        if last is None:
            return shards
        start = {"ExclusiveStartShardId": last}


def read_shard(streams: Any, arn: str, shard_id: str, after: str | None, limit: int = 1000) -> list[dict[str, Any]]:
    """The shard's records after sequence number ``after`` (from its start when None) up to now."""
    position: dict[str, Any] = (
        {"ShardIteratorType": "TRIM_HORIZON"}
        if after is None
        else {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": after}
    )
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id, **position)["ShardIterator"]
    records: list[dict[str, Any]] = []
    while iterator is not None:
        page = streams.get_records(ShardIterator=iterator, Limit=limit)
        records.extend(page["Records"])
        iterator = page.get("NextShardIterator")
        if not page["Records"]:
            break  # an open shard read up to now (a closed one ends with no NextShardIterator)
    return records


class Consumer:
    """Reads a stream shard by shard, a child only once its parent is read to its end (as the DynamoDB Streams
    documentation asks of a consumer), keeping the last sequence number read of each shard."""

    def __init__(self, arn: str) -> None:
        self.arn = arn
        self.read_to: dict[str, str | None] = {}  # shard id -> last sequence number read
        self.finished: set[str] = set()  # closed shards read to their end
        self.records: list[dict[str, Any]] = []

    def poll(self, streams: Any) -> list[dict[str, Any]]:
        """Read whatever is new; returns the records read by this call."""
        new: list[dict[str, Any]] = []
        progressed = True
        while progressed:
            progressed = False
            for shard in all_shards(streams, self.arn):
                shard_id = shard["ShardId"]
                parent = shard.get("ParentShardId")
                if shard_id in self.finished or (parent is not None and parent not in self.finished):
                    continue
                records = read_shard(streams, self.arn, shard_id, self.read_to.get(shard_id))
                if records:
                    self.read_to[shard_id] = records[-1]["dynamodb"]["SequenceNumber"]
                    new.extend(records)
                if "EndingSequenceNumber" in shard["SequenceNumberRange"]:
                    self.finished.add(shard_id)
                    progressed = True  # its children may be read now
        self.records.extend(new)
        return new


def stream_table(
    server: ServerProcess, view_type: str = "NEW_AND_OLD_IMAGES", wcu: int | None = None
) -> tuple[str, str]:
    """A new table with a stream on ``server``, on demand or with ``wcu`` write units: (name, stream ARN)."""
    name = unique_name()
    billing: dict[str, Any] = (
        {"BillingMode": "PAY_PER_REQUEST"}
        if wcu is None
        else {"ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": wcu}}
    )
    server.ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": view_type},
        **billing,
    )
    table = server.ddb.describe_table(TableName=name)["Table"]
    return name, table["LatestStreamArn"]


def stream_records(server: ServerProcess, arn: str) -> list[dict[str, Any]]:
    """Every record of the stream, shard by shard (for tables without splits)."""
    streams = server.streams
    return [r for shard in all_shards(streams, arn) for r in read_shard(streams, arn, shard["ShardId"], None)]
