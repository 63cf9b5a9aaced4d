"""kill -9 during an export or an import: at the next start the job is FAILED with a reason and an import's
unfinished table is gone, never shown ACTIVE half filled; the CLI commands report DynamoDB's errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.server_process import ServerProcess
from tests.e2e.test_export_import import ACCOUNT_ARN, KEYS, wait_export, wait_import

LINES = 200_000


def _write_source(folder: Path, count: int) -> None:
    folder.mkdir(parents=True)
    with (folder / "items.json").open("w") as out:
        for i in range(count):
            out.write(json.dumps({"Item": {"pk": {"S": f"user{i}"}, "sk": {"N": str(i)}, "v": {"S": "x" * 40}}}))
            out.write("\n")


def _start_import(ddb: Any, name: str, prefix: str) -> str:
    description = ddb.import_table(
        S3BucketSource={"S3Bucket": "bucket", "S3KeyPrefix": prefix},
        InputFormat="DYNAMODB_JSON",
        TableCreationParameters={"TableName": name, **KEYS},
    )["ImportTableDescription"]
    arn: str = description["ImportArn"]
    return arn


def test_kill_during_an_import_ends_it_failed_and_drops_its_table(tmp_path: Path) -> None:
    root, data = tmp_path / "s3", tmp_path / "data"
    _write_source(root / "bucket" / "big", LINES)
    server = ServerProcess("--s3-root", str(root), data_dir=data)
    try:
        arn = _start_import(server.ddb, "halfloaded", "big/")
        for _ in range(600):  # until the import has loaded part of the items (its progress is saved as it goes)
            description = server.ddb.describe_import(ImportArn=arn)["ImportTableDescription"]
            if description["ImportStatus"] != "IN_PROGRESS" or description["ProcessedItemCount"] > 0:
                break
            time.sleep(0.05)
        assert description["ImportStatus"] == "IN_PROGRESS"
        assert 0 < description["ProcessedItemCount"] < LINES
        assert server.ddb.describe_table(TableName="halfloaded")["Table"]["TableStatus"] == "CREATING"
        server.process.kill()
        server.process.wait(timeout=30)
    finally:
        server.close()
    again = ServerProcess("--s3-root", str(root), data_dir=data)
    try:
        description = again.ddb.describe_import(ImportArn=arn)["ImportTableDescription"]
        assert description["ImportStatus"] == "FAILED"
        assert description["FailureCode"] == "Interrupted"
        assert description["FailureMessage"] == "The import was interrupted: the server stopped while it ran"
        assert "halfloaded" not in again.ddb.list_tables()["TableNames"]
        # the name is free again: the same import, run to its end, loads every item
        done = wait_import(again.ddb, _start_import(again.ddb, "halfloaded", "big/"))
        assert done["ImportStatus"] == "COMPLETED"
        assert done["ImportedItemCount"] == LINES
        table = again.ddb.describe_table(TableName="halfloaded")["Table"]
        assert table["TableStatus"] == "ACTIVE"
    finally:
        again.close()


def test_kill_during_an_export_ends_it_failed(tmp_path: Path) -> None:
    root, data = tmp_path / "s3", tmp_path / "data"
    _write_source(root / "bucket" / "src", 50_000)
    server = ServerProcess("--s3-root", str(root), data_dir=data)
    try:
        ddb = server.ddb
        wait_import(ddb, _start_import(ddb, "exported", "src/"))
        ddb.update_continuous_backups(
            TableName="exported", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
        )
        arn = ddb.export_table_to_point_in_time(
            TableArn=ddb.describe_table(TableName="exported")["Table"]["TableArn"], S3Bucket="bucket"
        )["ExportDescription"]["ExportArn"]
        server.process.kill()
        server.process.wait(timeout=30)
    finally:
        server.close()
    again = ServerProcess("--s3-root", str(root), data_dir=data)
    try:
        description = again.ddb.describe_export(ExportArn=arn)["ExportDescription"]
        assert description["ExportStatus"] == "FAILED"
        assert description["FailureCode"] == "Interrupted"
        assert description["FailureMessage"] == "The export was interrupted: the server stopped while it ran"
        assert "ItemCount" not in description
    finally:
        again.close()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="secret")
    return subprocess.run(
        [sys.executable, "-m", "dynastore", *args], capture_output=True, text=True, timeout=300, env=env
    )


def test_the_export_and_import_commands(tmp_path: Path) -> None:
    root = tmp_path / "s3"
    _write_source(root / "bucket" / "cli", 500)
    server = ServerProcess("--s3-root", str(root))
    try:
        endpoint = server.url
        loaded = _cli("import", "clitable", "--bucket", "bucket", "--prefix", "cli/", "--key", "pk:S",
                      "--key", "sk:N", "--endpoint", endpoint, "--s3-root", str(root))  # fmt: skip
        assert loaded.returncode == 0, loaded.stderr
        assert loaded.stdout.endswith(": 500 items imported of 500 processed, 0 errors\n")
        assert "import: 100%" in loaded.stderr  # the progress bar, sized from the source objects
        refused = _cli("export", "clitable", "--bucket", "bucket", "--endpoint", endpoint)
        assert refused.returncode == 1
        assert refused.stderr == (
            "dynastore export: PointInTimeRecoveryUnavailableException: Point in time recovery is not enabled for "
            "table 'clitable'\n"
        )
        server.ddb.update_continuous_backups(
            TableName="clitable", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
        )
        exported = _cli("export", "clitable", "--bucket", "bucket", "--prefix", "out", "--endpoint", endpoint)
        assert exported.returncode == 0, exported.stderr
        assert ": 500 items, " in exported.stdout
        # the progress bar, sized from the table's ItemCount and moved by DescribeExport's count so far
        assert "export: 100%" in exported.stderr and " 500/500 " in exported.stderr
        [summary] = list((root / "bucket" / "out" / "AWSDynamoDB").glob("*/manifest-summary.json"))
        assert json.loads(summary.read_text())["itemCount"] == 500
        failed = _cli("export", "clitable", "--bucket", "nosuchbucket", "--endpoint", endpoint, "--no-progress")
        assert failed.returncode == 1
        assert failed.stderr == (
            "dynastore export: FAILED: S3NoSuchBucket: The specified bucket does not exist: nosuchbucket\n"
        )
    finally:
        server.close()


def test_an_export_to_a_full_disk_fails_with_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "s3"
    root.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(root)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.decode().strip()}): the full-disk path of "
                    "the directory buckets is covered by tests/unit/storage/test_buckets.py")  # fmt: skip
    try:
        (root / "bucket").mkdir()
        (root / "bucket" / "filler").write_bytes(os.urandom(200 << 10))
        server = ServerProcess("--s3-root", str(root))
        try:
            ddb = server.ddb
            ddb.create_table(TableName="big", **KEYS)
            ddb.update_continuous_backups(
                TableName="big", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
            )
            for i in range(300):
                ddb.put_item(
                    TableName="big", Item={"pk": {"S": f"k{i}"}, "sk": {"N": "1"}, "v": {"B": os.urandom(600)}}
                )
            arn = ddb.export_table_to_point_in_time(TableArn=ACCOUNT_ARN + "big", S3Bucket="bucket")[
                "ExportDescription"
            ]["ExportArn"]
            done = wait_export(ddb, arn)
            assert done["ExportStatus"] == "FAILED"
            assert done["FailureCode"] == "S3WriteFailed"
            assert done["FailureMessage"].startswith("Writing bucket/AWSDynamoDB/")
            assert done["FailureMessage"].endswith(" failed: No space left on device")
            leftovers = [p.name for p in (root / "bucket").rglob("*") if p.is_file() and p.name != "filler"]
            assert all(not name.startswith(".part-") for name in leftovers)
            assert ddb.get_item(TableName="big", Key={"pk": {"S": "k1"}, "sk": {"N": "1"}})["Item"]
        finally:
            server.close()
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)
