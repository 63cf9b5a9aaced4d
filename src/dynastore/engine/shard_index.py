"""Which change log records each stream shard holds: an index kept in memory, caught up from the log when read.

A record written while its table's stream is enabled carries its table and shard in its header
(engine/changelog.py), so the log alone says what each shard holds; this index only spares a shard's reader the
records of other shards and tables. It costs a write nothing: the change log brings it up to the log's end
before a shard is read (``ChangeLog.read_shard``), reading each record's header once per process, so a record
written is indexed by the next read that looks. Trimming drops the entries of trimmed records.

Earlier versions kept this index in the store, one ``S`` key per stream record (``keyspace.shard_record_key``),
which made every streamed write store two keys. Those keys are no longer read; each is deleted when its record
is trimmed, so a store written by an earlier version loses them within the streams' retention period.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Final

__all__ = ["ShardIndex"]

_SEQ_TYPE: Final = "q"  # 8 bytes a record: the index of a day of stream records fits in memory


class ShardIndex:
    """The sequence numbers of each shard's records, ascending, for every record up to ``through``."""

    __slots__ = ("_seqs", "through")

    def __init__(self) -> None:
        self._seqs: dict[tuple[int, int], array[int]] = {}  # (table id, shard number) -> sequence numbers
        self.through = -1  # every record with a sequence number up to this one is indexed

    def add(self, table_id: int, shard: int, seq: int) -> None:
        """Index the record ``seq`` of a shard: records are added in sequence order."""
        seqs = self._seqs.get((table_id, shard))
        if seqs is None:
            seqs = self._seqs[(table_id, shard)] = array(_SEQ_TYPE)
        seqs.append(seq)

    def after(self, table_id: int, shard: int, after_seq: int, limit: int) -> list[int]:
        """Up to ``limit`` sequence numbers of the shard's records above ``after_seq``, in order."""
        seqs = self._seqs.get((table_id, shard))
        if seqs is None:
            return []
        start = bisect_right(seqs, after_seq)
        return seqs[start : start + limit].tolist()

    def forget_through(self, seq: int) -> None:
        """Drop every entry up to ``seq`` (its records were trimmed), and the shards left with none."""
        for shard, seqs in list(self._seqs.items()):
            kept_from = bisect_right(seqs, seq)
            if kept_from == len(seqs):
                del self._seqs[shard]
            elif kept_from:
                del seqs[:kept_from]

    def __len__(self) -> int:
        """How many records are indexed."""
        return sum(len(seqs) for seqs in self._seqs.values())
