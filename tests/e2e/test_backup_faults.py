"""Backups and restores under faults (docs/backups.md "On-demand backups"): kill -9 while a backup is being
created leaves no AVAILABLE backup that is incomplete (it ends DELETED at the next start); kill -9 while a restore
loads leaves no half table shown ACTIVE (it is dropped at the next start); a full disk ends a backup or a restore
with a clear error and loses nothing acknowledged."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.e2e.conftest import create_table, make_client, retrying_throttled
from tests.e2e.server_process import ServerProcess
from tests.e2e.test_disk_full import FLAGS

ITEMS = 20_000
FS_BYTES = 40 << 20  # the store, its 8 MB reserve, two 3 MB images, and room to make the reserve again


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A file system of ``FS_BYTES`` (a tmpfs mounted for the test: root only; skipped, with the reason, where it
    cannot be mounted)."""
    mount = tmp_path / "fs"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={FS_BYTES}", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}): a full disk is covered by unit tests only")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def load(url: str, table: str, count: int, value: str = "v") -> None:
    """``count`` items written by 8 clients at once (BatchWriteItem); a burst that passes a new on-demand table's
    initial throughput is throttled, as in DynamoDB, and sent again as an SDK would."""

    def write(worker: int) -> None:
        client = make_client(url)
        for start in range(worker * 25, count, 8 * 25):
            batch = [
                {"PutRequest": {"Item": {"pk": {"S": f"k{i}"}, "v": {"S": value}}}}
                for i in range(start, min(start + 25, count))
            ]
            pending: dict[str, Any] = {table: batch}
            while pending:
                answer = retrying_throttled(functools.partial(client.batch_write_item, RequestItems=pending))
                pending = answer.get("UnprocessedItems") or {}

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(write, range(8)))


def count(client: Any, table: str) -> int:
    pages = client.get_paginator("scan").paginate(TableName=table, Select="COUNT", ConsistentRead=True)
    return sum(page["Count"] for page in pages)


def settled_backup(client: Any, arn: str) -> str:
    for _ in range(600):
        status: str = client.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupStatus"]
        if status != "CREATING":
            return status
        time.sleep(0.05)
    raise AssertionError(f"backup {arn} stayed CREATING")


def settled_table(client: Any, table: str) -> str | None:
    """The table's status once it is not CREATING (None: it is gone)."""
    for _ in range(600):
        try:
            status: str = client.describe_table(TableName=table)["Table"]["TableStatus"]
        except ClientError as e:
            assert e.response["Error"]["Code"] == "ResourceNotFoundException"
            return None
        if status != "CREATING":
            return status
        time.sleep(0.05)
    raise AssertionError(f"table {table} stayed CREATING")


def test_kill_9_while_a_backup_is_created_leaves_no_incomplete_backup_available(tmp_path: Path) -> None:
    server = ServerProcess(data_dir=tmp_path)
    try:
        client = make_client(server.url)
        table = create_table(client)
        load(server.url, table, ITEMS)
        arn = client.create_backup(TableName=table, BackupName="cut")["BackupDetails"]["BackupArn"]
    finally:
        server.kill()  # at once: the image of 20000 items is still being written
    server = ServerProcess(data_dir=tmp_path)
    try:
        client = make_client(server.url)
        status = settled_backup(client, arn)
        if status == "AVAILABLE":  # it was finished before the kill: then it is whole
            target = f"{table}_whole"
            client.restore_table_from_backup(TargetTableName=target, BackupArn=arn)
            assert settled_table(client, target) == "ACTIVE"
            assert count(client, target) == ITEMS
        else:
            assert status == "DELETED"
            assert arn not in [b["BackupArn"] for b in client.list_backups(TableName=table)["BackupSummaries"]]
            assert "ends DELETED" in server.log_text()
        assert not [p for p in (tmp_path / "backups").iterdir() if p.name.endswith(".tmp")]
        again = client.create_backup(TableName=table, BackupName="again")["BackupDetails"]["BackupArn"]
        assert settled_backup(client, again) == "AVAILABLE"
        assert count(client, table) == ITEMS
    finally:
        server.stop()


