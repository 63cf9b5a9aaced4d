"""The change log: every item-level change of a table with a stream or GSIs, in commit order, durable.

A write appends one record (``keyspace.change_key(seq)``) in its own storage transaction, so the log holds a
change exactly when the store holds it, whatever crashes. The record says what happened to the item (the event,
its storage key, the stored old and new values, when, whether the service did it) and, for a table with GSIs,
the GSI entry changes the write implies. It is the one source for what follows a write:

* GSI propagation: a record with GSI changes is also marked pending (``keyspace.gsi_pending_key(seq)``); the
  propagator applies pending records in sequence order and removes the mark, in one storage transaction per
  chunk, so each is applied exactly once (a record is either still marked, and applied after a restart, or its
  changes are in the index). Applying in order leaves each entry as the newest write made it, which is what
  DynamoDB's eventually consistent GSIs converge to. Changes to an index no longer maintained are skipped.
* Streams: a record written while the table's stream is enabled belongs to a shard (engine/stream_shards.py)
  and is indexed under it (``keyspace.shard_record_key``), so a shard's records are read in order without
  walking the others. Such records are kept for the retention period (24 hours) and then trimmed; a record no
  stream needs is removed as soon as its GSI changes are applied.

Sequence numbers only grow, across restarts and trims: the next one is found from the newest record and from
the high-water mark the trim saves.

Lag (commit of the write to commit of its GSI changes) is measured in memory with ``time.perf_counter`` for
records written by this process; ``lag_summary`` gives percentiles. Watermarks: ``last_added`` is the sequence
number of the newest record with GSI changes (written by this process, or left by an earlier one),
``applied_through`` that of the newest one applied. A GSI read compares the two (one integer comparison) and,
when records are pending, applies them up to the ``last_added`` it saw before reading
(``engine/indexes.catch_up``), so it sees every write acknowledged before it arrived.
"""

from __future__ import annotations

import itertools
import struct
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import orjson

from dynastore.storage import keyspace
from dynastore.storage.catalog import Catalog
from dynastore.storage.itemcodec import stored_size
from dynastore.storage.kv import KV, ReadTxn, WriteTxn
from dynastore.util.clock import Clock

__all__ = [
    "INSERT",
    "MODIFY",
    "NO_EVENT",
    "REMOVE",
    "ChangeLog",
    "ChangeRecord",
    "GsiChange",
    "IndexTarget",
    "decode_record",
    "encode_record",
    "event_of",
]

GsiChange = tuple[bytes, bytes | None]  # (entry key, stored entry or None to delete it)

# What happened to the item. NO_EVENT: its data did not change (only a record's GSI changes matter, if any).
NO_EVENT, INSERT, MODIFY, REMOVE = 0, 1, 2, 3
EVENT_NAMES = ("", "INSERT", "MODIFY", "REMOVE")

_BY_SERVICE = 0x80  # flag in the event byte: the service made the change (TTL), not a client
_ABSENT = 0xFFFFFFFF
_HEAD = struct.Struct(">BdII")  # event byte, time (server clock), table id, shard number (0: in no stream)
_LAG_SAMPLES = 20_000


@dataclass(frozen=True, slots=True)
class IndexTarget:
    """A GSI the propagator may write: where its statistics go (the catalog of its table's namespace)."""

    catalog: Catalog
    table_name: str
    index_id: int


class ChangeRecord:
    """One change of one item, decoded (``old`` / ``new``: the stored values, itemcodec, or None)."""

    __slots__ = ("seq", "at", "table_id", "shard", "event", "by_service", "key", "old", "new", "gsi")

    def __init__(
        self,
        seq: int,
        at: float,
        table_id: int,
        shard: int,
        event: int,
        by_service: bool,
        key: bytes,
        old: bytes | None,
        new: bytes | None,
        gsi: list[GsiChange],
    ) -> None:
        self.seq = seq
        self.at = at
        self.table_id = table_id
        self.shard = shard
        self.event = event
        self.by_service = by_service
        self.key = key
        self.old = old
        self.new = new
        self.gsi = gsi

    @property
    def event_name(self) -> str:
        return EVENT_NAMES[self.event]


