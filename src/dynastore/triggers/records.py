"""A change log record in DynamoDB Streams' record shape, as Lambda hands it to a function.

``stream_record`` is the one converter; the shard identifier and the stream ARN are formed here too.
"""

from __future__ import annotations

from typing import Any

from dynastore.engine.changelog import ChangeRecord
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.storage.itemcodec import decode_item

__all__ = ["sequence_number", "shard_id", "stream_arn", "stream_record"]

_NEW = ("NEW_IMAGE", "NEW_AND_OLD_IMAGES")
_OLD = ("OLD_IMAGE", "NEW_AND_OLD_IMAGES")
# What DynamoDB writes into the record of a change its Time to Live made.
_TTL_IDENTITY = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}


def sequence_number(seq: int) -> str:
    """A change's sequence number as the stream shows it: 21 digits, so they also sort as strings."""
    return f"{seq:021d}"


def shard_id(table: TableDef, shard: int, opened_at: float) -> str:
    return f"shardId-{int(opened_at * 1000):020d}-{table.table_id:04x}{shard:04x}"


def stream_arn(region: str, account_id: str, table: TableDef, label: str) -> str:
    return f"arn:aws:dynamodb:{region}:{account_id}:table/{table.name}/stream/{label}"


def stream_record(
    record: ChangeRecord, table: TableDef, view_type: str, region: str, source_arn: str
) -> dict[str, Any]:
    """The stream record of one change: its images as the stream's view type shows them."""
    old = decode_item(record.old) if record.old is not None else None
    new = decode_item(record.new) if record.new is not None else None
    whole = new if new is not None else old
    assert whole is not None
    keys = {name: whole[name] for name in table.key_schema.names if name in whole}
    data: dict[str, Any] = {"ApproximateCreationDateTime": float(int(record.at)), "Keys": keys}
    size = item_size(keys)
    if new is not None and view_type in _NEW:
        data["NewImage"] = new
        size += item_size(new)
    if old is not None and view_type in _OLD:
        data["OldImage"] = old
        size += item_size(old)
    data["SequenceNumber"] = sequence_number(record.seq)
    data["SizeBytes"] = size
    data["StreamViewType"] = view_type
    out: dict[str, Any] = {
        "eventID": f"{record.table_id:08x}{record.seq:024x}",
        "eventName": record.event_name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": region,
        "dynamodb": data,
        "eventSourceARN": source_arn,
    }
    if record.by_service:
        out["userIdentity"] = dict(_TTL_IDENTITY)
    return out
