"""One contract, every engine: the same tests run against MemoryKV and LmdbKV."""

from __future__ import annotations

import os
import random
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynastore.storage.kv import KV, StorageError
from dynastore.storage.lmdb_kv import LmdbKV
from dynastore.storage.memory_kv import MemoryKV
from tests.unit.storage.killed_writer import SRC, first_line_then_kill_9


def open_engine(engine: str, path: Path) -> KV:
    """``lmdb-batched``: the server's way, every write a child of one open batch (never sealed until closed);
    ``lmdb-crash-safe``: the same with LMDB's ordered sync (``--crash-safe``)."""
    if engine == "memory":
        return MemoryKV()
    store = LmdbKV(path, map_size=1 << 30, ordered_sync=engine == "lmdb-crash-safe")
    if engine in ("lmdb-batched", "lmdb-crash-safe"):
        store.enable_batching(lambda: None)
    return store


@pytest.fixture(params=["memory", "lmdb", "lmdb-batched", "lmdb-crash-safe"])
def kv(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KV]:
    store = open_engine(request.param, tmp_path / "db")
    yield store
    store.close()


def fill(kv: KV, pairs: dict[bytes, bytes]) -> None:
    with kv.write() as txn:
        for k, v in pairs.items():
            txn.put(k, v)


def scan(kv: KV, lo: bytes, hi: bytes, reverse: bool = False) -> list[tuple[bytes, bytes]]:
    with kv.read() as txn:
        return list(txn.iter_range(lo, hi, reverse=reverse))


# ---------------------------------------------------------------- basics


def test_get_put_delete(kv: KV) -> None:
    with kv.read() as r:
        assert r.get(b"a") is None
    with kv.write() as w:
        w.put(b"a", b"1")
        assert w.get(b"a") == b"1"  # sees its own write
        w.put(b"a", b"2")
        assert w.get(b"a") == b"2"
    with kv.read() as r:
        assert r.get(b"a") == b"2"
    with kv.write() as w:
        assert w.delete(b"a") is True
        assert w.get(b"a") is None
        assert w.delete(b"a") is False
        assert w.delete(b"never") is False
    with kv.read() as r:
        assert r.get(b"a") is None


def test_put_then_delete_in_one_txn(kv: KV) -> None:
    with kv.write() as w:
        w.put(b"k", b"v")
        assert w.delete(b"k") is True
    with kv.read() as r:
        assert r.get(b"k") is None


def test_binary_keys_and_large_values(kv: KV) -> None:
    keys = [b"\x00", b"\x00\x00", b"\xff", b"\xff\xff\x00", bytes(range(256))]
    big = os.urandom(400 * 1024)
    fill(kv, {k: big + k for k in keys})
    with kv.read() as r:
        for k in keys:
            assert r.get(k) == big + k
    assert [k for k, _ in scan(kv, b"\x00", b"\xff\xff\xff")] == sorted(keys)


# ---------------------------------------------------------------- ranges


KEYS = [b"a", b"a\x00", b"ab", b"abc", b"b", b"ba", b"c", b"\xff"]


@pytest.mark.parametrize("reverse", [False, True])
def test_iter_range_bounds(kv: KV, reverse: bool) -> None:
    fill(kv, {k: k.upper() for k in KEYS})
    cases = [
        (b"a", b"b"),
        (b"a\x00", b"abc"),
        (b"", b"\xff\xff"),
        (b"aa", b"ab"),
        (b"b", b"b"),
        (b"c", b"a"),
        (b"abc", b"abc\x00"),
        (b"0", b"a"),
        (b"d", b"\xff"),
    ]
    for lo, hi in cases:
        want = sorted(k for k in KEYS if lo <= k < hi)
        if reverse:
            want.reverse()
        assert scan(kv, lo, hi, reverse) == [(k, k.upper()) for k in want], (lo, hi)


@pytest.mark.parametrize("reverse", [False, True])
def test_iter_range_sees_own_writes(kv: KV, reverse: bool) -> None:
    fill(kv, {b"k1": b"old", b"k3": b"old", b"k5": b"old"})
    with kv.write() as w:
        w.put(b"k2", b"new")
        w.put(b"k3", b"upd")
        assert w.delete(b"k5")
        w.put(b"k9", b"out of range")
        got = list(w.iter_range(b"k1", b"k9", reverse=reverse))
    want = [(b"k1", b"old"), (b"k2", b"new"), (b"k3", b"upd")]
    assert got == (want[::-1] if reverse else want)