def event_of(old: bytes | None, new: bytes | None, changed: bool) -> int:
    """INSERT, MODIFY or REMOVE; NO_EVENT when the item's data did not change (``changed`` is False)."""
    if old is None:
        return NO_EVENT if new is None else INSERT
    if new is None:
        return REMOVE
    return MODIFY if changed else NO_EVENT


def _sized(value: bytes | None) -> list[bytes]:
    if value is None:
        return [_ABSENT.to_bytes(4, "big")]
    return [len(value).to_bytes(4, "big"), value]


def encode_record(
    at: float,
    table_id: int,
    shard: int,
    event: int,
    by_service: bool,
    key: bytes,
    old: bytes | None,
    new: bytes | None,
    gsi: list[GsiChange],
) -> bytes:
    parts = [_HEAD.pack(event | (_BY_SERVICE if by_service else 0), at, table_id, shard)]
    parts.append(len(key).to_bytes(2, "big"))
    parts.append(key)
    parts.extend(_sized(old))
    parts.extend(_sized(new))
    for entry_key, value in gsi:
        parts.append(len(entry_key).to_bytes(2, "big"))
        parts.append(entry_key)
        parts.extend(_sized(value))
    return b"".join(parts)


def _read_sized(view: memoryview, pos: int) -> tuple[bytes | None, int]:
    length = int.from_bytes(view[pos : pos + 4], "big")
    pos += 4
    if length == _ABSENT:
        return None, pos
    return bytes(view[pos : pos + length]), pos + length


def decode_record(seq: int, raw: bytes) -> ChangeRecord:
    view = memoryview(raw)
    flags, at, table_id, shard = _HEAD.unpack_from(view, 0)
    pos = _HEAD.size
    klen = int.from_bytes(view[pos : pos + 2], "big")
    key = bytes(view[pos + 2 : pos + 2 + klen])
    pos += 2 + klen
    old, pos = _read_sized(view, pos)
    new, pos = _read_sized(view, pos)
    gsi: list[GsiChange] = []
    end = len(raw)
    while pos < end:
        elen = int.from_bytes(view[pos : pos + 2], "big")
        entry_key = bytes(view[pos + 2 : pos + 2 + elen])
        value, pos = _read_sized(view, pos + 2 + elen)
        gsi.append((entry_key, value))
    return ChangeRecord(seq, at, table_id, shard, flags & 0x7F, bool(flags & _BY_SERVICE), key, old, new, gsi)


def _seq_of(key: bytes) -> int:
    return int.from_bytes(key[1:9], "big")


