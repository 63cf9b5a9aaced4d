"""The DynamoDB Streams operations (``DynamoDBStreams_20120810.*``): ListStreams, DescribeStream,
GetShardIterator and GetRecords, as wire shapes around engine/streams.py."""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.stream_records import stream_record
from dynastore.api.table_description import key_schema_description
from dynastore.engine import streams
from dynastore.engine.context import Context
from dynastore.errors import ValidationException

__all__ = ["handle_describe_stream", "handle_get_records", "handle_get_shard_iterator", "handle_list_streams"]

_MAX_STREAMS = 100  # ListStreams' and DescribeStream's default (and largest) Limit
_MAX_RECORDS = 1000  # GetRecords' default (and largest) Limit


def handle_list_streams(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    found, last = streams.list_streams(
        ctx, req.get("TableName"), req.get("Limit") or _MAX_STREAMS, req.get("ExclusiveStartStreamArn")
    )
    out: dict[str, Any] = {
        "Streams": [{"StreamArn": s.arn, "TableName": s.table_name, "StreamLabel": s.label} for s in found]
    }
    if last is not None:
        out["LastEvaluatedStreamArn"] = last
    return out


def handle_describe_stream(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    child_of = None
    shard_filter = req.get("ShardFilter")
    if shard_filter is not None and shard_filter.get("Type") == "CHILD_SHARDS":
        child_of = shard_filter.get("ShardId")
        if child_of is None:
            raise ValidationException(messages.SHARD_FILTER_SHARD_ID_REQUIRED)
    view = streams.describe_stream(
        ctx, req["StreamArn"], req.get("Limit") or _MAX_STREAMS, req.get("ExclusiveStartShardId"), child_of
    )
    shards = []
    for shard in view.shards:
        entry: dict[str, Any] = {"ShardId": shard.shard_id}
        numbers = {"StartingSequenceNumber": shard.starting}
        if shard.ending is not None:
            numbers["EndingSequenceNumber"] = shard.ending
        entry["SequenceNumberRange"] = numbers
        if shard.parent_shard_id is not None:
            entry["ParentShardId"] = shard.parent_shard_id
        shards.append(entry)
    description: dict[str, Any] = {
        "StreamArn": view.arn,
        "StreamLabel": view.label,
        "StreamStatus": view.status,
        "StreamViewType": view.view_type,
        "CreationRequestDateTime": view.created_at,
        "TableName": view.table_name,
        "KeySchema": key_schema_description(view.key_schema),
        "Shards": shards,
    }
    if view.last_evaluated_shard_id is not None:
        description["LastEvaluatedShardId"] = view.last_evaluated_shard_id
    return {"StreamDescription": description}


def handle_get_shard_iterator(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    iterator = streams.get_shard_iterator(
        ctx, req["StreamArn"], req["ShardId"], req["ShardIteratorType"], req.get("SequenceNumber")
    )
    return {"ShardIterator": iterator}


def handle_get_records(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    page = streams.get_records(ctx, req["ShardIterator"], req.get("Limit") or _MAX_RECORDS)
    region = ctx.namespace.region
    out: dict[str, Any] = {"Records": [stream_record(change, region) for change in page.changes]}
    if page.next_iterator is not None:
        out["NextShardIterator"] = page.next_iterator
    return out
