"""Authorization of the point-in-time recovery operations (api/authorization.py): UpdateContinuousBackups and
DescribeContinuousBackups on their table; RestoreTableToPointInTime on its source table plus the item reads and
writes of the table it creates, as the Developer Guide's "Using IAM with DynamoDB backup and restore" requires."""

from __future__ import annotations

import pytest

from dynastore.api.authorization import checks_for
from dynastore.errors import PointInTimeRecoveryUnavailableException
from tests.unit.api.test_authorization import TABLE, Server, allow, denial

ON = {"PointInTimeRecoveryEnabled": True}
ITEM_ACTIONS = [
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:BatchWriteItem",
]


def test_continuous_backups_are_authorized_on_their_table() -> None:
    server = Server()
    server.table("Music")
    assert server.refused("DescribeContinuousBackups", TableName="Music") == denial(
        "dynamodb:DescribeContinuousBackups", TABLE + "Music"
    )
    assert server.refused("UpdateContinuousBackups", TableName="Music", PointInTimeRecoverySpecification=ON) == denial(
        "dynamodb:UpdateContinuousBackups", TABLE + "Music"
    )
    server.grant(allow("dynamodb:DescribeContinuousBackups", TABLE + "Music"))
    described = server.alice("DescribeContinuousBackups", TableName="Music")
    assert described["ContinuousBackupsDescription"]["ContinuousBackupsStatus"] == "ENABLED"


def test_a_restore_needs_the_restore_on_its_source_and_item_access_to_its_target() -> None:
    server = Server()
    server.table("Music")
    request = {"SourceTableName": "Music", "TargetTableName": "Copy", "UseLatestRestorableTime": True}
    checks = checks_for("RestoreTableToPointInTime", request, server.ctx, server.services)
    assert [(c.action, c.resource) for c in checks] == [
        ("dynamodb:RestoreTableToPointInTime", TABLE + "Music"),
        *[(action, TABLE + "Copy") for action in ITEM_ACTIONS],
    ]
    assert server.refused("RestoreTableToPointInTime", **request) == denial(
        "dynamodb:RestoreTableToPointInTime", TABLE + "Music"
    )
    server.grant(allow("dynamodb:RestoreTableToPointInTime", TABLE + "Music"))
    assert server.refused("RestoreTableToPointInTime", **request) == denial("dynamodb:PutItem", TABLE + "Copy")
    server.grant(allow(ITEM_ACTIONS, TABLE + "Copy"), name="Q")
    with pytest.raises(PointInTimeRecoveryUnavailableException):  # authorized: the operation itself answers
        server.alice("RestoreTableToPointInTime", **request)
