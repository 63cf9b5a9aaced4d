"""A change log record as Lambda hands it to a function: DynamoDB Streams' record (api/stream_records.py, the
one converter, in its Lambda spelling) with the ``eventSourceARN`` of the stream it came from. Shard ids and
sequence numbers are the Streams API's (engine/streams.py), so a trigger's failure records and admin view name
the same shards and positions a GetRecords reader sees."""

from __future__ import annotations

from typing import Any

from dynastore.api import stream_records
from dynastore.engine import streams
from dynastore.engine.changelog import ChangeRecord
from dynastore.engine.stream_shards import Shard
from dynastore.model.table_schema import TableDef

__all__ = ["sequence_number", "shard_id", "stream_arn", "stream_record"]

sequence_number = streams.sequence_number


def shard_id(shard: Shard) -> str:
    return streams.shard_id(shard)


def stream_arn(region: str, account_id: str, table: TableDef, label: str) -> str:
    return f"{table.arn(region, account_id)}/stream/{label}"


def stream_record(
    record: ChangeRecord, table: TableDef, view_type: str, region: str, source_arn: str
) -> dict[str, Any] | None:
    """The stream record of one change, its images as the stream's view type shows them; None for an overwrite
    that left the item as it was (no stream shows it, streams.decode_change)."""
    change = streams.decode_change(table.key_schema, view_type, record)
    if change is None:
        return None
    out = stream_records.stream_record(change, region, lambda_event=True)
    out["eventSourceARN"] = source_arn
    return out
