"""The durable GSI backlog: index updates written with the item, applied to the GSIs shortly after.

A write to a table with GSIs stores, in its own storage transaction, one backlog record
(``keyspace.backlog_key(seq)``) listing the GSI entry changes it implies: "put this entry" or "delete this
entry key". The propagator applies records in sequence order and deletes them, in one storage transaction per
chunk, so every record is applied exactly once whatever crashes: a record is either still in the backlog (and
will be applied after a restart) or its changes are in the index. Applying records in order leaves each entry
as the newest write made it, which is what DynamoDB's eventually consistent GSIs converge to.

Record format: the enqueue time (8-byte big-endian float, by the server clock, for ``gsi_propagation_delay``)
then per change: key length (2 bytes), key, value length (4 bytes; ``FFFFFFFF`` for a delete), value.

Changes to an index that is no longer maintained (deleted, or its table dropped) are skipped when applied:
the catalog purges that index's key range, and nothing may write there again.

Lag (commit of the write to commit of its index changes) is measured in memory with ``time.perf_counter``
for records enqueued by this process; ``lag_summary`` gives percentiles.

Watermarks: ``last_added`` is the sequence number of the newest record (written by this process, or left by an
earlier one), ``applied_through`` that of the newest record applied. A GSI read compares the two (one integer
comparison) and, when records are pending, applies the backlog up to the ``last_added`` it saw before reading
(``engine/indexes.catch_up``), so it sees every write acknowledged before it arrived.
"""

from __future__ import annotations

import itertools
import struct
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dynastore.storage import keyspace
from dynastore.storage.itemcodec import stored_size
from dynastore.storage.kv import KV, WriteTxn
from dynastore.util.clock import Clock

__all__ = ["Backlog", "Change", "IndexTarget", "decode_record", "encode_record"]

Change = tuple[bytes, bytes | None]  # (entry key, stored entry or None to delete it)

_DELETE = 0xFFFFFFFF
_TIME = struct.Struct(">d")
_LAG_SAMPLES = 20_000


@dataclass(frozen=True, slots=True)
class IndexTarget:
    """A GSI the propagator may write: where its statistics go."""

    table_name: str
    index_id: int


StatsSink = Callable[[str, int, int, int], None]  # (table name, index id, item delta, byte delta)


def encode_record(enqueued_at: float, changes: list[Change]) -> bytes:
    parts = [_TIME.pack(enqueued_at)]
    for key, value in changes:
        parts.append(len(key).to_bytes(2, "big"))
        parts.append(key)
        if value is None:
            parts.append(_DELETE.to_bytes(4, "big"))
        else:
            parts.append(len(value).to_bytes(4, "big"))
            parts.append(value)
    return b"".join(parts)


def decode_record(raw: bytes) -> tuple[float, list[Change]]:
    view = memoryview(raw)
    enqueued_at = _TIME.unpack_from(view, 0)[0]
    changes: list[Change] = []
    pos = _TIME.size
    end = len(raw)
    while pos < end:
        klen = int.from_bytes(view[pos : pos + 2], "big")
        key = bytes(view[pos + 2 : pos + 2 + klen])
        pos += 2 + klen
        vlen = int.from_bytes(view[pos : pos + 4], "big")
        pos += 4
        if vlen == _DELETE:
            changes.append((key, None))
        else:
            changes.append((key, bytes(view[pos : pos + vlen])))
            pos += vlen
    return enqueued_at, changes


