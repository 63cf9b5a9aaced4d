"""The LMDB engine's parts on their own: the directory lock, the failure state, the checkpoint thread."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from dynastore.storage import disk_space, wal
from dynastore.storage.durability import encode_delete
from dynastore.storage.kv import StorageError, StorageUnavailableError
from dynastore.storage.lmdb_checkpoint import Checkpoint
from dynastore.storage.lmdb_failures import FailureState
from dynastore.storage.lmdb_kv import LmdbKV
from dynastore.storage.lmdb_startup import lock_directory, open_environment
from dynastore.storage.local_log import LocalLog


def test_the_directory_lock_keeps_a_second_holder_out_until_released(tmp_path: Path) -> None:
    fd = lock_directory(str(tmp_path))
    with pytest.raises(StorageError, match="is in use by another dynastore process"):
        lock_directory(str(tmp_path))  # a lock of its own open file: refused as another process's would be
    os.close(fd)
    os.close(lock_directory(str(tmp_path)))


def test_a_full_disk_refuses_writes_lets_deletes_through_and_gives_up_the_reserve(tmp_path: Path) -> None:
    reserve = disk_space.Reserve(str(tmp_path / "reserve"), 4096)
    reserve.make()
    failures = FailureState(str(tmp_path), reserve)
    failures.refuse(OSError(errno.ENOSPC, "No space left on device"))
    assert failures.refusal == "[Errno 28] No space left on device"
    assert failures.disk_full
    assert not (tmp_path / "reserve").exists()


def test_another_failure_refuses_writes_and_keeps_the_reserve(tmp_path: Path) -> None:
    reserve = disk_space.Reserve(str(tmp_path / "reserve"), 4096)
    reserve.make()
    failures = FailureState(str(tmp_path), reserve)
    failures.refuse(StorageError(""))
    assert failures.refusal == "StorageError"  # an error without a text is named by its type
    assert not failures.disk_full
    assert (tmp_path / "reserve").exists()


def test_a_listener_that_cannot_take_in_a_loss_does_not_stop_the_others(tmp_path: Path) -> None:
    failures = FailureState(str(tmp_path), disk_space.Reserve(str(tmp_path / "reserve"), 0))
    told: list[tuple[int, int]] = []

    def unreadable(durable_seq: int, lost_through: int) -> None:
        raise StorageError("the view is not readable yet")

    failures.listeners += [unreadable, lambda durable, lost: told.append((durable, lost))]
    failures.report_loss(3, 7)
    assert told == [(3, 7)]


class _FailSync:
    def check(self, point: str) -> None:
        if point == "lmdb.sync":
            raise OSError(errno.EIO, "Input/output error")


@pytest.mark.parametrize("fails", [False, True])
def test_a_checkpoint_reports_the_compaction_as_applied_only_after_its_sync(tmp_path: Path, fails: bool) -> None:
    env, _ = open_environment(str(tmp_path / "db"), 1 << 20, 8, False)
    log = LocalLog(str(tmp_path / "wal"))
    log.open()
    log.append([encode_delete(b"k"), b"k"])
    position = log.compact()
    assert position == (2, 0)
    checkpoint = Checkpoint(env, position, _FailSync().check if fails else lambda point: None)
    checkpoint.start()
    checkpoint.join()
    assert checkpoint.done is (not fails)  # a failed sync keeps the segments for the next one
    checkpoint.finish(log)
    assert checkpoint.done is None
    assert wal.segment_numbers(str(tmp_path / "wal")) == ([1, 2] if fails else [2])
    log.close()
    env.close()


def test_a_write_that_finds_lmdbs_map_full_is_refused_and_not_applied(tmp_path: Path) -> None:
    """LMDB's map full (MapFullError) is no room for the write, as a full disk is: a refusal (answered 503), the
    transaction aborted, the store still serving what it held."""
    kv = LmdbKV(tmp_path / "db", map_size=1 << 20)
    try:
        with kv.write() as txn:
            txn.put(b"kept", b"v")
        with pytest.raises(StorageUnavailableError, match="found no room"), kv.write() as txn:
            for i in range(1000):
                txn.put(b"k%d" % i, os.urandom(4000))
        with kv.read() as reader:
            assert reader.get(b"kept") == b"v"
            assert reader.get(b"k0") is None
    finally:
        kv.close()
