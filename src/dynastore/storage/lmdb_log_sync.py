"""The LMDB engine's ``BackgroundSync``: a helper process (storage/syncer.py) fdatasyncs the write-ahead log's
files, so that the owner thread never blocks on a sync; its answer makes the sealed writes durable."""

from __future__ import annotations

from typing import Protocol

from dynastore.storage import wal
from dynastore.storage.syncer import SyncProcess

__all__ = ["LogSync", "SyncedStore"]


class SyncedStore(Protocol):
    """What the log sync reads from and reports to the store (storage/lmdb_kv.py)."""

    _sealed: tuple[int, wal.Position]  # (commit_seq, log end) the next sync may claim
    _epoch: int  # bumped when commits are taken back

    def _wal_or_fail(self) -> wal.WriteAheadLog: ...

    def _check(self, point: str) -> None: ...

    def _mark_durable(self, epoch: int, seq: int, pos: wal.Position) -> None: ...

    @property
    def durable_seq(self) -> int: ...


class LogSync:
    """``BackgroundSync`` for the write-ahead log: a helper process syncs the log's files."""

    def __init__(self, kv: SyncedStore) -> None:
        self._kv = kv
        self._proc = SyncProcess()
        self._known: set[int] = set()  # file numbers the helper holds
        self._target: tuple[int, int, wal.Position] = (0, 0, (0, 0))  # (epoch, commit_seq, position) it covers

    def fileno(self) -> int:
        return self._proc.fileno()

    def begin(self) -> int:
        kv = self._kv
        log_ = kv._wal_or_fail()
        seq, pos = kv._sealed
        files = log_.take_dirty()
        known = self._known
        for number, fd in files:
            if number not in known:
                self._proc.add_file(number, fd)
                known.add(number)
        gone = known.difference(log_.numbers(), (wal.DIRECTORY,))
        for number in gone:
            self._proc.drop_file(number)
        known -= gone
        self._proc.request([number for number, _ in files])
        self._target = (kv._epoch, seq, pos)
        return seq

    def finish(self) -> int | None:
        if not self._proc.answer():
            return None
        self._kv._check("sync.helper")
        self._kv._mark_durable(*self._target)
        return self._kv.durable_seq

    def alive(self) -> bool:
        return self._proc.alive()

    def close(self) -> None:
        self._proc.close()