def test_kill_9_while_a_restore_loads_leaves_no_half_table_active(tmp_path: Path) -> None:
    server = ServerProcess(data_dir=tmp_path)
    try:
        client = make_client(server.url)
        table = create_table(client)
        load(server.url, table, ITEMS)
        arn = client.create_backup(TableName=table, BackupName="full")["BackupDetails"]["BackupArn"]
        assert settled_backup(client, arn) == "AVAILABLE"
        target = f"{table}_copy"
        created = client.restore_table_from_backup(TargetTableName=target, BackupArn=arn)["TableDescription"]
        assert created["TableStatus"] == "CREATING"
    finally:
        server.kill()  # the restore has loaded part of its 20000 items, if any
    server = ServerProcess(data_dir=tmp_path)
    try:
        client = make_client(server.url)
        status = settled_table(client, target)
        assert status in (None, "ACTIVE")
        if status == "ACTIVE":  # the load was over before the kill: then it is whole
            assert count(client, target) == ITEMS
        else:
            assert "still being restored when the server stopped: it is dropped" in server.log_text()
        client.get_waiter("table_not_exists").wait(
            TableName=target, WaiterConfig={"Delay": 0.05}
        ) if status is None else None
        assert count(client, table) == ITEMS
        retry = f"{table}_retry"
        client.restore_table_from_backup(TargetTableName=retry, BackupArn=arn)
        assert settled_table(client, retry) == "ACTIVE"
        assert count(client, retry) == ITEMS
    finally:
        server.stop()


def free_bytes(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def take_space(path: Path, leave: int) -> None:
    """A file taking all but ``leave`` bytes of the file system, as another program might."""
    with open(path, "wb") as f:
        f.write(bytes(max(free_bytes(path.parent) - leave, 0)))
        f.flush()
        os.fsync(f.fileno())


def test_a_full_disk_ends_a_backup_and_a_restore_with_a_clear_error_and_loses_nothing(
    small_fs: Path,
) -> None:
    data = small_fs / "db"
    server = ServerProcess(*FLAGS, data_dir=data)
    filler = small_fs / "filler"
    try:
        client = make_client(server.url)
        table = create_table(client)
        load(server.url, table, 1500, value="x" * 2000)  # about 3 MB
        before = client.create_backup(TableName=table, BackupName="before")["BackupDetails"]["BackupArn"]
        assert settled_backup(client, before) == "AVAILABLE"
        take_space(filler, leave=(3 << 19))  # 1.5 MB left: room for the store, none for a 3 MB image

        done = subprocess.run(
            [sys.executable, "-m", "dynastore", "backup", table, "--name", "full", "--endpoint", server.url,
             "--no-progress"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 1
        assert done.stderr.startswith("dynastore backup: error: the backup arn:aws:dynamodb:")
        assert done.stderr.endswith(" failed: the backup image could not be written: No space left on device\n")
        assert count(client, table) == 1500
        assert not [p for p in (data / "backups").iterdir() if p.name.endswith(".tmp")]

        target = f"{table}_copy"
        try:
            client.restore_table_from_backup(TargetTableName=target, BackupArn=before)
        except ClientError as e:  # the store saw the disk full first
            assert e.response["Error"]["Code"] == "ServiceUnavailable"
        else:  # the load found no room: never ACTIVE, dropped once writes resume
            for _ in range(100):
                got = settled_or_creating(client, target)
                assert got != "ACTIVE"
                if got is None or "failed, the table is dropped" in server.log_text():
                    break
                time.sleep(0.1)
        filler.unlink()
        assert wait_gone(client, target)
        assert count(client, table) == 1500
        after = accepted(lambda: client.create_backup(TableName=table, BackupName="after"))["BackupDetails"][
            "BackupArn"
        ]
        assert settled_backup(client, after) == "AVAILABLE"
    finally:
        server.kill()
        filler.unlink(missing_ok=True)
    server = ServerProcess(*FLAGS, data_dir=data)
    try:
        client = make_client(server.url)
        assert count(client, table) == 1500
        statuses = {b["BackupName"]: b["BackupStatus"] for b in client.list_backups(TableName=table)["BackupSummaries"]}
        assert statuses == {"before": "AVAILABLE", "after": "AVAILABLE"}
    finally:
        server.stop()


def settled_or_creating(client: Any, table: str) -> str | None:
    try:
        status: str = client.describe_table(TableName=table)["Table"]["TableStatus"]
    except ClientError as e:
        assert e.response["Error"]["Code"] == "ResourceNotFoundException"
        return None
    return status


def wait_gone(client: Any, table: str) -> bool:
    for _ in range(300):
        if settled_or_creating(client, table) is None:
            return True
        time.sleep(0.1)
    return False


def accepted(call: Any) -> Any:
    """``call()`` as a client retries it while the store refuses writes (ServiceUnavailable: it resumes once the
    disk has room again)."""
    for _ in range(100):
        try:
            return call()
        except ClientError as e:
            if e.response["Error"]["Code"] != "ServiceUnavailable":
                raise
            time.sleep(0.1)
    return call()
