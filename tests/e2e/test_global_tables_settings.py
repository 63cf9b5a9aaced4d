"""Global tables end to end: the settings DynamoDB keeps the same on every replica (version 2019.11.21: GSIs
created or deleted, billing mode, write capacity, time to live, on-demand and warm throughput) reach the other
region when they are changed in one, through UpdateTable / UpdateTimeToLive; those each replica keeps for
itself (read capacity, deletion protection, tags) do not. One server serves us-east-1 and us-west-2."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.test_global_tables_replication import EAST, WEST, client, create_global_table, eventually

server = server_fixture("--manual-clock", "--region", EAST)

GSI = {
    "IndexName": "by_g",
    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"},
}


@pytest.fixture
def regions(server: ServerProcess) -> tuple[Any, Any]:
    return client(server, EAST), client(server, WEST)


def described(ddb: Any, table: str) -> dict[str, Any]:
    found: dict[str, Any] = ddb.describe_table(TableName=table)["Table"]
    return found


def indexes(ddb: Any, table: str) -> dict[str, str]:
    """Index name -> IndexStatus of the table's GSIs."""
    return {g["IndexName"]: g["IndexStatus"] for g in described(ddb, table).get("GlobalSecondaryIndexes", [])}


def time_to_live(ddb: Any, table: str) -> dict[str, Any]:
    found: dict[str, Any] = ddb.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
    return found


def test_time_to_live_turned_on_or_off_in_one_region_is_so_in_the_other(regions: tuple[Any, Any]) -> None:
    east, west = regions
    table = create_global_table(east, west)
    east.update_time_to_live(TableName=table, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    enabled = {"TimeToLiveStatus": "ENABLED", "AttributeName": "exp"}
    assert eventually(lambda: time_to_live(west, table), lambda found: found == enabled) == enabled

    west.update_time_to_live(TableName=table, TimeToLiveSpecification={"Enabled": False, "AttributeName": "exp"})
    disabled = {"TimeToLiveStatus": "DISABLED"}
    assert eventually(lambda: time_to_live(east, table), lambda found: found == disabled) == disabled


def test_a_gsi_created_in_one_region_is_created_and_backfilled_in_the_other_and_deleted_with_it(
    regions: tuple[Any, Any],
) -> None:
    east, west = regions
    table = create_global_table(east, west, seed=0)
    east.put_item(TableName=table, Item={"pk": {"S": "a"}, "g": {"S": "green"}})
    east.update_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": GSI}],
    )
    assert eventually(lambda: indexes(west, table), lambda found: found == {"by_g": "ACTIVE"}) == {"by_g": "ACTIVE"}
    page = eventually(
        lambda: west.query(
            TableName=table,
            IndexName="by_g",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": "green"}},
        )["Items"],
        lambda items: len(items) == 1,
    )
    assert page == [{"pk": {"S": "a"}, "g": {"S": "green"}}]
    assert indexes(east, table) == {"by_g": "ACTIVE"}

    west.update_table(TableName=table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by_g"}}])
    assert eventually(lambda: indexes(east, table), lambda found: found == {}) == {}
    assert eventually(lambda: indexes(west, table), lambda found: found == {}) == {}


def test_billing_mode_and_write_capacity_follow_and_read_capacity_and_own_settings_stay(
    regions: tuple[Any, Any],
) -> None:
    east, west = regions
    table = create_global_table(east, west)
    east.update_table(
        TableName=table,
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 7},
    )

    def throughput(ddb: Any) -> tuple[str, int, int]:
        found = described(ddb, table)
        units = found["ProvisionedThroughput"]
        return found["BillingModeSummary"]["BillingMode"], units["ReadCapacityUnits"], units["WriteCapacityUnits"]

    assert eventually(lambda: throughput(west), lambda found: found == ("PROVISIONED", 5, 7)) == ("PROVISIONED", 5, 7)

    west.update_table(TableName=table, ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 9})
    assert eventually(lambda: throughput(east), lambda found: found == ("PROVISIONED", 5, 9)) == ("PROVISIONED", 5, 9)
    assert throughput(west) == ("PROVISIONED", 3, 9)  # each replica's read capacity is its own

    east.update_table(TableName=table, DeletionProtectionEnabled=True)
    east.tag_resource(ResourceArn=described(east, table)["TableArn"], Tags=[{"Key": "team", "Value": "east"}])
    west.update_table(TableName=table, BillingMode="PAY_PER_REQUEST")
    assert eventually(
        lambda: described(east, table)["BillingModeSummary"]["BillingMode"], lambda m: m == "PAY_PER_REQUEST"
    ) == ("PAY_PER_REQUEST")
    assert described(west, table)["DeletionProtectionEnabled"] is False
    assert west.list_tags_of_resource(ResourceArn=described(west, table)["TableArn"])["Tags"] == []
    east.update_table(TableName=table, DeletionProtectionEnabled=False)


def test_on_demand_and_warm_throughput_changed_in_one_region_reach_the_other(regions: tuple[Any, Any]) -> None:
    east, west = regions
    table = create_global_table(east, west)
    east.update_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": GSI}],
    )
    assert eventually(lambda: indexes(west, table), lambda found: found == {"by_g": "ACTIVE"}) == {"by_g": "ACTIVE"}

    def throughputs(ddb: Any) -> tuple[Any, ...]:
        found = described(ddb, table)
        gsi = found["GlobalSecondaryIndexes"][0]
        table_warm = {k: v for k, v in found["WarmThroughput"].items() if k != "Status"}
        gsi_warm = {k: v for k, v in gsi["WarmThroughput"].items() if k != "Status"}
        return found.get("OnDemandThroughput"), table_warm, gsi.get("OnDemandThroughput"), gsi_warm

    east.update_table(TableName=table, OnDemandThroughput={"MaxReadRequestUnits": 400, "MaxWriteRequestUnits": 300})
    east.update_table(TableName=table, WarmThroughput={"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 6000})
    east.update_table(
        TableName=table,
        GlobalSecondaryIndexUpdates=[
            {"Update": {"IndexName": "by_g", "OnDemandThroughput": {"MaxWriteRequestUnits": 50}}}
        ],
    )
    east.update_table(
        TableName=table,
        GlobalSecondaryIndexUpdates=[
            {"Update": {"IndexName": "by_g", "WarmThroughput": {"ReadUnitsPerSecond": 14000}}}
        ],
    )
    expected = eventually(lambda: throughputs(east), lambda found: found[3]["ReadUnitsPerSecond"] == 14000)
    assert expected == (
        {"MaxReadRequestUnits": 400, "MaxWriteRequestUnits": 300},
        {"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 6000},
        {"MaxWriteRequestUnits": 50},
        {"ReadUnitsPerSecond": 14000, "WriteUnitsPerSecond": 4000},
    )
    assert eventually(lambda: throughputs(west), lambda found: found == expected) == expected

    west.update_table(TableName=table, OnDemandThroughput={"MaxWriteRequestUnits": 900})
    changed = eventually(lambda: throughputs(west), lambda found: found[0]["MaxWriteRequestUnits"] == 900)
    assert eventually(lambda: throughputs(east), lambda found: found == changed) == changed
