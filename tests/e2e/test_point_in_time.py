"""Point-in-time recovery end to end through boto3: UpdateContinuousBackups, DescribeContinuousBackups and
RestoreTableToPointInTime with their errors, restores to instants days apart on a server whose clock moves only
when a test says so, the restored table compared with what the source held then, and kill -9 during a restore
(docs/backups.md "Point-in-time recovery")."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import aws, create_table, error_of, needs_aws_cli, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture

DAY = 86_400.0
ON = {"PointInTimeRecoveryEnabled": True}

server = server_fixture("--manual-clock")


def at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def ms(seconds: float) -> datetime:
    """A time as DescribeContinuousBackups gives it: to the millisecond."""
    return at(round(seconds, 3))


def enable(ddb: Any, name: str, days: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = dict(ON) if days is None else {**ON, "RecoveryPeriodInDays": days}
    ddb.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification=spec)
    return window_of(ddb, name)


def window_of(ddb: Any, name: str) -> dict[str, Any]:
    """The table's PointInTimeRecoveryDescription once its first base is in (a maintenance pass takes it)."""
    deadline = time.monotonic() + 20
    while True:
        described = ddb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
        pitr: dict[str, Any] = described["PointInTimeRecoveryDescription"]
        if "EarliestRestorableDateTime" in pitr or time.monotonic() > deadline:
            return pitr
        time.sleep(0.05)


def wait_active(ddb: Any, name: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        table: dict[str, Any] = ddb.describe_table(TableName=name)["Table"]
        if table["TableStatus"] == "ACTIVE" or time.monotonic() > deadline:
            return table
        time.sleep(0.05)


def scan_all(ddb: Any, name: str) -> dict[str, dict[str, Any]]:
    items: dict[str, dict[str, Any]] = {}
    kwargs: dict[str, Any] = {"TableName": name}
    while True:
        page = ddb.scan(**kwargs)
        for item in page["Items"]:
            items[item["pk"]["S"]] = item
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def count(ddb: Any, name: str) -> int:
    return len(scan_all(ddb, name))


def put(ddb: Any, name: str, pk: str, value: str) -> None:
    ddb.put_item(TableName=name, Item={"pk": {"S": pk}, "v": {"S": value}})


class TestContinuousBackups:
    def test_describe_a_new_table(self, server: ServerProcess) -> None:
        ddb = server.ddb
        name = create_table(ddb)
        assert ddb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"] == {
            "ContinuousBackupsStatus": "ENABLED",
            "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"},
        }

    def test_enable_change_the_period_and_disable(self, server: ServerProcess) -> None:
        ddb = server.ddb
        name = create_table(ddb)
        now = server.now()
        assert enable(ddb, name) == {
            "PointInTimeRecoveryStatus": "ENABLED",
            "RecoveryPeriodInDays": 35,
            "EarliestRestorableDateTime": ms(now),
            "LatestRestorableDateTime": ms(now),
        }
        spec = {**ON, "RecoveryPeriodInDays": 3}
        out = ddb.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification=spec)
        assert out["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]["RecoveryPeriodInDays"] == 3
        out = ddb.update_continuous_backups(
            TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": False}
        )
        assert out["ContinuousBackupsDescription"] == {
            "ContinuousBackupsStatus": "ENABLED",
            "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"},
        }

    def test_the_window_follows_the_clock_and_the_period(self, server: ServerProcess) -> None:
        ddb = server.ddb
        name = create_table(ddb)
        start = server.now()
        enable(ddb, name, days=2)
        now = server.advance(5 * DAY)
        pitr = window_of(ddb, name)
        assert pitr["EarliestRestorableDateTime"] == ms(now - 2 * DAY)
        assert pitr["LatestRestorableDateTime"] == ms(now)
        assert start < now - 2 * DAY

    @pytest.mark.parametrize(
        ("kwargs", "code", "message"),
        [
            (
                {"TableName": "abc", "PointInTimeRecoverySpecification": {**ON, "RecoveryPeriodInDays": 36}},
                "ValidationException",
                "1 validation error detected: Value at 'PointInTimeRecoverySpecification.RecoveryPeriodInDays' "
                "failed to satisfy constraint: Member must have value less than or equal to 35",
            ),
            (
                {"TableName": "abc", "PointInTimeRecoverySpecification": {**ON, "RecoveryPeriodInDays": 0}},
                "ValidationException",
                "1 validation error detected: Value at 'PointInTimeRecoverySpecification.RecoveryPeriodInDays' "
                "failed to satisfy constraint: Member must have value greater than or equal to 1",
            ),
            (
                {"TableName": "abc"},
                "ValidationException",
                "1 validation error detected: Value at 'PointInTimeRecoverySpecification' failed to satisfy "
                "constraint: Member must not be null",
            ),
            (
                {"TableName": "abc", "PointInTimeRecoverySpecification": {}},
                "ValidationException",
                "1 validation error detected: Value at 'PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled' "
                "failed to satisfy constraint: Member must not be null",
            ),
            (
                {
                    "TableName": "abc",
                    "PointInTimeRecoverySpecification": {
                        "PointInTimeRecoveryEnabled": False,
                        "RecoveryPeriodInDays": 3,
                    },
                },
                "ValidationException",
                "RecoveryPeriodInDays cannot be specified when PointInTimeRecoveryEnabled is false",
            ),
            (
                {"TableName": "no_such_table", "PointInTimeRecoverySpecification": ON},
                "TableNotFoundException",
                "Table not found: no_such_table",
            ),
        ],
    )
    def test_update_errors(self, server: ServerProcess, kwargs: dict[str, Any], code: str, message: str) -> None:
        assert error_of(lambda: server.ddb.update_continuous_backups(**kwargs)) == (code, message)

    def test_describe_errors(self, server: ServerProcess) -> None:
        ddb = server.ddb
        assert error_of(lambda: ddb.describe_continuous_backups(TableName="no_such_table")) == (
            "TableNotFoundException",
            "Table not found: no_such_table",
        )
        assert error_of(lambda: ddb.describe_continuous_backups(TableName="ab")) == (
            "ValidationException",
            "1 validation error detected: Value at 'TableName' failed to satisfy constraint: Member must have "
            "length greater than or equal to 3",
        )


