"""LMDB engine: one environment, durable through group commit.

Durability model. The environment is opened with ``sync=False``: a commit writes its pages to the file
(the OS page cache) but does not fsync, so commits are cheap and survive a crash of this process
(kill -9). ``flush()`` calls ``env.sync(True)`` (fdatasync), which makes every commit made before it
durable against power loss; ``GroupCommitter`` runs it in a worker thread so one fsync covers many
commits. py-lmdb releases the GIL during the sync, and LMDB's sync only flushes the file descriptor,
so the owner thread keeps committing meanwhile (tests/unit/storage/test_kv_contract.py checks both).
LMDB's own caveat applies: until ``flush`` returns, an OS crash may lose the recent commits, and since the
kernel writes pages back in any order, it may leave the newest meta page pointing at pages that never reached
the disk (a corrupt store). ``ordered_sync=True`` (``dynastore serve --crash-safe``) closes that: every commit
(a sealed batch) syncs its pages before LMDB writes its meta page (LMDB's ``MDB_NOMETASYNC`` mode), and the
next ``flush`` makes that meta page durable; the commit's sync blocks the owner thread.

Batches. Committing costs LMDB a write of every page the transaction changed (with its branch pages, the free
list and the meta page: several syscalls for one small put). Once ``enable_batching`` is called, the owner
thread's write transactions are LMDB child transactions of one open *batch* transaction: each commits into the
batch (atomically; an exception discards only its own writes) and ``seal()`` commits the batch to the file
once, sharing those page writes. The server seals at the end of each event-loop turn, before the flush that
makes the turn's writes durable; a batch whose writes reach ``MAX_BATCH_BYTES`` is sealed at once. Reads on
the owner thread go through the open batch, so they see every committed write exactly as they would without
batching. If a seal fails, the batch's writes are lost and every later ``flush`` raises, so none of them is
ever reported durable.

Long keys. LMDB keys are limited to ``env.max_key_size()`` (511 bytes in the bundled build) while
DynamoDB keys reach 2048 + 1024 bytes before encoding. Longer keys are stored as a chain of groups,
transparently and in order:

* in the main database a key of at most ``M - 1`` bytes (``M`` = max key size) is stored as is;
* every key longer than that with head ``h = key[:M-1]`` lives in a *group*: the main database holds
  one marker ``h + b"\\x00"`` (exactly ``M`` bytes, so it is told apart by its length) whose value is an
  8-byte group id, and the tail ``key[M-1:]`` is stored in the ``long`` database under ``gid + tail``;
* a tail longer than ``M - 9`` bytes nests the same way (``gid + tail[:M-9] + b"\\x00"`` → child gid).

The marker sorts right after ``h`` and before every key greater than all keys starting with ``h``, so a
range scan visits groups exactly where their keys belong. Group ids come from a counter stored in the
``long`` database under eight zero bytes; a group's marker is removed when its last key is deleted.

No lmdb type or ``Any`` is visible outside this module; lmdb errors become ``StorageError``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING

import lmdb

from dynastore.storage.kv import DurabilityError, StorageError

if TYPE_CHECKING:
    _Txn = lmdb.Transaction[bytes]
    _Db = lmdb._Database

__all__ = ["LmdbKV"]

DEFAULT_MAP_SIZE = 1 << 40  # 1 TiB of address space; the file grows only as pages are used
# A batch is sealed early once its writes hold this many bytes: LMDB keeps a transaction's dirty pages in memory
# and refuses one of more than 512 MB, and a loop turn may take many large requests (a BatchWriteItem carries
# up to 16 MB).
MAX_BATCH_BYTES = 16 << 20
_ID_LEN = 8
_COUNTER_KEY = bytes(_ID_LEN)


class _Layout:
    """The databases and the long-key thresholds of one environment."""

    __slots__ = ("main", "long", "root_max", "nest_max")

    def __init__(self, main: _Db, long: _Db, max_key_size: int) -> None:
        self.main = main
        self.long = long
        self.root_max = max_key_size - 1  # longest key stored directly in main
        self.nest_max = max_key_size - 1 - _ID_LEN  # longest tail stored directly in a group


class _LmdbReadTxn:
    __slots__ = ("_txn", "_lay")

    def __init__(self, txn: _Txn, lay: _Layout) -> None:
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
            return _get_long(self._txn, self._lay, key)
        except lmdb.Error as e:
            raise StorageError(f"lmdb get failed: {e}") from e

    def iter_range(self, lo: bytes, hi: bytes, *, reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        if lo >= hi:
            return iter(())
        if reverse:
            return _scan_root_reverse(self._txn, self._lay, lo, hi)
        return _scan_root(self._txn, self._lay, lo, hi)


class _BatchReadTxn(_LmdbReadTxn):
    """A read through the open batch: leaving it keeps the batch open."""

    __slots__ = ()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        pass


class _LmdbWriteTxn(_LmdbReadTxn):
    __slots__ = ("_kv", "_batched", "_written")

    def __init__(self, kv: LmdbKV) -> None:
        txn, batched = kv._begin_write()
        super().__init__(txn, kv._lay)
        self._kv = kv
        self._batched = batched
        self._written = 0

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
            kv._sealed_seq = kv._commit_seq
            return
        kv._batch_bytes += self._written
        if kv._batch_bytes >= MAX_BATCH_BYTES:
            kv.seal()

    def put(self, key: bytes, value: bytes) -> None:
        self._written += len(key) + len(value)
        try:
            if len(key) <= self._lay.root_max:
                self._txn.put(key, value)
            else:
                _put_long(self._txn, self._lay, key, value)
        except lmdb.Error as e:
            raise StorageError(f"lmdb put failed: {e}") from e

    def delete(self, key: bytes) -> bool:
        try:
            if len(key) <= self._lay.root_max:
                return self._txn.delete(key)
            return _delete_long(self._txn, self._lay, key)
        except lmdb.Error as e:
            raise StorageError(f"lmdb delete failed: {e}") from e


class LmdbKV:
    """``KV`` on one LMDB environment in directory ``path`` (created if missing)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        map_size: int = DEFAULT_MAP_SIZE,
        max_readers: int = 1024,
        ordered_sync: bool = False,
    ):
        try:
            self._env = lmdb.open(
                os.fspath(path),
                map_size=map_size,
                max_dbs=2,
                max_readers=max_readers,
                max_spare_txns=16,
                sync=ordered_sync,
                metasync=False,
                subdir=True,
                lock=True,
            )
            main = self._env.open_db(b"main")
            long = self._env.open_db(b"long")
            max_key = self._env.max_key_size()
        except lmdb.Error as e:
            raise StorageError(f"cannot open lmdb environment at {path}: {e}") from e
        self._lay = _Layout(main, long, max_key)
        self._commit_seq = 0
        self._sealed_seq = 0  # the last commit_seq written to the file (not still in the open batch)
        self._durable_seq = 0
        self._batch: _Txn | None = None
        self._batch_bytes = 0
        self._seal_failure: DurabilityError | None = None  # a lost batch: no later flush may claim its writes
        self._batch_thread: int | None = None
        self._on_batch_open: Callable[[], None] | None = None
        self._durable_lock = threading.Lock()
        self._writer_open = False
        self._closed = False

    def read(self) -> _LmdbReadTxn:
        batch = self._batch
        if batch is not None and not self._writer_open and threading.get_ident() == self._batch_thread:
            return _BatchReadTxn(batch, self._lay)
        try:
            return _LmdbReadTxn(self._env.begin(db=self._lay.main), self._lay)
        except lmdb.Error as e:
            raise StorageError(f"lmdb read transaction failed: {e}") from e

    def write(self) -> _LmdbWriteTxn:
        return _LmdbWriteTxn(self)

    def _begin_write(self) -> tuple[_Txn, bool]:
        """A new write transaction, and whether it is a child of the open batch."""
        if self._writer_open:
            # LMDB's writer lock is not reentrant: a second begin would deadlock this thread.
            raise StorageError("a write transaction is already open")
        try:
            parent = None
            on_open = self._on_batch_open
            if on_open is not None and threading.get_ident() == self._batch_thread:
                parent = self._batch
                if parent is None:
                    parent = self._batch = self._env.begin(db=self._lay.main, write=True)
                    on_open()
            txn = self._env.begin(db=self._lay.main, write=True, parent=parent)
        except lmdb.Error as e:
            raise StorageError(f"lmdb write transaction failed: {e}") from e
        self._writer_open = True
        return txn, parent is not None

    def enable_batching(self, on_open: Callable[[], None]) -> None:
        self._on_batch_open = on_open
        self._batch_thread = threading.get_ident()

    def seal(self) -> None:
        batch = self._batch
        if batch is None:
            return
        self._batch = None
        self._batch_bytes = 0
        try:
            batch.commit()
        except lmdb.Error as e:
            self._seal_failure = DurabilityError(f"lmdb commit of a batch failed: {e}")
            raise self._seal_failure from e
        self._sealed_seq = self._commit_seq

    @property
    def commit_seq(self) -> int:
        return self._commit_seq

    @property
    def durable_seq(self) -> int:
        return self._durable_seq

    def flush(self) -> int:
        # Every sealed commit has already written its pages (commit returns first), so one fdatasync issued
        # after reading the counter covers all of them.
        if self._seal_failure is not None:
            raise self._seal_failure
        seq = self._sealed_seq
        try:
            self._env.sync(True)
        except lmdb.Error as e:
            raise DurabilityError(f"lmdb sync failed: {e}") from e
        with self._durable_lock:
            if seq > self._durable_seq:
                self._durable_seq = seq
        return seq

    def close(self) -> None:
        if not self._closed:
            self.seal()
            self._closed = True
            self._env.close()

    @property
    def ordered_sync(self) -> bool:
        """Whether commits sync their pages before their meta page (``--crash-safe``)."""
        return bool(self._env.flags()["sync"])

    def file_size(self) -> int:
        """Bytes used by the data file (diagnostics)."""
        return os.path.getsize(os.path.join(self._env.path(), "data.mdb"))


