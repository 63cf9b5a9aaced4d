"""On-demand backups end to end through boto3 (docs/backups.md "On-demand backups"): CreateBackup, DescribeBackup,
ListBackups, DeleteBackup and RestoreTableFromBackup with their overrides, the restored table CREATING until its
data is in and its RestoreSummary, backups outliving their tables, and every error with DynamoDB's code and text."""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import aws, create_table, error_of, needs_aws_cli, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture

ARN = re.compile(r"^arn:aws:dynamodb:us-east-1:\d{12}:table/(?P<table>[\w.-]+)/backup/\d{14}-[0-9a-f]{8}$")
MISSING_ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/nothing/backup/01700000000000-0123abcd"

clocked = server_fixture("--manual-clock", "--create-table-delay", "5")
durable = server_fixture(data_dir=True)


def wait_available(ddb: Any, arn: str) -> dict[str, Any]:
    for _ in range(400):
        details: dict[str, Any] = ddb.describe_backup(BackupArn=arn)["BackupDescription"]
        if details["BackupDetails"]["BackupStatus"] != "CREATING":
            return details
        time.sleep(0.02)
    raise AssertionError(f"backup {arn} stayed CREATING")


def wait_restored(ddb: Any, table: str) -> dict[str, Any]:
    for _ in range(400):
        description: dict[str, Any] = ddb.describe_table(TableName=table)["Table"]
        if description["TableStatus"] == "ACTIVE":
            return description
        time.sleep(0.02)
    raise AssertionError(f"table {table} stayed CREATING")


def indexed_table(ddb: Any) -> str:
    name = unique_name()
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "x", "AttributeType": "S"},
            {"AttributeName": "y", "AttributeType": "S"},
        ],
        LocalSecondaryIndexes=[
            {
                "IndexName": "by_x",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_y",
                "KeySchema": [{"AttributeName": "y", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 6},
            }
        ],
        ProvisionedThroughput={"ReadCapacityUnits": 7, "WriteCapacityUnits": 8},
    )
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    for i in range(30):
        ddb.put_item(
            TableName=name, Item={"pk": {"S": "p"}, "sk": {"N": str(i)}, "x": {"S": f"x{i}"}, "y": {"S": f"y{i % 3}"}}
        )
    return name


def backup(ddb: Any, table: str, name: str = "nightly") -> str:
    arn: str = ddb.create_backup(TableName=table, BackupName=name)["BackupDetails"]["BackupArn"]
    wait_available(ddb, arn)
    return arn


# ---- CreateBackup / DescribeBackup ----------------------------------------------------------------------------------
def test_create_backup_answers_creating_then_the_backup_is_available(ddb: Any) -> None:
    table = indexed_table(ddb)
    details = ddb.create_backup(TableName=table, BackupName="nightly.1")["BackupDetails"]
    matched = ARN.match(details["BackupArn"])
    assert matched is not None and matched["table"] == table
    assert details["BackupName"] == "nightly.1"
    assert details["BackupStatus"] == "CREATING"
    assert details["BackupType"] == "USER"
    assert "BackupExpiryDateTime" not in details
    described = wait_available(ddb, details["BackupArn"])
    got = described["BackupDetails"]
    assert got["BackupStatus"] == "AVAILABLE"
    assert got["BackupCreationDateTime"] == details["BackupCreationDateTime"]
    size = ddb.describe_table(TableName=table)["Table"]["TableSizeBytes"]
    assert got["BackupSizeBytes"] == size > 0


