"""The LMDB engine's ``BackgroundSync``: the durable log's ``LogSyncer`` (storage/durability.py; for the local
log, a helper process that fdatasyncs its files) made durable in the store's terms: the sealed commits a sync
covers, and the log position the store then counts as durable."""

from __future__ import annotations

from typing import Protocol

from dynastore.storage.durability import LogSyncer, Position

__all__ = ["LogSync", "SyncedStore"]


class SyncedStore(Protocol):
    """What the log sync reads from and reports to the store (storage/lmdb_kv.py)."""

    _sealed: tuple[int, Position]  # (commit_seq, log end) the next sync may claim
    _epoch: int  # bumped when commits are taken back

    def _check(self, point: str) -> None: ...

    def _mark_durable(self, epoch: int, seq: int, pos: Position) -> None: ...

    @property
    def durable_seq(self) -> int: ...


class LogSync:
    """``BackgroundSync`` over the log's ``syncer``: a sync covers the commits sealed when it began."""

    def __init__(self, kv: SyncedStore, syncer: LogSyncer) -> None:
        self._kv = kv
        self._syncer = syncer
        self._target: tuple[int, int, Position] = (0, 0, (0, 0))  # (epoch, commit_seq, position) it covers

    def fileno(self) -> int:
        return self._syncer.fileno()

    def begin(self) -> int:
        kv = self._kv
        seq, pos = kv._sealed
        self._syncer.begin()
        self._target = (kv._epoch, seq, pos)
        return seq

    def finish(self) -> int | None:
        if not self._syncer.finish():
            return None
        self._kv._check("sync.helper")
        self._kv._mark_durable(*self._target)
        return self._kv.durable_seq

    def alive(self) -> bool:
        return self._syncer.alive()

    def close(self) -> None:
        self._syncer.close()
