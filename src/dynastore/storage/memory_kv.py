"""In-memory engine on a ``sortedcontainers.SortedDict``: the default for tests and ``--in-memory``.

Semantics versus lmdb:

* Write transactions buffer their changes in a dict (``None`` marks a delete) and apply them to the live
  dict on commit; reads inside the transaction see the buffer first. An exception inside ``with kv.write()``
  drops the buffer, so nothing is applied.
* Read transactions are NOT snapshots: they read the live dict. That is enough because everything runs on
  one thread and a write transaction never spans an ``await``, so a read can only observe whole commits.
  The one visible difference: a range iteration suspended across an ``await`` may see commits made
  meanwhile (each key at most once, order kept: iterators re-seek after the last key they returned).
* ``durable_seq == commit_seq`` and ``flush`` is a no-op: nothing is ever durable beyond the process.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import cast

from sortedcontainers import SortedDict, SortedList

from dynastore.storage.kv import LossListener, StorageError

__all__ = ["MemoryKV"]

_MISSING = object()


class _MemoryReadTxn:
    """Stateless view of the live dict; one instance is shared by every ``read()``."""

    __slots__ = ("_kv",)

    def __init__(self, kv: MemoryKV) -> None:
        self._kv = kv

    def __enter__(self) -> _MemoryReadTxn:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None

    def get(self, key: bytes) -> bytes | None:
        return cast("bytes | None", self._kv._data.get(key))

    def iter_range(self, lo: bytes, hi: bytes, *, reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        return _scan(self._kv, None, lo, hi, reverse)


class _MemoryWriteTxn:
    __slots__ = ("_kv", "_pending", "_sorted", "_version", "_done")

    def __init__(self, kv: MemoryKV) -> None:
        self._kv = kv
        self._pending: dict[bytes, bytes | None] = {}
        self._sorted: SortedList | None = None  # pending keys, built on the first iter_range only
        self._version = 0  # bumped by every put/delete, so running iterators re-seek
        self._done = False

    def __enter__(self) -> _MemoryWriteTxn:
        kv = self._kv
        if kv._writer is not None:
            raise StorageError("a write transaction is already open")
        if kv._closed:
            raise StorageError("store is closed")
        kv._writer = self
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        kv = self._kv
        kv._writer = None
        self._done = True
        if exc_type is not None:
            return None
        data = kv._data
        for snapshot in kv._snapshots:
            snapshot._keep(self._pending, data)
        for key, value in self._pending.items():
            if value is None:
                data.pop(key, None)
            else:
                data[key] = value
        if self._pending:
            kv._version += 1
        kv._commit_seq += 1
        return None

    def get(self, key: bytes) -> bytes | None:
        value = self._pending.get(key, _MISSING)
        if value is _MISSING:
            return cast("bytes | None", self._kv._data.get(key))
        return cast("bytes | None", value)

    def put(self, key: bytes, value: bytes) -> None:
        if self._done:
            raise StorageError("write transaction already finished")
        pending = self._pending
        if self._sorted is not None and key not in pending:
            self._sorted.add(key)
        pending[key] = value
        self._version += 1

    def swap(self, key: bytes, value: bytes) -> bytes | None:
        old = self.get(key)
        self.put(key, value)
        return old

    def append(self, key: bytes, value: bytes) -> None:
        self.put(key, value)

    def delete(self, key: bytes) -> bool:
        if self._done:
            raise StorageError("write transaction already finished")
        existed = self.get(key) is not None
        if existed:
            pending = self._pending
            if self._sorted is not None and key not in pending:
                self._sorted.add(key)
            pending[key] = None
            self._version += 1
        return existed

    def iter_range(self, lo: bytes, hi: bytes, *, reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        return _scan(self._kv, self, lo, hi, reverse)

    def _sorted_pending(self) -> SortedList:
        if self._sorted is None:
            self._sorted = SortedList(self._pending)
        return self._sorted


def _scan(
    kv: MemoryKV, txn: _MemoryWriteTxn | None, lo: bytes, hi: bytes, reverse: bool
) -> Iterator[tuple[bytes, bytes]]:
    """Merge the live dict with a write transaction's buffer; re-seek after any change in either."""
    if lo >= hi:
        return
    data = kv._data
    last: bytes | None = None
    while True:
        if last is None:
            b_lo, b_hi, incl = lo, hi, (True, False)
        elif reverse:
            b_lo, b_hi, incl = lo, last, (True, False)
        else:
            b_lo, b_hi, incl = last, hi, (False, False)
        version = kv._version
        keys: Iterator[bytes] = data.irange(b_lo, b_hi, inclusive=incl, reverse=reverse)
        pending: dict[bytes, bytes | None] | None = None
        txn_version = 0
        if txn is not None:
            txn_version = txn._version
            if txn._pending:
                pending = txn._pending
                own = txn._sorted_pending().irange(b_lo, b_hi, inclusive=incl, reverse=reverse)
                keys = heapq.merge(keys, own, reverse=reverse)
        restart = False
        for key in keys:
            if key == last:
                continue  # present both in the dict and in the buffer
            last = key
            value = data.get(key) if pending is None else pending.get(key, _MISSING)
            if value is _MISSING:
                value = data.get(key)
            if value is None:
                continue  # deleted in this transaction
            yield key, cast(bytes, value)
            if kv._version != version or (txn is not None and txn._version != txn_version):
                restart = True
                break
        if not restart:
            return


