"""The LMDB engine's transactions: reads (on their own, or through the open batch) and writes.

A write transaction records its puts and deletes for the durable log as it goes (storage/durability.py's batch
encoding) and, once LMDB committed it, hands that payload to the store that began it (``WriteOwner``:
storage/lmdb_kv.py), which seals it into the log with the batch. lmdb errors become ``StorageError``; a write that
finds no room (LMDB's map or a transaction's page list full) is ``StorageUnavailableError``: not applied, and
answered as a refused write.

Two kinds of write transaction on the owner thread's open batch (storage/lmdb_kv.py): an LMDB child transaction
of the batch (``LmdbWriteTxn`` with ``batched``), which LMDB aborts on its own, and ``BatchWriteTxn``, which
writes straight into the batch and keeps an undo journal (each key's value before its first change) to take its
writes back itself. The second spares LMDB's copy of every page a child transaction first touches (an
allocation, zeroing and copy of a 4 KB page, about as much as the rest of a small write), but an LMDB error
inside the batch leaves the whole batch unusable: the store then takes back every write not yet durable, as
for a failed seal. So the store uses it only while LMDB's map has room to spare (a full map is the one LMDB
error a write can expect), docs/design.md "Storage failures and a full disk".
"""

from __future__ import annotations

from collections.abc import Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

import lmdb

from dynastore.storage.durability import encode_delete, encode_put
from dynastore.storage.kv import StorageError, StorageUnavailableError
from dynastore.storage.lmdb_layout import Layout, delete_long, get_long, put_long, scan_root, scan_root_reverse

if TYPE_CHECKING:
    _Txn = lmdb.Transaction[bytes]

__all__ = ["AppendingCursor", "BatchReadTxn", "BatchWriteTxn", "LmdbReadTxn", "LmdbWriteTxn", "WriteOwner"]


class WriteOwner(Protocol):
    """The store a write transaction reports to when it ends."""

    def _write_closed(self) -> None:
        """The transaction is leaving (before its commit): another may begin."""

    def _write_committed(self, log: list[bytes] | None, written: int, batched: bool) -> None:
        """LMDB committed the transaction: ``log`` is its log payload (None without a log), ``written`` the bytes
        its puts carried, ``batched`` whether it committed into the open batch."""

    def _take_back(self, error: BaseException) -> None:
        """A ``BatchWriteTxn`` could not write or undo its writes: the open batch is unusable, and every write in
        it that is not durable is taken back."""


class LmdbReadTxn:
    __slots__ = ("_txn", "_lay")

    def __init__(self, txn: _Txn, lay: Layout) -> None:
        self._txn = txn
        self._lay = lay

    def __enter__(self) -> LmdbReadTxn:
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


class BatchReadTxn(LmdbReadTxn):
    """A read through the open batch: leaving it keeps the batch open."""

    __slots__ = ()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        pass


class LmdbWriteTxn(LmdbReadTxn):
    """``txn`` began by ``owner`` (``batched``: a child of its open batch); ``logged``: record the writes for
    the durable log."""

    __slots__ = ("_owner", "_batched", "_written", "_log")

    def __init__(self, owner: WriteOwner, txn: _Txn, lay: Layout, batched: bool, logged: bool) -> None:
        super().__init__(txn, lay)
        self._owner = owner
        self._batched = batched
        self._written = 0
        self._log: list[bytes] | None = [] if logged else None  # this transaction's log payload

    def __enter__(self) -> LmdbWriteTxn:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        owner = self._owner
        owner._write_closed()
        if exc_type is not None:
            self._txn.abort()
            return
        try:
            self._txn.commit()
        except lmdb.Error as e:
            raise _write_error("commit", e) from e
        owner._write_committed(self._log, self._written, self._batched)

    def put(self, key: bytes, value: bytes) -> None:
        self._count_put(key, value)
        try:
            self._store(key, value)
        except lmdb.Error as e:
            raise self._failure("put", e) from e

    def swap(self, key: bytes, value: bytes) -> bytes | None:
        self._count_put(key, value)
        try:
            return self._replace(key, value)
        except lmdb.Error as e:
            raise self._failure("put", e) from e

    def append(self, key: bytes, value: bytes) -> None:
        self._count_put(key, value)
        try:
            self._append(key, value)
        except lmdb.Error as e:
            raise self._failure("put", e) from e

    def _count_put(self, key: bytes, value: bytes) -> None:
        """A put's bytes counted, and the put recorded for the durable log."""
        self._written += len(key) + len(value)
        if self._log is not None:
            self._log += (encode_put(key, value), key, value)

    def delete(self, key: bytes) -> bool:
        if self._log is not None:
            self._log += (encode_delete(key), key)
        try:
            return self._remove(key)
        except lmdb.Error as e:
            raise self._failure("delete", e) from e

    def _store(self, key: bytes, value: bytes) -> None:
        if len(key) <= self._lay.root_max:
            self._txn.put(key, value)
        else:
            put_long(self._txn, self._lay, key, value)

    def _append(self, key: bytes, value: bytes) -> None:
        self._store(key, value)

    def _replace(self, key: bytes, value: bytes) -> bytes | None:
        if len(key) <= self._lay.root_max:
            return self._txn.replace(key, value)
        old = get_long(self._txn, self._lay, key)
        put_long(self._txn, self._lay, key, value)
        return old

    def _remove(self, key: bytes) -> bool:
        if len(key) <= self._lay.root_max:
            return self._txn.delete(key)
        return delete_long(self._txn, self._lay, key)

    def _failure(self, operation: str, error: lmdb.Error) -> StorageError:
        return _write_error(operation, error)


