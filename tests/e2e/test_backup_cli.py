"""``dynastore backup`` and ``dynastore restore``: clients of a running server, with a progress bar and an ETA,
exiting non-zero with DynamoDB's error on failure (docs/backups.md "On-demand backups")."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from tests.e2e.conftest import create_table
from tests.e2e.server_process import ServerProcess, server_fixture

server = server_fixture()


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return subprocess.run(
        [sys.executable, "-m", "dynastore", *args], capture_output=True, text=True, env=env, timeout=120
    )


def loaded_table(ddb: Any, count: int) -> str:
    table = create_table(ddb)
    for start in range(0, count, 25):
        ddb.batch_write_item(
            RequestItems={table: [{"PutRequest": {"Item": {"pk": {"S": f"k{i}"}}}} for i in range(start, start + 25)]}
        )
    return table


def test_backup_then_restore_with_progress(server: ServerProcess) -> None:
    table = loaded_table(server.ddb, 5000)
    backed = run("backup", table, "--name", "cli-backup", "--endpoint", server.url)
    assert backed.returncode == 0, backed.stderr
    arn = backed.stdout.strip()
    details = server.ddb.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]
    assert (details["BackupName"], details["BackupStatus"]) == ("cli-backup", "AVAILABLE")
    assert "backup cli-backup: 100%" in backed.stderr and "5000/5000" in backed.stderr  # tqdm's bar, at its end

    restored = run("restore", arn, f"{table}_copy", "--endpoint", server.url.removeprefix("http://"))
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.strip().endswith(f":table/{table}_copy")
    described = server.ddb.describe_table(TableName=f"{table}_copy")["Table"]
    assert (described["TableStatus"], described["ItemCount"]) == ("ACTIVE", 5000)
    assert f"restore {table}_copy" in restored.stderr


def test_failures_exit_non_zero_with_dynamodbs_error(server: ServerProcess) -> None:
    missing = run("backup", "no_such_table", "--endpoint", server.url, "--no-progress")
    assert missing.returncode == 1
    assert missing.stderr == "dynastore backup: error: TableNotFoundException: Table not found: no_such_table\n"
    table = create_table(server.ddb)
    arn = run("backup", table, "--endpoint", server.url, "--no-progress").stdout.strip()
    taken = run("restore", arn, table, "--endpoint", server.url, "--no-progress")
    assert taken.returncode == 1
    assert taken.stderr == f"dynastore restore: error: TableAlreadyExistsException: Table already exists: {table}\n"


def test_no_wait_returns_once_accepted(server: ServerProcess) -> None:
    table = create_table(server.ddb)
    accepted = run("backup", table, "--endpoint", server.url, "--no-wait")
    assert accepted.returncode == 0 and accepted.stderr == ""
    assert f":table/{table}/backup/" in accepted.stdout
