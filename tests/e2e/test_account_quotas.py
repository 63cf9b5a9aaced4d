"""Provisioned throughput above the per-table quota that DescribeLimits reports is refused, not served."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import create_table, error_of, unique_name

KEYS = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
}


def quota_message(member: str, value: int) -> str:
    return (
        f"Subscriber limit exceeded: {member} of {value} is more than the per-table maximum of 40000 (DescribeLimits)"
    )


def test_describe_limits_reports_the_quota(ddb: Any) -> None:
    limits = ddb.describe_limits()
    assert (limits["TableMaxReadCapacityUnits"], limits["TableMaxWriteCapacityUnits"]) == (40000, 40000)


@pytest.mark.parametrize(
    ("throughput", "member", "value"),
    [((40001, 5), "ReadCapacityUnits", 40001), ((5, 10**12), "WriteCapacityUnits", 10**12)],
)
def test_create_table_over_quota(ddb: Any, throughput: tuple[int, int], member: str, value: int) -> None:
    name = unique_name()
    pt = {"ReadCapacityUnits": throughput[0], "WriteCapacityUnits": throughput[1]}
    assert error_of(lambda: ddb.create_table(TableName=name, ProvisionedThroughput=pt, **KEYS)) == (
        "LimitExceededException",
        quota_message(member, value),
    )
    assert name not in ddb.list_tables()["TableNames"]


def test_create_table_at_quota_is_accepted(ddb: Any) -> None:
    name = unique_name()
    pt = {"ReadCapacityUnits": 40000, "WriteCapacityUnits": 40000}
    table = ddb.create_table(TableName=name, ProvisionedThroughput=pt, **KEYS)["TableDescription"]
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 40000


def test_update_table_and_gsi_over_quota(ddb: Any) -> None:
    name = create_table(ddb)
    ddb.update_table(
        TableName=name,
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
    )
    pt = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 80000}
    assert error_of(lambda: ddb.update_table(TableName=name, ProvisionedThroughput=pt)) == (
        "LimitExceededException",
        quota_message("WriteCapacityUnits", 80000),
    )
    create = {
        "IndexName": "by_g",
        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
        "ProvisionedThroughput": {"ReadCapacityUnits": 50000, "WriteCapacityUnits": 5},
    }
    definitions = [{"AttributeName": "g", "AttributeType": "S"}]
    assert error_of(
        lambda: ddb.update_table(
            TableName=name, AttributeDefinitions=definitions, GlobalSecondaryIndexUpdates=[{"Create": create}]
        )
    ) == ("LimitExceededException", quota_message("ReadCapacityUnits", 50000))
    table = ddb.describe_table(TableName=name)["Table"]
    assert table["ProvisionedThroughput"]["WriteCapacityUnits"] == 5
    assert "GlobalSecondaryIndexes" not in table
