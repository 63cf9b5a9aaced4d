"""On-demand backups through the api layer on an in-memory dynastore with a ManualClock, where a test must hold a
backup or a restore in the middle (the background work waits for the event loop) or move through days: a backup
in use, the concurrency limits, the SYSTEM backup of a deleted table with point-in-time recovery on and its expiry,
namespaces, and what a restart does to a backup it did not finish. The wire is tested end to end
(tests/e2e/test_backups.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from dynastore import limits
from dynastore.engine import backups
from dynastore.engine.recovery_state import CREATING, DELETED
from dynastore.errors import (
    BackupInUseException,
    BackupNotFoundException,
    DynamoError,
    LimitExceededException,
    TableInUseException,
)
from dynastore.security.caller import anonymous
from tests.unit.api.operations import T0, bound, call, create, make_ctx
from tests.unit.engine.tables import restart

DAY = 86_400.0


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(test())


def refused(exc_type: type[DynamoError], ops: dict[str, Any], op: str, **body: Any) -> str:
    with pytest.raises(exc_type) as info:
        call(ops, op, **body)
    assert type(info.value) is exc_type and info.value.message is not None
    return info.value.message


def table_with_items(ops: dict[str, Any], name: str = "tbl", count: int = 10) -> None:
    create(ops, name, 5, 5)
    for i in range(count):
        call(ops, "PutItem", TableName=name, Item={"pk": {"S": f"k{i}"}})


def test_a_backup_being_created_cannot_be_deleted_or_restored() -> None:
    async def main() -> None:
        ctx, ops, _ = make_ctx()
        table_with_items(ops)
        details = call(ops, "CreateBackup", TableName="tbl", BackupName="bk1")["BackupDetails"]
        arn = details["BackupArn"]
        assert details["BackupStatus"] == "CREATING"  # its image is written once the event loop runs
        assert refused(BackupInUseException, ops, "DeleteBackup", BackupArn=arn) == f"Backup is being created: {arn}"
        assert refused(BackupInUseException, ops, "RestoreTableFromBackup", BackupArn=arn, TargetTableName="tt2") == (
            f"Backup is being created: {arn}"
        )
        await ctx.recovery.wait()
        got = call(ops, "DescribeBackup", BackupArn=arn)["BackupDescription"]["BackupDetails"]
        assert got["BackupStatus"] == "AVAILABLE"
        assert call(ops, "DeleteBackup", BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupStatus"] == DELETED

    run(main)


def test_a_backup_being_restored_cannot_be_deleted() -> None:
    async def main() -> None:
        ctx, ops, _ = make_ctx()
        table_with_items(ops)
        arn = call(ops, "CreateBackup", TableName="tbl", BackupName="bk1")["BackupDetails"]["BackupArn"]
        await ctx.recovery.wait()
        created = call(ops, "RestoreTableFromBackup", BackupArn=arn, TargetTableName="copy")["TableDescription"]
        assert created["TableStatus"] == "CREATING" and created["RestoreSummary"]["RestoreInProgress"] is True
        assert refused(BackupInUseException, ops, "DeleteBackup", BackupArn=arn) == (
            f"Backup is being restored to a table: {arn}"
        )
        assert refused(TableInUseException, ops, "RestoreTableFromBackup", BackupArn=arn, TargetTableName="copy") == (
            "Table is being created or deleted: copy"
        )
        await ctx.recovery.wait()
        table = call(ops, "DescribeTable", TableName="copy")["Table"]
        assert (table["TableStatus"], table["ItemCount"]) == ("ACTIVE", 10)
        assert table["RestoreSummary"]["RestoreInProgress"] is False
        call(ops, "DeleteBackup", BackupArn=arn)

    run(main)


def test_concurrent_backups_and_restores_are_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_CONCURRENT_BACKUPS", 1)
    monkeypatch.setattr(limits, "MAX_CONCURRENT_RESTORES", 1)

    async def main() -> None:
        ctx, ops, _ = make_ctx()
        table_with_items(ops)
        arn = call(ops, "CreateBackup", TableName="tbl", BackupName="bk1")["BackupDetails"]["BackupArn"]
        assert refused(LimitExceededException, ops, "CreateBackup", TableName="tbl", BackupName="bk2") == (
            "Subscriber limit exceeded: Only 1 backups can be created simultaneously per account"
        )
        await ctx.recovery.wait()
        call(ops, "RestoreTableFromBackup", BackupArn=arn, TargetTableName="copy1")
        limited = refused(LimitExceededException, ops, "RestoreTableFromBackup", BackupArn=arn, TargetTableName="cp3")
        assert limited == "Subscriber limit exceeded: Only 1 tables can be restored simultaneously per account"
        await ctx.recovery.wait()
        call(ops, "RestoreTableFromBackup", BackupArn=arn, TargetTableName="copy2")
        await ctx.recovery.wait()

    run(main)


def test_deleting_a_table_with_point_in_time_recovery_leaves_a_system_backup_for_35_days() -> None:
    async def main() -> None:
        ctx, ops, clock = make_ctx()
        table_with_items(ops)
        spec = {"PointInTimeRecoveryEnabled": True}
        call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=spec)
        call(ops, "DeleteTable", TableName="tbl")
        await ctx.recovery.wait()
        assert call(ops, "ListBackups", TableName="tbl")["BackupSummaries"] == []  # USER ones only, by default
        (summary,) = call(ops, "ListBackups", BackupType="SYSTEM")["BackupSummaries"]
        assert (summary["BackupName"], summary["BackupType"], summary["BackupStatus"]) == (
            "tbl$DeletedTableBackup",
            "SYSTEM",
            "AVAILABLE",
        )
        assert summary["BackupExpiryDateTime"] == summary["BackupCreationDateTime"] + 35 * DAY
        assert [b["BackupArn"] for b in call(ops, "ListBackups", BackupType="ALL")["BackupSummaries"]] == [
            summary["BackupArn"]
        ]
        call(ops, "RestoreTableFromBackup", BackupArn=summary["BackupArn"], TargetTableName="tbl")
        await ctx.recovery.wait()
        assert call(ops, "DescribeTable", TableName="tbl")["Table"]["ItemCount"] == 10  # the items, back
        clock.advance(35 * DAY)
        assert call(ops, "ListBackups", BackupType="ALL")["BackupSummaries"] == []
        arn = summary["BackupArn"]
        assert refused(BackupNotFoundException, ops, "DescribeBackup", BackupArn=arn) == f"Backup not found: {arn}"

    run(main)


def test_backups_belong_to_their_namespace() -> None:
    async def main() -> None:
        ctx, ops, _ = make_ctx()
        table_with_items(ops)
        arn = call(ops, "CreateBackup", TableName="tbl", BackupName="bk1")["BackupDetails"]["BackupArn"]
        await ctx.recovery.wait()
        other = bound(ctx, anonymous("111111111111", "us-east-1"))
        assert call(other, "ListBackups")["BackupSummaries"] == []
        assert refused(BackupNotFoundException, other, "DescribeBackup", BackupArn=arn) == f"Backup not found: {arn}"
        assert refused(BackupNotFoundException, other, "DeleteBackup", BackupArn=arn) == f"Backup not found: {arn}"
        elsewhere = bound(ctx, anonymous("000000000000", "eu-west-1"))
        assert call(elsewhere, "ListBackups")["BackupSummaries"] == []
        assert [b["BackupArn"] for b in call(ops, "ListBackups")["BackupSummaries"]] == [arn]

    run(main)


def test_a_backup_of_a_table_being_deleted() -> None:
    ctx, ops, _ = make_ctx(delete_table_delay=60.0)
    table_with_items(ops)
    call(ops, "DeleteTable", TableName="tbl")
    assert refused(TableInUseException, ops, "CreateBackup", TableName="tbl", BackupName="late") == (
        "Table is being deleted: tbl"
    )


def test_a_backup_the_server_did_not_finish_ends_deleted_at_the_next_start() -> None:
    async def main() -> None:
        ctx, ops, _ = make_ctx()
        table_with_items(ops)
        arn = call(ops, "CreateBackup", TableName="tbl", BackupName="bk1")["BackupDetails"]["BackupArn"]
        await ctx.recovery.wait()
        record = backups.find_backup(ctx, arn)
        # what a kill -9 before the image was sealed leaves on disk: the record still CREATING
        ctx.recovery.files.put_record(record.name, dataclasses.replace(record, status=CREATING).to_record())
        again = restart(ctx)
        again.engine.recovery = again.recovery = ctx.recovery  # the files the first process left
        ctx.recovery.records = None  # read again from the files, as a new process does
        assert backups.recover_backups(again) == [arn]
        described = call(bound(again), "DescribeBackup", BackupArn=arn)["BackupDescription"]["BackupDetails"]
        assert described["BackupStatus"] == "DELETED"
        assert not ctx.recovery.files.has_image(record.name)
        assert call(bound(again), "ListBackups")["BackupSummaries"] == []

    run(main)


def test_time_is_the_clocks() -> None:
    _, ops, clock = make_ctx()
    table_with_items(ops)
    clock.advance(12.5)
    details = call(ops, "CreateBackup", TableName="tbl", BackupName="bk1")["BackupDetails"]
    assert details["BackupCreationDateTime"] == T0 + 12.5
    milliseconds = int((T0 + 12.5) * 1000)
    expected = rf"arn:aws:dynamodb:us-east-1:\d{{12}}:table/tbl/backup/{milliseconds:014d}-[0-9a-f]{{8}}"
    assert re.fullmatch(expected, details["BackupArn"])
    # no event loop runs here: the backup was written before CreateBackup answered
    described = call(ops, "DescribeBackup", BackupArn=details["BackupArn"])["BackupDescription"]["BackupDetails"]
    assert described["BackupStatus"] == "AVAILABLE"
