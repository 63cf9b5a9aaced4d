"""``KV.snapshot``: every engine's snapshot is an image of every commit made before it began, that commits made
while it is open (interleaved with its reads, as awaits interleave them) do not change."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynastore.storage.kv import KV, StorageUnavailableError
from dynastore.storage.lmdb_kv import LmdbKV
from dynastore.storage.memory_kv import MemoryKV
from tests.unit.storage.test_kv_contract import fill, open_engine


@pytest.fixture(params=["memory", "lmdb", "lmdb-batched"])
def kv(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KV]:
    store = open_engine(request.param, tmp_path / "db")
    yield store
    store.close()


def test_the_snapshot_holds_the_commits_before_it_not_those_after(kv: KV) -> None:
    fill(kv, {b"a": b"1", b"b": b"2", b"c": b"3"})
    with kv.snapshot() as snap:
        with kv.write() as txn:
            txn.put(b"a", b"changed")
            txn.delete(b"b")
            txn.put(b"bb", b"new")
        assert snap.get(b"a") == b"1"
        assert snap.get(b"b") == b"2"
        assert snap.get(b"bb") is None
        assert list(snap.iter_range(b"a", b"z")) == [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    with kv.read() as now:
        assert list(now.iter_range(b"a", b"z")) == [(b"a", b"changed"), (b"bb", b"new"), (b"c", b"3")]


def test_commits_between_the_reads_of_one_scan_do_not_reach_it(kv: KV) -> None:
    fill(kv, {bytes([k]): b"old" for k in range(10, 60, 2)})
    with kv.snapshot() as snap:
        seen = []
        for n, (key, value) in enumerate(snap.iter_range(b"\x00", b"\xff")):
            seen.append((key, value))
            with kv.write() as txn:  # what a request served between two chunks of a backup does
                txn.put(bytes([key[0] + 1]), b"new")  # just ahead of the scan
                txn.delete(bytes([key[0] + 2]))  # the next key the scan will read
                txn.put(bytes([n]), b"new")  # behind it
        assert seen == [(bytes([k]), b"old") for k in range(10, 60, 2)]


def test_the_snapshot_is_given_only_while_the_store_takes_writes(tmp_path: Path) -> None:
    store = LmdbKV(tmp_path / "db", map_size=1 << 24)
    store._failures.refuse(OSError(28, "No space left on device"))
    with pytest.raises(StorageUnavailableError), store.snapshot():
        pass
    store.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    initial=st.dictionaries(st.binary(min_size=1, max_size=2), st.binary(max_size=3), max_size=20),
    changes=st.lists(st.tuples(st.binary(min_size=1, max_size=2), st.none() | st.binary(max_size=3)), max_size=40),
)
def test_memory_snapshot_matches_a_copy_taken_when_it_began(
    initial: dict[bytes, bytes], changes: list[tuple[bytes, bytes | None]]
) -> None:
    kv = MemoryKV()
    fill(kv, initial)
    expected = sorted(initial.items())
    with kv.snapshot() as snap:
        got = []
        pending = iter(changes)
        for pair in snap.iter_range(b"", b"\xff\xff\xff"):
            got.append(pair)
            change = next(pending, None)
            if change is not None:
                with kv.write() as txn:
                    if change[1] is None:
                        txn.delete(change[0])
                    else:
                        txn.put(change[0], change[1])
        for key, value in pending:
            with kv.write() as txn:
                txn.put(key, value) if value is not None else txn.delete(key)
        assert got == expected
        assert list(snap.iter_range(b"", b"\xff\xff\xff")) == expected
        assert list(snap.iter_range(b"", b"\xff\xff\xff", reverse=True)) == expected[::-1]


def test_a_held_file_gets_no_commit_until_released(tmp_path: Path) -> None:
    """``LmdbKV.hold_file``: a read transaction of LMDB's file itself (what another process sees) shows exactly
    the commits made before the hold, whatever is committed while it lasts; they reach the file once released."""
    store = LmdbKV(tmp_path / "db", map_size=1 << 26)
    assert store.hold_file() is False  # writes not batched: each commits to the file on its own
    store.enable_batching(lambda: None)
    fill(store, {b"a": b"1"})
    assert store.hold_file() is True

    def in_file(key: bytes) -> bytes | None:
        with store._env.begin(db=store._lay.main) as txn:  # a reader of the file, as the image copier is
            value = txn.get(key)
            return None if value is None else bytes(value)

    assert in_file(b"a") == b"1"
    fill(store, {b"a": b"2", b"b": b"3"})
    store.seal()
    store.flush()
    with store.snapshot() as snap:  # would commit the batch to the file, but the file is held
        assert snap.get(b"a") == b"1"
    assert (in_file(b"a"), in_file(b"b")) == (b"1", None)
    with store.read() as txn:  # the server itself reads its writes all along
        assert (txn.get(b"a"), txn.get(b"b")) == (b"2", b"3")
    store.release_file()
    with store.snapshot():
        pass
    assert (in_file(b"a"), in_file(b"b")) == (b"2", b"3")
    store.close()
