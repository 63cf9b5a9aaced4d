"""Opening the LMDB engine's store: the environment and its two databases, the lock that keeps a second process
off the directory, and the replay of the batches the durable log recovered from a run that did not close
cleanly. The helpers that apply logged records also rebuild the view after a storage failure
(storage/lmdb_kv.py)."""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import lmdb

from dynastore.storage.durability import DurableLog, Operation
from dynastore.storage.kv import DurabilityError, StorageError
from dynastore.storage.lmdb_layout import Layout, delete_long, put_long
from dynastore.storage.lmdb_txn import LmdbWriteTxn

if TYPE_CHECKING:
    _Txn = lmdb.Transaction[bytes]

__all__ = [
    "DIRECTORY_MODE",
    "apply_operations",
    "lock_directory",
    "open_environment",
    "replay",
]

log = logging.getLogger("dynastore.storage.lmdb_kv")  # the store's one logger, whichever module speaks

LOCK_FILE = "dynastore.lock"
DIRECTORY_MODE = 0o700  # what the store creates is readable by the server's user only
FILE_MODE = 0o600
REPLAY_TXN_OPS = 10_000  # operations per storage transaction while replaying the write-ahead log


def open_environment(path: str, map_size: int, max_readers: int, ordered_sync: bool) -> tuple[lmdb.Environment, Layout]:
    """The LMDB environment in directory ``path`` (created if missing) and the layout of its databases."""
    try:
        env = lmdb.open(
            path,
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
        main = env.open_db(b"main")
        long = env.open_db(b"long")
        max_key = env.max_key_size()
    except lmdb.Error as e:
        raise StorageError(f"cannot open lmdb environment at {path}: {e}") from e
    return env, Layout(main, long, max_key)


def lock_directory(path: str) -> int:
    """Hold the store's directory for this process: a second server on it would replay and delete the log the
    first one is writing. The lock goes with the process, also after kill -9."""
    try:
        fd = os.open(os.path.join(path, LOCK_FILE), os.O_RDWR | os.O_CREAT, FILE_MODE)
    except OSError as e:
        raise StorageError(f"cannot open the lock file in {path}: {e}") from e
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise StorageError(f"the data directory {path} is in use by another dynastore process") from None
    return fd


def replay(env: lmdb.Environment, write: Callable[[], LmdbWriteTxn], durable_log: DurableLog) -> BaseException | None:
    """Apply the batches the log recovered from a run that did not close cleanly (through ``write``'s
    transactions), make the store durable, and have the log discard them. Returns the failure if the store's file
    could not take them (the log then keeps them)."""
    records = durable_log.recovered()
    if records is None:
        return None
    done = False
    try:
        while not done:
            with write() as txn:
                done = _apply_records(txn, records, REPLAY_TXN_OPS)
    except (OSError, DurabilityError) as read_error:
        raise StorageError(f"cannot replay the write-ahead log in {durable_log.location}: {read_error}") from read_error
    except StorageError as commit_error:
        return commit_error
    try:
        env.sync(True)
        durable_log.discard_recovered()
    except (OSError, lmdb.Error) as sync_error:
        return sync_error
    return None


def apply_operations(txn: _Txn, lay: Layout, records: Iterator[list[Operation]]) -> int:
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


def _apply_records(txn: LmdbWriteTxn, records: Iterator[list[Operation]], max_ops: int) -> bool:
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