# ---------------------------------------------------------------- long keys


def _get_long(txn: _Txn, lay: _Layout, key: bytes) -> bytes | None:
    gid = txn.get(key[: lay.root_max] + b"\x00")
    rest = key[lay.root_max :]
    long, cut = lay.long, lay.nest_max
    while gid is not None:
        if len(rest) <= cut:
            return txn.get(gid + rest, db=long)
        gid = txn.get(gid + rest[:cut] + b"\x00", db=long)
        rest = rest[cut:]
    return None


def _new_gid(txn: _Txn, lay: _Layout) -> bytes:
    raw = txn.get(_COUNTER_KEY, db=lay.long)
    gid = (int.from_bytes(raw, "big") if raw is not None else 0) + 1
    out = gid.to_bytes(_ID_LEN, "big")
    txn.put(_COUNTER_KEY, out, db=lay.long)
    return out


def _put_long(txn: _Txn, lay: _Layout, key: bytes, value: bytes) -> None:
    marker = key[: lay.root_max] + b"\x00"
    gid = txn.get(marker)
    if gid is None:
        gid = _new_gid(txn, lay)
        txn.put(marker, gid)
    rest = key[lay.root_max :]
    long, cut = lay.long, lay.nest_max
    while len(rest) > cut:
        marker = gid + rest[:cut] + b"\x00"
        child = txn.get(marker, db=long)
        if child is None:
            child = _new_gid(txn, lay)
            txn.put(marker, child, db=long)
        gid, rest = child, rest[cut:]
    txn.put(gid + rest, value, db=long)


