"""Stream shards: where each change of a table with an enabled stream goes, and their lineage.

DynamoDB gives a stream one shard per partition of the table; a shard is closed when its partition splits (its
children cover the halves) and, as DynamoDB does, rolled over after about four hours (a child with the same hash
range). A reader that reads a parent before its children sees each item's changes once and in order, because an
item's hash stays in one open shard at a time.

Shards are numbered per table from 1 (0 means "in no stream") and persisted with their lineage under
``keyspace.shards_record_key(table_id)`` in the transaction that changes them: number, parent, hash range, the
stream label they belong to, when they opened, the first sequence number they may hold and, once closed, the
last. Shards of an earlier stream of the table stay listed until the retention period has passed, and so does
the stream itself: when a stream ends (disabled, or its table deleted) its label, view type and end time are kept
in the same record (``ended``), which is how a disabled stream is still described and read. The definitions of
deleted tables that had a stream are kept as long (``keyspace.DELETED_STREAMS_RECORD``), so their streams are too;
a table of a namespace other than the default carries its scope (``"scope": "<account>/<region>"``) in its record.

The maps are kept in memory and changed there by the write that changes them, before its transaction ends. A write
can still be taken back after that (a cancelled transaction, whose condition on a later item failed, may be the
first change after a shard's four hours): the memory would then hold shards the store does not, and the records of
later writes would name a shard that a restart forgets. So a map saved by a transaction is unconfirmed until a
later one reads it: it is compared with what the store holds then, and read again from the store if that
transaction was taken back (``of``).
"""

from __future__ import annotations

from typing import Any

import orjson

from dynastore.engine.capacity.partitions import PartitionMap, partition_of_key
from dynastore.engine.capacity.state import Capacity
from dynastore.limits import STREAM_RETENTION_SECONDS, STREAM_SHARD_ROLLOVER_SECONDS
from dynastore.model.table_schema import TableDef
from dynastore.storage import keyspace
from dynastore.storage.kv import KV, ReadTxn, WriteTxn

__all__ = ["EndedStream", "Shard", "StreamShards", "TableShards"]


class Shard:
    __slots__ = (
        "number", "parent", "lo", "hi", "label", "opened_at", "first_seq", "last_seq", "closed_at", "matched_bounds",
    )  # fmt: skip

    def __init__(
        self,
        number: int,
        parent: int,
        lo: int,
        hi: int,
        label: str,
        opened_at: float,
        first_seq: int,
        last_seq: int | None = None,
        closed_at: float | None = None,
    ) -> None:
        self.number = number
        self.parent = parent  # 0: none
        self.lo = lo  # the hash range [lo, hi) of the table's keys it holds
        self.hi = hi
        self.label = label  # the stream it belongs to
        self.opened_at = opened_at
        self.first_seq = first_seq  # no record of it has a smaller sequence number
        self.last_seq = last_seq  # closed: no record of it has a larger one
        self.closed_at = closed_at
        # The partition map's bounds (PartitionMap.bounds) this shard's range was last found equal to a partition
        # of: while the map keeps them, a write needs no search to know the shard still matches its partition.
        # In memory only.
        self.matched_bounds: list[int] | None = None

    @property
    def is_open(self) -> bool:
        return self.last_seq is None

    def to_record(self) -> list[Any]:
        return [self.number, self.parent, self.lo, self.hi, self.label, self.opened_at, self.first_seq,
                self.last_seq, self.closed_at]  # fmt: skip

    @classmethod
    def from_record(cls, rec: list[Any]) -> Shard:
        return cls(int(rec[0]), int(rec[1]), int(rec[2]), int(rec[3]), str(rec[4]), float(rec[5]), int(rec[6]),
                   None if rec[7] is None else int(rec[7]), None if rec[8] is None else float(rec[8]))  # fmt: skip


