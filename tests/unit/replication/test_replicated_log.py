"""The replicated durable log (replication/replicated_log.py) over an in-memory etcd: numbering, fenced appends in
transactions etcd takes, the failure path, and what a restarted node resumes from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dynastore.replication import replicated_log
from dynastore.replication.etcd_client import EtcdUnavailable, Fenced
from dynastore.replication.etcd_config import HEAD_KEY
from dynastore.replication.replicated_log import APPLIED_FILE, ReplicatedLog, read_applied
from dynastore.storage.durability import Batch, encode_delete, encode_put
from dynastore.storage.kv import DurabilityError, OutcomeUnknownError
from tests.unit.replication.fake_etcd import ETCD_MAX_TXN_OPS, FakeEtcd


def put(key: bytes, value: bytes) -> Batch:
    return [encode_put(key, value), key, value]


def delete(key: bytes) -> Batch:
    return [encode_delete(key), key]


class Lost:
    """An ``on_lost`` callback that counts its calls."""

    def __init__(self) -> None:
        self.errors: list[BaseException] = []

    def __call__(self, error: BaseException) -> None:
        self.errors.append(error)


def leading(tmp_path: Path, etcd: FakeEtcd, head: int = 0, lost: Lost | None = None, **kw: Any) -> ReplicatedLog:
    fence = etcd.store.take_lease("n1")
    if head and etcd.store.head() != head:
        etcd.store.put_now(HEAD_KEY, b"%d" % head)  # the log this leader caught up with
    log = ReplicatedLog(str(tmp_path), etcd, fence=fence, on_lost=lost, **kw)  # type: ignore[arg-type]
    log.start_at(head)
    return log


# ---- leading


def test_appends_are_numbered_after_the_head_and_reach_etcd_on_sync(tmp_path: Path) -> None:
    etcd = FakeEtcd()
    log = leading(tmp_path, etcd, head=5)
    assert log.open() == (5, 0)
    log.append(put(b"a", b"1"))
    log.append(delete(b"a"))
    assert log.end() == (7, 0)
    assert etcd.store.log() == {}  # kept until sync
    log.sync()
    assert etcd.store.log() == {6: b"".join(put(b"a", b"1")), 7: b"".join(delete(b"a"))}
    assert etcd.store.head() == 7
    assert log.synced_index == 7
    log.append(put(b"b", b"2"))
    log.sync()
    assert sorted(etcd.store.log()) == [6, 7, 8]
    assert len(etcd.store.committed) == 2  # one transaction per sync


def test_a_sync_sends_one_transaction_per_max_txn_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replicated_log, "MAX_TXN_BYTES", 100)
    etcd = FakeEtcd()
    log = leading(tmp_path, etcd)
    for key in (b"a", b"b", b"c", b"d", b"e"):
        log.append(put(key, b"v" * 30))  # 9 + 1 + 30 = 40 bytes each: two fit a transaction
    log.sync()
    logged = [[key for key, _ in puts if key != HEAD_KEY] for puts in etcd.store.committed]
    assert [len(keys) for keys in logged] == [2, 2, 1]
    assert etcd.store.head() == 5
    assert sorted(etcd.store.log()) == [1, 2, 3, 4, 5]


def test_an_entry_larger_than_max_txn_bytes_goes_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replicated_log, "MAX_TXN_BYTES", 100)
    etcd = FakeEtcd()
    log = leading(tmp_path, etcd)
    log.append(put(b"small", b"x"))
    log.append(put(b"large", b"x" * 200))
    log.append(put(b"small", b"y"))
    log.sync()
    assert [len(puts) - 1 for puts in etcd.store.committed] == [1, 1, 1]
    assert etcd.store.head() == 3


def test_a_sync_of_many_small_entries_stays_within_etcds_operations_per_transaction(tmp_path: Path) -> None:
    # Many writes sealed while one sync ran: etcd refuses a transaction of more than --max-txn-ops (128 by
    # default) operations, and each entry is one put beside the head's.
    etcd = FakeEtcd()
    lost = Lost()
    log = leading(tmp_path, etcd, lost=lost)
    for i in range(300):
        log.append(put(b"k%d" % i, b"v"))
    log.sync()
    assert lost.errors == []
    assert all(len(puts) <= ETCD_MAX_TXN_OPS for puts in etcd.store.committed)
    assert sorted(etcd.store.log()) == list(range(1, 301))
    assert etcd.store.head() == 300


def test_a_fenced_append_raises_and_loses_the_lease_once(tmp_path: Path) -> None:
    etcd = FakeEtcd()
    lost = Lost()
    log = leading(tmp_path, etcd, lost=lost)
    log.append(put(b"a", b"1"))
    log.sync()
    etcd.store.take_lease("n2")  # another node took the write lease: this one's fence is stale
    log.append(put(b"b", b"2"))
    with pytest.raises(DurabilityError, match="the cluster's log did not take the write"):
        log.sync()
    assert etcd.store.log() == {1: b"".join(put(b"a", b"1"))}
    assert len(lost.errors) == 1 and isinstance(lost.errors[0], Fenced)
    with pytest.raises(DurabilityError, match="no longer holds the write lease"):
        log.append(put(b"c", b"3"))
    with pytest.raises(DurabilityError, match="this node no longer holds the write lease"):
        log.sync()  # the entry etcd refused is not reported durable by a later sync
    assert len(lost.errors) == 1


def test_an_append_under_a_moved_head_is_fenced(tmp_path: Path) -> None:
    etcd = FakeEtcd()
    lost = Lost()
    log = leading(tmp_path, etcd, lost=lost)
    etcd.store.put_now(HEAD_KEY, b"3")  # a log this leader did not catch up with
    log.append(put(b"a", b"1"))
    with pytest.raises(DurabilityError):
        log.sync()
    assert etcd.store.log() == {}
    assert isinstance(lost.errors[0], Fenced)


def test_etcd_unavailable_raises_and_loses_the_lease_once(tmp_path: Path) -> None:
    etcd = FakeEtcd()
    lost = Lost()
    log = leading(tmp_path, etcd, lost=lost)
    log.append(put(b"a", b"1"))
    etcd.unavailable = True
    with pytest.raises(DurabilityError, match="etcd did not answer in time"):
        log.sync()
    etcd.unavailable = False
    with pytest.raises(OutcomeUnknownError, match="did not answer an earlier append"):
        log.sync()  # nothing after a failed append is reported durable, even once etcd answers again
    assert len(lost.errors) == 1 and isinstance(lost.errors[0], EtcdUnavailable)
    assert log.synced_index == 0


def test_take_back_cuts_the_kept_entries_and_appends_continue_there(tmp_path: Path) -> None:
    etcd = FakeEtcd()
    log = leading(tmp_path, etcd, head=2)
    log.append(put(b"a", b"1"))  # 3
    log.sync()
    log.append(put(b"b", b"2"))  # 4
    log.append(put(b"c", b"3"))  # 5
    log.take_back((3, 0))
    assert log.end() == (3, 0)
    assert list(log.replay((2, 0), (5, 0))) == [[(b"a", b"1")]]
    log.append(put(b"d", b"4"))
    assert log.end() == (4, 0)
    log.sync()
    assert etcd.store.log()[4] == b"".join(put(b"d", b"4"))


def test_replay_yields_the_entries_after_start_up_to_stop(tmp_path: Path) -> None:
    log = leading(tmp_path, FakeEtcd())
    for i in range(1, 5):
        log.append(put(b"k", b"%d" % i))
    assert list(log.replay((1, 0), (3, 0))) == [[(b"k", b"2")], [(b"k", b"3")]]
    assert list(log.replay((0, 0), (4, 0))) == [[(b"k", b"%d" % i)] for i in range(1, 5)]
    assert list(log.replay((4, 0), (4, 0))) == []


def test_applied_records_the_index_and_forgets_the_entries_before_it(tmp_path: Path) -> None:
    reported: list[int] = []
    log = leading(tmp_path, FakeEtcd(), on_applied=reported.append)
    for i in range(3):
        log.append(put(b"k", b"%d" % i))
    log.sync()
    log.applied((2, 0))
    assert read_applied(str(tmp_path)) == 2
    assert (tmp_path / APPLIED_FILE).read_bytes() == b"2\n"
    assert reported == [2]
    assert list(log.replay((0, 0), (3, 0))) == [[(b"k", b"2")]]
    assert log.holds_records()
    log.applied((1, 0))  # an older position changes nothing
    assert read_applied(str(tmp_path)) == 2 and reported == [2]
    log.applied((3, 0))
    assert not log.holds_records()
    assert reported == [2, 3]


def test_close_records_the_end_unless_the_entries_are_kept(tmp_path: Path) -> None:
    etcd = FakeEtcd()
    log = leading(tmp_path, etcd)
    log.append(put(b"a", b"1"))
    log.sync()
    log.close(discard=False)
    assert read_applied(str(tmp_path)) == 0
    log = leading(tmp_path, etcd, head=1)
    log.close()
    assert read_applied(str(tmp_path)) == 1
    assert ReplicatedLog(str(tmp_path), etcd).open() == (1, 0)  # type: ignore[arg-type]


# ---- following


def test_a_follower_refuses_a_write_no_entry_announced(tmp_path: Path) -> None:
    etcd = FakeEtcd()
    log = ReplicatedLog(str(tmp_path), etcd)  # type: ignore[arg-type]
    assert not log.leading
    with pytest.raises(DurabilityError, match="a follower's store changes only by applying the cluster's log"):
        log.append(put(b"a", b"1"))
    log.expect(3)
    log.append(put(b"a", b"1"))
    assert log.end() == (3, 0) and log.synced_index == 3
    with pytest.raises(DurabilityError):
        log.append(put(b"b", b"2"))  # each announcement covers one write
    log.expect(3)
    with pytest.raises(DurabilityError):
        log.append(put(b"b", b"2"))  # an entry at or before the end
    log.sync()
    assert etcd.calls == 0  # the entries came from etcd: nothing is sent back
