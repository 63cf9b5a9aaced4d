"""GSI propagation: the change log consumer that writes a write's GSI entry changes into the indexes, after the
write (engine/changelog.py; docs/design.md "The change log and its consumers").

It follows every table with GSIs and needs only the GSI entry changes of a write. Its position is kept per
record, not as one number: the log marks a record with GSI changes pending (``keyspace.gsi_pending_key(seq)``)
when it appends it, and ``apply`` writes a chunk of pending records' changes into the indexes and removes their
marks in one storage transaction, so each is applied exactly once (a record is either still marked, and applied
after a restart, or its changes are in the index). Applying in sequence order leaves each entry as the newest
write made it, which is what DynamoDB's eventually consistent GSIs converge to. Changes to an index no longer
maintained are skipped. A record no other consumer follows is removed as soon as its GSI changes are applied; the
log's trimming never passes a marked record.

Watermarks: ``last_added`` is the sequence number of the newest record with GSI changes (written by this process,
told by the log's ``marked``, or left by an earlier one), ``applied_through`` that of the newest one applied. A
GSI read compares the two (one integer comparison) and, when records are pending, applies them up to the
``last_added`` it saw before reading (``engine/indexes.catch_up``), so it sees every write acknowledged before it
arrived. Lag (commit of the write to commit of its GSI changes) is measured in memory with
``time.perf_counter`` for records written by this process; ``lag_summary`` gives percentiles.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dynastore.engine.changelog import (
    INDEX_CHANGES,
    NOT_FOLLOWED,
    ChangeRecord,
    GsiChange,
    decode_records,
    newest_seq,
    read_sized,
    seq_of,
)
from dynastore.model.table_schema import TableDef
from dynastore.storage import keyspace
from dynastore.storage.catalog import Catalog
from dynastore.storage.itemcodec import stored_size
from dynastore.storage.kv import KV, WriteTxn
from dynastore.util.clock import Clock

__all__ = ["GsiPropagation", "IndexTarget"]

_LAG_SAMPLES = 20_000


@dataclass(frozen=True, slots=True)
class IndexTarget:
    """A GSI the propagator may write: where its statistics go (the catalog of its table's namespace)."""

    catalog: Catalog
    table_name: str
    index_id: int


class GsiPropagation:
    """A change log consumer (engine/changelog.py ``Consumer``); its pending marks are its checkpoint."""

    def __init__(self, kv: KV, clock: Clock, delay: float = 0.0) -> None:
        """``delay``: ``--gsi-propagation-delay``, how long a record waits before it is applied."""
        self.name = "gsi-propagation"
        self._kv = kv
        self._clock = clock
        self.delay = delay
        self.last_added = newest_seq(kv, keyspace.gsi_pending_prefix())  # pending GSI records of an earlier run
        self.applied_through = -1  # seq of the newest record whose GSI changes were applied by this process
        self._enqueued: deque[tuple[int, float]] = deque()  # (seq, perf_counter) of GSI records written here
        self._lags: deque[float] = deque(maxlen=_LAG_SAMPLES)
        self.applied = 0  # GSI records applied since start (diagnostics, metrics)
        self.lag_seconds = 0.0  # the propagation lags of those records, added up (metrics)
        self.wake: Callable[[], None] | None = None  # set by the host: schedule the propagator soon

    def marked(self, seq: int) -> None:
        """The log marked record ``seq`` pending (``ChangeLog.marked``): a GSI read waits for it, the propagator
        is woken."""
        self.last_added = seq
        self._enqueued.append((seq, time.perf_counter()))
        wake = self.wake
        if wake is not None:
            wake()

    @property
    def simulates_lag(self) -> bool:
        """``--gsi-propagation-delay``: records wait that long, and reads do not catch up with them."""
        return self.delay > 0

    # ---- the consumer -----------------------------------------------------------------------------------------
    @property
    def checkpoint_key(self) -> bytes:
        return keyspace.consumer_record_key(self.name)  # never written: the pending marks are its position

    def need(self, table: TableDef) -> int:
        return INDEX_CHANGES if table.gsis else NOT_FOLLOWED

    def holds(self, record: ChangeRecord, now: float) -> bool:
        return False  # the log itself never trims a record still marked pending

    # ---- applying ---------------------------------------------------------------------------------------------
    def apply(self, targets: Mapping[int, IndexTarget], max_records: int) -> bool:
        """Apply the GSI changes of up to ``max_records`` pending records in one transaction; True while records
        are left (ready or not). ``targets``: the GSIs that may be written, by index id."""
        prefix = keyspace.gsi_pending_prefix()
        now = self._clock.now()
        delay = self.delay
        # Read before this transaction opens: every write that marked a record up to here has committed by then,
        # or was taken back with its record and mark (a cancelled transaction, a failed condition after the log
        # append), since one write transaction runs at a time.
        marked_before = self.last_added
        done_seq = -1
        pending = False
        applied: set[int] = set()
        stats: dict[IndexTarget, list[int]] = {}
        with self._kv.write() as txn:
            marks = list(itertools.islice(txn.iter_range(prefix, keyspace.prefix_end(prefix)), max_records + 1))
            if len(marks) > max_records:
                marks.pop()
                pending = True
            for mark, legacy in marks:
                seq = seq_of(mark)
                if legacy:  # a GSI backlog record of an earlier version: its changes are in the mark itself
                    _apply_changes(txn, _legacy_changes(legacy), targets, stats)
                    txn.delete(mark)
                    done_seq = seq
                    applied.add(seq)
                    continue
                record_key = keyspace.change_key(seq)
                raw = txn.get(record_key)
                if raw is not None:
                    records = decode_records(seq, raw)  # one, or a group's (one transaction's)
                    if delay > 0 and now < records[0].at + delay:
                        pending = True
                        break
                    for record in records:
                        _apply_changes(txn, record.gsi, targets, stats)
                    if not any(record.kept for record in records):
                        txn.delete(record_key)  # no other consumer follows it
                txn.delete(mark)
                done_seq = seq
                applied.add(seq)
        if not pending:
            # No mark is left: a record marked without one was taken back with its write. Settled too, else GSI
            # reads would try to catch up with it, and the backlog would count it, until the next GSI write.
            done_seq = max(done_seq, marked_before)
        if done_seq > self.applied_through:
            self.applied_through = done_seq
            self._account(done_seq, applied)
        for target, (items, size) in stats.items():
            target.catalog.add_index_stats(target.table_name, target.index_id, items, size)
        return pending

    # ---- lag ------------------------------------------------------------------------------------------------
    def _account(self, done_seq: int, applied: set[int]) -> None:
        """The records written here up to ``done_seq`` are settled; those in ``applied`` had their changes applied
        (the others were taken back with their writes: no lag, not counted)."""
        now = time.perf_counter()
        enqueued = self._enqueued
        while enqueued and enqueued[0][0] <= done_seq:
            seq, at = enqueued.popleft()
            if seq not in applied:
                continue
            lag = now - at
            self._lags.append(lag)
            self.lag_seconds += lag
            self.applied += 1

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

    def has_pending(self) -> bool:
        """Whether a record's GSI changes wait to be applied."""
        prefix = keyspace.gsi_pending_prefix()
        with self._kv.read() as txn:
            return next(iter(txn.iter_range(prefix, keyspace.prefix_end(prefix))), None) is not None


def _apply_changes(
    txn: WriteTxn, changes: list[GsiChange], targets: Mapping[int, IndexTarget], stats: dict[IndexTarget, list[int]]
) -> None:
    for entry_key, value in changes:
        target = targets.get(int.from_bytes(entry_key[1:5], "big"))
        if target is not None:
            _apply_change(txn, entry_key, value, stats.setdefault(target, [0, 0]))


def _legacy_changes(raw: bytes) -> list[GsiChange]:
    """The GSI changes of a backlog record written by an earlier version (enqueue time, then the changes)."""
    view = memoryview(raw)
    changes: list[GsiChange] = []
    pos, end = 8, len(raw)
    while pos < end:
        klen = int.from_bytes(view[pos : pos + 2], "big")
        entry_key = bytes(view[pos + 2 : pos + 2 + klen])
        value, pos = read_sized(view, pos + 2 + klen)
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
