"""The local durable log: storage/durability.py's ``DurableLog`` as write-ahead log segments in one directory of
the data directory (storage/wal.py), synced by fdatasync, from a helper process (storage/syncer.py) where one
runs, so that the owner thread never blocks on a sync.

Its positions are (segment number, byte offset). Compaction rotates to a new segment; once the store reports
that its file holds everything before the new segment, the older ones are deleted. A run that did not close
cleanly leaves segments behind: they are the recovered batches of the next start.
"""

from __future__ import annotations

import logging
import os
import select
from collections.abc import Iterator

from dynastore.storage import wal
from dynastore.storage.durability import Batch, FaultPoints, Operation, Position
from dynastore.storage.kv import DurabilityError, StorageError
from dynastore.storage.syncer import SyncProcess

__all__ = ["LOG_DIRECTORY", "HelperSync", "LocalLog"]

LOG_DIRECTORY = "wal"  # the log's directory inside the data directory

log = logging.getLogger("dynastore.storage.lmdb_kv")  # the store's one logger, whichever module speaks


class LocalLog:
    """The write-ahead log in ``directory`` (created when opened). ``faults``: the test seam of the log's file
    operations (storage/wal.py). Nothing touches the directory before ``recovered`` or ``open``: the store takes
    its directory lock first."""

    def __init__(self, directory: str, faults: FaultPoints | None = None) -> None:
        self._directory = directory
        self._faults = faults
        self._left: list[int] | None = None  # the segments an earlier run left, once looked for
        self._wal: wal.WriteAheadLog | None = None

    @property
    def location(self) -> str:
        return self._directory

    def _open_log(self) -> wal.WriteAheadLog:
        if self._wal is None:
            raise StorageError("the write-ahead log is not open")
        return self._wal

    # ---- opening

    def _left_over(self) -> list[int]:
        if self._left is None:
            self._left = wal.segment_numbers(self._directory)
        return self._left

    def recovered(self) -> Iterator[list[Operation]] | None:
        numbers = self._left_over()
        if not numbers:
            return None
        return wal.recorded_operations(self._directory, numbers)

    def discard_recovered(self) -> None:
        numbers = self._left_over()
        wal.remove_segments(self._directory, numbers)
        log.info("replayed %d write-ahead log segment(s)", len(numbers))

    def open(self) -> Position:
        numbers = self._left_over()
        kept = wal.segment_numbers(self._directory)  # the recovered segments not discarded (none once they were)
        try:
            self._wal = wal.WriteAheadLog(self._directory, numbers[-1] + 1 if numbers else 1, kept, self._faults)
        except OSError as os_error:
            raise StorageError(f"cannot open the write-ahead log in {self._directory}: {os_error}") from os_error
        return self._wal.position()

    def oldest(self) -> Position:
        return (self._open_log().numbers()[0], 0)

    # ---- running

    def end(self) -> Position:
        return self._open_log().position()

    def append(self, batch: Batch) -> None:
        self._open_log().append(batch)

    def sync(self) -> None:
        self._open_log().sync()

    def background_sync(self) -> HelperSync | None:
        if not SyncProcess.supported():
            return None  # syncs run in a worker thread instead
        return HelperSync(self._open_log())

    def take_back(self, position: Position) -> None:
        self._open_log().truncate(position)

    def replay(self, start: Position, stop: Position) -> Iterator[list[Operation]]:
        return self._open_log().operations_between(start, stop)

    @property
    def compaction_due(self) -> bool:
        return self._open_log().full

    def compact(self) -> Position:
        log_ = self._open_log()
        log_.rotate()
        return log_.position()

    def applied(self, position: Position) -> None:
        log_ = self._open_log()
        try:
            log_.drop([number for number in log_.numbers() if number < position[0]])
        except OSError as e:
            raise DurabilityError(f"write-ahead log segments cannot be removed: {e}") from e

    def holds_records(self) -> bool:
        log_ = self._open_log()
        return len(log_.numbers()) > 1 or log_.position()[1] > 0

    def close(self, discard: bool = True) -> None:
        self._open_log().close(remove=discard)


class HelperSync:
    """``LogSyncer`` for the write-ahead log: a helper process fdatasyncs the log's files."""

    def __init__(self, log_: wal.WriteAheadLog) -> None:
        self._log = log_
        self._proc = SyncProcess()
        # The files the helper holds: number -> the file's inode. A number alone is not enough: a log cut back
        # (truncate) and rotated again reopens a number it deleted, and the helper must then sync the new file.
        self._known: dict[int, int] = {}
        self._changes = log_.changes  # the log's segments when the helper last dropped files (none to drop yet)
        # Whether the helper has answered, asked without reading: the server asks on every request that arrives
        # while a sync runs (group_commit.poll), and a non-blocking read that finds nothing raises an exception,
        # which cost about five times this zero-timeout poll (3.5 against 0.7 us).
        self._answer = select.poll()
        self._answer.register(self._proc.fileno(), select.POLLIN)

    def fileno(self) -> int:
        return self._proc.fileno()

    def begin(self) -> None:
        log_ = self._log
        files = log_.take_dirty()
        if log_.changes != self._changes:  # (only then can a file the helper holds be gone or replaced)
            self._changes = log_.changes
            self._drop_gone(files)
        known = self._known
        for number, fd in files:
            if number not in known:
                self._proc.add_file(number, fd)
                known[number] = os.fstat(fd).st_ino
        self._proc.request([number for number, _ in files])

    def _drop_gone(self, files: list[tuple[int, int]]) -> None:
        """Let the helper close the files of the segments the log has dropped or replaced (before it is handed
        a replacement under the same number: the helper reads its messages in order)."""
        known = self._known
        gone = set(known).difference(self._log.numbers(), (wal.DIRECTORY,))
        gone.update(number for number, fd in files if number in known and os.fstat(fd).st_ino != known[number])
        for number in gone:
            self._proc.drop_file(number)
            del known[number]

    def finish(self) -> bool:
        # Any event reads: an answer, or the helper's end closed (the read then reports the helper gone).
        if not self._answer.poll(0):
            return False
        return self._proc.answer()

    def alive(self) -> bool:
        return self._proc.alive()

    def close(self) -> None:
        fd = self._proc.fileno()
        if fd >= 0:  # (-1 once closed)
            self._answer.unregister(fd)
        self._proc.close()
