"""A leader's syncs (replication/replicated_log.py): a sync reports durable only what etcd took, also when
another sync running beside it took the entries and failed."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dynastore.replication.etcd_client import Fenced
from dynastore.replication.replicated_log import ReplicatedLog, read_applied
from dynastore.storage.kv import DurabilityError


class BlockedEtcd:
    """Holds the first append until released, then refuses it (another node took the lease meanwhile)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.appended: list[list[int]] = []

    def append(self, fence: int, head: int, entries: list[tuple[int, bytes]]) -> None:
        self.entered.set()
        self.release.wait(5)
        self.appended.append([index for index, _ in entries])
        raise Fenced("another node leads")


def test_a_sync_beside_a_failing_one_does_not_report_its_entries_durable(tmp_path: Path) -> None:
    etcd = BlockedEtcd()
    lost: list[BaseException] = []
    log = ReplicatedLog(str(tmp_path), etcd, fence=7, on_lost=lost.append)  # type: ignore[arg-type]
    log.start_at(10)
    log.append([b"one"])
    errors: list[BaseException] = []

    def first() -> None:
        try:
            log.sync()
        except DurabilityError as e:
            errors.append(e)

    worker = threading.Thread(target=first)
    worker.start()
    assert etcd.entered.wait(5)  # the first sync holds entry 11 and waits for etcd
    second_result: list[BaseException | None] = []

    def second() -> None:
        try:
            log.sync()
            second_result.append(None)
        except DurabilityError as e:
            second_result.append(e)

    beside = threading.Thread(target=second)
    beside.start()
    etcd.release.set()
    worker.join(5)
    beside.join(5)
    assert len(errors) == 1 and len(lost) == 1
    assert isinstance(second_result[0], DurabilityError)  # not durable: etcd never took entry 11
    assert log.synced_index == 10
    assert etcd.appended == [[11]]


def test_a_leader_never_records_an_applied_index_past_what_etcd_took(tmp_path: Path) -> None:
    etcd = BlockedEtcd()
    etcd.release.set()
    log = ReplicatedLog(str(tmp_path), etcd, fence=7)  # type: ignore[arg-type]
    log.start_at(10)
    log.append([b"one"])
    with pytest.raises(DurabilityError):
        log.sync()
    log.applied((11, 0))
    assert read_applied(str(tmp_path)) == 10
