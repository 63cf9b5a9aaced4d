"""An LMDB store over the replicated log (replication/replicated_log.py under storage/lmdb_kv.py): what it holds
and the index it records, following and leading, across a close and a reopen."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from dynastore.errors import DynamoError, InternalServerError, ServiceUnavailable
from dynastore.protocol.protocol import durability_failure
from dynastore.replication.replicated_log import ReplicatedLog, read_applied
from dynastore.storage.group_commit import GroupCommitter
from dynastore.storage.kv import DurabilityError, StorageError
from dynastore.storage.lmdb_kv import LmdbKV
from tests.unit.replication.fake_etcd import FakeEtcd


def contents(kv: LmdbKV) -> dict[bytes, bytes]:
    with kv.read() as txn:
        return dict(txn.iter_range(b"", b"\xff" * 64))


def following(directory: Path, etcd: FakeEtcd) -> tuple[LmdbKV, ReplicatedLog]:
    log = ReplicatedLog(str(directory), etcd)  # type: ignore[arg-type]
    return LmdbKV(directory, map_size=1 << 26, durable_log=log), log


def apply(kv: LmdbKV, log: ReplicatedLog, index: int, puts: dict[bytes, bytes]) -> None:
    log.expect(index)
    with kv.write() as txn:
        for key, value in puts.items():
            txn.put(key, value)


def test_a_follower_records_the_index_its_store_holds_and_resumes_there(tmp_path: Path) -> None:
    etcd = FakeEtcd()
    kv, log = following(tmp_path, etcd)
    apply(kv, log, 1, {b"a": b"1"})
    apply(kv, log, 2, {b"b": b"2", b"a": b"3"})
    assert read_applied(str(tmp_path)) == 0  # recorded once the file holds them durably
    kv.close()
    assert read_applied(str(tmp_path)) == 2
    kv, log = following(tmp_path, etcd)
    assert contents(kv) == {b"a": b"3", b"b": b"2"}
    assert log.end() == (2, 0)
    apply(kv, log, 3, {b"c": b"4"})
    kv.close()
    assert read_applied(str(tmp_path)) == 3
    assert etcd.calls == 0


def test_a_followers_store_refuses_a_write_of_its_own(tmp_path: Path) -> None:
    kv, log = following(tmp_path, FakeEtcd())
    apply(kv, log, 1, {b"a": b"1"})
    refused = "a follower's store changes only by applying the cluster's log"
    with pytest.raises(StorageError, match=refused), kv.write() as txn:
        txn.put(b"b", b"2")
    kv.close()


def leading(directory: Path, etcd: FakeEtcd, **kw: Any) -> tuple[LmdbKV, ReplicatedLog]:
    fence = etcd.store.take_lease("n1")
    log = ReplicatedLog(str(directory), etcd, fence=fence, **kw)  # type: ignore[arg-type]
    log.start_at(etcd.store.head())
    kv = LmdbKV(directory, map_size=1 << 26, durable_log=log)
    kv.enable_batching(lambda: None)
    return kv, log


def test_a_leaders_sealed_writes_reach_etcd_on_flush_and_its_index_on_close(tmp_path: Path) -> None:
    etcd = FakeEtcd()
    reported: list[int] = []
    kv, log = leading(tmp_path, etcd, on_applied=reported.append)
    with kv.write() as txn:
        txn.put(b"a", b"1")
    kv.seal()
    with kv.write() as txn:
        txn.put(b"b", b"2")
        txn.delete(b"a")
    kv.seal()
    assert etcd.store.head() == 0
    assert kv.flush() == kv.commit_seq == 2
    assert etcd.store.head() == 2 and sorted(etcd.store.log()) == [1, 2]
    kv.close()
    assert read_applied(str(tmp_path)) == 2
    assert reported == [2]
    kv, _ = following(tmp_path, etcd)
    assert contents(kv) == {b"b": b"2"}
    kv.close()


def test_a_leader_whose_append_is_fenced_takes_its_writes_back(tmp_path: Path) -> None:
    etcd = FakeEtcd()
    lost: list[BaseException] = []
    kv, _ = leading(tmp_path, etcd, on_lost=lost.append)
    with kv.write() as txn:
        txn.put(b"a", b"1")
    kv.seal()
    kv.flush()
    with kv.write() as txn:
        txn.put(b"b", b"2")
    kv.seal()
    etcd.store.take_lease("n2")
    with pytest.raises(StorageError):
        kv.flush()
    assert len(lost) == 1
    assert sorted(etcd.store.log()) == [1]
    kv.close()
    # The store's file holds log entries up to the index it recorded, and never the write etcd did not take (entry
    # 1 may still have been in the open batch: a restarted node then applies it from etcd again).
    applied = read_applied(str(tmp_path))
    kv, _ = following(tmp_path, etcd)
    assert (applied, contents(kv)) in [(0, {}), (1, {b"a": b"1"})]
    kv.close()


@pytest.mark.parametrize(
    ("etcd_fails", "answer"),
    [
        # etcd did not answer: it may hold the write, which the next node to apply the log applies: in doubt
        ("unavailable", InternalServerError),
        # etcd refused the append (another leader): nothing was written: refused, retryable as not done
        ("fenced", ServiceUnavailable),
    ],
)
def test_a_leaders_write_etcd_did_not_take_is_answered_by_what_etcd_said(
    tmp_path: Path, etcd_fails: str, answer: type[DynamoError]
) -> None:
    async def body() -> BaseException:
        etcd = FakeEtcd()
        log = ReplicatedLog(str(tmp_path), etcd, fence=etcd.store.take_lease("n1"))  # type: ignore[arg-type]
        kv = LmdbKV(tmp_path, map_size=1 << 26, durable_log=log)
        committer = GroupCommitter(kv, asyncio.get_running_loop())
        if etcd_fails == "unavailable":
            etcd.unavailable = True
        else:
            etcd.store.take_lease("n2")
        with kv.write() as txn:
            txn.put(b"a", b"1")
        with pytest.raises(DurabilityError) as info:
            await committer.wait_durable(kv.commit_seq)
        kv.close()
        return info.value

    error = asyncio.run(body())
    assert type(durability_failure(error)) is answer


def test_writes_refused_after_an_unanswered_append_are_in_doubt_too(tmp_path: Path) -> None:
    # A sync that etcd did not answer (from another thread) left entries etcd may hold: the writes the store then
    # takes back through a failed seal, not through the failed flush, are in doubt too.
    async def body() -> list[BaseException]:
        etcd = FakeEtcd()
        log = ReplicatedLog(str(tmp_path), etcd, fence=etcd.store.take_lease("n1"))  # type: ignore[arg-type]
        kv = LmdbKV(tmp_path, map_size=1 << 26, durable_log=log)
        committer = GroupCommitter(kv, asyncio.get_running_loop())
        with kv.write() as txn:
            txn.put(b"a", b"1")
        kv.seal()  # entry 1: appended, not yet sent
        etcd.unavailable = True
        errors: list[BaseException] = []
        try:
            log.sync()
        except DurabilityError as e:
            errors.append(e)
        with kv.write() as txn:
            txn.put(b"b", b"2")
        with pytest.raises(DurabilityError) as info:
            await committer.wait_durable(kv.commit_seq)
        errors.append(info.value)
        kv.close()
        return errors

    errors = asyncio.run(body())
    assert [type(durability_failure(error)) for error in errors] == [InternalServerError, InternalServerError]
