"""LMDB engine: one environment, made durable by a write-ahead log (storage/wal.py).

Durability model. Every committed write transaction also records its puts and deletes (whole keys and values)
for the log. ``seal()`` appends the records of the writes committed since the last seal to the log as one
record (a ``write``, no sync); ``flush()`` (or ``background_sync()``, the same done by a helper process) then
fdatasyncs the log, which makes every sealed write durable. LMDB's own file is written without syncs (the
environment is opened with ``sync=False``): a *checkpoint* syncs it in a background thread once a log segment
is full, after which the segments it covers are deleted; opening the store replays whatever log is left (a
crash), and a clean ``close()`` syncs the file and deletes the log. Everything written survives a crash of this
process (kill -9): the log's and the file's pages are in the OS page cache.

LMDB's caveat for an OS crash or power loss: the kernel writes the file's pages back in any order, so without
syncs it may leave LMDB's newest meta page pointing at pages that never reached the disk (a corrupt store,
which the log cannot repair). ``ordered_sync=True`` (``dynastore serve --crash-safe``) closes that: each LMDB
commit syncs the log and then its own pages before writing its meta page (LMDB's ``MDB_NOMETASYNC`` mode), so
the file on disk is always a consistent state that the log's records continue. That sync blocks the owner
thread, once per batch (below), not per write.

Batches. Committing costs LMDB a write of every page the transaction changed (with its branch pages, the free
list and the meta page: several syscalls for one small put). Once ``enable_batching`` is called, the owner
thread's write transactions are LMDB child transactions of one open *batch* transaction: each commits into the
batch (atomically; an exception discards only its own writes). The batch outlives seals (the log makes its
writes durable): it is committed to the file once it holds ``MAX_BATCH_BYTES`` or is ``BATCH_INTERVAL`` old,
at a checkpoint and at close, so that the pages many writes share are written once. Reads on the owner thread
go through the open batch, so they see every committed write exactly as they would without batching (another
thread sees only what reached the file). A batch is committed only after a sync covered its records, so the
file never holds a write that could still be lost.

Failures (docs/design.md "Storage failures and a full disk"). When appending, syncing, rotating or committing
fails, ``_take_back`` aborts the batch, cuts the log back to its synced end and rebuilds the batch from the file
plus the synced records, so the view holds every acknowledged write and nothing unacknowledged; the commits
taken back are reported to ``watch_losses`` listeners. Writes are then refused (``StorageUnavailableError``;
deletes still run on a full disk, which gives up the reserve file) until ``retry_writes`` succeeds.

Long keys (keys longer than LMDB allows) are stored as chains of groups: storage/lmdb_layout.py.

No lmdb type or ``Any`` is visible outside this module and lmdb_layout; lmdb errors become ``StorageError``.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING

import lmdb

from dynastore.storage import disk_space, wal
from dynastore.storage.kv import DurabilityError, LossListener, StorageError, StorageUnavailableError
from dynastore.storage.lmdb_layout import Layout, delete_long, get_long, put_long, scan_root, scan_root_reverse
from dynastore.storage.syncer import SyncProcess

if TYPE_CHECKING:
    _Txn = lmdb.Transaction[bytes]
    _Stat = lmdb._StatDict

__all__ = ["LmdbKV"]

log = logging.getLogger(__name__)

DEFAULT_MAP_SIZE = 1 << 40  # 1 TiB of address space; the file grows only as pages are used
# A batch is sealed early once its writes hold this many bytes: LMDB keeps a transaction's dirty pages in memory
# and refuses one of more than 512 MB, and a loop turn may take many large requests (a BatchWriteItem carries
# up to 16 MB).
MAX_BATCH_BYTES = 16 << 20
# With the write-ahead log, a batch stays open across seals until it holds MAX_BATCH_BYTES or is this old (s).
BATCH_INTERVAL = 1.0
LOCK_FILE = "dynastore.lock"
DIRECTORY_MODE = 0o700  # what the store creates is readable by the server's user only
RESERVE_FILE = "reserve"  # storage/disk_space.py
REPLAY_TXN_OPS = 10_000  # operations per storage transaction while replaying the write-ahead log


class _LmdbReadTxn:
    __slots__ = ("_txn", "_lay")

    def __init__(self, txn: _Txn, lay: Layout) -> None:
        self._txn = txn
        self._lay = lay

    def __enter__(self) -> _LmdbReadTxn:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._txn.abort()

    def get(self, key: bytes) -> bytes | None:
        try:
            if len(key) <= self._lay.root_max:
                return self._txn.get(key)
            return get_long(self._txn, self._lay, key)
        except lmdb.Error as e:
            raise StorageError(f"lmdb get failed: {e}") from e

    def iter_range(self, lo: bytes, hi: bytes, *, reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        if lo >= hi:
            return iter(())
        if reverse:
            return scan_root_reverse(self._txn, self._lay, lo, hi)
        return scan_root(self._txn, self._lay, lo, hi)


class _BatchReadTxn(_LmdbReadTxn):
    """A read through the open batch: leaving it keeps the batch open."""

    __slots__ = ()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        pass


class _LmdbWriteTxn(_LmdbReadTxn):
    __slots__ = ("_kv", "_batched", "_written", "_log")

    def __init__(self, kv: LmdbKV, frees_space: bool = False) -> None:
        txn, batched = kv._begin_write(frees_space)
        super().__init__(txn, kv._lay)
        self._kv = kv
        self._batched = batched
        self._written = 0
        self._log: list[bytes] | None = [] if kv._wal is not None else None  # this transaction's log payload

    def __enter__(self) -> _LmdbWriteTxn:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        kv = self._kv
        kv._writer_open = False
        if exc_type is not None:
            self._txn.abort()
            return
        try:
            self._txn.commit()
        except lmdb.Error as e:
            raise StorageError(f"lmdb commit failed: {e}") from e
        kv._commit_seq += 1
        if not self._batched:
            if self._log:
                kv._log_unbatched(self._log)
            return
        if self._log:
            kv._batch_log += self._log
        kv._batch_bytes += self._written
        if not kv._unsealed:
            kv._unsealed = True
            assert kv._on_batch_open is not None
            kv._on_batch_open()
        if kv._batch_bytes >= MAX_BATCH_BYTES:
            seq = kv._commit_seq
            try:
                kv.seal()
            except StorageError:
                if kv._durable_seq < seq:
                    raise  # this write was taken back with the others the seal could not make durable

    def put(self, key: bytes, value: bytes) -> None:
        self._written += len(key) + len(value)
        if self._log is not None:
            self._log += (wal.encode_put(key, value), key, value)
        try:
            if len(key) <= self._lay.root_max:
                self._txn.put(key, value)
            else:
                put_long(self._txn, self._lay, key, value)
        except lmdb.Error as e:
            raise StorageError(f"lmdb put failed: {e}") from e

    def delete(self, key: bytes) -> bool:
        if self._log is not None:
            self._log += (wal.encode_delete(key), key)
        try:
            if len(key) <= self._lay.root_max:
                return self._txn.delete(key)
            return delete_long(self._txn, self._lay, key)
        except lmdb.Error as e:
            raise StorageError(f"lmdb delete failed: {e}") from e


class LmdbKV:
    """``KV`` on one LMDB environment in directory ``path`` (created if missing).

    ``reserve_bytes``: the size of the reserve file kept for a full disk (storage/disk_space.py; 0: none).
    ``faults``: a test seam that may fail the write path at named points (``lmdb.commit``, ``sync.helper`` here,
    and the log's own, see storage/wal.py).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        map_size: int = DEFAULT_MAP_SIZE,
        max_readers: int = 1024,
        ordered_sync: bool = False,
        reserve_bytes: int = 0,
        faults: wal.FaultPoints | None = None,
    ):
        self._path = os.fspath(path)
        try:
            self._env = lmdb.open(
                self._path,
                map_size=map_size,
                max_dbs=2,
                max_readers=max_readers,
                max_spare_txns=16,
                sync=ordered_sync,
                metasync=False,
                subdir=True,
                lock=True,
                mode=DIRECTORY_MODE,  # a new data directory 0700, its data and lock files 0600: the server's user only
            )
            main = self._env.open_db(b"main")
            long = self._env.open_db(b"long")
            max_key = self._env.max_key_size()
        except lmdb.Error as e:
            raise StorageError(f"cannot open lmdb environment at {path}: {e}") from e
        self._lay = Layout(main, long, max_key)
        self._wal: wal.WriteAheadLog | None = None  # None only while the constructor replays the log
        self._faults = faults
        self._reserve = disk_space.Reserve(os.path.join(self._path, RESERVE_FILE), reserve_bytes)
        self._writer_open = False
        self._batch_log: list[bytes] = []  # the log payload of the open batch's committed writes
        self._checkpoint: threading.Thread | None = None  # running, or finished but its segments not yet dropped
        self._checkpointed: list[int] | None = None  # set by the checkpoint thread: segments now safe to drop
        self._log_sync: _LogSync | None = None
        self._commit_seq = 0
        # Positions in the log. Records before _store_pos are in LMDB's file; records before _durable_pos are
        # synced; _store_pos <= _durable_pos always (a batch is committed only after a sync covered it), so the
        # file never holds a write that a failure could still take back.
        self._durable_seq = 0
        self._durable_pos: wal.Position = (0, 0)
        self._store_pos: wal.Position = (0, 0)
        self._sealed: tuple[int, wal.Position] = (0, (0, 0))  # (commit_seq, log end) the next flush may claim
        # Bumped when commits are taken back: a sync that began before cannot vouch for the log as cut back.
        self._epoch = 0
        self._batch: _Txn | None = None
        self._batch_bytes = 0
        self._batch_started = 0.0  # time.monotonic() when the open batch began
        self._unsealed = False  # the batch holds writes committed since the last seal
        self._refusal: str | None = None  # why writes are refused; None while the store is writable
        self._disk_full = False  # the refusal is a full disk: deletes are let through
        self._broken: StorageError | None = None  # the durable view could not be rebuilt: reads are refused too
        self._listeners: list[LossListener] = []
        self._batch_thread: int | None = None
        self._on_batch_open: Callable[[], None] | None = None
        self._durable_lock = threading.Lock()
        self._closed = False
        self._lock_fd = _lock_directory(self._path)
        wal_dir = os.path.join(self._path, "wal")
        numbers = wal.segment_numbers(wal_dir)
        failure = self._replay(wal_dir, numbers) if numbers else None
        kept = wal.segment_numbers(wal_dir) if failure is not None else []
        try:
            self._wal = wal.WriteAheadLog(wal_dir, numbers[-1] + 1 if numbers else 1, kept, faults)
        except OSError as os_error:
            raise StorageError(f"cannot open the write-ahead log in {wal_dir}: {os_error}") from os_error
        self._commit_seq = 0  # the replay's own commits are not this run's writes
        start = self._wal.position()
        self._durable_pos = self._store_pos = start
        self._sealed = (0, start)
        if failure is None:
            try:
                self._reserve.make()
                if 0 <= disk_space.free_bytes(self._path) < disk_space.FULL_BELOW:
                    raise OSError(errno.ENOSPC, "the file system is full")
            except OSError as reserve_error:
                failure = reserve_error
        if failure is not None:
            # The store's file cannot be written (a full disk): serve its state read-only, the kept log's records
            # applied in an open batch, until retry_writes can commit them.
            self._store_pos = (kept[0], 0) if kept else start
            self._batch_thread = threading.get_ident()
            self._refuse(failure)
            self._rebuild_view()

    def _replay(self, directory: str, numbers: list[int]) -> BaseException | None:
        """Apply the write-ahead log left by a run that did not close cleanly, make the store durable, and delete
        the log. Returns the failure if the store's file could not take it (the log is then kept)."""
        records = wal.recorded_operations(directory, numbers)
        done = False
        try:
            while not done:
                with self.write() as txn:
                    done = _apply_records(txn, records, REPLAY_TXN_OPS)
        except (OSError, DurabilityError) as read_error:
            raise StorageError(f"cannot replay the write-ahead log in {directory}: {read_error}") from read_error
        except StorageError as commit_error:
            return commit_error
        try:
            self._env.sync(True)
            wal.remove_segments(directory, numbers)
        except (OSError, lmdb.Error) as sync_error:
            return sync_error
        log.info("replayed %d write-ahead log segment(s)", len(numbers))
        return None

    def read(self) -> _LmdbReadTxn:
        if self._broken is not None:
            raise StorageUnavailableError(f"the store cannot serve reads: {self._broken}")
        batch = self._batch
        if batch is not None and not self._writer_open and threading.get_ident() == self._batch_thread:
            return _BatchReadTxn(batch, self._lay)
        try:
            return _LmdbReadTxn(self._env.begin(db=self._lay.main), self._lay)
        except lmdb.Error as e:
            raise StorageError(f"lmdb read transaction failed: {e}") from e

    def write(self, frees_space: bool = False) -> _LmdbWriteTxn:
        return _LmdbWriteTxn(self, frees_space)

    def _begin_write(self, frees_space: bool) -> tuple[_Txn, bool]:
        """A new write transaction, and whether it is a child of the open batch."""
        if self._writer_open:
            # LMDB's writer lock is not reentrant: a second begin would deadlock this thread.
            raise StorageError("a write transaction is already open")
        if self._refusal is not None and not (frees_space and self._disk_full and self._broken is None):
            raise StorageUnavailableError(f"the store refuses writes: {self._refusal}")
        try:
            parent = None
            if self._on_batch_open is not None and threading.get_ident() == self._batch_thread:
                parent = self._batch
                if parent is None:
                    parent = self._batch = self._env.begin(db=self._lay.main, write=True)
                    self._batch_started = time.monotonic()
            txn = self._env.begin(db=self._lay.main, write=True, parent=parent)
        except lmdb.Error as e:
            raise StorageError(f"lmdb write transaction failed: {e}") from e
        self._writer_open = True
        return txn, parent is not None

    def enable_batching(self, on_open: Callable[[], None]) -> None:
        self._on_batch_open = on_open
        self._batch_thread = threading.get_ident()

    @property
    def writable(self) -> bool:
        return self._refusal is None and not self._closed

    def watch_losses(self, listener: LossListener) -> None:
        self._listeners.append(listener)

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
            self._sealed = (self._commit_seq, self._wal_or_fail().position())
            if self._batch_bytes >= MAX_BATCH_BYTES or time.monotonic() - self._batch_started >= BATCH_INTERVAL:
                self._commit_batch()
        except StorageError as e:
            self._take_back(e)
            raise

    def _commit_batch(self) -> None:
        """Write the open batch to LMDB's file, its records synced first. Raises ``StorageError``; the batch is
        gone then (the caller takes back what is not durable)."""
        log_ = self._wal_or_fail()
        # The file must never hold a write whose record could still be lost (a failure could not take it back,
        # and a crash would leave the store ahead of its log), so the batch's records are synced first: one
        # blocking fdatasync per batch, about once a second. Every write in the batch is sealed by now. (Also
        # without a batch: a segment is retired only once all of it is synced.)
        epoch, seq, pos = self._epoch, self._commit_seq, log_.position()
        log_.sync()
        self._mark_durable(epoch, seq, pos)
        batch = self._batch
        if batch is None:
            return
        self._batch = None
        self._batch_bytes = 0
        try:
            self._check("lmdb.commit")
            batch.commit()
        except (lmdb.Error, OSError) as e:
            batch.abort()
            raise DurabilityError(f"lmdb commit of a batch failed: {e}") from e
        self._store_pos = pos

    def _log_commit(self, pieces: list[bytes]) -> None:
        """Append a commit's operations to the write-ahead log; retire a full segment. Raises ``StorageError``."""
        log_ = self._wal_or_fail()
        log_.append(pieces)
        if self._checkpointed is not None:
            self._finish_checkpoint()
        if log_.full and self._checkpoint is None:
            self._commit_batch()  # every record of a retired segment must be in the store's file
            self._rotate()

    def _log_unbatched(self, pieces: list[bytes]) -> None:
        """The log record of a write committed on its own (before batching is enabled; tests): its effects are in
        the file already, so a failure here cannot be taken back, only reported."""
        try:
            self._log_commit(pieces)
        except StorageError as e:
            self._take_back(e)
            raise
        self._sealed = (self._commit_seq, self._wal_or_fail().position())
        self._store_pos = self._sealed[1]

    def _rotate(self) -> None:
        """Open a new segment and checkpoint the store in the background, after which the older segments are
        dropped. The batch must have been committed: the records of the segments retired are all in the file."""
        log_ = self._wal_or_fail()
        retired = log_.rotate()
        start = log_.position()
        with self._durable_lock:
            # Everything was synced and committed before: the start of the new segment is the same place.
            self._durable_pos = max(self._durable_pos, start)
        self._store_pos = start
        seq, _ = self._sealed
        self._sealed = (seq, start)
        self._start_checkpoint(retired)

    def _start_checkpoint(self, retired: list[int]) -> None:
        """Sync the store in the background; the retired segments, whose records it then holds, are dropped by
        the owner thread afterwards."""
        thread = threading.Thread(target=self._run_checkpoint, args=(retired,), name="lmdb-checkpoint", daemon=True)
        self._checkpoint = thread
        thread.start()

    def _run_checkpoint(self, retired: list[int]) -> None:
        try:
            # Every record in a retired segment was committed to the store before the segment was retired.
            self._check("lmdb.sync")
            self._env.sync(True)
        except (lmdb.Error, OSError):
            # The segments stay: the log still holds their records durably; the next checkpoint retries.
            log.exception("checkpoint failed; the write-ahead log keeps its segments")
            retired = []
        self._checkpointed = retired

    def _finish_checkpoint(self) -> None:
        assert self._wal is not None and self._checkpoint is not None
        retired, self._checkpointed = self._checkpointed or [], None
        self._checkpoint.join()
        self._checkpoint = None
        try:
            self._wal.drop(retired)
        except OSError as e:
            raise DurabilityError(f"write-ahead log segments cannot be removed: {e}") from e

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
        self._refuse(error)
        self._batch_log = []
        self._unsealed = False
        batch, self._batch = self._batch, None
        self._batch_bytes = 0
        if batch is not None:
            batch.abort()
        try:
            self._wal_or_fail().truncate(durable_pos)
        except StorageError as e:
            self._break(e)
        else:
            self._rebuild_view()
        if lost_through > durable_seq:
            self._report_loss(durable_seq, lost_through)

    def _report_loss(self, durable_seq: int, lost_through: int) -> None:
        for listener in self._listeners:
            try:
                listener(durable_seq, lost_through)
            except StorageError as e:  # the view is not readable yet: told again once it is rebuilt
                log.error("a listener could not take in the writes taken back: %s", e)

    def _rebuild_view(self) -> bool:
        """Open a batch holding the synced records the file does not hold yet; reads on the owner thread see it.
        False if that failed (the store is broken: reads are refused too)."""
        if self._batch_thread is None:
            self._broken = None  # no batch: the file is the view
            return True
        try:
            batch = self._env.begin(db=self._lay.main, write=True)
            records = self._wal_or_fail().operations_between(self._store_pos, self._durable_pos)
            self._batch_bytes = _apply_operations(batch, self._lay, records)
        except (lmdb.Error, OSError, StorageError) as e:
            self._break(StorageError(f"the log's synced records cannot be applied: {e}"))
            return False
        self._batch = batch
        self._batch_started = time.monotonic()
        self._broken = None
        return True

    def _break(self, error: StorageError) -> None:
        if self._broken is None:
            log.error("storage in %s cannot rebuild its state (%s); reads are refused too", self._path, error)
        self._broken = error

    def _refuse(self, error: BaseException) -> None:
        """Refuse writes from now on, and say why once in the log; a full disk gives up the reserve file."""
        first = self._refusal is None
        self._refusal = str(error) or type(error).__name__
        if disk_space.is_disk_full(error, self._path):
            released = self._reserve.release()
            if first or not self._disk_full:
                log.error(
                    "disk full: the data directory %s cannot be written (%s); writes are refused until space is "
                    "freed%s",
                    self._path,
                    error,
                    ", deletes use the space of the released reserve file" if released else "",
                )
            self._disk_full = True
        elif first:
            log.error("storage failure in %s: %s; writes are refused until it recovers", self._path, error)

    def retry_writes(self) -> bool:
        if self._closed:
            return False
        if self._refusal is None:
            # Writable, maybe after deletes freed room inside the file while the file system had none for the
            # reserve: make it again once there is, so that the next full disk has it to give.
            self._reserve.remake_if_room()
            return True
        if self._broken is not None:
            try:
                self._wal_or_fail().truncate(self._durable_pos)
            except StorageError:
                return False
            if not self._rebuild_view():
                return False
            self._report_loss(self._durable_seq, self._commit_seq)  # readers of the view may now re-read it
        try:
            self.seal()  # deletes let through on a full disk (a failure takes them back itself)
        except StorageError:
            return False
        try:
            if self._checkpointed is not None:
                self._finish_checkpoint()
            self._commit_batch()
        except StorageError as e:
            self._take_back(e)
            return False
        try:
            if self._checkpoint is None and self._holds_records():
                self._rotate()  # the checkpoint then drops the log's old segments: on a full disk, their space
        except StorageError:
            return False
        if self._disk_full and not self._reserve.remake_if_room() and not self._room_inside():
            return False
        if not self._disk_full:
            try:
                self._reserve.make()
            except OSError as reserve_error:
                self._refuse(reserve_error)
                return False
        self._refusal = None
        self._disk_full = False
        log.warning("storage in %s accepts writes again", self._path)
        return True

    def _room_inside(self) -> bool:
        """Whether deletes freed enough pages inside LMDB's file (a quarter of the reserve's size, at least
        ``FULL_BELOW``) for writes to resume before the reserve can be made again: new writes reuse those pages, so
        only their log records need the file system (``FULL_BELOW`` of it)."""
        if disk_space.free_bytes(self._path) < disk_space.FULL_BELOW:
            return False
        try:
            stat = self._env.stat()
            used = 2 + _pages(stat)  # the two meta pages and the tree of named databases
            with self._env.begin() as txn:
                used += _pages(txn.stat(self._lay.main)) + _pages(txn.stat(self._lay.long))
            total = self._env.info()["last_pgno"] + 1
        except lmdb.Error:
            return False
        return (total - used) * stat["psize"] >= max(self._reserve.size // 4, disk_space.FULL_BELOW)

    def _holds_records(self) -> bool:
        log_ = self._wal_or_fail()
        return len(log_.numbers()) > 1 or log_.position()[1] > 0

    def _check(self, point: str) -> None:
        if self._faults is not None:
            self._faults.check(point)

    # ------------------------------------------------------------ flushing

    def background_sync(self) -> _LogSync | None:
        if not SyncProcess.supported():
            return None  # flushes run in a worker thread instead
        if self._log_sync is None:
            self._log_sync = _LogSync(self)
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
        self._wal_or_fail().sync()
        self._mark_durable(epoch, seq, pos)
        return self._durable_seq

    def close(self) -> None:
        if self._closed:
            return
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
                self._wal_or_fail().close()
            except (OSError, lmdb.Error) as e:
                raise DurabilityError(f"closing the write-ahead log failed: {e}") from e
        else:
            # The file could not take the log's records: the log stays, and the next start replays it.
            if self._batch is not None:
                self._batch.abort()
                self._batch = None
            try:
                self._wal_or_fail().close(remove=False)
            except OSError as close_error:
                log.error("closing the write-ahead log failed: %s", close_error)
        self._env.close()
        os.close(self._lock_fd)

    def _wal_or_fail(self) -> wal.WriteAheadLog:
        if self._wal is None:  # only while the constructor replays the log
            raise StorageError("the write-ahead log is not open")
        return self._wal

    def _mark_durable(self, epoch: int, seq: int, pos: wal.Position) -> None:
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

    def file_size(self) -> int:
        """Bytes used by the data file (diagnostics)."""
        return os.path.getsize(os.path.join(self._env.path(), "data.mdb"))


class _LogSync:
    """``BackgroundSync`` for the write-ahead log: a helper process syncs the log's files."""

    def __init__(self, kv: LmdbKV) -> None:
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


def _pages(stat: _Stat) -> int:
    return stat["branch_pages"] + stat["leaf_pages"] + stat["overflow_pages"]


def _lock_directory(path: str) -> int:
    """Hold the store's directory for this process: a second server on it would replay and delete the log the
    first one is writing. The lock goes with the process, also after kill -9."""
    try:
        fd = os.open(os.path.join(path, LOCK_FILE), os.O_RDWR | os.O_CREAT, wal.FILE_MODE)
    except OSError as e:
        raise StorageError(f"cannot open the lock file in {path}: {e}") from e
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise StorageError(f"the data directory {path} is in use by another dynastore process") from None
    return fd


def _apply_operations(txn: _Txn, lay: Layout, records: Iterator[list[wal.Operation]]) -> int:
    """Apply logged records to ``txn`` (records already in the log: nothing is logged again); returns the bytes
    they wrote."""
    written = 0
    for ops in records:
        for key, value in ops:
            if value is None:
                if len(key) <= lay.root_max:
                    txn.delete(key)
                else:
                    delete_long(txn, lay, key)
            else:
                written += len(key) + len(value)
                if len(key) <= lay.root_max:
                    txn.put(key, value)
                else:
                    put_long(txn, lay, key, value)
    return written


def _apply_records(txn: _LmdbWriteTxn, records: Iterator[list[wal.Operation]], max_ops: int) -> bool:
    """Apply records until at least ``max_ops`` operations are done; True once ``records`` is exhausted."""
    applied = 0
    for ops in records:
        for key, value in ops:
            if value is None:
                txn.delete(key)
            else:
                txn.put(key, value)
        applied += len(ops)
        if applied >= max_ops:
            return False
    return True