@pytest.mark.parametrize("reverse", [False, True])
def test_delete_while_scanning(kv: KV, reverse: bool) -> None:
    keys = [b"k%03d" % i for i in range(300)]
    fill(kv, dict.fromkeys(keys, b"v"))
    seen = []
    with kv.write() as w:
        for k, _ in w.iter_range(b"k", b"l", reverse=reverse):
            seen.append(k)
            assert w.delete(k)
    assert seen == (keys[::-1] if reverse else keys)
    assert scan(kv, b"", b"\xff") == []


def test_put_while_scanning_visits_each_key_once(kv: KV) -> None:
    keys = [b"k%03d" % i for i in range(100)]
    fill(kv, dict.fromkeys(keys, b"v"))
    seen = []
    with kv.write() as w:
        for k, v in w.iter_range(b"k", b"l"):
            seen.append(k)
            w.put(k, v + b"!")
            w.put(b"a" + k, b"")  # before the range: never visited
    assert seen == keys
    assert all(v == b"v!" for _, v in scan(kv, b"k", b"l"))


# ---------------------------------------------------------------- transactions


@pytest.mark.parametrize("key", [b"s", b"I" + b"\x01" * 2000], ids=["short key", "long key"])
def test_swap_writes_and_returns_what_the_key_held(kv: KV, key: bytes) -> None:
    with kv.write() as w:
        assert w.swap(key, b"1") is None
        assert w.get(key) == b"1"
        assert w.swap(key, b"2") == b"1"  # its own earlier write
    with kv.write() as w:
        assert w.swap(key, b"3") == b"2"
    with kv.read() as r:
        assert r.get(key) == b"3"
    with pytest.raises(RuntimeError), kv.write() as w:  # taken back with its transaction
        assert w.swap(key, b"4") == b"3"
        raise RuntimeError("boom")
    with kv.read() as r:
        assert r.get(key) == b"3"


def test_append_is_a_put(kv: KV) -> None:
    with kv.write() as w:
        w.put(b"b", b"other")
        w.append(b"a\x00\x01", b"1")
        w.append(b"a\x00\x02", b"2")
        assert w.get(b"a\x00\x02") == b"2"
    with kv.write() as w:
        w.append(b"a\x00\x03", b"3")
    assert scan(kv, b"a", b"c") == [(b"a\x00\x01", b"1"), (b"a\x00\x02", b"2"), (b"a\x00\x03", b"3"), (b"b", b"other")]


def test_abort_on_exception(kv: KV) -> None:
    fill(kv, {b"x": b"1"})
    seq = kv.commit_seq
    with pytest.raises(RuntimeError), kv.write() as w:
        w.put(b"x", b"2")
        w.put(b"y", b"2")
        assert w.delete(b"x")
        raise RuntimeError("boom")
    assert kv.commit_seq == seq
    with kv.read() as r:
        assert r.get(b"x") == b"1"
        assert r.get(b"y") is None
    with kv.write() as w:  # the store is usable afterwards
        w.put(b"y", b"3")
    with kv.read() as r:
        assert r.get(b"y") == b"3"


def test_nested_write_is_refused_not_deadlocked(kv: KV) -> None:
    with kv.write() as w:
        w.put(b"a", b"1")
        with pytest.raises(StorageError), kv.write():
            pass
    with kv.read() as r:
        assert r.get(b"a") == b"1"


def test_commit_seq_and_flush(kv: KV) -> None:
    assert kv.commit_seq == 0
    for i in range(3):
        with kv.write() as w:
            w.put(b"k", b"%d" % i)
    assert kv.commit_seq == 3
    assert kv.durable_seq <= 3
    kv.seal()
    assert kv.flush() == 3
    assert kv.durable_seq == 3
    with kv.read() as r:  # read txns do not count
        r.get(b"k")
    assert kv.commit_seq == 3


def test_read_snapshot_isolation_lmdb(tmp_path: Path) -> None:
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
    fill(kv, {b"a": b"1", b"b": b"1"})
    with kv.read() as snap:
        it = snap.iter_range(b"", b"\xff")
        assert next(it) == (b"a", b"1")
        with kv.write() as w:
            w.put(b"a", b"2")
            w.put(b"b", b"2")
            w.put(b"c", b"2")
        assert snap.get(b"a") == b"1"
        assert list(it) == [(b"b", b"1")]
    with kv.read() as r:
        assert r.get(b"a") == b"2"
    kv.close()