class ChangeLog:
    """The change log of one dynastore. Used from the event-loop thread only (like the KV)."""

    def __init__(self, kv: KV, clock: Clock, delay: float = 0.0) -> None:
        self._kv = kv
        self._clock = clock
        self._delay = delay
        self._next_seq, self.trimmed_through = _next_seq(kv)  # trimmed_through: newest seq trimmed (-1: none)
        self.last_added = _newest(kv, keyspace.gsi_pending_prefix())  # pending GSI records of an earlier run
        self.applied_through = -1  # seq of the newest record whose GSI changes were applied by this process
        self._enqueued: deque[tuple[int, float]] = deque()  # (seq, perf_counter) of GSI records written here
        self._lags: deque[float] = deque(maxlen=_LAG_SAMPLES)
        self.applied = 0  # GSI records applied since start (diagnostics, metrics)
        self.lag_seconds = 0.0  # the propagation lags of those records, added up (metrics)
        self.wake: Callable[[], None] | None = None  # set by the host: schedule the propagator soon

    # ---- writing --------------------------------------------------------------------------------------------
    def append(
        self,
        txn: WriteTxn,
        *,
        table_id: int,
        shard: int,
        event: int,
        by_service: bool,
        key: bytes,
        old: bytes | None,
        new: bytes | None,
        gsi: list[GsiChange],
    ) -> int:
        """Append one change in ``txn`` (the write's own transaction); returns its sequence number."""
        seq = self._next_seq
        self._next_seq = seq + 1
        txn.put(
            keyspace.change_key(seq),
            encode_record(self._clock.now(), table_id, shard, event, by_service, key, old, new, gsi),
        )
        if shard:
            txn.put(keyspace.shard_record_key(table_id, shard, seq), b"")
        if gsi:
            txn.put(keyspace.gsi_pending_key(seq), b"")
            self.last_added = seq
            self._enqueued.append((seq, time.perf_counter()))
            wake = self.wake
            if wake is not None:
                wake()
        return seq

    @property
    def next_seq(self) -> int:
        return self._next_seq

    @property
    def simulates_lag(self) -> bool:
        """``--gsi-propagation-delay``: records wait that long, and reads do not catch up with them."""
        return self._delay > 0

    # ---- GSI propagation ------------------------------------------------------------------------------------
    def apply(self, targets: Mapping[int, IndexTarget], max_records: int) -> bool:
        """Apply the GSI changes of up to ``max_records`` pending records in one transaction; True while records
        are left (ready or not)."""
        prefix = keyspace.gsi_pending_prefix()
        now = self._clock.now()
        done_seq = -1
        pending = False
        stats: dict[IndexTarget, list[int]] = {}
        with self._kv.write() as txn:
            marks = list(itertools.islice(txn.iter_range(prefix, keyspace.prefix_end(prefix)), max_records + 1))
            if len(marks) > max_records:
                marks.pop()
                pending = True
            for mark, legacy in marks:
                seq = _seq_of(mark)
                if legacy:  # a GSI backlog record of an earlier version: its changes are in the mark itself
                    for entry_key, value in _legacy_changes(legacy):
                        target = targets.get(int.from_bytes(entry_key[1:5], "big"))
                        if target is not None:
                            _apply_change(txn, entry_key, value, stats.setdefault(target, [0, 0]))
                    txn.delete(mark)
                    done_seq = seq
                    continue
                record_key = keyspace.change_key(seq)
                raw = txn.get(record_key)
                if raw is not None:
                    record = decode_record(seq, raw)
                    if self._delay > 0 and now < record.at + self._delay:
                        pending = True
                        break
                    for entry_key, value in record.gsi:
                        target = targets.get(int.from_bytes(entry_key[1:5], "big"))
                        if target is not None:
                            _apply_change(txn, entry_key, value, stats.setdefault(target, [0, 0]))
                    if not record.shard:
                        txn.delete(record_key)  # no stream keeps it
                txn.delete(mark)
                done_seq = seq
        if done_seq >= 0:
            self.applied_through = done_seq
            self._account(done_seq)
        for target, (items, size) in stats.items():
            target.catalog.add_index_stats(target.table_name, target.index_id, items, size)
        return pending

    def has_pending(self) -> bool:
        prefix = keyspace.gsi_pending_prefix()
        with self._kv.read() as txn:
            return next(iter(txn.iter_range(prefix, keyspace.prefix_end(prefix))), None) is not None

    def _account(self, done_seq: int) -> None:
        now = time.perf_counter()
        enqueued = self._enqueued
        while enqueued and enqueued[0][0] <= done_seq:
            _, at = enqueued.popleft()
            lag = now - at
            self._lags.append(lag)
            self.lag_seconds += lag
            self.applied += 1

    # ---- streams --------------------------------------------------------------------------------------------
    def read_shard(self, txn: ReadTxn, table_id: int, shard: int, after_seq: int, limit: int) -> Iterator[ChangeRecord]:
        """Up to ``limit`` records of a shard with a sequence number above ``after_seq``, in order."""
        lo = keyspace.shard_record_key(table_id, shard, after_seq + 1)
        hi = keyspace.prefix_end(keyspace.shard_record_prefix(table_id, shard))
        for mark, _ in itertools.islice(txn.iter_range(lo, hi), limit):
            seq = int.from_bytes(mark[-8:], "big")
            raw = txn.get(keyspace.change_key(seq))
            if raw is not None:
                yield decode_record(seq, raw)

    def trim(self, before: float, max_records: int) -> bool:
        """Delete up to ``max_records`` records written at or before ``before`` (their retention passed) whose GSI
        changes are applied; True while more may be due. The next sequence number is saved, so sequence numbers
        never go back even when the log empties."""
        prefix = keyspace.change_prefix()
        trimmed = 0
        with self._kv.write() as txn:
            for key, raw in txn.iter_range(prefix, keyspace.prefix_end(prefix)):
                seq = _seq_of(key)
                record = decode_record(seq, raw)
                if record.at > before or trimmed >= max_records:
                    break
                if txn.get(keyspace.gsi_pending_key(seq)) is not None:
                    break  # its GSI changes come first
                txn.delete(key)
                if record.shard:
                    txn.delete(keyspace.shard_record_key(record.table_id, record.shard, seq))
                trimmed += 1
                self.trimmed_through = seq
            if trimmed:
                txn.put(
                    keyspace.meta_key(keyspace.CHANGELOG_RECORD),
                    orjson.dumps({"kind": "changelog", "next": self._next_seq, "trimmed": self.trimmed_through}),
                )
        return trimmed >= max_records

    # ---- lag ------------------------------------------------------------------------------------------------
    def lag_summary(self) -> dict[str, float | int]:
        """Percentiles (milliseconds) of the propagation lag of the last records applied, and their count."""
        lags = sorted(self._lags)
        out: dict[str, float | int] = {"samples": len(lags), "applied": self.applied, "waiting": len(self._enqueued)}
        for name, q in (("p50_ms", 0.50), ("p90_ms", 0.90), ("p99_ms", 0.99), ("max_ms", 1.0)):
            out[name] = round(lags[min(len(lags) - 1, int(q * len(lags)))] * 1000, 3) if lags else 0.0
        return out

    def lag_samples(self) -> list[float]:
        """The propagation lags (seconds) of the last records applied, sorted."""
        return sorted(self._lags)

    @property
    def waiting(self) -> int:
        """GSI records written by this process and not applied yet."""
        return len(self._enqueued)

    def reset_lag(self) -> None:
        self._lags.clear()