def _group_empty(txn: _Txn, lay: _Layout, gid: bytes) -> bool:
    cur = txn.cursor(db=lay.long)
    return not (cur.set_range(gid) and cur.key()[:_ID_LEN] == gid)


def _delete_long(txn: _Txn, lay: _Layout, key: bytes) -> bool:
    long, cut = lay.long, lay.nest_max
    marker = key[: lay.root_max] + b"\x00"
    path: list[tuple[bytes, bool, bytes]] = []  # (marker key, marker is in main, child gid)
    gid = txn.get(marker)
    in_main = True
    rest = key[lay.root_max :]
    while True:
        if gid is None:
            return False
        path.append((marker, in_main, gid))
        if len(rest) <= cut:
            break
        marker, in_main = gid + rest[:cut] + b"\x00", False
        gid = txn.get(marker, db=long)
        rest = rest[cut:]
    if not txn.delete(gid + rest, db=long):
        return False
    for marker, in_main, child in reversed(path):
        if not _group_empty(txn, lay, child):
            break
        if in_main:
            txn.delete(marker)
        else:
            txn.delete(marker, db=long)
    return True


# ---------------------------------------------------------------- range scans


def _child_bounds(h: bytes, lo: bytes, hi: bytes | None) -> tuple[bytes, bytes | None] | None:
    """Bounds relative to the group of keys ``h + t`` (t non-empty); None if the group is out of range."""
    n = len(h)
    if lo[:n] == h:
        lo_rel = lo[n:]
    elif lo < h:
        lo_rel = b""
    else:
        return None
    if hi is None:
        hi_rel = None
    elif hi[:n] == h:
        hi_rel = hi[n:]
        if not hi_rel:
            return None
    elif hi > h:
        hi_rel = None
    else:
        return None
    return lo_rel, hi_rel