class TestRestore:
    def test_restores_to_instants_days_apart_hold_what_the_source_held(self, server: ServerProcess) -> None:
        ddb = server.ddb
        name = create_table(ddb)
        put(ddb, name, "a", "before")
        enable(ddb, name)
        history: list[tuple[float, dict[str, str]]] = [(server.now(), {"a": "before"})]
        state = {"a": "before"}
        for day in range(4):
            server.advance(DAY / 2)
            put(ddb, name, f"k{day}", str(day))
            state[f"k{day}"] = str(day)
            if day % 2:
                ddb.delete_item(TableName=name, Key={"pk": {"S": "a"}})
                state.pop("a", None)
            else:
                put(ddb, name, "a", f"day{day}")
                state["a"] = f"day{day}"
            history.append((server.now() + 1, dict(state)))  # a second after the writes: clear of their times
            server.advance(DAY / 2)
            time.sleep(0.6)  # a maintenance pass: a new base is due each day
        for instant, expected in history:
            target = unique_name("restored")
            out = ddb.restore_table_to_point_in_time(
                SourceTableName=name, TargetTableName=target, RestoreDateTime=at(instant)
            )
            description = out["TableDescription"]
            assert description["TableStatus"] == "CREATING"
            assert description["RestoreSummary"]["RestoreInProgress"] is True
            table = wait_active(ddb, target)
            assert table["TableStatus"] == "ACTIVE"
            assert table["RestoreSummary"] == {
                "SourceTableArn": f"arn:aws:dynamodb:us-east-1:000000000000:table/{name}",
                "RestoreDateTime": at(instant),
                "RestoreInProgress": False,
            }
            restored = {pk: item["v"]["S"] for pk, item in scan_all(ddb, target).items()}
            assert restored == expected
            ddb.delete_table(TableName=target)

    def test_latest_restorable_time_by_arn_with_overrides(self, server: ServerProcess) -> None:
        ddb = server.ddb
        name = unique_name()
        ddb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "g", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
            GlobalSecondaryIndexes=[
                {
                    "IndexName": "by_g",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            ],
        )
        arn = ddb.describe_table(TableName=name)["Table"]["TableArn"]
        enable(ddb, name)
        ddb.put_item(TableName=name, Item={"pk": {"S": "x"}, "g": {"S": "red"}})
        server.advance(60)
        target = unique_name("latest")
        ddb.restore_table_to_point_in_time(
            SourceTableArn=arn,
            TargetTableName=target,
            UseLatestRestorableTime=True,
            BillingModeOverride="PROVISIONED",
            ProvisionedThroughputOverride={"ReadCapacityUnits": 7, "WriteCapacityUnits": 3},
        )
        table = wait_active(ddb, target)
        assert table["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
        assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 7
        assert [i["IndexName"] for i in table["GlobalSecondaryIndexes"]] == ["by_g"]
        found = ddb.query(
            TableName=target,
            IndexName="by_g",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": "red"}},
        )
        assert [i["pk"]["S"] for i in found["Items"]] == ["x"]
        # a GSI override of no index leaves the restored table without one; recovery is not carried over
        bare = unique_name("bare")
        ddb.restore_table_to_point_in_time(
            SourceTableName=name, TargetTableName=bare, UseLatestRestorableTime=True, GlobalSecondaryIndexOverride=[]
        )
        assert "GlobalSecondaryIndexes" not in wait_active(ddb, bare)
        pitr = ddb.describe_continuous_backups(TableName=bare)["ContinuousBackupsDescription"]
        assert pitr["PointInTimeRecoveryDescription"] == {"PointInTimeRecoveryStatus": "DISABLED"}

    def test_errors(self, server: ServerProcess) -> None:
        ddb = server.ddb
        name = create_table(ddb)
        plain = create_table(ddb)
        now = server.now()

        def restore(**kwargs: Any) -> tuple[str, str]:
            return error_of(lambda: ddb.restore_table_to_point_in_time(**kwargs))

        assert restore(SourceTableName="no_such_table", TargetTableName="tgt", UseLatestRestorableTime=True) == (
            "TableNotFoundException",
            "Table not found: no_such_table",
        )
        assert restore(SourceTableName=name, TargetTableName=plain, UseLatestRestorableTime=True) == (
            "TableAlreadyExistsException",
            f"Table already exists: {plain}",
        )
        assert restore(SourceTableName=name, TargetTableName="tgt", UseLatestRestorableTime=True) == (
            "PointInTimeRecoveryUnavailableException",
            f"Point in time recovery is not enabled for table '{name}'",
        )
        enable(ddb, name)
        server.advance(10)
        assert restore(SourceTableName=name, TargetTableName="tgt", RestoreDateTime=at(now - 10)) == (
            "InvalidRestoreTimeException",
            f"Invalid RestoreDateTime: it must be between EarliestRestorableDateTime ({round(now, 3)}) and "
            f"LatestRestorableDateTime ({round(now + 10, 3)})",
        )
        assert restore(SourceTableName=name, TargetTableName="tgt", RestoreDateTime=at(now + 11)) == (
            "InvalidRestoreTimeException",
            f"Invalid RestoreDateTime: it must be between EarliestRestorableDateTime ({round(now, 3)}) and "
            f"LatestRestorableDateTime ({round(now + 10, 3)})",
        )
        assert restore(TargetTableName="tgt", UseLatestRestorableTime=True) == (
            "ValidationException",
            "Either SourceTableArn or SourceTableName must be specified",
        )
        assert restore(SourceTableName=name, SourceTableArn="arn:x", TargetTableName="tgt") == (
            "ValidationException",
            "Only one of SourceTableArn or SourceTableName can be specified",
        )
        assert restore(SourceTableName=name, TargetTableName="tgt") == (
            "ValidationException",
            "Either RestoreDateTime or UseLatestRestorableTime must be specified",
        )
        assert restore(
            SourceTableName=name, TargetTableName="tgt", UseLatestRestorableTime=True, RestoreDateTime=at(now)
        ) == ("ValidationException", "Only one of RestoreDateTime or UseLatestRestorableTime can be specified")
        assert restore(SourceTableName=name) == (
            "ValidationException",
            "1 validation error detected: The parameter 'TargetTableName' is required but was not present in the "
            "request",
        )
        assert restore(SourceTableName=name, TargetTableName="t!", UseLatestRestorableTime=True)[0] == (
            "ValidationException"
        )
        override = [
            {
                "IndexName": "by_q",
                "KeySchema": [{"AttributeName": "q", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ]
        assert restore(
            SourceTableName=name,
            TargetTableName="tgt",
            UseLatestRestorableTime=True,
            GlobalSecondaryIndexOverride=override,
        ) == (
            "ValidationException",
            "One or more parameter values were invalid: Some index key attributes are not defined in the source "
            "table's AttributeDefinitions: q",
        )
        assert restore(
            SourceTableName=name, TargetTableName="tgt", UseLatestRestorableTime=True, BillingModeOverride="PROVISIONED"
        ) == (
            "ValidationException",
            "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be "
            "specified when BillingMode is PROVISIONED",
        )
        assert restore(
            SourceTableName=name,
            TargetTableName="tgt",
            UseLatestRestorableTime=True,
            ProvisionedThroughputOverride={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        ) == (
            "ValidationException",
            "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be "
            "specified when BillingMode is PAY_PER_REQUEST",
        )
        lsi = {
            "IndexName": "twice",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }
        assert restore(
            SourceTableName=name,
            TargetTableName="tgt",
            UseLatestRestorableTime=True,
            GlobalSecondaryIndexOverride=[lsi, lsi],
        ) == ("ValidationException", "One or more parameter values were invalid: Duplicate index name: twice")
        assert "tgt" not in ddb.list_tables()["TableNames"]

    def test_deleting_a_table_with_recovery_on_leaves_a_system_backup(self, server: ServerProcess) -> None:
        ddb = server.ddb
        name = create_table(ddb)
        put(ddb, name, "a", "1")
        enable(ddb, name)
        ddb.delete_table(TableName=name)
        (summary,) = ddb.list_backups(TableName=name, BackupType="SYSTEM")["BackupSummaries"]
        assert summary["BackupType"] == "SYSTEM"
        assert summary["TableName"] == name
        assert error_of(lambda: ddb.describe_continuous_backups(TableName=name)) == (
            "TableNotFoundException",
            f"Table not found: {name}",
        )


ITEMS = 20_000


def test_kill_9_during_a_restore_leaves_no_half_table_active(tmp_path: Path) -> None:
    first = ServerProcess("--manual-clock", data_dir=tmp_path)
    try:
        ddb = first.ddb
        name = create_table(ddb)
        for start in range(0, ITEMS, 25):
            if start % 1000 == 0:
                first.advance(1)  # the table's capacity refills with the clock
            ddb.batch_write_item(
                RequestItems={
                    name: [
                        {"PutRequest": {"Item": {"pk": {"S": f"k{i:05d}"}, "pad": {"S": "x" * 200}}}}
                        for i in range(start, start + 25)
                    ]
                }
            )
        enable(ddb, name)
        ddb.restore_table_to_point_in_time(SourceTableName=name, TargetTableName="half", UseLatestRestorableTime=True)
    finally:
        first.kill()  # SIGKILL while the restore loads (or just after)
    second = ServerProcess("--manual-clock", data_dir=tmp_path)
    try:
        ddb = second.ddb
        names = ddb.list_tables()["TableNames"]
        if "half" in names:  # finished before the kill: then whole
            table = ddb.describe_table(TableName="half")["Table"]
            assert table["TableStatus"] == "ACTIVE"
            assert count(ddb, "half") == ITEMS
        else:
            assert error_of(lambda: ddb.describe_table(TableName="half")) == (
                "ResourceNotFoundException",
                "Requested resource not found: Table: half not found",
            )
        # the source's recovery period survived the kill: it restores again
        ddb.restore_table_to_point_in_time(SourceTableName=name, TargetTableName="again", UseLatestRestorableTime=True)
        assert wait_active(ddb, "again")["TableStatus"] == "ACTIVE"
        assert count(ddb, "again") == ITEMS
    finally:
        second.close()


def test_the_recovery_history_survives_kill_9(tmp_path: Path) -> None:
    first = ServerProcess("--manual-clock", data_dir=tmp_path)
    try:
        ddb = first.ddb
        name = create_table(ddb)
        put(ddb, name, "a", "1")
        enable(ddb, name)
        first.advance(DAY + 1)
        time.sleep(0.6)  # a maintenance pass: the second base
        put(ddb, name, "a", "2")
        middle = first.advance(60)
        put(ddb, name, "b", "3")
        first.advance(60)
    finally:
        first.kill()  # SIGKILL: acknowledged writes and the archive's record must survive
    second = ServerProcess("--manual-clock", data_dir=tmp_path)
    try:
        ddb = second.ddb
        second.advance(middle + 60 - second.now())  # the clock where it was (a new process starts at wall time)
        for target, instant, expected in (
            ("r_before", middle - DAY, {"a": "1"}),
            ("r_middle", middle - 1, {"a": "2"}),
            ("r_late", middle + 30, {"a": "2", "b": "3"}),
        ):
            ddb.restore_table_to_point_in_time(
                SourceTableName=name, TargetTableName=target, RestoreDateTime=at(instant)
            )
            wait_active(ddb, target)
            assert {pk: item["v"]["S"] for pk, item in scan_all(ddb, target).items()} == expected
    finally:
        second.close()


@needs_aws_cli
def test_the_aws_cli_commands(server: ServerProcess) -> None:
    ddb = server.ddb
    name = create_table(ddb)
    put(ddb, name, "a", "1")
    code, out, err = aws(
        server.url, "update-continuous-backups", "--table-name", name,
        "--point-in-time-recovery-specification", "PointInTimeRecoveryEnabled=true,RecoveryPeriodInDays=7",
    )  # fmt: skip
    assert code == 0, err
    assert (
        json.loads(out)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]["RecoveryPeriodInDays"] == 7
    )
    window_of(ddb, name)
    code, out, err = aws(server.url, "describe-continuous-backups", "--table-name", name)
    assert code == 0, err
    assert json.loads(out)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"][
        "PointInTimeRecoveryStatus"
    ] == ("ENABLED")
    target = unique_name("cli")
    code, out, err = aws(
        server.url, "restore-table-to-point-in-time", "--source-table-name", name, "--target-table-name", target,
        "--use-latest-restorable-time",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["TableDescription"]["TableName"] == target
    wait_active(ddb, target)
    assert count(ddb, target) == 1
    code, _, err = aws(
        server.url, "restore-table-to-point-in-time", "--source-table-name", name, "--target-table-name", target,
        "--use-latest-restorable-time",
    )  # fmt: skip
    assert code != 0
    assert (
        "(TableAlreadyExistsException) when calling the RestoreTableToPointInTime operation: "
        f"Table already exists: {target}" in err
    )