def test_lmdb_batch_keeps_each_write_atomic_and_seen_by_its_thread(tmp_path: Path) -> None:
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
    opened: list[int] = []
    kv.enable_batching(lambda: opened.append(kv.commit_seq))
    for i in range(3):
        with kv.write() as w:
            w.put(b"k%d" % i, b"v")
    with pytest.raises(KeyError), kv.write() as w:  # an aborted write discards only its own changes
        w.put(b"k0", b"aborted")
        w.put(b"gone", b"x")
        raise KeyError
    assert opened == [1] and kv.commit_seq == 3  # called once, by the first write to commit
    with kv.read() as r:  # the owner thread reads through the batch
        assert [k for k, _ in r.iter_range(b"", b"\xff")] == [b"k0", b"k1", b"k2"]
        assert r.get(b"k0") == b"v"
    assert kv.flush() == 0 and kv.durable_seq == 0  # a flush covers only sealed writes
    kv.seal()
    assert kv.flush() == 3 and kv.durable_seq == 3
    with kv.write() as w:  # the next write asks for the next seal
        w.put(b"k3", b"v")
    assert opened == [1, 4]
    kv.close()  # closing seals and commits the batch
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
    with kv.read() as r:
        assert [k for k, _ in r.iter_range(b"", b"\xff")] == [b"k0", b"k1", b"k2", b"k3"]
    kv.close()


def test_lmdb_logged_batch_outlives_seals_until_old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dynastore.storage import lmdb_kv

    kv = LmdbKV(tmp_path / "db", map_size=1 << 30)  # with the write-ahead log
    opened: list[int] = []
    kv.enable_batching(lambda: opened.append(kv.commit_seq))
    for i in range(3):
        with kv.write() as w:
            w.put(b"k%d" % i, b"v")
        kv.seal()  # each seal logs the write; the batch stays open
    assert opened == [1, 2, 3]
    assert kv.flush() == 3 and kv.durable_seq == 3  # durable through the log alone
    assert keys_seen_by_another_thread(kv) == []  # the batch is not in the file yet
    monkeypatch.setattr(lmdb_kv, "BATCH_INTERVAL", 0.0)
    kv.seal()  # nothing new to seal: the batch waits for the next write
    assert keys_seen_by_another_thread(kv) == []
    with kv.write() as w:
        w.put(b"k3", b"v")
    kv.seal()  # an old batch is committed to the file
    assert keys_seen_by_another_thread(kv) == [b"k0", b"k1", b"k2", b"k3"]
    kv.close()


def test_lmdb_batch_is_sealed_early_when_large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dynastore.storage import lmdb_kv

    monkeypatch.setattr(lmdb_kv, "MAX_BATCH_BYTES", 10_000)
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
    opened: list[int] = []
    kv.enable_batching(lambda: opened.append(kv.commit_seq))
    for i in range(5):
        with kv.write() as w:
            w.put(b"k%d" % i, bytes(3_000))  # the fourth write passes 10,000 bytes
    assert opened == [1, 5]  # the fifth write started a new batch
    assert kv.flush() == 4  # the first four were sealed without waiting for the owner
    assert keys_seen_by_another_thread(kv) == [b"k0", b"k1", b"k2", b"k3"]  # and written to the file
    kv.close()


def keys_seen_by_another_thread(kv: KV) -> list[bytes]:
    seen: list[bytes] = []

    def read() -> None:
        with kv.read() as r:
            seen.extend(k for k, _ in r.iter_range(b"", b"\xff"))

    worker = threading.Thread(target=read)
    worker.start()
    worker.join()
    return seen


def test_memory_iteration_survives_commits() -> None:
    kv = MemoryKV()
    fill(kv, {b"k%02d" % i: b"v" for i in range(50)})
    got = []
    with kv.read() as r:
        for k, _ in r.iter_range(b"k", b"l"):
            got.append(k)
            with kv.write() as w:  # an interleaved commit (as across an await)
                if not k.endswith(b"\x00"):
                    w.put(k + b"\x00", b"new")
                w.delete(b"k49")
    assert got[:3] == [b"k00", b"k00\x00", b"k01"]
    assert got == sorted(set(got))


# ---------------------------------------------------------------- long keys (lmdb limit is 511 bytes)