def _scan_root(txn: _Txn, lay: _Layout, lo: bytes, hi: bytes) -> Iterator[tuple[bytes, bytes]]:
    cut = lay.root_max
    try:
        cur = txn.cursor()
        if not (cur.set_range(lo if len(lo) <= cut else lo[:cut]) if lo else cur.first()):
            return
        # Positioned at the first key >= lo unless lo was cut to a group head: only then can keys below lo follow.
        floor = lo if len(lo) > cut else b""
        for key, value in cur.iternext():
            if key >= hi:
                return
            if len(key) > cut:
                h = key[:cut]
                bounds = _child_bounds(h, lo, hi)
                if bounds is not None:
                    yield from _scan_group(txn, lay, value, h, bounds[0], bounds[1])
            elif key >= floor:
                yield key, value
    except lmdb.Error as e:
        raise StorageError(f"lmdb scan failed: {e}") from e


def _scan_group(
    txn: _Txn, lay: _Layout, gid: bytes, base: bytes, lo: bytes, hi: bytes | None
) -> Iterator[tuple[bytes, bytes]]:
    cut = lay.nest_max
    cur = txn.cursor(db=lay.long)
    if not cur.set_range(gid + (lo if len(lo) <= cut else lo[:cut])):
        return
    for key, value in cur.iternext():
        if key[:_ID_LEN] != gid:
            return
        x = key[_ID_LEN:]
        if hi is not None and x >= hi:
            return
        if len(x) > cut:
            h = x[:cut]
            bounds = _child_bounds(h, lo, hi)
            if bounds is not None:
                yield from _scan_group(txn, lay, value, base + h, bounds[0], bounds[1])
        elif x >= lo:
            yield base + x, value


def _scan_root_reverse(txn: _Txn, lay: _Layout, lo: bytes, hi: bytes) -> Iterator[tuple[bytes, bytes]]:
    cut = lay.root_max
    cur = txn.cursor()
    # Position on the last entry that may hold keys < hi. A hi longer than a key can be is cut to its
    # head plus 0x01: that keeps the head itself and the head's group marker, and nothing greater than hi.
    seek = hi if len(hi) <= cut else hi[:cut] + b"\x01"
    try:
        positioned = cur.prev() if cur.set_range(seek) else cur.last()
        if not positioned:
            return
        for key, value in cur.iterprev():
            if len(key) > cut:
                h = key[:cut]
                bounds = _child_bounds(h, lo, hi)
                if bounds is None:
                    if lo > h:
                        return
                    continue
                yield from _scan_group_reverse(txn, lay, value, h, bounds[0], bounds[1])
            elif key < lo:
                return
            elif key < hi:
                yield key, value
    except lmdb.Error as e:
        raise StorageError(f"lmdb scan failed: {e}") from e


def _scan_group_reverse(
    txn: _Txn, lay: _Layout, gid: bytes, base: bytes, lo: bytes, hi: bytes | None
) -> Iterator[tuple[bytes, bytes]]:
    cut = lay.nest_max
    cur = txn.cursor(db=lay.long)
    if hi is None:
        seek = (int.from_bytes(gid, "big") + 1).to_bytes(_ID_LEN, "big")
    else:
        seek = gid + (hi if len(hi) <= cut else hi[:cut] + b"\x01")
    positioned = cur.prev() if cur.set_range(seek) else cur.last()
    if not positioned:
        return
    for key, value in cur.iterprev():
        if key[:_ID_LEN] != gid:
            return
        x = key[_ID_LEN:]
        if len(x) > cut:
            h = x[:cut]
            bounds = _child_bounds(h, lo, hi)
            if bounds is None:
                if lo > h:
                    return
                continue
            yield from _scan_group_reverse(txn, lay, value, base + h, bounds[0], bounds[1])
        elif x < lo:
            return
        elif hi is None or x < hi:
            yield base + x, value