class EndedStream:
    """A stream that was disabled (or whose table was deleted): still readable for the retention period."""

    __slots__ = ("label", "view_type", "ended_at")

    def __init__(self, label: str, view_type: str, ended_at: float) -> None:
        self.label = label
        self.view_type = view_type
        self.ended_at = ended_at


class TableShards:
    """The shards of one table, all streams: ``open`` sorted by hash range; ``ended`` the streams that ended
    within the retention period, by label."""

    __slots__ = ("table_id", "shards", "next_number", "open", "ended")

    def __init__(
        self, table_id: int, shards: list[Shard], next_number: int, ended: dict[str, EndedStream] | None = None
    ) -> None:
        self.table_id = table_id
        self.shards = shards
        self.next_number = next_number
        self.open = sorted((s for s in shards if s.is_open), key=lambda s: s.lo)
        self.ended: dict[str, EndedStream] = {} if ended is None else ended

    def shard(self, label: str, number: int) -> Shard | None:
        for s in self.shards:
            if s.number == number and s.label == label:
                return s
        return None

    def covering(self, h: int) -> Shard | None:
        for shard in self.open:
            if shard.lo <= h < shard.hi:
                return shard
        return None

    def of_stream(self, label: str) -> list[Shard]:
        return [s for s in self.shards if s.label == label]

    def to_record(self) -> bytes:
        return orjson.dumps(
            {
                "kind": "shards",
                "next": self.next_number,
                "shards": [s.to_record() for s in self.shards],
                "ended": [[e.label, e.view_type, e.ended_at] for e in self.ended.values()],
            }
        )


