"""A trigger's durable checkpoint, kept by the change log as every consumer's is (``ChangeLog.save_checkpoint``,
under ``keyspace.trigger_record_key(name)``).

It names the stream it follows (table id and stream label) and, per shard, the sequence number of the last record
delivered or skipped, plus the shards finished (closed and read to their end). It is written after a batch is
delivered, in its own storage transaction: a batch delivered but not checkpointed when the process dies is
delivered again after the restart (at least once), and nothing checkpointed is delivered twice by one run.
"""

from __future__ import annotations

import orjson

__all__ = ["Checkpoint"]


class Checkpoint:
    __slots__ = ("table_id", "label", "done", "finished")

    def __init__(self, table_id: int, label: str, done: dict[int, int], finished: set[int]) -> None:
        self.table_id = table_id
        self.label = label
        self.done = done  # shard number -> sequence number of the last record delivered or skipped
        self.finished = finished  # shards closed and read to their end

    def to_record(self) -> bytes:
        return orjson.dumps(
            {
                "kind": "trigger",
                "table_id": self.table_id,
                "label": self.label,
                "done": {str(k): v for k, v in sorted(self.done.items())},
                "finished": sorted(self.finished),
            }
        )

    @classmethod
    def from_record(cls, raw: bytes) -> Checkpoint:
        rec = orjson.loads(raw)
        return cls(
            int(rec["table_id"]),
            str(rec["label"]),
            {int(k): int(v) for k, v in rec["done"].items()},
            {int(n) for n in rec["finished"]},
        )