class Backlog:
    """The backlog of one server. Used from the event-loop thread only (like the KV)."""

    def __init__(self, kv: KV, clock: Clock, delay: float = 0.0) -> None:
        self._kv = kv
        self._clock = clock
        self._delay = delay
        self._next_seq: int | None = None  # found from the write's own transaction (it sees an open batch)
        self.last_added = _newest(kv)  # records an earlier run left behind count as pending for reads
        self.applied_through = -1  # seq of the newest record applied (or skipped) by this process
        self._enqueued: deque[tuple[int, float]] = deque()  # (seq, perf_counter) of records written here
        self._lags: deque[float] = deque(maxlen=_LAG_SAMPLES)
        self.applied = 0  # records applied since start (diagnostics)
        self.wake: Callable[[], None] | None = None  # set by the server: schedule the propagator soon

    # ---- writing --------------------------------------------------------------------------------------------
    def add(self, txn: WriteTxn, changes: list[Change]) -> None:
        """Store ``changes`` in ``txn`` (the write's own transaction)."""
        seq = self._take_seq(txn)
        txn.put(keyspace.backlog_key(seq), encode_record(self._clock.now(), changes))
        self._enqueued.append((seq, time.perf_counter()))
        wake = self.wake
        if wake is not None:
            wake()

    def _take_seq(self, txn: WriteTxn) -> int:
        seq = self._next_seq
        if seq is None:
            prefix = keyspace.backlog_prefix()
            last = next(iter(txn.iter_range(prefix, keyspace.prefix_end(prefix), reverse=True)), None)
            seq = 0 if last is None else int.from_bytes(last[0][1:9], "big") + 1
        self._next_seq = seq + 1
        self.last_added = seq
        return seq

    @property
    def simulates_lag(self) -> bool:
        """``--gsi-propagation-delay``: records wait that long, and reads do not catch up with them."""
        return self._delay > 0

    # ---- applying -------------------------------------------------------------------------------------------
    def apply(self, targets: Mapping[int, IndexTarget], record_stats: StatsSink, max_records: int) -> bool:
        """Apply up to ``max_records`` records in one transaction; True while records are left (ready or not)."""
        prefix = keyspace.backlog_prefix()
        now = self._clock.now()
        done_seq = -1
        pending = False
        stats: dict[IndexTarget, list[int]] = {}
        with self._kv.write() as txn:
            records = list(itertools.islice(txn.iter_range(prefix, keyspace.prefix_end(prefix)), max_records + 1))
            if len(records) > max_records:
                records.pop()
                pending = True
            for key, raw in records:
                enqueued_at, changes = decode_record(raw)
                if self._delay > 0 and now < enqueued_at + self._delay:
                    pending = True
                    break
                for entry_key, value in changes:
                    target = targets.get(int.from_bytes(entry_key[1:5], "big"))
                    if target is not None:
                        _apply_change(txn, entry_key, value, stats.setdefault(target, [0, 0]))
                txn.delete(key)
                done_seq = int.from_bytes(key[1:9], "big")
        if done_seq >= 0:
            self.applied_through = done_seq
            self._account(done_seq)
        for target, (items, size) in stats.items():
            record_stats(target.table_name, target.index_id, items, size)
        return pending

    def has_pending(self) -> bool:
        prefix = keyspace.backlog_prefix()
        with self._kv.read() as txn:
            return next(iter(txn.iter_range(prefix, keyspace.prefix_end(prefix))), None) is not None

    def _account(self, done_seq: int) -> None:
        now = time.perf_counter()
        enqueued = self._enqueued
        while enqueued and enqueued[0][0] <= done_seq:
            _, at = enqueued.popleft()
            self._lags.append(now - at)
            self.applied += 1

    # ---- lag ------------------------------------------------------------------------------------------------
    def lag_summary(self) -> dict[str, float | int]:
        """Percentiles (milliseconds) of the propagation lag of the last records applied, and their count."""
        lags = sorted(self._lags)
        out: dict[str, float | int] = {"samples": len(lags), "applied": self.applied, "waiting": len(self._enqueued)}
        for name, q in (("p50_ms", 0.50), ("p90_ms", 0.90), ("p99_ms", 0.99), ("max_ms", 1.0)):
            out[name] = round(lags[min(len(lags) - 1, int(q * len(lags)))] * 1000, 3) if lags else 0.0
        return out

    def reset_lag(self) -> None:
        self._lags.clear()


def _newest(kv: KV) -> int:
    """The seq of the newest record in the backlog, or -1."""
    prefix = keyspace.backlog_prefix()
    with kv.read() as txn:
        last = next(iter(txn.iter_range(prefix, keyspace.prefix_end(prefix), reverse=True)), None)
    return -1 if last is None else int.from_bytes(last[0][1:9], "big")


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