def _long_keys(rng: random.Random) -> list[bytes]:
    heads = [b"I" + bytes([c]) * 509 for c in (0, 1, 0xFF)]
    keys: set[bytes] = set()
    for _ in range(300):
        head = rng.choice(heads)
        n = rng.choice([0, 1, 2, 5, 500, 501, 502, 503, 504, 1100, 3500])
        keys.add(head[: rng.choice([509, 510, 510])] + bytes(rng.choice([0, 1, 0xFF]) for _ in range(n)))
    keys.update(h[:k] for h in heads for k in (1, 300, 509, 510))
    return sorted(keys)


def test_long_keys_roundtrip_and_order(kv: KV) -> None:
    rng = random.Random(7)
    keys = _long_keys(rng)
    fill(kv, {k: b"%d" % len(k) for k in keys})
    with kv.read() as r:
        for k in keys:
            assert r.get(k) == b"%d" % len(k)
        assert r.get(keys[-1] + b"\x00") is None
        assert r.get(b"I" + b"\x01" * 600) is None
    assert [k for k, _ in scan(kv, b"", b"\xff")] == keys
    assert [k for k, _ in scan(kv, b"", b"\xff", reverse=True)] == keys[::-1]
    bounds = keys + [k + b"\x00" for k in keys[:50]] + [b"I", b"I\x01" * 700, b"J"]
    for _ in range(300):
        lo, hi = sorted(rng.sample(bounds, 2))
        want = [k for k in keys if lo <= k < hi]
        assert [k for k, _ in scan(kv, lo, hi)] == want, (len(lo), len(hi))
        assert [k for k, _ in scan(kv, lo, hi, reverse=True)] == want[::-1], (len(lo), len(hi))


def test_long_keys_delete_and_overwrite(kv: KV) -> None:
    rng = random.Random(11)
    keys = _long_keys(rng)
    fill(kv, dict.fromkeys(keys, b"1"))
    doomed = set(rng.sample(keys, len(keys) // 2))
    with kv.write() as w:
        for k in doomed:
            assert w.delete(k)
            assert not w.delete(k)
            assert w.get(k) is None
        for k in keys[:10]:
            if k not in doomed:
                w.put(k, b"2")
    rest = [k for k in keys if k not in doomed]
    with kv.read() as r:
        assert all(r.get(k) is None for k in doomed)
    assert [k for k, _ in scan(kv, b"", b"\xff")] == rest
    with kv.write() as w:
        for k in rest:
            assert w.delete(k)
    assert scan(kv, b"", b"\xff") == []
    if isinstance(kv, LmdbKV):  # every group marker was removed with its last key
        with kv.read() as r:
            assert list(r.iter_range(b"", b"\xff")) == []


_HEADS = [b"A", b"I" + b"\x07" * 400, b"I" + b"\x07" * 509, b"I" + b"\x07" * 1020]
_keys = st.builds(
    lambda head, cut, tail: head[:cut] + tail,
    st.sampled_from(_HEADS),
    st.sampled_from([400, 509, 510, 511, 1011, 1012, 2000]),
    st.binary(max_size=3) | st.sampled_from([b"\x00", b"\x07", b"\x07\x00", b"\x08", b"\xff" * 600]),
).filter(bool)
_ops = st.lists(st.tuples(st.sampled_from(["put", "delete", "abort"]), _keys, st.binary(max_size=4)), max_size=40)


@pytest.mark.parametrize("engine", ["memory", "lmdb", "lmdb-batched"])
def test_random_operations_match_a_dict(engine: str, tmp_path: Path) -> None:
    kv = open_engine(engine, tmp_path / "db")

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_ops, st.lists(st.tuples(_keys, _keys), max_size=8))
    def check(ops: list[tuple[str, bytes, bytes]], ranges: list[tuple[bytes, bytes]]) -> None:
        with kv.write() as w:  # start empty
            for k, _ in list(w.iter_range(b"\x00", b"\xff")):
                w.delete(k)
        model: dict[bytes, bytes] = {}
        for op, key, value in ops:
            if op == "put":
                with kv.write() as w:
                    w.put(key, value)
                model[key] = value
            elif op == "delete":
                with kv.write() as w:
                    assert w.delete(key) == (key in model)
                model.pop(key, None)
            else:
                with pytest.raises(KeyError), kv.write() as w:
                    w.put(key, b"aborted")
                    raise KeyError
        with kv.read() as r:
            for key in model:
                assert r.get(key) == model[key]
            everything = sorted(model.items())
            assert list(r.iter_range(b"\x00", b"\xff")) == everything
            assert list(r.iter_range(b"\x00", b"\xff", reverse=True)) == everything[::-1]
            for a, b in ranges:
                lo, hi = min(a, b), max(a, b)
                want = [(k, v) for k, v in everything if lo <= k < hi]
                assert list(r.iter_range(lo, hi)) == want
                assert list(r.iter_range(lo, hi, reverse=True)) == want[::-1]

    try:
        check()
    finally:
        kv.close()


# ---------------------------------------------------------------- durability (lmdb)


def test_lmdb_flush_from_worker_thread_while_committing(tmp_path: Path) -> None:
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
    stop = threading.Event()
    results: list[int] = []
    errors: list[BaseException] = []

    def flusher() -> None:
        try:
            while not stop.is_set():
                results.append(kv.flush())
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=flusher)
    t.start()
    for i in range(2000):
        with kv.write() as w:
            w.put(b"k%05d" % i, os.urandom(100))
    stop.set()
    t.join()
    assert not errors
    assert results == sorted(results)
    assert kv.flush() == 2000 == kv.durable_seq
    assert len(scan(kv, b"k", b"l")) == 2000
    kv.close()