def test_describe_backup_shows_the_source_table_and_its_features(ddb: Any) -> None:
    table = indexed_table(ddb)
    ddb.update_time_to_live(TableName=table, TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})
    source = ddb.describe_table(TableName=table)["Table"]
    described = wait_available(ddb, ddb.create_backup(TableName=table, BackupName="bk1")["BackupDetails"]["BackupArn"])
    details = described["SourceTableDetails"]
    assert details == {
        "TableName": table,
        "TableId": source["TableId"],
        "TableArn": source["TableArn"],
        "TableSizeBytes": source["TableSizeBytes"],
        "KeySchema": source["KeySchema"],
        "TableCreationDateTime": source["CreationDateTime"],
        "ProvisionedThroughput": {"ReadCapacityUnits": 7, "WriteCapacityUnits": 8},
        "ItemCount": 30,
        "BillingMode": "PROVISIONED",
    }
    features = described["SourceTableFeatureDetails"]
    assert features["LocalSecondaryIndexes"] == [
        {
            "IndexName": "by_x",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }
    ]
    assert features["GlobalSecondaryIndexes"] == [
        {
            "IndexName": "by_y",
            "KeySchema": [{"AttributeName": "y", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 6},
        }
    ]
    assert features["TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED", "AttributeName": "ttl"}
    assert "StreamDescription" not in features and "SSEDescription" not in features


def test_create_backup_of_a_missing_table(ddb: Any) -> None:
    assert error_of(lambda: ddb.create_backup(TableName="no_such_table", BackupName="bk1")) == (
        "TableNotFoundException",
        "Table not found: no_such_table",
    )


def test_create_backup_of_a_table_being_created(clocked: ServerProcess) -> None:
    ddb = clocked.ddb
    name = unique_name()
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    if ddb.describe_table(TableName=name)["Table"]["TableStatus"] != "CREATING":
        pytest.fail("the table should stay CREATING until the clock moves")
    assert error_of(lambda: ddb.create_backup(TableName=name, BackupName="bk1")) == (
        "ContinuousBackupsUnavailableException",
        f"Backups are being enabled for the table: {name}. Please retry later",
    )


@pytest.mark.parametrize(
    ("name", "constraint"),
    [
        ("ab", "Member must have length greater than or equal to 3"),
        ("a b c", "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
    ],
)
def test_create_backup_validates_its_name(ddb: Any, table_s: str, name: str, constraint: str) -> None:
    assert error_of(lambda: ddb.create_backup(TableName=table_s, BackupName=name)) == (
        "ValidationException",
        f"1 validation error detected: Value at 'BackupName' failed to satisfy constraint: {constraint}",
    )


def test_describe_backup_that_does_not_exist(ddb: Any) -> None:
    assert error_of(lambda: ddb.describe_backup(BackupArn=MISSING_ARN)) == (
        "BackupNotFoundException",
        f"Backup not found: {MISSING_ARN}",
    )


def test_backups_are_kept_after_their_table_is_deleted(ddb: Any) -> None:
    table = create_table(ddb)
    ddb.put_item(TableName=table, Item={"pk": {"S": "kept"}})
    arn = backup(ddb, table)
    ddb.delete_table(TableName=table)
    ddb.get_waiter("table_not_exists").wait(TableName=table, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    assert ddb.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupStatus"] == "AVAILABLE"
    assert arn in [b["BackupArn"] for b in ddb.list_backups(TableName=table)["BackupSummaries"]]
    target = unique_name()
    ddb.restore_table_from_backup(TargetTableName=target, BackupArn=arn)
    wait_restored(ddb, target)
    assert ddb.get_item(TableName=target, Key={"pk": {"S": "kept"}})["Item"] == {"pk": {"S": "kept"}}


def test_a_backup_is_the_table_when_it_was_requested(ddb: Any) -> None:
    table = create_table(ddb)
    for i in range(200):
        ddb.put_item(TableName=table, Item={"pk": {"S": f"k{i}"}, "v": {"S": "before"}})
    arn = ddb.create_backup(TableName=table, BackupName="bk1")["BackupDetails"]["BackupArn"]
    for i in range(200):  # writes after the request never reach the backup, however soon they come
        ddb.put_item(TableName=table, Item={"pk": {"S": f"k{i}"}, "v": {"S": "after"}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "late"}})
    wait_available(ddb, arn)
    target = unique_name()
    ddb.restore_table_from_backup(TargetTableName=target, BackupArn=arn)
    wait_restored(ddb, target)
    items = ddb.scan(TableName=target)["Items"]
    assert len(items) == 200 and {i["v"]["S"] for i in items} == {"before"}


def test_a_backup_of_the_durable_store_is_the_table_when_it_was_requested(durable: ServerProcess) -> None:
    """On the durable store the image is copied by a process of its own, from the store's file as it was."""
    ddb = durable.ddb
    table = create_table(ddb)
    for start in range(0, 3000, 25):
        items = [
            {"PutRequest": {"Item": {"pk": {"S": f"k{i}"}, "v": {"S": "before"}}}} for i in range(start, start + 25)
        ]
        ddb.batch_write_item(RequestItems={table: items})
    arn = ddb.create_backup(TableName=table, BackupName="bk1")["BackupDetails"]["BackupArn"]
    for i in range(0, 3000, 7):  # writes right after the request, while the copier starts
        ddb.put_item(TableName=table, Item={"pk": {"S": f"k{i}"}, "v": {"S": "after"}})
        ddb.delete_item(TableName=table, Key={"pk": {"S": f"k{i + 1}"}})
    assert wait_available(ddb, arn)["BackupDetails"]["BackupSizeBytes"] > 0
    target = unique_name()
    ddb.restore_table_from_backup(TargetTableName=target, BackupArn=arn)
    assert wait_restored(ddb, target)["ItemCount"] == 3000
    items = ddb.get_paginator("scan").paginate(TableName=target).build_full_result()["Items"]
    assert len(items) == 3000 and {i["v"]["S"] for i in items} == {"before"}
    assert not [p.name for p in durable_backups(durable).iterdir() if p.name.endswith(".tmp")]


def test_a_backup_requested_right_after_another_holds_every_write_made_before_it(durable: ServerProcess) -> None:
    """Each image is fixed when its request is answered, however soon after another one: a second backup begun
    while the first one's copier starts still holds the writes acknowledged between the two requests."""
    ddb = durable.ddb
    table = create_table(ddb)
    ddb.put_item(TableName=table, Item={"pk": {"S": "first"}})
    first = ddb.create_backup(TableName=table, BackupName="first")["BackupDetails"]["BackupArn"]
    ddb.put_item(TableName=table, Item={"pk": {"S": "between"}})
    second = ddb.create_backup(TableName=table, BackupName="second")["BackupDetails"]["BackupArn"]
    ddb.put_item(TableName=table, Item={"pk": {"S": "after"}})
    for arn, expected in ((first, {"first"}), (second, {"first", "between"})):
        wait_available(ddb, arn)
        target = unique_name()
        ddb.restore_table_from_backup(TargetTableName=target, BackupArn=arn)
        wait_restored(ddb, target)
        assert {i["pk"]["S"] for i in ddb.scan(TableName=target)["Items"]} == expected


def durable_backups(server: ServerProcess) -> Path:
    """The backups directory of a server started on a data directory (its command line names it)."""
    args = server.process.args
    assert isinstance(args, list)
    return Path(args[args.index("--data-dir") + 1]) / "backups"


# ---- ListBackups ----------------------------------------------------------------------------------------------------
def test_list_backups_filters_and_pages(ddb: Any) -> None:
    table = create_table(ddb)
    other = create_table(ddb)
    arns = [backup(ddb, table, f"bk{i}") for i in range(3)]
    backup(ddb, other, "other")
    listed = ddb.list_backups(TableName=table)["BackupSummaries"]
    assert [b["BackupArn"] for b in listed] == arns
    summary = listed[0]
    source = ddb.describe_table(TableName=table)["Table"]
    assert set(summary) == {
        "TableName", "TableId", "TableArn", "BackupArn", "BackupName", "BackupCreationDateTime", "BackupStatus",
        "BackupType", "BackupSizeBytes",
    }  # fmt: skip
    assert (summary["TableName"], summary["TableId"], summary["TableArn"]) == (
        table,
        source["TableId"],
        source["TableArn"],
    )
    assert (summary["BackupName"], summary["BackupStatus"], summary["BackupType"]) == ("bk0", "AVAILABLE", "USER")

    first = ddb.list_backups(TableName=table, Limit=2)
    assert [b["BackupArn"] for b in first["BackupSummaries"]] == arns[:2]
    assert first["LastEvaluatedBackupArn"] == arns[1]
    rest = ddb.list_backups(TableName=table, Limit=2, ExclusiveStartBackupArn=arns[1])
    assert [b["BackupArn"] for b in rest["BackupSummaries"]] == arns[2:]
    assert "LastEvaluatedBackupArn" not in rest

    assert ddb.list_backups(TableName=table, BackupType="SYSTEM")["BackupSummaries"] == []
    assert ddb.list_backups(TableName=table, BackupType="AWS_BACKUP")["BackupSummaries"] == []
    assert len(ddb.list_backups(TableName=table, BackupType="ALL")["BackupSummaries"]) == 3
    everything = [b["BackupArn"] for b in ddb.list_backups()["BackupSummaries"]]
    assert set(arns) <= set(everything)
    ddb.delete_backup(BackupArn=arns[1])  # a page after a backup deleted since goes on after it
    after_deleted = ddb.list_backups(TableName=table, ExclusiveStartBackupArn=arns[1])["BackupSummaries"]
    assert [b["BackupArn"] for b in after_deleted] == arns[2:]


def test_list_backups_time_range(clocked: ServerProcess) -> None:
    ddb = clocked.ddb
    table = unique_name()
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    start = float(math.ceil(clocked.now()) + 10)  # a whole second: the wire carries times to the millisecond
    clocked.admin("/dynastore/clock", {"set": start})
    arns = []
    for i in range(3):
        arns.append(backup(ddb, table, f"bk{i}"))
        clocked.advance(10)
    listed = ddb.list_backups(TableName=table)["BackupSummaries"]
    assert [b["BackupCreationDateTime"].timestamp() for b in listed] == [start, start + 10, start + 20]
    ranged = ddb.list_backups(TableName=table, TimeRangeLowerBound=start + 10, TimeRangeUpperBound=start + 20)
    assert [b["BackupArn"] for b in ranged["BackupSummaries"]] == [arns[1]]  # lower bound inclusive, upper exclusive
    assert [b["BackupArn"] for b in ddb.list_backups(TimeRangeLowerBound=start + 11)["BackupSummaries"]] == [arns[2]]


def test_list_backups_validates_its_members(ddb: Any) -> None:
    assert error_of(lambda: ddb.list_backups(Limit=101)) == (
        "ValidationException",
        "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value less "
        "than or equal to 100",
    )
    assert error_of(lambda: ddb.list_backups(BackupType="OTHER")) == (
        "ValidationException",
        "1 validation error detected: Value at 'BackupType' failed to satisfy constraint: Member must satisfy enum "
        "value set: [USER, SYSTEM, AWS_BACKUP, ALL]",
    )


# ---- DeleteBackup ---------------------------------------------------------------------------------------------------
def test_delete_backup_answers_deleted_then_it_is_gone(ddb: Any) -> None:
    table = create_table(ddb)
    arn = backup(ddb, table)
    described = ddb.delete_backup(BackupArn=arn)["BackupDescription"]
    assert described["BackupDetails"]["BackupStatus"] == "DELETED"
    assert described["SourceTableDetails"]["TableName"] == table
    assert error_of(lambda: ddb.describe_backup(BackupArn=arn)) == (
        "BackupNotFoundException",
        f"Backup not found: {arn}",
    )
    assert error_of(lambda: ddb.delete_backup(BackupArn=arn)) == ("BackupNotFoundException", f"Backup not found: {arn}")
    assert ddb.list_backups(TableName=table)["BackupSummaries"] == []


# ---- RestoreTableFromBackup -----------------------------------------------------------------------------------------
def test_restore_brings_back_items_indexes_and_where_it_came_from(ddb: Any) -> None:
    table = indexed_table(ddb)
    arn = backup(ddb, table)
    target = unique_name()
    created = ddb.restore_table_from_backup(TargetTableName=target, BackupArn=arn)["TableDescription"]
    assert created["TableStatus"] == "CREATING"
    summary = created["RestoreSummary"]
    source = ddb.describe_table(TableName=table)["Table"]
    assert summary["SourceBackupArn"] == arn and summary["SourceTableArn"] == source["TableArn"]
    assert summary["RestoreInProgress"] is True
    restored = wait_restored(ddb, target)
    assert restored["RestoreSummary"]["RestoreInProgress"] is False
    assert restored["RestoreSummary"]["RestoreDateTime"] == summary["RestoreDateTime"]
    assert restored["ItemCount"] == 30 and restored["TableSizeBytes"] == source["TableSizeBytes"]
    assert restored["ProvisionedThroughput"]["ReadCapacityUnits"] == 7
    assert [i["IndexName"] for i in restored["LocalSecondaryIndexes"]] == ["by_x"]
    assert restored["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"
    assert restored["GlobalSecondaryIndexes"][0]["ItemCount"] == 30
    by_y = ddb.query(
        TableName=target,
        IndexName="by_y",
        KeyConditionExpression="y = :y",
        ExpressionAttributeValues={":y": {"S": "y1"}},
    )
    assert sorted(int(i["sk"]["N"]) for i in by_y["Items"]) == list(range(1, 30, 3))
    by_x = ddb.query(
        TableName=target,
        IndexName="by_x",
        KeyConditionExpression="pk = :p AND x = :x",
        ExpressionAttributeValues={":p": {"S": "p"}, ":x": {"S": "x7"}},
    )
    assert by_x["Items"][0]["sk"] == {"N": "7"}


def test_restore_overrides(ddb: Any) -> None:
    table = indexed_table(ddb)
    arn = backup(ddb, table)
    target = unique_name()
    ddb.restore_table_from_backup(
        TargetTableName=target,
        BackupArn=arn,
        BillingModeOverride="PAY_PER_REQUEST",
        GlobalSecondaryIndexOverride=[],
        LocalSecondaryIndexOverride=[],
        SSESpecificationOverride={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": "abcd1234"},
    )
    restored = wait_restored(ddb, target)
    assert restored["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert "GlobalSecondaryIndexes" not in restored and "LocalSecondaryIndexes" not in restored
    assert restored["SSEDescription"]["KMSMasterKeyArn"].endswith(":key/abcd1234")
    assert restored["ItemCount"] == 30

    provisioned = unique_name()
    ddb.restore_table_from_backup(
        TargetTableName=provisioned,
        BackupArn=arn,
        ProvisionedThroughputOverride={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
        GlobalSecondaryIndexOverride=[
            {
                "IndexName": "by_y",
                "KeySchema": [{"AttributeName": "y", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2},
            }
        ],
    )
    restored = wait_restored(ddb, provisioned)
    assert restored["ProvisionedThroughput"]["WriteCapacityUnits"] == 4
    assert restored["GlobalSecondaryIndexes"][0]["Projection"] == {"ProjectionType": "ALL"}
    item = ddb.query(
        TableName=provisioned,
        IndexName="by_y",
        KeyConditionExpression="y = :y",
        ExpressionAttributeValues={":y": {"S": "y0"}},
    )["Items"][0]
    assert set(item) == {"pk", "sk", "x", "y"}  # ALL, where the source projected KEYS_ONLY


def test_restore_errors(ddb: Any) -> None:
    table = create_table(ddb)
    arn = backup(ddb, table)
    assert error_of(lambda: ddb.restore_table_from_backup(TargetTableName=table, BackupArn=arn)) == (
        "TableAlreadyExistsException",
        f"Table already exists: {table}",
    )
    assert error_of(lambda: ddb.restore_table_from_backup(TargetTableName=unique_name(), BackupArn=MISSING_ARN)) == (
        "BackupNotFoundException",
        f"Backup not found: {MISSING_ARN}",
    )
    assert error_of(
        lambda: ddb.restore_table_from_backup(
            TargetTableName=unique_name(),
            BackupArn=arn,
            ProvisionedThroughputOverride={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
        )
    ) == (
        "ValidationException",
        "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be "
        "specified when BillingMode is PAY_PER_REQUEST",
    )


def test_restore_of_an_on_demand_backup_as_provisioned_needs_throughput(ddb: Any) -> None:
    arn = backup(ddb, create_table(ddb))
    assert error_of(
        lambda: ddb.restore_table_from_backup(
            TargetTableName=unique_name(), BackupArn=arn, BillingModeOverride="PROVISIONED"
        )
    ) == (
        "ValidationException",
        "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified "
        "when BillingMode is PROVISIONED",
    )
    target = unique_name()
    ddb.restore_table_from_backup(
        TargetTableName=target,
        BackupArn=arn,
        BillingModeOverride="PROVISIONED",
        ProvisionedThroughputOverride={"ReadCapacityUnits": 2, "WriteCapacityUnits": 3},
    )
    restored = wait_restored(ddb, target)
    assert restored["ProvisionedThroughput"]["ReadCapacityUnits"] == 2
    assert restored["BillingModeSummary"]["BillingMode"] == "PROVISIONED"


def test_restore_into_a_table_being_created(clocked: ServerProcess) -> None:
    ddb = clocked.ddb
    table = unique_name()
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    clocked.advance(60)
    arn = backup(ddb, table)
    busy = unique_name()
    ddb.create_table(
        TableName=busy,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    assert error_of(lambda: ddb.restore_table_from_backup(TargetTableName=busy, BackupArn=arn)) == (
        "TableInUseException",
        f"Table is being created or deleted: {busy}",
    )
    clocked.advance(60)


# ---- The AWS CLI ----------------------------------------------------------------------------------------------------
@needs_aws_cli
def test_the_aws_cli_commands(endpoint: str, ddb: Any, signed_as: dict[str, str] | None) -> None:
    table = create_table(ddb)
    ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "v": {"S": "1"}})
    code, out, err = aws(endpoint, "create-backup", "--table-name", table, "--backup-name", "cli", signed_as=signed_as)
    assert code == 0, err
    arn = json.loads(out)["BackupDetails"]["BackupArn"]
    wait_available(ddb, arn)
    code, out, err = aws(endpoint, "describe-backup", "--backup-arn", arn, signed_as=signed_as)
    assert code == 0, err
    described = json.loads(out)["BackupDescription"]
    assert described["BackupDetails"]["BackupStatus"] == "AVAILABLE"
    assert described["SourceTableDetails"]["TableName"] == table
    code, out, err = aws(endpoint, "list-backups", "--table-name", table, signed_as=signed_as)
    assert code == 0, err
    assert [summary["BackupArn"] for summary in json.loads(out)["BackupSummaries"]] == [arn]
    target = unique_name("clirestore")
    code, out, err = aws(
        endpoint, "restore-table-from-backup", "--target-table-name", target, "--backup-arn", arn, signed_as=signed_as
    )
    assert code == 0, err
    assert json.loads(out)["TableDescription"]["RestoreSummary"]["SourceBackupArn"] == arn
    wait_restored(ddb, target)
    assert ddb.get_item(TableName=target, Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}, "v": {"S": "1"}}
    code, out, err = aws(endpoint, "delete-backup", "--backup-arn", arn, signed_as=signed_as)
    assert code == 0, err
    assert json.loads(out)["BackupDescription"]["BackupDetails"]["BackupStatus"] == "DELETED"
    code, _, err = aws(endpoint, "describe-backup", "--backup-arn", arn, signed_as=signed_as)
    assert code != 0
    assert (
        "An error occurred (BackupNotFoundException) when calling the DescribeBackup operation: "
        f"Backup not found: {arn}" in err
    )
