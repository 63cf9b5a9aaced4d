"""The open batch's two kinds of write (storage/lmdb_txn.py): a child transaction of the batch, and a write
straight into the batch with an undo journal. Both must end the same way: a write that raises leaves nothing,
one that commits is seen by the next; only an LMDB error inside the batch differs (the direct write takes back
the batch's writes that are not durable)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynastore.storage.kv import StorageError, StorageUnavailableError
from dynastore.storage.lmdb_kv import LmdbKV
from dynastore.storage.lmdb_txn import BatchWriteTxn, LmdbWriteTxn

LONG = b"L" * 600  # longer than LMDB's key limit: stored as a chain of groups (storage/lmdb_layout.py)
NEW_LONG = b"M" * 700
KINDS = {"direct": 0, "child": 1 << 62}  # direct_write_room: no map has 4 EiB free


class Abandoned(Exception):
    pass


def batched_store(path: Path, kind: str) -> LmdbKV:
    kv = LmdbKV(path, map_size=1 << 30, direct_write_room=KINDS[kind])
    kv.enable_batching(lambda: None)
    return kv


def contents(kv: LmdbKV) -> dict[bytes, bytes | None]:
    with kv.read() as reader:
        return {key: reader.get(key) for key in (b"a", b"b", b"c", LONG, NEW_LONG)}


BEFORE = {b"a": b"1", b"b": b"2", b"c": None, LONG: b"x", NEW_LONG: None}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_batch_write_is_chosen_by_the_room_left_in_the_map(tmp_path: Path, kind: str) -> None:
    kv = batched_store(tmp_path / "db", kind)
    try:
        with kv.write() as txn:
            assert isinstance(txn, BatchWriteTxn) is (kind == "direct")
            assert isinstance(txn, LmdbWriteTxn)
    finally:
        kv.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_batch_write_that_raises_leaves_nothing_and_saw_its_own_writes(tmp_path: Path, kind: str) -> None:
    kv = batched_store(tmp_path / "db", kind)
    try:
        with kv.write() as txn:
            txn.put(b"a", b"1")
            txn.put(b"b", b"2")
            txn.put(LONG, b"x")
        with pytest.raises(Abandoned), kv.write() as txn:
            txn.put(b"a", b"10")
            txn.put(b"a", b"11")  # a key changed twice goes back to its value before the first change
            assert txn.delete(b"b")
            assert not txn.delete(b"absent")
            txn.put(b"c", b"3")
            txn.put(LONG, b"y")
            txn.put(NEW_LONG, b"z")
            assert txn.delete(NEW_LONG)
            txn.put(NEW_LONG, b"w")
            assert [txn.get(key) for key in (b"a", b"b", b"c", LONG, NEW_LONG)] == [b"11", None, b"3", b"y", b"w"]
            raise Abandoned
        assert contents(kv) == BEFORE
        with kv.write() as txn:  # the store goes on writing, on the batch that held the abandoned write
            txn.put(b"c", b"4")
        assert contents(kv) == {**BEFORE, b"c": b"4"}
        kv.seal()
        kv.flush()
    finally:
        kv.close()
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
    try:
        assert contents(kv) == {**BEFORE, b"c": b"4"}  # the log holds no record of the abandoned write
    finally:
        kv.close()


def test_an_lmdb_error_inside_a_direct_write_takes_back_what_is_not_durable(tmp_path: Path) -> None:
    kv = batched_store(tmp_path / "db", "direct")
    losses: list[tuple[int, int]] = []
    kv.watch_losses(lambda durable, lost_through: losses.append((durable, lost_through)))
    try:
        with kv.write() as txn:
            txn.put(b"a", b"1")
        kv.seal()
        kv.flush()  # durable
        with kv.write() as txn:
            txn.put(b"b", b"2")  # committed, not yet durable
        with pytest.raises(StorageError, match="lmdb put failed"), kv.write() as txn:
            txn.put(b"c", b"3")
            txn.put(b"", b"no key")  # LMDB refuses an empty key: the batch cannot be trusted after an error in it
        assert losses == [(1, 2)]
        with pytest.raises(StorageUnavailableError):
            kv.write()
        assert kv.retry_writes()
        assert contents(kv) == {b"a": b"1", b"b": None, b"c": None, LONG: None, NEW_LONG: None}
    finally:
        kv.close()


def test_a_direct_write_whose_error_was_caught_inside_it_does_not_commit(tmp_path: Path) -> None:
    kv = batched_store(tmp_path / "db", "direct")
    try:
        with pytest.raises(StorageError, match="write into the batch"), kv.write() as txn:
            txn.put(b"a", b"1")
            with pytest.raises(StorageError):
                txn.put(b"", b"no key")
        assert kv.commit_seq == 0
        assert kv.retry_writes()
        assert contents(kv)[b"a"] is None
    finally:
        kv.close()


def test_a_child_write_with_an_lmdb_error_is_refused_alone(tmp_path: Path) -> None:
    kv = batched_store(tmp_path / "db", "child")
    try:
        with kv.write() as txn:
            txn.put(b"b", b"2")  # committed, not yet durable
        with pytest.raises(StorageError, match="lmdb put failed"), kv.write() as txn:
            txn.put(b"c", b"3")
            txn.put(b"", b"no key")
        assert kv.writable
        assert contents(kv)[b"b"] == b"2" and contents(kv)[b"c"] is None
    finally:
        kv.close()


@pytest.mark.parametrize("kind", KINDS)
def test_appends_across_writes_and_batches_keep_order_and_are_taken_back_with_their_write(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A direct write appends with a cursor its batch keeps between writes (``AppendingCursor``): other writes
    move the tree under it, an abandoned write's appends are undone, and a new batch must get a cursor of its own."""
    from dynastore.storage import lmdb_kv

    kv = batched_store(tmp_path / "db", kind)
    expected: dict[bytes, bytes] = {}
    try:
        for seq in range(600):
            key = b"H" + seq.to_bytes(8, "big")
            if seq % 7 == 3:
                with pytest.raises(Abandoned), kv.write() as txn:
                    txn.append(key, b"gone")
                    raise Abandoned
                continue
            with kv.write() as txn:
                txn.put(b"I" + (seq * 7919 % 1000).to_bytes(4, "big"), b"item" * 20)  # pages split around it
                txn.append(key, b"record %d" % seq)
                if seq % 5 == 0:
                    assert txn.delete(b"I" + (seq * 7919 % 1000).to_bytes(4, "big"))
            expected[key] = b"record %d" % seq
            if seq == 300:
                monkeypatch.setattr(lmdb_kv, "BATCH_INTERVAL", 0.0)  # from here on each seal commits its batch
            kv.seal()
        with kv.read() as reader:
            assert dict(reader.iter_range(b"H", b"I")) == expected
        kv.flush()
    finally:
        kv.close()
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30)  # the log and the file agree
    try:
        with kv.read() as reader:
            assert dict(reader.iter_range(b"H", b"I")) == expected
    finally:
        kv.close()
