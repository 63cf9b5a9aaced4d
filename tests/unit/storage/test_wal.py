"""The write-ahead log: records, replay after a crash, checkpoints, and the sync helper process."""

from __future__ import annotations

import os
import signal
import socket
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from dynastore.storage import lmdb_kv, wal
from dynastore.storage.kv import BackgroundSync, DurabilityError
from dynastore.storage.lmdb_kv import LmdbKV
from dynastore.storage.local_log import HelperSync
from dynastore.storage.syncer import SyncProcess
from tests.unit.storage.durable_log_spy import DurableLogSpy
from tests.unit.storage.killed_writer import SRC, first_line_then_kill_9


def write_segment(directory: Path, number: int, records: list[list[wal.Operation]]) -> None:
    log = wal.WriteAheadLog(str(directory), number)
    for ops in records:
        pieces: list[bytes] = []
        for key, value in ops:
            pieces += [wal.encode_delete(key), key] if value is None else [wal.encode_put(key, value), key, value]
        log.append(pieces)
    log.sync()  # and leave the segment in place, as a crash would


def test_records_round_trip_in_order(tmp_path: Path) -> None:
    records: list[list[wal.Operation]] = [
        [(b"a", b"1"), (b"b", b"")],
        [(b"a", None)],
        [(b"k" * 3000, bytes(range(256)) * 10)],
    ]
    write_segment(tmp_path, 7, records[:2])
    write_segment(tmp_path, 8, records[2:])
    assert wal.segment_numbers(str(tmp_path)) == [7, 8]
    assert list(wal.recorded_operations(str(tmp_path), [7, 8])) == records


def test_replay_stops_at_a_torn_record(tmp_path: Path) -> None:
    write_segment(tmp_path, 1, [[(b"a", b"1")], [(b"b", b"2")]])
    path = wal.segment_path(str(tmp_path), 1)
    whole = Path(path).read_bytes()
    Path(path).write_bytes(whole[:-1])  # the second record lost its last byte
    write_segment(tmp_path, 2, [[(b"c", b"3")]])  # written later, so never acknowledged either
    assert list(wal.recorded_operations(str(tmp_path), [1, 2])) == [[(b"a", b"1")]]
    corrupt = bytearray(whole)
    corrupt[-1] ^= 0xFF  # a checksum mismatch ends the replay the same way
    Path(path).write_bytes(bytes(corrupt))
    assert list(wal.recorded_operations(str(tmp_path), [1, 2])) == [[(b"a", b"1")]]


def test_a_record_of_an_unknown_kind_is_an_error_not_a_torn_write(tmp_path: Path) -> None:
    log = wal.WriteAheadLog(str(tmp_path), 1)
    log.append([b"\x09junk"])
    with pytest.raises(DurabilityError, match="unknown operation tag 9"):
        list(wal.recorded_operations(str(tmp_path), [1]))


def test_opening_a_store_replays_its_log_and_removes_it(tmp_path: Path) -> None:
    db = tmp_path / "db"
    kv = LmdbKV(db, map_size=1 << 30)
    with kv.write() as w:
        w.put(b"a", b"in the file")
        w.put(b"b", b"in the file")
    kv.close()
    # A log older than the file's state is replayed too: the end state is the log's last word on each key.
    write_segment(db / "wal", 5, [[(b"a", b"old")], [(b"a", b"new"), (b"b", None), (b"L" * 700, b"long")]])
    kv = LmdbKV(db, map_size=1 << 30)
    with kv.read() as r:
        assert r.get(b"a") == b"new"
        assert r.get(b"b") is None
        assert r.get(b"L" * 700) == b"long"
    assert kv.commit_seq == 0
    assert wal.segment_numbers(str(db / "wal")) == [6]  # the replayed one is gone; the new one follows it
    kv.close()
    assert wal.segment_numbers(str(db / "wal")) == []  # a clean close leaves nothing to replay