def test_lmdb_reads_go_on_while_a_flush_syncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A flush's fdatasync holds neither the GIL nor anything a read takes. The sync is made to wait for the reads
    before it runs, so that the two overlap however fast the disk is: a flush that blocked reads would leave the
    sync waiting in vain."""
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
    with kv.write() as w:
        w.put(b"k000001", b"v")
    in_sync = threading.Event()
    reads_done = threading.Event()
    overlapped: list[bool] = []
    real_fdatasync = os.fdatasync

    def fdatasync_after_the_reads(fd: int) -> None:
        in_sync.set()
        overlapped.append(reads_done.wait(timeout=30))
        real_fdatasync(fd)

    # (os's, not wal.sync_data: a compiled module's calls of its own functions cannot be replaced)
    monkeypatch.setattr(os, "fdatasync", fdatasync_after_the_reads)
    flusher = threading.Thread(target=kv.flush)
    flusher.start()
    assert in_sync.wait(timeout=30), "the flush never reached its fdatasync"
    for _ in range(100):
        with kv.read() as r:
            assert r.get(b"k000001") == b"v"
    reads_done.set()
    flusher.join()
    assert overlapped == [True]
    assert kv.durable_seq == 1
    kv.close()


_WRITER = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {src!r})
    from dynastore.storage.lmdb_kv import LmdbKV
    kv = LmdbKV({path!r}, map_size=1 << 30)
    for i in range(500):
        with kv.write() as w:
            w.put(b"k%04d" % i, b"v%d" % i)
            w.put(b"L" * 600 + b"%04d" % i, b"long%d" % i)
    kv.flush()
    print("ok", flush=True)
    while True:
        with kv.write() as w:  # keep committing (not flushed) until killed
            w.put(b"z", os.urandom(8))
    """
)


def test_lmdb_kill_9_after_flush_loses_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "db")
    assert first_line_then_kill_9(_WRITER.format(src=SRC, path=path)) == "ok"
    kv = LmdbKV(path, map_size=1 << 30)
    with kv.read() as r:
        for i in range(500):
            assert r.get(b"k%04d" % i) == b"v%d" % i
            assert r.get(b"L" * 600 + b"%04d" % i) == b"long%d" % i
        assert r.get(b"z") is not None
    kv.close()


def test_lmdb_file_grows_as_needed(tmp_path: Path) -> None:
    kv = LmdbKV(tmp_path / "db")  # the default 1 TiB map
    with kv.write() as w:
        w.put(b"a", b"b")
    kv.flush()
    assert kv.file_size() < 1 << 20
    kv.close()


def test_lmdb_errors_become_storage_errors(tmp_path: Path) -> None:
    kv = LmdbKV(tmp_path / "db", map_size=1 << 20)
    with pytest.raises(StorageError), kv.write() as w:  # map full: the txn aborts, the store stays usable
        for i in range(100):
            w.put(b"k%d" % i, os.urandom(100_000))
    with kv.write() as w:
        w.put(b"small", b"ok")
    with kv.read() as r:
        assert r.get(b"small") == b"ok"
        assert r.get(b"k0") is None
    kv.close()
