"""The durable log of a replica: etcd's log (storage/durability.py's seam, docs/cluster.md "Write path").

A position is ``(index, 0)``: the place after log entry ``index`` (entry ``i`` is one sealed batch of physical
operations). The same class serves both roles of a node's store:

- *Leading*: ``append`` numbers each sealed batch after the last and keeps it; ``sync`` sends every batch kept
  since the last sync to etcd in transactions fenced by the write lease (the leader key's create revision) and
  by the log's head, so a deposed leader's append is refused and no two leaders interleave. A write is
  acknowledged only once its batch is in etcd (a majority of its members fsynced it). A refused or failed
  append raises ``DurabilityError``: the store takes back what it applied (as after a local log failure) and
  the node gives up the lease (``on_lost``), because a timeout leaves the outcome unknown and only the log
  itself can say; the node then reads it back as a follower.
- *Following*: the node's apply loop writes each entry of etcd's log into the store, announcing its index
  first (``expect``); the store seals it into this log, which only records the index (the entry is durable
  already). A write that no entry announced is refused: a follower's store changes only by applying the log.

Batches are kept in memory until the store's file holds them durably (``applied``), which the store reports
after a checkpoint; the node then records that index in its data directory (``APPLIED_FILE``) and in etcd, so
that a restart resumes applying there and etcd can forget the entries every replica holds. Nothing is
``recovered``: after a crash the node reapplies from the recorded index (applying an entry twice is harmless,
storage/durability.py invariant 2).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator

from dynastore.replication.etcd_client import EtcdClient, EtcdUnavailable, Fenced
from dynastore.replication.etcd_config import MAX_TXN_BYTES, MAX_TXN_ENTRIES
from dynastore.storage.durability import Batch, LogSyncer, Operation, Position, decode_batch
from dynastore.storage.kv import DurabilityError, OutcomeUnknownError

__all__ = ["APPLIED_FILE", "ReplicatedLog", "read_applied", "record_applied"]

APPLIED_FILE = "cluster-applied"  # in the data directory: the log index the store's file holds durably
COMPACT_AFTER_BYTES = 64 << 20  # the store checkpoints once this much was logged since the last one


def read_applied(data_dir: str) -> int:
    """The log index the store in ``data_dir`` holds durably (0: none recorded)."""
    try:
        with open(os.path.join(data_dir, APPLIED_FILE), "rb") as f:
            return int(f.read().strip() or b"0")
    except FileNotFoundError:
        return 0


def record_applied(data_dir: str, index: int) -> None:
    """Record durably that the store in ``data_dir`` holds the log up to ``index``."""
    path = os.path.join(data_dir, APPLIED_FILE)
    temporary = path + ".tmp"
    with open(temporary, "wb") as f:
        f.write(b"%d\n" % index)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)


class ReplicatedLog:
    """``DurableLog`` over etcd for the store in ``data_dir``. ``fence`` (leading): the leader key's create
    revision; None: following. ``on_lost``: called (from any thread) once an append failed or was refused."""

    def __init__(
        self,
        data_dir: str,
        etcd: EtcdClient,
        *,
        fence: int | None = None,
        on_applied: Callable[[int], None] | None = None,
        on_lost: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._dir = data_dir
        self._etcd = etcd
        self._fence = fence
        self._on_applied = on_applied
        self._on_lost = on_lost
        self._applied = read_applied(data_dir)
        self._end = self._applied  # the newest entry appended
        self._synced = self._applied  # the newest entry known durable in etcd
        self._kept: list[tuple[int, bytes]] = []  # entries after _applied, oldest first
        self._unsynced: list[tuple[int, bytes]] = []  # leading: the entries after _synced, oldest first
        self._logged_bytes = 0
        self._expected: int | None = None  # following: the entry the apply loop is writing
        self._lock = threading.Lock()  # _kept/_end between the owner thread and a syncing worker
        self._sync_lock = threading.Lock()  # one sync at a time, so appends reach etcd in order
        self._lost = False
        self._in_doubt = False  # the append that lost the lease was not answered: etcd may hold it
        # What the leader sent (GET /dynastore/cluster, /metrics): etcd transactions, the entries and bytes in
        # them, and the seconds spent waiting for them.
        self.transactions = 0
        self.entries_sent = 0
        self.bytes_sent = 0
        self.append_seconds = 0.0

    @property
    def leading(self) -> bool:
        return self._fence is not None

    @property
    def location(self) -> str:
        return "the cluster's etcd log"

    @property
    def synced_index(self) -> int:
        return self._synced

    def start_at(self, index: int) -> None:
        """Leading: the log's head in etcd (every entry up to it is in the store): appends follow it."""
        self._end = self._synced = index

    def expect(self, index: int) -> None:
        """Following: the next write the store commits is log entry ``index``."""
        self._expected = index

    # ---- opening

    def recovered(self) -> Iterator[list[Operation]] | None:
        return None  # a restarted node reapplies etcd's log from the recorded index instead

    def discard_recovered(self) -> None:
        pass

    def open(self) -> Position:
        return (self._end, 0)

    def oldest(self) -> Position:
        return (self._applied, 0)

    # ---- running

    def end(self) -> Position:
        return (self._end, 0)

    def append(self, batch: Batch) -> None:
        payload = b"".join(batch)
        with self._lock:
            if self._fence is None:
                index = self._expected
                if index is None or index <= self._end:
                    raise DurabilityError("a follower's store changes only by applying the cluster's log")
                self._expected = None
                self._synced = index  # already durable: it came from etcd
            else:
                if self._lost:
                    raise self._refusal()
                index = self._end + 1
            self._end = index
            self._kept.append((index, payload))
            if self._fence is not None:
                self._unsynced.append((index, payload))
            self._logged_bytes += len(payload)

    def sync(self) -> None:
        if self._fence is None:
            return
        with self._lock:
            target = self._end  # every entry appended before this call must be in etcd when it returns
        with self._sync_lock:
            if self._lost:
                raise self._refusal()
            with self._lock:
                pending = list(self._unsynced)
            for group in _transactions(pending):
                self._send(group)
            if self._synced < target:
                # Another sync took these entries and failed: nothing after it may be reported durable.
                raise DurabilityError("the cluster's log did not take every write")

    def _send(self, group: list[tuple[int, bytes]]) -> None:
        fence = self._fence
        assert fence is not None
        head = group[0][0] - 1
        started = time.monotonic()
        try:
            self._etcd.append(fence, head, group)
        except Fenced as e:
            self._lose(e)
            raise DurabilityError(f"the cluster's log did not take the write: {e}") from e
        except EtcdUnavailable as e:
            # etcd may have committed it without answering (a timeout, quorum lost after the proposal): the
            # writes are answered as in doubt, since the node that next applies the log may apply them.
            self._lose(e)
            raise OutcomeUnknownError(f"the cluster's log did not answer: {e}") from e
        last = group[-1][0]
        with self._lock:
            self._synced = max(self._synced, last)
            self._unsynced = [entry for entry in self._unsynced if entry[0] > last]
            self.transactions += 1
            self.entries_sent += len(group)
            self.bytes_sent += sum(len(payload) for _, payload in group)
            self.append_seconds += time.monotonic() - started

    def _refusal(self) -> DurabilityError:
        """What an append or sync after the lease was lost raises. After an append etcd did not answer, the
        writes not yet known durable may still be in the log: whichever path takes them back first reports them
        in doubt (500), never as refused (503)."""
        if self._in_doubt:
            return OutcomeUnknownError("the cluster's log did not answer an earlier append of this node")
        return DurabilityError("this node no longer holds the write lease")

    def _lose(self, error: BaseException) -> None:
        with self._lock:
            already, self._lost = self._lost, True
            if not already:
                self._in_doubt = isinstance(error, EtcdUnavailable)
        if not already and self._on_lost is not None:
            self._on_lost(error)

    def background_sync(self) -> LogSyncer | None:
        return None  # a worker thread waits for etcd

    def take_back(self, position: Position) -> None:
        index = position[0]
        with self._lock:
            self._kept = [entry for entry in self._kept if entry[0] <= index]
            self._unsynced = [entry for entry in self._unsynced if entry[0] <= index]
            self._end = index
            self._synced = min(self._synced, index)

    def replay(self, start: Position, stop: Position) -> Iterator[list[Operation]]:
        with self._lock:
            entries = [payload for index, payload in self._kept if start[0] < index <= stop[0]]
        for payload in entries:
            yield decode_batch(memoryview(payload))

    @property
    def compaction_due(self) -> bool:
        return self._logged_bytes >= COMPACT_AFTER_BYTES

    def compact(self) -> Position:
        self._logged_bytes = 0
        return (self._end, 0)

    def applied(self, position: Position) -> None:
        index = position[0]
        if self._fence is not None:
            index = min(index, self._synced)  # never past what etcd holds (a file may not hold more)
        with self._lock:
            self._kept = [entry for entry in self._kept if entry[0] > index]
        if index > self._applied:
            record_applied(self._dir, index)
            self._applied = index
            if self._on_applied is not None:
                self._on_applied(index)

    def holds_records(self) -> bool:
        return bool(self._kept)

    def close(self, discard: bool = True) -> None:
        if discard:
            # The store's file holds every entry durably (it synced before closing the log).
            self.applied((self._end, 0))


def _transactions(entries: list[tuple[int, bytes]]) -> Iterator[list[tuple[int, bytes]]]:
    """``entries`` in groups of consecutive entries that each fit one etcd transaction (its bytes and its number
    of operations)."""
    group: list[tuple[int, bytes]] = []
    size = 0
    for entry in entries:
        if group and (size + len(entry[1]) > MAX_TXN_BYTES or len(group) >= MAX_TXN_ENTRIES):
            yield group
            group, size = [], 0
        group.append(entry)
        size += len(entry[1])
    if group:
        yield group