_WRITER = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {src!r})
    from dynastore.storage import wal
    from dynastore.storage.lmdb_kv import LmdbKV
    wal.CHECKPOINT_BYTES = 8192  # segments are retired and checkpointed while the writes go on
    kv = LmdbKV({path!r}, map_size=1 << 30)
    kv.enable_batching(lambda: None)  # the server's way: commits reach the file only at checkpoints
    for i in range(300):
        with kv.write() as w:
            w.put(b"k%04d" % i, b"v%d" % i)
            w.put(b"L" * 600 + b"%04d" % i, b"long%d" % i)
            if i % 3 == 0:
                w.delete(b"k%04d" % (i // 2))
        kv.seal()
    sync = kv.background_sync()
    seq = sync.begin()
    while sync.finish() is None:
        pass
    print("ok", seq, kv.durable_seq, len(os.listdir({path!r} + "/wal")) <= 2, flush=True)
    while True:
        with kv.write() as w:  # keep committing (never made durable) until killed
            w.put(b"z", os.urandom(8))
        kv.seal()
    """
)


def test_kill_9_loses_nothing_the_log_made_durable_across_checkpoints(tmp_path: Path) -> None:
    path = str(tmp_path / "db")
    line = first_line_then_kill_9(_WRITER.format(src=SRC, path=path))
    assert line.split() == ["ok", "300", "300", "True"]  # all durable; old segments were dropped
    expected: dict[bytes, bytes | None] = {}
    for i in range(300):
        expected[b"k%04d" % i] = b"v%d" % i
        expected[b"L" * 600 + b"%04d" % i] = b"long%d" % i
        if i % 3 == 0:
            expected[b"k%04d" % (i // 2)] = None
    kv = LmdbKV(path, map_size=1 << 30)
    with kv.read() as r:
        assert {k: r.get(k) for k in expected} == expected
    kv.close()


def test_a_full_segment_is_retired_and_dropped_after_a_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wal, "CHECKPOINT_BYTES", 4096)
    db = tmp_path / "db"
    kv = LmdbKV(db, map_size=1 << 30)
    kv.enable_batching(lambda: None)
    for i in range(20):
        with kv.write() as w:
            w.put(b"k%02d" % i, bytes(1000))
        kv.seal()
        checkpoint = kv._checkpoint
        if checkpoint is not None:
            checkpoint.join()  # let each checkpoint finish before the next write, so that every one is dropped
    assert kv.flush() == 20
    numbers = wal.segment_numbers(str(db / "wal"))
    assert len(numbers) <= 2 and numbers[-1] >= 5  # about 4 records a segment; the old ones are gone
    kv.close()
    kv = LmdbKV(db, map_size=1 << 30)
    with kv.read() as r:
        assert [k for k, _ in r.iter_range(b"k", b"l")] == [b"k%02d" % i for i in range(20)]
    kv.close()


def test_crash_safe_commits_sync_the_log_before_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = DurableLogSpy.local(str(tmp_path / "db" / "wal"))
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30, ordered_sync=True, durable_log=log)
    assert kv.ordered_sync
    kv.enable_batching(lambda: None)
    synced: list[int] = []
    log.on_sync = lambda: synced.append(kv.commit_seq)
    with kv.write() as w:
        w.put(b"a", b"1")
    kv.seal()  # logged; the batch stays open
    assert synced == []
    monkeypatch.setattr(lmdb_kv, "BATCH_INTERVAL", 0.0)
    with kv.write() as w:
        w.put(b"b", b"2")
    kv.seal()  # the batch is due: its records are synced before LMDB writes it
    assert synced == [2]
    assert kv._durable_pos == log.end()  # every record is synced
    kv.close()


def test_background_sync_makes_sealed_writes_durable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lmdb_kv, "BATCH_INTERVAL", 3600.0)
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
    kv.enable_batching(lambda: None)
    sync = kv.background_sync()
    assert sync is not None and kv.background_sync() is sync
    with kv.write() as w:
        w.put(b"a", b"1")
    kv.seal()
    with kv.write() as w:
        w.put(b"b", b"2")  # not sealed: not covered
    assert sync.begin() == 1
    assert wait_for(sync) == 1 and kv.durable_seq == 1
    kv.seal()
    assert sync.begin() == 2 and wait_for(sync) == 2
    kv.close()


def wait_for(sync: BackgroundSync) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done = sync.finish()
        if done is not None:
            return done
        time.sleep(0.001)
    raise AssertionError("the sync helper did not answer")


def test_sync_helper_syncs_skips_forgotten_files_and_reports_failures(tmp_path: Path) -> None:
    proc = SyncProcess()
    try:
        fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
        os.write(fd, b"data")
        proc.add_file(1, fd)
        os.close(fd)  # the helper keeps its own duplicate
        proc.request([1, 2])  # 2 was never given (or already forgotten): skipped
        assert answered(proc)
        proc.drop_file(1)
        read_end, write_end = os.pipe()
        proc.add_file(3, read_end)  # fdatasync on a pipe fails
        os.close(read_end)
        os.close(write_end)
        proc.request([3])
        with pytest.raises(DurabilityError, match="sync failed"):
            answered(proc)
        with pytest.raises(DurabilityError, match="already requested"):
            proc.request([1])
            proc.request([1])
    finally:
        proc.close()
    assert proc._proc.returncode == 0  # it exited on its own when its socket closed


class ToldSocket(socket.socket):
    """The server's end of a sync helper's socket, noting the files the helper is told to add (``o<number>``, with
    the descriptor) and to drop (``x<number>``). (Compiled classes are closed, so the socket is what a test can
    replace, not the syncer's methods.)"""

    told: list[tuple[str, int]]

    def send(self, data: Any, flags: int = 0) -> int:
        self._note(bytes(data))
        return super().send(data, flags)

    def sendmsg(self, buffers: Any, ancdata: Any = (), flags: int = 0, address: Any = None) -> int:
        for buffer in buffers:
            self._note(bytes(buffer))
        if address is None:
            return super().sendmsg(buffers, ancdata, flags)
        return super().sendmsg(buffers, ancdata, flags, address)

    def _note(self, msg: bytes) -> None:
        if msg[:1] in (b"o", b"x"):
            self.told.append(("add" if msg[:1] == b"o" else "drop", int(msg[1:])))


def told_files(sync: HelperSync) -> list[tuple[str, int]]:
    """What ``sync``'s helper is told about its files from now on (a list that grows)."""
    spy = ToldSocket(fileno=sync._proc._sock.detach())
    spy.told = []
    sync._proc._sock = spy
    return spy.told


def test_the_sync_helper_closes_the_files_of_dropped_segments_once(tmp_path: Path) -> None:
    log = wal.WriteAheadLog(str(tmp_path / "wal"), 1)
    sync = HelperSync(log)
    told = told_files(sync)
    try:
        for step in range(4):
            log.append([wal.encode_put(b"k", b"v"), b"k", b"v"])
            if step == 1:
                log.rotate()
            if step == 2:
                log.drop([1])  # the store's file holds segment 1's records now
            sync.begin()
            assert answered_sync(sync)
            dropped = [number for what, number in told if what == "drop"]
            assert dropped == ([1] if step >= 2 else [])  # told once, when the segments changed, never again
    finally:
        sync.close()
        log.close()


def answered_sync(sync: HelperSync) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if sync.finish():
            return True
        time.sleep(0.001)
    return False


def answered(proc: SyncProcess) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.answer():
            return True
        time.sleep(0.001)
    return False


def test_a_dead_sync_helper_is_a_durability_error() -> None:
    proc = SyncProcess()
    proc._proc.kill()
    proc._proc.wait()
    with pytest.raises(DurabilityError):
        proc.request([1])
        answered(proc)
    proc.close()


def test_sync_helper_outlives_stop_signals_sent_to_the_group(tmp_path: Path) -> None:
    proc = SyncProcess()
    try:
        fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
        proc.add_file(1, fd)
        proc.request([1])
        assert answered(proc)  # running its loop, so its signal handling is in place
        os.kill(proc._proc.pid, signal.SIGINT)
        os.kill(proc._proc.pid, signal.SIGTERM)
        proc.request([1])
        assert answered(proc)
        os.close(fd)
    finally:
        proc.close()


def test_a_segment_number_reopened_after_a_cut_back_is_synced_as_the_new_file(tmp_path: Path) -> None:
    # A log cut back to its synced end deletes the segments after it; rotating again reopens the next number. The
    # helper held the deleted file under that number and went on syncing it: the new segment's records were
    # called durable without a sync of their file.
    log = wal.WriteAheadLog(str(tmp_path / "wal"), 1)
    sync = HelperSync(log)
    told = told_files(sync)
    try:
        log.append([wal.encode_put(b"k", b"v"), b"k", b"v"])
        synced_end = log.position()
        log.rotate()
        log.append([wal.encode_put(b"k", b"v2"), b"k", b"v2"])
        sync.begin()
        assert answered_sync(sync)
        assert ("add", 2) in told
        told.clear()
        log.truncate(synced_end)  # segment 2 deleted
        log.rotate()  # segment 2 again, a new file
        log.append([wal.encode_put(b"k", b"v3"), b"k", b"v3"])
        sync.begin()
        assert answered_sync(sync)
        assert told == [("drop", 2), ("add", 2)]
    finally:
        sync.close()
        log.close()
