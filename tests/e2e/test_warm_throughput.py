"""WarmThroughput through boto3: configured at CreateTable / UpdateTable, described by DescribeTable (else the
baseline every table starts with), absent from a CreateTable response that did not configure it."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import unique_name

WAIT = {"Delay": 0.05, "MaxAttempts": 200}
BASELINE = {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}


def _create(ddb: Any, name: str, **extra: Any) -> dict[str, Any]:
    gsi: dict[str, Any] = {
        "IndexName": "by_g",
        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"},
        **extra.pop("gsi", {}),
    }
    created: dict[str, Any] = ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[gsi],
        **extra,
    )["TableDescription"]
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=WAIT)
    return created


def test_baseline_is_described_but_not_echoed_by_create(ddb: Any) -> None:
    name = unique_name()
    created = _create(ddb, name)
    assert "WarmThroughput" not in created
    assert "WarmThroughput" not in created["GlobalSecondaryIndexes"][0]
    table = ddb.describe_table(TableName=name)["Table"]
    assert table["WarmThroughput"] == BASELINE
    assert table["GlobalSecondaryIndexes"][0]["WarmThroughput"] == BASELINE
    deleted = ddb.delete_table(TableName=name)["TableDescription"]
    assert "WarmThroughput" not in deleted and "GlobalSecondaryIndexes" not in deleted


def test_configured_values_and_updates(ddb: Any) -> None:
    name = unique_name()
    created = _create(
        ddb,
        name,
        WarmThroughput={"ReadUnitsPerSecond": 13000},
        gsi={"WarmThroughput": {"WriteUnitsPerSecond": 5000}},
    )
    assert created["WarmThroughput"]["ReadUnitsPerSecond"] == 13000
    assert created["WarmThroughput"]["WriteUnitsPerSecond"] == 4000  # the unit left out keeps the baseline
    table = ddb.describe_table(TableName=name)["Table"]
    assert table["WarmThroughput"] == {**BASELINE, "ReadUnitsPerSecond": 13000}
    assert table["GlobalSecondaryIndexes"][0]["WarmThroughput"] == {**BASELINE, "WriteUnitsPerSecond": 5000}
    # UpdateTable with nothing but WarmThroughput is a change of its own
    updated = ddb.update_table(TableName=name, WarmThroughput={"WriteUnitsPerSecond": 6000})["TableDescription"]
    assert updated["WarmThroughput"]["WriteUnitsPerSecond"] == 6000
    table = ddb.describe_table(TableName=name)["Table"]
    assert table["WarmThroughput"] == {"ReadUnitsPerSecond": 13000, "WriteUnitsPerSecond": 6000, "Status": "ACTIVE"}
    # a GSI's through an Update action that carries nothing else
    ddb.update_table(
        TableName=name,
        GlobalSecondaryIndexUpdates=[
            {"Update": {"IndexName": "by_g", "WarmThroughput": {"ReadUnitsPerSecond": 20000}}}
        ],
    )
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=WAIT)
    gsi = ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]
    assert gsi["WarmThroughput"] == {"ReadUnitsPerSecond": 20000, "WriteUnitsPerSecond": 5000, "Status": "ACTIVE"}
    ddb.delete_table(TableName=name)
