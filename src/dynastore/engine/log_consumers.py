"""The engine's own consumers of the change log (engine/changelog.py), registered by the composition root.

* ``GsiPropagation`` (engine/gsi_propagation.py, with the applying of the GSI changes) follows every table with
  GSIs and needs only the GSI entry changes of a write; its position is the pending marks of the records.
* ``StreamRecords`` follows every table whose stream is enabled, needs the old and new images (the view type is
  applied when a record is read), places each record in a shard of the stream (engine/stream_shards.py) and holds
  it for the streams' retention period (24 hours, as DynamoDB). Stream readers keep no checkpoint: their position
  travels in the shard iterator.

Triggers (triggers/runner.py) are consumers too, and so is anything a host or a test registers.
"""

from __future__ import annotations

from dynastore.engine.capacity.state import Capacity
from dynastore.engine.changelog import IMAGES, NOT_FOLLOWED, ChangeRecord
from dynastore.engine.stream_shards import StreamShards
from dynastore.limits import STREAM_RETENTION_SECONDS
from dynastore.model.table_schema import TableDef
from dynastore.storage import keyspace
from dynastore.storage.kv import WriteTxn

__all__ = ["StreamRecords"]


class StreamRecords:
    """A change log consumer (engine/changelog.py ``Consumer``) and the placer of its records (``Placer``)."""

    def __init__(self, shards: StreamShards, capacity: Capacity) -> None:
        self.name = "streams"
        self._shards = shards
        self._capacity = capacity

    @property
    def checkpoint_key(self) -> bytes:
        return keyspace.consumer_record_key(self.name)  # never written: readers' positions are in their iterators

    def need(self, table: TableDef) -> int:
        stream = table.stream
        return IMAGES if stream is not None and stream.enabled else NOT_FOLLOWED

    def holds(self, record: ChangeRecord, now: float) -> bool:
        return record.shard != 0 and record.at > now - STREAM_RETENTION_SECONDS

    def prepare(self, table: TableDef) -> None:
        # Shards follow the partition map, which must be current before the write transaction opens (bringing it
        # up to date may write).
        self._capacity.state(table)

    def place(self, txn: WriteTxn, table: TableDef, key: bytes, seq: int, now: float) -> int:
        return self._shards.shard_for(txn, table, key, seq, now)
