"""A full disk is an operational condition: writes are refused with ServiceUnavailable, reads stay correct,
deletes still run, writes resume by themselves once space is back, and nothing acknowledged is lost across
kill -9 and restarts, also a restart on the full disk (which starts read-only).

The data directory lives on a small tmpfs mounted for the test (root only). Where that cannot be mounted the
test is skipped with that reason; the same logic is covered without a real disk by
tests/unit/storage/test_storage_faults.py.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.e2e.conftest import create_table, make_client
from tests.e2e.server_process import ServerProcess

FS_BYTES = 24 << 20
# Room for the batch in flight when the disk fills (about a second of this test's writes, whose pages LMDB copies
# on write) and for the deletes after it; the server's default is 32 MB, twice its largest batch.
RESERVE = 8 << 20
VALUE_BYTES = 4 << 10
FLAGS = ("--capacity", "report", "--disk-reserve", str(RESERVE))


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "fs"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={FS_BYTES}", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(
            f"cannot mount a {FS_BYTES >> 20} MB tmpfs here ({done.stderr.strip()}): the disk-full path is "
            "covered by the fault-injection tests only"
        )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


class Ledger:
    """What the server acknowledged: the items it holds, and the puts it refused or failed (never applied)."""

    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table
        self.items: dict[str, str] = {}
        self.not_applied: set[str] = set()
        self.errors: list[tuple[int, str]] = []
        self.serial = 0

    def put(self) -> bool:
        self.serial += 1
        pk = f"item{self.serial:05d}"
        value = (pk + os.urandom(VALUE_BYTES // 2).hex())[:VALUE_BYTES]
        try:
            self.client.put_item(TableName=self.table, Item={"pk": {"S": pk}, "v": {"S": value}})
        except ClientError as e:
            self.errors.append((e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"]))
            self.not_applied.add(pk)
            return False
        self.items[pk] = value
        return True

    def delete(self, pk: str) -> bool:
        try:
            self.client.delete_item(TableName=self.table, Key={"pk": {"S": pk}})
        except ClientError as e:
            self.errors.append((e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"]))
            return False
        del self.items[pk]
        self.not_applied.add(pk)
        return True

    def summary(self) -> str:
        return (
            f"{len(self.items)} items acknowledged and held, {len(self.not_applied)} refused, failed or deleted, "
            f"errors {sorted(set(self.errors))}, lost 0"
        )

    def check(self, client: Any) -> None:
        """Every acknowledged item is there with its exact value; nothing refused, failed or deleted is."""
        stored: dict[str, str] = {}
        pages = client.get_paginator("scan").paginate(TableName=self.table, ConsistentRead=True)
        for page in pages:
            stored.update((item["pk"]["S"], item["v"]["S"]) for item in page["Items"])
        assert stored.keys() - self.items.keys() == set()  # nothing unacknowledged applied
        assert self.items.keys() - stored.keys() == set()  # nothing acknowledged lost
        assert stored == self.items  # each with its exact value
        sample = sorted(self.not_applied)[:20]
        for pk in sample:  # a consistent GetItem agrees
            got = client.get_item(TableName=self.table, Key={"pk": {"S": pk}}, ConsistentRead=True)
            assert "Item" not in got, pk


def resumed(ledger: Ledger, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if ledger.put():
            return True
    return False


def until(cond: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.2)


def fill(path: Path) -> None:
    """Take every free byte of the file system, as another program might."""
    with open(path, "wb") as f:
        try:
            while True:
                f.write(bytes(1 << 16))
                f.flush()
        except OSError:
            pass


def test_disk_full_refuses_writes_keeps_reads_and_loses_nothing(small_fs: Path) -> None:
    data = small_fs / "db"
    server = ServerProcess(*FLAGS, data_dir=data)
    try:
        client = make_client(server.url)
        ledger = Ledger(client, create_table(client))
        # Write until the disk is full for good: at first a checkpoint frees the log's space and writes resume.
        full_for_good = False
        while not full_for_good:
            assert ledger.serial < 20000, "the file system never filled"
            if not ledger.put():
                full_for_good = not resumed(ledger, seconds=3)
        assert set(ledger.errors) == {(503, "ServiceUnavailable")}  # the write in flight too: one clear answer
        assert len(ledger.items) > 500
        ledger.check(client)  # reads keep working and miss nothing acknowledged
        log = server.log_text()
        assert "disk full" in log and str(data) in log
        with pytest.raises(ClientError) as info:
            pk = next(iter(ledger.items))
            client.update_item(
                TableName=ledger.table,
                Key={"pk": {"S": pk}},
                UpdateExpression="SET v = :v",
                ExpressionAttributeValues={":v": {"S": "changed"}},
            )
        assert info.value.response["Error"]["Code"] == "ServiceUnavailable"
        # Deletes still run on the full disk and free pages in the store; writes then resume by themselves. A
        # delete in flight when the disk fills again is answered 503 and not applied: a client retries it.
        for pk in sorted(ledger.items)[: len(ledger.items) // 3]:
            until(partial(ledger.delete, pk), timeout=10)
        until(ledger.put)
        for _ in range(20):
            assert ledger.put(), ledger.errors[-1]
        ledger.check(client)
        assert set(ledger.errors) == {(503, "ServiceUnavailable")}
    finally:
        server.kill()

    server = ServerProcess(*FLAGS, data_dir=data)
    try:
        ledger.client = make_client(server.url)
        ledger.check(ledger.client)
    finally:
        assert server.stop() == 0
    print(ledger.summary())


def refusal(call: Callable[[], Any]) -> tuple[int, str, str]:
    """Run ``call``, which must fail: (HTTP status, error code, message)."""
    with pytest.raises(ClientError) as info:
        call()
    response = info.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"], response["Error"]["Message"]


UNAVAILABLE = (
    503,
    "ServiceUnavailable",
    "The service is currently unavailable: it cannot store writes at the moment. Retry later.",
)


def test_the_write_in_flight_when_the_disk_fills_is_refused_as_the_later_ones_are(small_fs: Path) -> None:
    """The disk fills while the store is writable: the next write runs, and its log record finds no room. It is
    taken back and answered exactly as every write after it (503, not a 500); deletes run from the reserve."""
    data = small_fs / "db"
    server = ServerProcess(*FLAGS, data_dir=data)
    try:
        client = make_client(server.url)
        ledger = Ledger(client, create_table(client))
        for _ in range(20):
            assert ledger.put()
        filler = small_fs / "filler"
        fill(filler)
        big = {"pk": {"S": "big"}, "v": {"S": "x" * (64 << 10)}}  # a record of many pages: no partial page holds it
        assert refusal(partial(client.put_item, TableName=ledger.table, Item=big)) == UNAVAILABLE
        assert refusal(partial(client.put_item, TableName=ledger.table, Item=big)) == UNAVAILABLE
        assert "disk full" in server.log_text()
        for pk in sorted(ledger.items)[:5]:
            assert ledger.delete(pk), ledger.errors
        filler.unlink()  # space is back: writes resume by themselves
        until(ledger.put)
        ledger.check(client)
        assert "Item" not in client.get_item(TableName=ledger.table, Key={"pk": {"S": "big"}}, ConsistentRead=True)
    finally:
        server.kill()


def test_a_restart_on_a_full_disk_is_read_only_until_space_is_back(small_fs: Path) -> None:
    data = small_fs / "db"
    server = ServerProcess(*FLAGS, data_dir=data)
    try:
        client = make_client(server.url)
        ledger = Ledger(client, create_table(client))
        for _ in range(50):
            assert ledger.put()
    finally:
        server.kill()
    filler = small_fs / "filler"
    fill(filler)

    server = ServerProcess(*FLAGS, data_dir=data)
    try:
        client = make_client(server.url)
        ledger.client = client
        ledger.check(client)  # reads work
        assert not ledger.put()
        assert ledger.errors[-1] == (503, "ServiceUnavailable")
        assert "disk full" in server.log_text()
    finally:
        code = server.stop()  # SIGTERM while read-only: a clean stop that keeps the log for the next start
    assert code == 0

    server = ServerProcess(*FLAGS, data_dir=data)
    try:
        client = make_client(server.url)
        ledger.client = client
        ledger.check(client)
        assert not ledger.put()
        assert ledger.errors[-1] == (503, "ServiceUnavailable")
        filler.unlink()  # space is back: writes resume by themselves
        until(ledger.put)
        ledger.check(client)
    finally:
        server.kill()
    server = ServerProcess(*FLAGS, data_dir=data)
    try:
        ledger.check(make_client(server.url))
    finally:
        assert server.stop() == 0
    print(ledger.summary())