class AppendingCursor:
    """The cursor ``BatchWriteTxn.append`` writes into its owner's open batch with, one a batch, kept from one
    write to the next: it stays where the last append left it, most often on the page the next key goes to, so
    LMDB searches that page alone rather than the tree from its root (and no temporary cursor is made, as a
    transaction's ``replace`` makes one): about two fifths less LMDB work an append (4.0k instructions to 2.4k)."""

    __slots__ = ("_batch", "_cursor")

    def __init__(self) -> None:
        # The batch is kept with its cursor: a later batch is never mistaken for it, as a new transaction at a
        # freed one's address could be.
        self._batch: _Txn | None = None
        self._cursor: lmdb.Cursor[bytes] | None = None

    def on(self, batch: _Txn) -> lmdb.Cursor[bytes]:
        cursor = self._cursor
        if cursor is None or self._batch is not batch:
            cursor = self._cursor = batch.cursor()
            self._batch = batch
        return cursor


class BatchWriteTxn(LmdbWriteTxn):
    """A write straight into the owner's open batch ``txn``, taken back from its undo journal when it ends with
    an exception (its reads see its own writes, as a child transaction's do)."""

    __slots__ = ("_undo", "_failed", "_appending")

    def __init__(self, owner: WriteOwner, txn: _Txn, lay: Layout, logged: bool, appending: AppendingCursor) -> None:
        super().__init__(owner, txn, lay, True, logged)
        self._appending = appending
        # (key, its value before this transaction's first change of it, None: absent), in the order written.
        self._undo: list[tuple[bytes, bytes | None]] = []
        self._failed: lmdb.Error | None = None  # an LMDB error inside the batch: it can only be aborted

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        owner = self._owner
        owner._write_closed()
        failed = self._failed
        if failed is None:
            if exc_type is None:
                owner._write_committed(self._log, self._written, True)
                return
            try:
                self._undo_writes()
                return
            except lmdb.Error as e:
                failed = e
        error = _write_error("write into the batch", failed)
        owner._take_back(error)
        if exc_type is None:
            raise error  # the caller went on past the failed write's error: it still must not look committed

    def _undo_writes(self) -> None:
        for key, old in reversed(self._undo):  # (through the base class's steps, which keep no journal)
            if old is None:
                LmdbWriteTxn._remove(self, key)
            else:
                LmdbWriteTxn._store(self, key, old)

    def _store(self, key: bytes, value: bytes) -> None:
        self._replace(key, value)

    def _append(self, key: bytes, value: bytes) -> None:
        if len(key) > self._lay.root_max:
            self._replace(key, value)
            return
        old = self._appending.on(self._txn).replace(key, value)
        self._undo.append((key, old))

    def _replace(self, key: bytes, value: bytes) -> bytes | None:
        if len(key) <= self._lay.root_max:
            old = self._txn.replace(key, value)
            self._undo.append((key, old))
        else:
            old = get_long(self._txn, self._lay, key)
            self._undo.append((key, old))
            put_long(self._txn, self._lay, key, value)
        return old

    def _remove(self, key: bytes) -> bool:
        if len(key) <= self._lay.root_max:
            old = self._txn.pop(key)
        else:
            old = get_long(self._txn, self._lay, key)
            if old is not None:
                delete_long(self._txn, self._lay, key)
        if old is None:
            return False
        self._undo.append((key, old))
        return True

    def _failure(self, operation: str, error: lmdb.Error) -> StorageError:
        self._failed = error
        return _write_error(operation, error)


def _write_error(operation: str, error: lmdb.Error) -> StorageError:
    """What a failed write step raises: no room is a refusal (the transaction is aborted, nothing applied)."""
    if isinstance(error, lmdb.MapFullError | lmdb.TxnFullError):
        return StorageUnavailableError(f"lmdb {operation} found no room: {error}")
    return StorageError(f"lmdb {operation} failed: {error}")
