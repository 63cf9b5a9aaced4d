"""LMDB engine: one environment, made durable by a durable log (storage/durability.py; by default the local
write-ahead log, storage/local_log.py).

Durability model. Every committed write transaction also records its puts and deletes (whole keys and values)
for the log. ``seal()`` appends the operations of the writes committed since the last seal to the log as one
sealed batch (for the local log a ``write``, no sync); ``flush()`` (or ``background_sync()``, the same without
blocking a thread) then has the log make every appended batch durable, which makes every sealed write durable.
LMDB's own file is written without syncs (the environment is opened with ``sync=False``): a *checkpoint* syncs it
in a background thread once the log asks for compaction, after which the log forgets the batches it covers;
opening the store replays whatever the log recovered (a crash), and a clean ``close()`` syncs the file and
discards the log. Everything written survives a crash of this process (kill -9): the log's and the file's pages
are in the OS page cache.

LMDB's caveat for an OS crash or power loss: the kernel writes the file's pages back in any order, so without
syncs it may leave LMDB's newest meta page pointing at pages that never reached the disk (a corrupt store,
which the log cannot repair). ``ordered_sync=True`` (``dynastore serve --crash-safe``) closes that: each LMDB
commit syncs the log and then its own pages before writing its meta page (LMDB's ``MDB_NOMETASYNC`` mode), so
the file on disk is always a consistent state that the log's records continue. That sync blocks the owner
thread, once per batch (below), not per write.

Batches. Committing costs LMDB a write of every page the transaction changed (with its branch pages, the free
list and the meta page: several syscalls for one small put). Once ``enable_batching`` is called, the owner
thread's write transactions join one open *batch* transaction (atomically; an exception discards only their own
writes): they write straight into it with an undo journal while LMDB's map has room to spare, else each is an
LMDB child transaction of it (storage/lmdb_txn.py). The batch outlives seals (the log makes its
writes durable): it is committed to the file once it holds ``MAX_BATCH_BYTES`` or is ``BATCH_INTERVAL`` old,
at a checkpoint and at close, so that the pages many writes share are written once. Reads on the owner thread
go through the open batch, so they see every committed write exactly as they would without batching (another
thread sees only what reached the file). A batch is committed only after a sync covered its records, so the
file never holds a write that could still be lost.

Failures (docs/design.md "Storage failures and a full disk"). When appending, syncing, compacting or committing
fails, ``_take_back`` aborts the batch, cuts the log back to its synced end and rebuilds the batch from the file
plus the synced records, so the view holds every acknowledged write and nothing unacknowledged; the commits
taken back are reported to ``watch_losses`` listeners. Writes are then refused (``StorageUnavailableError``;
deletes still run on a full disk, which gives up the reserve file) until ``retry_writes`` succeeds.

This module holds the store and its commit path (batches, seals, syncs, compaction, taking back and retrying),
which knows the log only through ``DurableLog``. The rest of the engine, one concept a module: the transactions
(storage/lmdb_txn.py), opening the store, its directory lock and the replay of what the log recovered
(storage/lmdb_startup.py), the checkpoint thread (storage/lmdb_checkpoint.py), the refusal state a failure leaves
(storage/lmdb_failures.py), the log's background sync in the store's terms (storage/lmdb_log_sync.py), and
the layout of long keys, longer than LMDB allows, as chains of groups (storage/lmdb_layout.py).

No lmdb type or ``Any`` is visible outside the lmdb_* modules; lmdb errors become ``StorageError``.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
from collections.abc import Callable
from time import monotonic
from typing import TYPE_CHECKING, Final

import lmdb

from dynastore.storage import disk_space
from dynastore.storage.durability import Batch, DurableLog, FaultPoints, Position
from dynastore.storage.kv import (
    DurabilityError,
    LossListener,
    StorageError,
    StorageUnavailableError,
    WriteTakenBackError,
)
from dynastore.storage.lmdb_checkpoint import Checkpoint
from dynastore.storage.lmdb_failures import FailureState, room_inside
from dynastore.storage.lmdb_log_sync import LogSync
from dynastore.storage.lmdb_startup import DIRECTORY_MODE as DIRECTORY_MODE
from dynastore.storage.lmdb_startup import apply_operations, lock_directory, open_environment, replay
from dynastore.storage.lmdb_txn import AppendingCursor, BatchReadTxn, BatchWriteTxn, LmdbReadTxn, LmdbWriteTxn
from dynastore.storage.local_log import LOG_DIRECTORY, LocalLog

# Read per request: as a Final name compiled code reads it from a C static, not the module's dict.
get_ident: Final = threading.get_ident  # asked on every storage transaction

if TYPE_CHECKING:
    _Txn = lmdb.Transaction[bytes]

__all__ = ["LmdbKV"]

log = logging.getLogger(__name__)

DEFAULT_MAP_SIZE = 1 << 40  # 1 TiB of address space; the file grows only as pages are used
# A batch is sealed early once its writes hold this many bytes: LMDB keeps a transaction's dirty pages in memory
# and refuses one of more than 512 MB, and a loop turn may take many large requests (a BatchWriteItem carries
# up to 16 MB).
MAX_BATCH_BYTES = 16 << 20
# With the write-ahead log, a batch stays open across seals until it holds MAX_BATCH_BYTES or is this old (s).
BATCH_INTERVAL = 1.0
RESERVE_FILE = "reserve"  # storage/disk_space.py
# Writes go straight into a batch begun with this much of LMDB's map free (storage/lmdb_txn.py BatchWriteTxn): far
# more than a batch can use before it is committed (MAX_BATCH_BYTES of writes, or a second of them, each write
# copying a few pages), so that a full map, which would leave the batch unusable, cannot happen inside one.
DIRECT_WRITE_ROOM = 4 << 30


class LmdbKV:
    """``KV`` on one LMDB environment in directory ``path`` (created if missing).

    ``reserve_bytes``: the size of the reserve file kept for a full disk (storage/disk_space.py; 0: none).
    ``durable_log``: the durable log that makes its commits durable (storage/durability.py); by default the local
    write-ahead log in ``path``'s ``LOG_DIRECTORY`` (storage/local_log.py).
    ``faults``: a test seam that may fail the write path at named points (``lmdb.commit``, ``sync.helper`` here,
    and the local log's own, see storage/wal.py).
    ``direct_write_room``: the free room in LMDB's map below which the batch's writes are child transactions
    (by default ``DIRECT_WRITE_ROOM``; tests choose either kind of write with it).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        map_size: int = DEFAULT_MAP_SIZE,
        max_readers: int = 1024,
        ordered_sync: bool = False,
        reserve_bytes: int = 0,
        durable_log: DurableLog | None = None,
        faults: FaultPoints | None = None,
        direct_write_room: int | None = None,
    ):
        self._path = os.fspath(path)
        self._env, self._lay = open_environment(self._path, map_size, max_readers, ordered_sync)
        self._log: DurableLog | None = None  # None only while the constructor replays the log
        self._faults = faults
        self._failures = FailureState(
            self._path, disk_space.Reserve(os.path.join(self._path, RESERVE_FILE), reserve_bytes)
        )
        self._writer_open = False
        self._batch_log: list[bytes] = []  # the log payload of the open batch's committed writes
        self._checkpoint: Checkpoint | None = None  # running, or finished but its segments not yet dropped
        self._log_sync: LogSync | None = None
        self._commit_seq = 0
        # Positions in the log. Records before _store_pos are in LMDB's file; records before _durable_pos are
        # synced; _store_pos <= _durable_pos always (a batch is committed only after a sync covered it), so the
        # file never holds a write that a failure could still take back.
        self._durable_seq = 0
        self._durable_pos: Position = (0, 0)
        self._store_pos: Position = (0, 0)
        self._sealed: tuple[int, Position] = (0, (0, 0))  # (commit_seq, log end) the next flush may claim
        # Bumped when commits are taken back: a sync that began before cannot vouch for the log as cut back.
        self._epoch = 0
        self._batch: _Txn | None = None
        self._appending = AppendingCursor()  # the open batch's, for change log records (storage/lmdb_txn.py)
        self._batch_bytes = 0
        self._batch_started = 0.0  # monotonic() when the open batch began
        self._batch_direct = False  # the open batch's writes go straight into it (_open_batch)
        self._direct_write_room = DIRECT_WRITE_ROOM if direct_write_room is None else direct_write_room
        self._page_size = int(self._env.stat()["psize"])
        self._unsealed = False  # the batch holds writes committed since the last seal
        self._batch_thread: int | None = None
        self._on_batch_open: Callable[[], None] | None = None
        self._durable_lock = threading.Lock()
        self._closed = False
        self.loss_cause: BaseException | None = None  # the failure that last took commits back
        self._file_held = 0  # hold_file calls not yet released: commits stay out of the file meanwhile
        self._lock_fd = lock_directory(self._path)
        if durable_log is None:
            durable_log = LocalLog(os.path.join(self._path, LOG_DIRECTORY), faults)
        failure = replay(self._env, self.write, durable_log)  # its writes are not logged again: no log yet
        start = durable_log.open()
        self._log = durable_log
        self._commit_seq = 0  # the replay's own commits are not this run's writes
        self._durable_pos = self._store_pos = start
        self._sealed = (0, start)
        if failure is None:
            try:
                self._failures.reserve.make()
                if 0 <= disk_space.free_bytes(self._path) < disk_space.FULL_BELOW:
                    raise OSError(errno.ENOSPC, "the file system is full")
            except OSError as reserve_error:
                failure = reserve_error
        if failure is not None:
            # The store's file cannot be written (a full disk): serve its state read-only, the kept log's records
            # applied in an open batch, until retry_writes can commit them.
            self._store_pos = durable_log.oldest()
            self._batch_thread = get_ident()
            self._failures.refuse(failure)
            self._rebuild_view()

    def read(self) -> LmdbReadTxn:
        broken = self._failures.broken
        if broken is not None:
            raise StorageUnavailableError(f"the store cannot serve reads: {broken}")
        batch = self._batch
        if batch is not None and not self._writer_open and get_ident() == self._batch_thread:
            return BatchReadTxn(batch, self._lay)
        try:
            return LmdbReadTxn(self._env.begin(db=self._lay.main), self._lay)
        except lmdb.Error as e:
            raise StorageError(f"lmdb read transaction failed: {e}") from e

    def held_file(self) -> LmdbKV:
        return self

    def snapshot(self) -> LmdbReadTxn:
        """A read transaction of LMDB's file itself (an MVCC snapshot, good across awaits), after the open batch
        is sealed and committed to the file (its records synced first: one sync per snapshot), so the image
        holds every commit so far."""
        if self._writer_open:
            raise StorageError("a snapshot cannot begin inside a write transaction")
        refusal = self._failures.refusal
        if refusal is not None:
            raise StorageUnavailableError(f"the store refuses writes: {refusal}")
        self.seal()
        try:
            self._commit_batch()
        except StorageError as e:
            self._take_back(e)
            raise WriteTakenBackError(f"the write was taken back: {e}") from e
        try:
            return LmdbReadTxn(self._env.begin(db=self._lay.main), self._lay)
        except lmdb.Error as e:
            raise StorageError(f"lmdb read transaction failed: {e}") from e

    # ---- images read by another process (storage/image_copier.py) ----
    @property
    def path(self) -> str:
        return self._path

    def hold_file(self) -> bool:
        """Commit every write so far to LMDB's file (its records synced first), then keep later commits out of
        the file (they stay in the open batch, durable through the log) until ``release_file``: a read
        transaction begun meanwhile, in any process, is an image of exactly the commits made before this call.
        False (nothing held) when writes are not batched: each then commits to the file on its own. Raises
        ``StorageUnavailableError`` while the store refuses writes."""
        if self._on_batch_open is None or get_ident() != self._batch_thread:
            return False
        if self._writer_open:
            raise StorageError("the file cannot be held inside a write transaction")
        refusal = self._failures.refusal
        if refusal is not None:
            raise StorageUnavailableError(f"the store refuses writes: {refusal}")
        self.seal()
        try:
            self._commit_batch()
            # A reader process that died (a copier killed with its server) keeps its slot until checked: its
            # snapshot would keep LMDB from reusing the pages freed since.
            self._env.reader_check()
        except lmdb.Error as e:
            raise StorageError(f"lmdb reader check failed: {e}") from e
        except StorageError as e:
            self._take_back(e)
            raise WriteTakenBackError(f"the write was taken back: {e}") from e
        self._file_held += 1
        return True

    def release_file(self) -> None:
        """End one ``hold_file``; the open batch reaches the file at its next commit."""
        self._file_held = max(self._file_held - 1, 0)

    def write(self, frees_space: bool = False) -> LmdbWriteTxn:
        if self._writer_open:
            # LMDB's writer lock is not reentrant: a second begin would deadlock this thread.
            raise StorageError("a write transaction is already open")
        failures = self._failures
        if failures.refusal is not None and not (frees_space and failures.disk_full and failures.broken is None):
            raise StorageUnavailableError(f"the store refuses writes: {failures.refusal}")
        logged = self._log is not None
        try:
            if self._on_batch_open is None or get_ident() != self._batch_thread:
                write = LmdbWriteTxn(self, self._env.begin(db=self._lay.main, write=True), self._lay, False, logged)
            else:
                batch = self._batch
                if batch is None:
                    batch = self._begin_batch(self._env.begin(db=self._lay.main, write=True))
                if self._batch_direct:
                    write = BatchWriteTxn(self, batch, self._lay, logged, self._appending)
                else:
                    child = self._env.begin(db=self._lay.main, write=True, parent=batch)
                    write = LmdbWriteTxn(self, child, self._lay, True, logged)
        except lmdb.Error as e:
            raise StorageError(f"lmdb write transaction failed: {e}") from e
        self._writer_open = True
        return write

    def _begin_batch(self, batch: _Txn) -> _Txn:
        """Make ``batch`` the open batch the owner thread's writes join. Its writes go straight into it
        (``BatchWriteTxn``) while LMDB's map has ``direct_write_room`` bytes to spare, else each in a child
        transaction, which a full map aborts alone (storage/lmdb_txn.py)."""
        self._batch = batch
        self._batch_started = monotonic()
        self._batch_direct = self._map_room() >= self._direct_write_room
        return batch

    def _map_room(self) -> int:
        """Bytes of LMDB's map that no page uses yet."""
        info = self._env.info()
        return int(info["map_size"]) - (int(info["last_pgno"]) + 1) * self._page_size

    def _write_closed(self) -> None:
        self._writer_open = False

    def _write_committed(self, log: Batch | None, written: int, batched: bool) -> None:
        """A write transaction committed (``WriteOwner``, storage/lmdb_txn.py): its records join the batch's, to
        be sealed into the log; a batch grown to ``MAX_BATCH_BYTES`` is sealed now."""
        self._commit_seq += 1
        if not batched:
            if log:
                self._log_unbatched(log)
            return
        if log:
            self._batch_log += log
        self._batch_bytes += written
        if not self._unsealed:
            self._unsealed = True
            assert self._on_batch_open is not None
            self._on_batch_open()
        if self._batch_bytes >= MAX_BATCH_BYTES:
            seq = self._commit_seq
            try:
                self.seal()
            except StorageError:
                if self._durable_seq < seq:
                    raise  # this write was taken back with the others the seal could not make durable

    def enable_batching(self, on_open: Callable[[], None]) -> None:
        self._on_batch_open = on_open
        self._batch_thread = get_ident()

    @property
    def writable(self) -> bool:
        return self._failures.refusal is None and not self._closed

    def watch_losses(self, listener: LossListener) -> None:
        self._failures.listeners.append(listener)

    def seal(self) -> None:
        if not self._unsealed:
            return
        self._unsealed = False
        try:
            # The log makes the writes durable; the batch stays open (the next writes share its page writes) until
            # it is large or old, or a checkpoint needs it in the file.
            if self._batch_log:
                pieces, self._batch_log = self._batch_log, []
                self._log_commit(pieces)
            self._sealed = (self._commit_seq, self._log_or_fail().end())
            if self._batch_bytes >= MAX_BATCH_BYTES or monotonic() - self._batch_started >= BATCH_INTERVAL:
                self._commit_batch()
        except StorageError as e:
            self._take_back(e)
            # Not applied, and the store now refuses writes: the writer hears what a refused write hears.
            raise WriteTakenBackError(f"the write was taken back: {e}") from e

    def _commit_batch(self) -> None:
        """Write the open batch to LMDB's file, its records synced first. Raises ``StorageError``; the batch is
        gone then (the caller takes back what is not durable)."""
        log_ = self._log_or_fail()
        # The file must never hold a write whose record could still be lost (a failure could not take it back,
        # and a crash would leave the store ahead of its log), so the batch's records are synced first: one
        # blocking fdatasync per batch, about once a second. Every write in the batch is sealed by now. (Also
        # without a batch: a segment is retired only once all of it is synced.)
        epoch, seq, pos = self._epoch, self._commit_seq, log_.end()
        log_.sync()
        self._mark_durable(epoch, seq, pos)
        batch = self._batch
        if batch is None or self._file_held:
            return  # (held: the batch reaches the file once it is released; its records are synced already)
        self._batch = None
        self._batch_bytes = 0
        try:
            self._check("lmdb.commit")
            batch.commit()
        except (lmdb.Error, OSError) as e:
            batch.abort()
            raise DurabilityError(f"lmdb commit of a batch failed: {e}") from e
        self._store_pos = pos

    def _log_commit(self, pieces: Batch) -> None:
        """Append a sealed batch to the durable log; compact a log grown large. Raises ``StorageError``."""
        log_ = self._log_or_fail()
        log_.append(pieces)
        if self._checkpoint is not None and self._checkpoint.done is not None:
            self._finish_checkpoint()
        if log_.compaction_due and self._checkpoint is None and not self._file_held:
            self._commit_batch()  # every batch before the compaction must be in the store's file
            self._compact()

    def _log_unbatched(self, pieces: Batch) -> None:
        """The log record of a write committed on its own (before batching is enabled; tests): its effects are in
        the file already, so a failure here cannot be taken back, only reported."""
        try:
            self._log_commit(pieces)
        except StorageError as e:
            self._take_back(e)
            raise
        self._sealed = (self._commit_seq, self._log_or_fail().end())
        self._store_pos = self._sealed[1]

    def _compact(self) -> None:
        """Compact the log and checkpoint the store in the background, after which the log forgets the batches
        before the compaction. The batch must have been committed: those batches are all in the file."""
        start = self._log_or_fail().compact()
        with self._durable_lock:
            # Everything was synced and committed before: the compaction's position is the same place.
            self._durable_pos = max(self._durable_pos, start)
        self._store_pos = start
        seq, _ = self._sealed
        self._sealed = (seq, start)
        self._start_checkpoint(start)

    def _start_checkpoint(self, applied: Position) -> None:
        """Sync the store in the background; the owner thread then reports ``applied`` to the log, which forgets
        the batches before it."""
        checkpoint = Checkpoint(self._env, applied, self._check)
        self._checkpoint = checkpoint
        checkpoint.start()

    def _finish_checkpoint(self) -> None:
        checkpoint = self._checkpoint
        assert checkpoint is not None
        self._checkpoint = None
        checkpoint.finish(self._log_or_fail())

    # ------------------------------------------------------------ failures

    def recover(self, error: BaseException) -> None:
        self._take_back(error)

    def _take_back(self, error: BaseException) -> None:
        """A write could not be made durable: refuse writes, cut the log back to its synced end and rebuild the
        view as the file plus the synced records, so that nothing unacknowledged stays visible or is built on."""
        with self._durable_lock:
            self._epoch += 1
            durable_seq, durable_pos = self._durable_seq, self._durable_pos
            self._sealed = (durable_seq, durable_pos)
        lost_through = self._commit_seq
        self.loss_cause = error  # what the waiters of the commits taken back hear of (group_commit.py)
        self._failures.refuse(error)
        self._batch_log = []
        self._unsealed = False
        batch, self._batch = self._batch, None
        self._batch_bytes = 0
        if batch is not None:
            batch.abort()
        try:
            self._log_or_fail().take_back(durable_pos)
        except StorageError as e:
            self._failures.break_view(e)
        else:
            self._rebuild_view()
        if lost_through > durable_seq:
            self._failures.report_loss(durable_seq, lost_through)

    def _rebuild_view(self) -> bool:
        """Open a batch holding the synced records the file does not hold yet; reads on the owner thread see it.
        False if that failed (the store is broken: reads are refused too)."""
        if self._batch_thread is None:
            self._failures.broken = None  # no batch: the file is the view
            return True
        try:
            batch = self._env.begin(db=self._lay.main, write=True)
            records = self._log_or_fail().replay(self._store_pos, self._durable_pos)
            self._batch_bytes = apply_operations(batch, self._lay, records)
        except (lmdb.Error, OSError, StorageError) as e:
            self._failures.break_view(StorageError(f"the log's synced records cannot be applied: {e}"))
            return False
        self._begin_batch(batch)
        self._failures.broken = None
        return True

    def retry_writes(self) -> bool:
        if self._closed:
            return False
        failures = self._failures
        if failures.refusal is None:
            # Writable, maybe after deletes freed room inside the file while the file system had none for the
            # reserve: make it again once there is, so that the next full disk has it to give.
            failures.reserve.remake_if_room()
            return True
        if failures.broken is not None:
            try:
                self._log_or_fail().take_back(self._durable_pos)
            except StorageError:
                return False
            if not self._rebuild_view():
                return False
            failures.report_loss(self._durable_seq, self._commit_seq)  # readers of the view may now re-read it
        try:
            self.seal()  # deletes let through on a full disk (a failure takes them back itself)
        except StorageError:
            return False
        try:
            if self._checkpoint is not None and self._checkpoint.done is not None:
                self._finish_checkpoint()
            self._commit_batch()
        except StorageError as e:
            self._take_back(e)
            return False
        try:
            if self._checkpoint is None and self._holds_records() and not self._file_held:
                self._compact()  # the checkpoint then drops the log's old segments: on a full disk, their space
        except StorageError:
            return False
        reserve = failures.reserve
        if (
            failures.disk_full
            and not reserve.remake_if_room()
            and not room_inside(self._env, self._lay, self._path, reserve.size)
        ):
            return False
        if not failures.disk_full:
            try:
                reserve.make()
            except OSError as reserve_error:
                failures.refuse(reserve_error)
                return False
        failures.refusal = None
        failures.disk_full = False
        log.warning("storage in %s accepts writes again", self._path)
        return True

    def _holds_records(self) -> bool:
        return self._log_or_fail().holds_records()

    def _check(self, point: str) -> None:
        if self._faults is not None:
            self._faults.check(point)

    # ------------------------------------------------------------ flushing

    def background_sync(self) -> LogSync | None:
        if self._log_sync is None:
            syncer = self._log_or_fail().background_sync()
            if syncer is None:
                return None  # flushes run in a worker thread instead
            self._log_sync = LogSync(self, syncer)
        return self._log_sync

    @property
    def commit_seq(self) -> int:
        return self._commit_seq

    @property
    def durable_seq(self) -> int:
        return self._durable_seq

    def flush(self) -> int:
        # Every sealed commit has already written its records (append returns first), so one fdatasync issued
        # after reading the sealed position covers all of them.
        with self._durable_lock:
            epoch, (seq, pos) = self._epoch, self._sealed
        self._log_or_fail().sync()
        self._mark_durable(epoch, seq, pos)
        return self._durable_seq

    def close(self) -> None:
        if self._closed:
            return
        self._file_held = 0
        if self.writable:
            try:
                self.seal()
                self._commit_batch()
            except StorageError as commit_error:
                self._take_back(commit_error)
        # Asked again, not narrowed from above: the commit may have failed (a compiled build trusts narrowing).
        keep_log = not self.writable
        self._closed = True
        checkpoint = self._checkpoint
        if checkpoint is not None:
            checkpoint.join()
        if self._log_sync is not None:
            self._log_sync.close()
        if not keep_log:
            # The store itself becomes durable, so the log is not needed: the next start replays nothing.
            try:
                self._env.sync(True)
                self._log_or_fail().close()
            except (OSError, lmdb.Error) as e:
                raise DurabilityError(f"closing the write-ahead log failed: {e}") from e
        else:
            # The file could not take the log's records: the log stays, and the next start replays it.
            if self._batch is not None:
                self._batch.abort()
                self._batch = None
            try:
                self._log_or_fail().close(discard=False)
            except OSError as close_error:
                log.error("closing the write-ahead log failed: %s", close_error)
        self._env.close()
        os.close(self._lock_fd)

    def _log_or_fail(self) -> DurableLog:
        if self._log is None:  # only while the constructor replays the log
            raise StorageError("the write-ahead log is not open")
        return self._log

    def _mark_durable(self, epoch: int, seq: int, pos: Position) -> None:
        """A sync that began at ``epoch`` covered commits up to ``seq``, log records up to ``pos``."""
        with self._durable_lock:
            if epoch != self._epoch:
                return  # commits were taken back since: the log it synced is not the log now
            if seq > self._durable_seq:
                self._durable_seq = seq
            if pos > self._durable_pos:
                self._durable_pos = pos

    @property
    def ordered_sync(self) -> bool:
        """Whether commits sync their pages before their meta page (``--crash-safe``)."""
        return bool(self._env.flags()["sync"])

    def copy_file(self, directory: str) -> None:
        """Write a compacted copy of LMDB's file (its committed state, without the open batch) into
        ``directory`` as its data file: what a new replica of a cluster is seeded with. Raises ``StorageError``."""
        try:
            self._env.copy(directory, compact=True)
        except lmdb.Error as e:
            raise StorageError(f"copying the store failed: {e}") from e

    def file_size(self) -> int:
        """Bytes used by the data file (diagnostics)."""
        return os.path.getsize(os.path.join(self._env.path(), "data.mdb"))