class StreamShards:
    """The shard maps of one dynastore's tables, loaded on first use and saved in the writes that change them."""

    def __init__(self, kv: KV, capacity: Capacity) -> None:
        self._kv = kv
        self._capacity = capacity
        self._tables: dict[int, TableShards] = {}
        # Table -> (the transaction that saved its map, the bytes it saved): the maps not yet known to be stored.
        self._unconfirmed: dict[int, tuple[WriteTxn, bytes]] = {}
        self._deleted: list[tuple[TableDef, float, str]] | None = None  # (table, deleted at), loaded on first use

    def of(self, table_id: int, txn: ReadTxn | None = None) -> TableShards:
        """The shards of table ``table_id`` as the store holds them (or as ``txn`` has changed them)."""
        shards = self._tables.get(table_id)
        if shards is None:
            shards = self._tables[table_id] = _parsed(table_id, self._stored(table_id, txn))
        elif self._unconfirmed and table_id in self._unconfirmed:
            shards = self._confirmed(table_id, shards, txn)
        return shards

    def _confirmed(self, table_id: int, shards: TableShards, txn: ReadTxn | None) -> TableShards:
        """``shards``, saved by a transaction, if it was stored; else the map the store holds."""
        saver, saved = self._unconfirmed[table_id]
        if txn is saver:
            return shards  # the transaction that changed the map goes on
        del self._unconfirmed[table_id]
        raw = self._stored(table_id, txn)
        if raw == saved:
            return shards
        stored = self._tables[table_id] = _parsed(table_id, raw)  # the transaction was taken back
        return stored

    def _stored(self, table_id: int, txn: ReadTxn | None) -> bytes | None:
        if txn is None:
            with self._kv.read() as own:
                return own.get(keyspace.shards_record_key(table_id))
        return txn.get(keyspace.shards_record_key(table_id))

    def _save(self, txn: WriteTxn, shards: TableShards) -> None:
        record = shards.to_record()
        txn.put(keyspace.shards_record_key(shards.table_id), record)
        self._unconfirmed[shards.table_id] = (txn, record)

    def loaded(self) -> list[int]:
        """The tables whose shards are in memory (every table that has had a stream since the start)."""
        return list(self._tables)

    def forget(self, table_id: int) -> None:
        """The store took back writes: read the table's shards again when next needed."""
        self._tables.pop(table_id, None)
        self._unconfirmed.pop(table_id, None)

    def clear(self) -> None:
        self._tables.clear()
        self._unconfirmed.clear()
        self._deleted = None

    # ---- deleted tables ---------------------------------------------------------------------------------------
    def deleted_tables(self) -> list[tuple[TableDef, float, str]]:
        """Deleted tables whose streams are still readable, with when they were deleted and the scope of their
        namespace (storage/catalog.py; ``""`` for the default namespace)."""
        if self._deleted is None:
            with self._kv.read() as txn:
                raw = txn.get(keyspace.meta_key(keyspace.DELETED_STREAMS_RECORD))
            rec = {} if raw is None else orjson.loads(raw)
            tables = rec.get("tables", ())
            self._deleted = [(TableDef.from_record(t), float(at), str(t.get("scope", ""))) for t, at in tables]
        return self._deleted

    def remember_deleted(self, txn: WriteTxn, table: TableDef, now: float, scope: str = "") -> None:
        """``table`` (which had a stream) is being deleted: its streams stay readable for the retention period."""
        deleted = [*self.deleted_tables(), (table, now, scope)]
        self._save_deleted(txn, deleted)

    def _save_deleted(self, txn: WriteTxn, deleted: list[tuple[TableDef, float, str]]) -> None:
        self._deleted = deleted
        tables = [[_deleted_record(t, scope), at] for t, at, scope in deleted]
        txn.put(
            keyspace.meta_key(keyspace.DELETED_STREAMS_RECORD),
            orjson.dumps({"kind": "deleted-streams", "tables": tables}),
        )

    # ---- the write path ---------------------------------------------------------------------------------------
    def shard_for(self, txn: WriteTxn, table: TableDef, key: bytes, seq: int, now: float) -> int:
        """The number of the open shard of ``table``'s stream that holds the item at storage key ``key``; opens,
        splits and rolls shards over first when the stream, its partitions or the clock call for it. ``seq``: the
        sequence number the change will take."""
        stream = table.stream
        assert stream is not None and stream.label is not None
        shards = self.of(table.table_id, txn)
        h = partition_of_key(key)
        shard = shards.covering(h)
        changed = False
        if shard is None or shard.label != stream.label:
            self._open_stream(shards, table, stream.label, seq, now)
            changed = True
            shard = shards.covering(h)
            assert shard is not None
        if not self._matches_partition(shard, table, h) or now - shard.opened_at >= STREAM_SHARD_ROLLOVER_SECONDS:
            shard = self._succeed(shards, shard, table, seq, now, h)
            changed = True
        if changed:
            self._save(txn, shards)
        return shard.number

    def _partitions(self, table: TableDef) -> PartitionMap:
        """The table's partition map as the capacity model has it (made current before the write transaction
        opened, engine/writes.py ``prepare``; never brought up to date here, which may write)."""
        st = self._capacity.tables.get(table.table_id)
        return st.base.natural if st is not None else PartitionMap.even(1)

    def open_stream(self, txn: WriteTxn, table: TableDef, seq: int, now: float) -> None:
        """Open the shards of ``table``'s enabled stream before its first change (DescribeStream shows them)."""
        stream = table.stream
        assert stream is not None and stream.label is not None
        shards = self.of(table.table_id, txn)
        if not any(s.label == stream.label for s in shards.open):
            self._open_stream(shards, table, stream.label, seq, now)
            self._save(txn, shards)

    def _matches_partition(self, shard: Shard, table: TableDef, h: int) -> bool:
        """Whether open ``shard``, which holds hash ``h``, still has the hash range of the table's partition
        holding ``h`` (else that partition split since the shard opened). Searched only when the partitions
        changed since the shard was last found to match: one identity test a write otherwise."""
        pmap = self._partitions(table)
        bounds = pmap.bounds
        if shard.matched_bounds is bounds:
            return True
        p = pmap.partitions[pmap.index_of(h)]
        if p.lo != shard.lo or p.hi != shard.hi:
            return False
        shard.matched_bounds = bounds
        return True

    def _open_stream(self, shards: TableShards, table: TableDef, label: str, seq: int, now: float) -> None:
        """A new stream (or the first change since it was enabled): close the shards of earlier streams and open
        one per partition."""
        for old in list(shards.open):
            _close(old, seq - 1, now)
        pmap = self._partitions(table)
        for p in pmap.partitions:
            shards.shards.append(Shard(shards.next_number, 0, p.lo, p.hi, label, now, seq))
            shards.next_number += 1
        shards.open = sorted((s for s in shards.shards if s.is_open), key=lambda s: s.lo)

    def _succeed(self, shards: TableShards, parent: Shard, table: TableDef, seq: int, now: float, h: int) -> Shard:
        """Close ``parent``; its children cover its range, one per partition inside it (one when it only rolled
        over). Returns the child that holds hash ``h``."""
        _close(parent, seq - 1, now)
        pmap = self._partitions(table)
        ranges = [
            (max(p.lo, parent.lo), min(p.hi, parent.hi))
            for p in pmap.partitions
            if p.lo < parent.hi and p.hi > parent.lo
        ]
        for lo, hi in ranges or [(parent.lo, parent.hi)]:
            shards.shards.append(Shard(shards.next_number, parent.number, lo, hi, parent.label, now, seq))
            shards.next_number += 1
        shards.open = sorted((s for s in shards.shards if s.is_open), key=lambda s: s.lo)
        child = shards.covering(h)
        assert child is not None
        return child

    # ---- disabling and retention ------------------------------------------------------------------------------
    def close_stream(self, txn: WriteTxn, table_id: int, label: str, view_type: str, last_seq: int, now: float) -> None:
        """The stream ``label`` was disabled (or its table deleted): its open shards end at ``last_seq``, and it
        is remembered as ended (with its view type) for the retention period."""
        shards = self.of(table_id, txn)
        for shard in shards.open:
            _close(shard, last_seq, now)
        shards.open = []
        shards.ended[label] = EndedStream(label, view_type, now)
        self._save(txn, shards)

    def forget_deleted(self, txn: WriteTxn, now: float) -> None:
        """Forget the deleted tables whose streams have passed the retention period."""
        deleted = self.deleted_tables()
        keep = [entry for entry in deleted if now - entry[1] < STREAM_RETENTION_SECONDS]
        if len(keep) != len(deleted):
            self._save_deleted(txn, keep)

    def forget_expired(self, txn: WriteTxn, table_id: int, now: float) -> None:
        """Drop closed shards whose records have all passed the retention period."""
        shards = self.of(table_id, txn)
        keep = [s for s in shards.shards if s.closed_at is None or now - s.closed_at < STREAM_RETENTION_SECONDS]
        ended = {k: e for k, e in shards.ended.items() if now - e.ended_at < STREAM_RETENTION_SECONDS}
        if len(keep) != len(shards.shards) or len(ended) != len(shards.ended):
            shards.shards = keep
            shards.ended = ended
            self._save(txn, shards)


def _parsed(table_id: int, raw: bytes | None) -> TableShards:
    """A table's shard map from its stored record (none yet: no shards)."""
    if raw is None:
        return TableShards(table_id, [], 1)
    rec = orjson.loads(raw)
    ended = {str(e[0]): EndedStream(str(e[0]), str(e[1]), float(e[2])) for e in rec.get("ended", ())}
    return TableShards(table_id, [Shard.from_record(r) for r in rec["shards"]], int(rec["next"]), ended)


def _close(shard: Shard, last_seq: int, now: float) -> None:
    shard.last_seq = max(last_seq, shard.first_seq - 1)
    shard.closed_at = now


def _deleted_record(table: TableDef, scope: str) -> dict[str, Any]:
    """A deleted table's record in ``DELETED_STREAMS_RECORD``: its definition, and its namespace unless default."""
    rec = table.to_record()
    if scope:
        rec["scope"] = scope
    return rec