class _MemorySnapshot:
    """A read transaction that stays a consistent image: before a commit changes a key, the value it had when
    the snapshot began is saved here (once), and reads prefer the saved values to the live dict's. Costs nothing
    until writes happen, then memory in proportion to the keys they change while it is open."""

    __slots__ = ("_kv", "_saved")

    def __init__(self, kv: MemoryKV) -> None:
        self._kv = kv
        self._saved: SortedDict = SortedDict()  # key -> its value when the snapshot began (None: absent)

    def __enter__(self) -> _MemorySnapshot:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self in self._kv._snapshots:
            self._kv._snapshots.remove(self)

    def _keep(self, pending: dict[bytes, bytes | None], data: SortedDict) -> None:
        saved = self._saved
        for key in pending:
            if key not in saved:
                saved[key] = data.get(key)

    def get(self, key: bytes) -> bytes | None:
        saved = self._saved.get(key, _MISSING)
        if saved is _MISSING:
            return cast("bytes | None", self._kv._data.get(key))
        return cast("bytes | None", saved)

    def iter_range(self, lo: bytes, hi: bytes, *, reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        if reverse:
            return reversed(list(self._forward(lo, hi)))
        return self._forward(lo, hi)

    def _forward(self, lo: bytes, hi: bytes) -> Iterator[tuple[bytes, bytes]]:
        """The live keys not changed since the snapshot began, merged with the saved values in key order."""
        saved = self._saved
        last: bytes | None = None
        for key, value in _scan(self._kv, None, lo, hi, False):
            yield from self._saved_between(lo, last, key)
            kept = saved.get(key, _MISSING)
            if kept is _MISSING:
                yield key, value
            elif kept is not None:
                yield key, cast(bytes, kept)
            last = key
        yield from self._saved_between(lo, last, hi)

    def _saved_between(self, lo: bytes, after: bytes | None, before: bytes) -> list[tuple[bytes, bytes]]:
        """Saved values of keys after ``after`` (None: from ``lo`` on) and before ``before``: keys the live dict
        no longer holds (a list: the saved dict grows while the caller yields)."""
        saved = self._saved
        if after is None:
            keys = saved.irange(lo, before, inclusive=(True, False))
        else:
            keys = saved.irange(after, before, inclusive=(False, False))
        return [(key, saved[key]) for key in keys if saved[key] is not None]


class MemoryKV:
    """``KV`` held in a SortedDict. Not thread-safe except ``flush`` (a no-op)."""

    def __init__(self) -> None:
        self._data: SortedDict = SortedDict()
        self._version = 0  # bumped on every commit that changed data, so live iterators re-seek
        self._commit_seq = 0
        self._writer: _MemoryWriteTxn | None = None
        self._reader = _MemoryReadTxn(self)
        self._snapshots: list[_MemorySnapshot] = []  # open snapshots: commits save the values they replace
        self._closed = False

    def read(self) -> _MemoryReadTxn:
        if self._closed:
            raise StorageError("store is closed")
        return self._reader

    def held_file(self) -> None:
        return None  # nothing another process could read

    def snapshot(self) -> _MemorySnapshot:
        if self._closed:
            raise StorageError("store is closed")
        snapshot = _MemorySnapshot(self)
        self._snapshots.append(snapshot)
        return snapshot

    def write(self, frees_space: bool = False) -> _MemoryWriteTxn:
        if self._closed:
            raise StorageError("store is closed")
        return _MemoryWriteTxn(self)

    @property
    def writable(self) -> bool:
        return not self._closed

    def watch_losses(self, listener: LossListener) -> None:
        pass  # nothing here can fail to become durable, so nothing is ever taken back

    def recover(self, error: BaseException) -> None:
        pass

    def retry_writes(self) -> bool:
        return not self._closed

    @property
    def commit_seq(self) -> int:
        return self._commit_seq

    @property
    def durable_seq(self) -> int:
        return self._commit_seq

    def enable_batching(self, on_open: Callable[[], None]) -> None:
        pass  # a commit costs nothing here: every write transaction commits on its own

    def seal(self) -> None:
        pass

    def background_sync(self) -> None:
        return None

    def flush(self) -> int:
        return self._commit_seq

    def close(self) -> None:
        self._closed = True

    def __len__(self) -> int:
        return len(self._data)
