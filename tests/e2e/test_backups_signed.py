"""Backups and restores are authorized like every other operation (docs/backups.md "On-demand backups"): a server
with ``--auth sigv4``, users with identity policies, boto3 clients signing with each user's key. A restore needs
RestoreTableFromBackup on the backup and the item actions DynamoDB requires on the new table (read and write), so
it is no way around item permissions. The backup command signs its requests like the other commands."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.e2e.conftest import BOTO_CONFIG
from tests.e2e.server_process import ServerProcess

OWNER = "111111111111"
REGION = "us-east-1"
MUSIC = f"arn:aws:dynamodb:{REGION}:{OWNER}:table/Music"
ITEM_ACTIONS = [
    "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:Query",
    "dynamodb:Scan", "dynamodb:BatchWriteItem",
]  # fmt: skip


def _document(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def _allow(actions: Any, resources: Any) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": actions, "Resource": resources}


POLICIES = {
    "builder": _document(_allow("dynamodb:*", "*")),
    "backer": _document(_allow(["dynamodb:CreateBackup", "dynamodb:DescribeBackup"], [MUSIC, f"{MUSIC}/backup/*"])),
    "lister": _document(_allow("dynamodb:ListBackups", "*")),
    "restore_only": _document(_allow("dynamodb:RestoreTableFromBackup", "*")),
    "restorer": _document(_allow(["dynamodb:RestoreTableFromBackup", *ITEM_ACTIONS], "*")),
    # held to the partition "a": every action, as long as the request's leading keys are all "a"
    "tenant": _document(
        {
            **_allow("dynamodb:*", "*"),
            "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["a"]}},
        }
    ),
}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dynastore", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, dict[str, dict[str, str]]]]:
    folder = tmp_path_factory.mktemp("backup-policies")
    store, policies = folder / "credentials.json", folder / "policies.json"
    keys = {}
    for name, document in POLICIES.items():
        added = _cli("users", "add", name, "--account", OWNER, "--users-file", str(store), "--json")
        assert added.returncode == 0, added.stderr
        keys[name] = json.loads(added.stdout)
        (folder / f"{name}.json").write_text(document)
        put = _cli("policies", "put", "--policies-file", str(policies), "--account-id", OWNER, "--user", name,
                   "--name", "main", "--file", str(folder / f"{name}.json"))  # fmt: skip
        assert put.returncode == 0, put.stderr
    server = ServerProcess(
        "--auth", "sigv4", "--users-file", str(store), "--policies-file", str(policies),
        env={"DYNASTORE_ACCOUNT_ID": OWNER, "DYNASTORE_REGION": REGION},
    )  # fmt: skip
    try:
        builder = _client(server, keys["builder"])
        builder.create_table(
            TableName="Music",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        builder.put_item(TableName="Music", Item={"pk": {"S": "a"}})
        yield server, keys
    finally:
        server.stop()


def _client(server: ServerProcess, key: dict[str, str]) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=server.url,
        region_name=REGION,
        aws_access_key_id=key["AccessKeyId"],
        aws_secret_access_key=key["SecretAccessKey"],
        config=BOTO_CONFIG,
    )


def _denial(call: Any) -> str:
    with pytest.raises(ClientError) as refused:
        call()
    assert refused.value.response["Error"]["Code"] == "AccessDeniedException"
    return str(refused.value.response["Error"]["Message"])


def _denied(user: str, action: str, resource: str) -> str:
    return (
        f"User: arn:aws:iam::{OWNER}:user/{user} is not authorized to perform: {action} on resource: {resource} "
        f"because no identity-based policy allows the {action} action"
    )


def _available(client: Any, arn: str) -> None:
    for _ in range(400):
        if client.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupStatus"] == "AVAILABLE":
            return
        time.sleep(0.02)
    raise AssertionError("the backup stayed CREATING")


def test_create_and_describe_backup_are_authorized_on_the_table_and_the_backup(world: Any) -> None:
    server, keys = world
    backer = _client(server, keys["backer"])
    arn = backer.create_backup(TableName="Music", BackupName="mine")["BackupDetails"]["BackupArn"]
    _available(backer, arn)
    lister = _client(server, keys["lister"])
    assert arn in [b["BackupArn"] for b in lister.list_backups()["BackupSummaries"]]
    assert _denial(lambda: lister.describe_backup(BackupArn=arn)) == _denied("lister", "dynamodb:DescribeBackup", arn)
    assert _denial(lambda: backer.delete_backup(BackupArn=arn)) == _denied("backer", "dynamodb:DeleteBackup", arn)
    assert _denial(lambda: backer.list_backups()) == _denied("backer", "dynamodb:ListBackups", "*")
    assert _denial(lambda: lister.create_backup(TableName="Music", BackupName="theirs")) == _denied(
        "lister", "dynamodb:CreateBackup", MUSIC
    )


def test_a_caller_held_to_its_partition_cannot_back_up_export_or_restore_the_whole_table(world: Any) -> None:
    """A backup, an export or a restore reads or writes every partition: under a condition on
    dynamodb:LeadingKeys it is refused, as a PartiQL statement that scans is (a second path to the items is no way
    around the condition)."""
    server, keys = world
    tenant = _client(server, keys["tenant"])
    assert tenant.get_item(TableName="Music", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    assert _denial(lambda: tenant.create_backup(TableName="Music", BackupName="all")) == _denied(
        "tenant", "dynamodb:CreateBackup", MUSIC
    )
    assert _denial(lambda: tenant.export_table_to_point_in_time(TableArn=MUSIC, S3Bucket="bucket")) == _denied(
        "tenant", "dynamodb:ExportTableToPointInTime", MUSIC
    )
    restore = lambda: tenant.restore_table_to_point_in_time(  # noqa: E731
        SourceTableName="Music", TargetTableName="Copy", UseLatestRestorableTime=True
    )
    assert _denial(restore) == _denied("tenant", "dynamodb:RestoreTableToPointInTime", MUSIC)


def test_a_restore_needs_the_item_actions_on_its_new_table(world: Any) -> None:
    server, keys = world
    builder = _client(server, keys["builder"])
    arn = builder.create_backup(TableName="Music", BackupName="forrestore")["BackupDetails"]["BackupArn"]
    _available(builder, arn)
    target = f"arn:aws:dynamodb:{REGION}:{OWNER}:table/Copy1"
    backer = _client(server, keys["backer"])
    assert _denial(lambda: backer.restore_table_from_backup(TargetTableName="Copy1", BackupArn=arn)) == _denied(
        "backer", "dynamodb:RestoreTableFromBackup", arn
    )
    restore_only = _client(server, keys["restore_only"])
    assert _denial(lambda: restore_only.restore_table_from_backup(TargetTableName="Copy1", BackupArn=arn)) == _denied(
        "restore_only", "dynamodb:PutItem", target
    )
    restorer = _client(server, keys["restorer"])
    created = restorer.restore_table_from_backup(TargetTableName="Copy1", BackupArn=arn)["TableDescription"]
    assert created["TableArn"] == target and created["RestoreSummary"]["SourceBackupArn"] == arn


def test_the_backup_command_signs_its_requests(world: Any) -> None:
    server, keys = world
    key = keys["backer"]
    done = _cli(
        "backup", "Music", "--name", "fromcli", "--endpoint", server.url, "--access-key-id", key["AccessKeyId"],
        "--secret-access-key", key["SecretAccessKey"], "--region", REGION,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    arn = done.stdout.strip()
    assert arn.startswith(f"{MUSIC}/backup/")
    assert _client(server, key).describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupName"] == (
        "fromcli"
    )
    unsigned = _cli("backup", "Music", "--endpoint", server.url, "--region", REGION, "--access-key-id", "AKIDNOBODY",
                    "--secret-access-key", "wrong")  # fmt: skip
    assert unsigned.returncode == 1
    assert unsigned.stderr.startswith("dynastore backup: error: UnrecognizedClientException: ")