def _newest(kv: KV, prefix: bytes) -> int:
    """The seq of the newest key under ``prefix`` (the change log or its GSI marks), or -1."""
    with kv.read() as txn:
        last = next(iter(txn.iter_range(prefix, keyspace.prefix_end(prefix), reverse=True)), None)
    return -1 if last is None else _seq_of(last[0])


def _next_seq(kv: KV) -> tuple[int, int]:
    """The next sequence number and the newest one trimmed (-1: none), from the store."""
    saved, trimmed = 0, -1
    with kv.read() as txn:
        raw = txn.get(keyspace.meta_key(keyspace.CHANGELOG_RECORD))
    if raw is not None:
        rec = orjson.loads(raw)
        saved, trimmed = int(rec["next"]), int(rec.get("trimmed", -1))
    return max(saved, _newest(kv, keyspace.change_prefix()) + 1), trimmed


def _legacy_changes(raw: bytes) -> list[GsiChange]:
    """The GSI changes of a backlog record written by an earlier version (enqueue time, then the changes)."""
    view = memoryview(raw)
    changes: list[GsiChange] = []
    pos, end = 8, len(raw)
    while pos < end:
        klen = int.from_bytes(view[pos : pos + 2], "big")
        entry_key = bytes(view[pos + 2 : pos + 2 + klen])
        value, pos = _read_sized(view, pos + 2 + klen)
        changes.append((entry_key, value))
    return changes


def _apply_change(txn: WriteTxn, key: bytes, value: bytes | None, stats: list[int]) -> None:
    """Write one entry change, keeping the index's item count and size (``stats``: [items, bytes])."""
    before = txn.get(key)
    if before is not None:
        stats[0] -= 1
        stats[1] -= stored_size(before)
    if value is None:
        if before is not None:
            txn.delete(key)
        return
    txn.put(key, value)
    stats[0] += 1
    stats[1] += stored_size(value)
