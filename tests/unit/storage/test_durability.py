"""The durability seam (storage/durability.py): the batch encoding, the local log as a ``DurableLog``, and a store
that reaches its log only through that interface."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynastore.storage import wal
from dynastore.storage.durability import DurableLog, decode_batch, encode_delete, encode_put
from dynastore.storage.kv import DurabilityError
from dynastore.storage.lmdb_kv import LmdbKV
from dynastore.storage.local_log import LocalLog
from tests.unit.storage.durable_log_spy import DurableLogSpy


def test_a_batch_decodes_to_its_operations_in_order() -> None:
    payload = b"".join([encode_put(b"k", b"v"), b"k", b"v", encode_delete(b"gone"), b"gone", encode_put(b"e", b"")])
    payload += b"e"
    assert decode_batch(memoryview(payload)) == [(b"k", b"v"), (b"gone", None), (b"e", b"")]


def test_a_batch_with_an_unknown_operation_is_refused() -> None:
    with pytest.raises(DurabilityError, match="unknown operation tag 9"):
        decode_batch(memoryview(b"\x09\x00\x00\x00\x00"))


def test_the_local_log_is_a_durable_log(tmp_path: Path) -> None:
    log: DurableLog = LocalLog(str(tmp_path / "wal"))
    assert log.recovered() is None  # a new directory: nothing left by an earlier run
    start = log.open()
    assert start == (1, 0) and log.oldest() == start and not log.holds_records()
    log.append([encode_put(b"a", b"1"), b"a", b"1"])
    durable = log.end()
    log.sync()
    log.append([encode_put(b"b", b"2"), b"b", b"2"])
    log.take_back(durable)  # the second batch never became durable
    assert log.end() == durable
    log.append([encode_delete(b"a"), b"a"])
    assert list(log.replay(start, log.end())) == [[(b"a", b"1")], [(b"a", None)]]
    mark = log.compact()
    assert mark == log.end() and mark > durable
    log.applied(mark)  # the store's file holds everything before the mark: the log forgets it
    assert log.oldest() == mark and not log.holds_records()
    log.close()
    assert wal.segment_numbers(str(tmp_path / "wal")) == []


def test_a_log_kept_at_close_is_recovered_by_the_next_open(tmp_path: Path) -> None:
    log = LocalLog(str(tmp_path / "wal"))
    log.open()
    log.append([encode_put(b"a", b"1"), b"a", b"1"])
    log.sync()
    log.close(discard=False)
    again = LocalLog(str(tmp_path / "wal"))
    recovered = again.recovered()
    assert recovered is not None and list(recovered) == [[(b"a", b"1")]]
    assert again.open() == (2, 0)  # not discarded: kept, and replayable from the oldest position
    assert list(again.replay(again.oldest(), again.end())) == [[(b"a", b"1")]]
    again.close()


def test_the_store_reaches_its_log_only_through_the_interface(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wal, "CHECKPOINT_BYTES", 4096)
    db = tmp_path / "db"
    log = DurableLogSpy.local(str(db / "wal"))
    kv = LmdbKV(db, map_size=1 << 30, durable_log=log)
    kv.enable_batching(lambda: None)
    for i in range(12):
        with kv.write() as w:
            w.put(b"k%02d" % i, bytes(1000))
        kv.seal()
        checkpoint = kv._checkpoint
        if checkpoint is not None:
            checkpoint.join()
    assert kv.flush() == 12
    kv.close()
    assert log.calls[:2] == ["recovered", "open"]
    assert len(log.named("append")) == 12
    assert log.named("compact") and log.named("applied")  # the log grew large: compacted, then applied
    assert log.calls[-1] == "close"
    kv = LmdbKV(db, map_size=1 << 30, durable_log=DurableLogSpy.local(str(db / "wal")))
    with kv.read() as r:
        assert [k for k, _ in r.iter_range(b"k", b"l")] == [b"k%02d" % i for i in range(12)]
    kv.close()


def test_a_store_that_did_not_close_replays_what_its_log_recovered(tmp_path: Path) -> None:
    db = tmp_path / "db"
    kv = LmdbKV(db, map_size=1 << 30)
    kv.close()
    log = LocalLog(str(db / "wal"))
    log.open()
    log.append([encode_put(b"a", b"1"), b"a", b"1", encode_put(b"b", b"2"), b"b", b"2"])
    log.append([encode_delete(b"b"), b"b"])
    log.sync()
    log.close(discard=False)  # as a killed run leaves it
    spy = DurableLogSpy.local(str(db / "wal"))
    kv = LmdbKV(db, map_size=1 << 30, durable_log=spy)
    assert spy.calls == ["recovered", "discard_recovered", "open"]
    with kv.read() as r:
        assert (r.get(b"a"), r.get(b"b")) == (b"1", None)
    kv.close()
