"""Global tables, version 2017.11.29 (legacy; docs/global-tables.md "The legacy operations"): CreateGlobalTable
of same-named tables of several regions of one server, DescribeGlobalTable, ListGlobalTables, UpdateGlobalTable,
DescribeGlobalTableSettings, UpdateGlobalTableSettings, and replication between the members."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.e2e.conftest import BOTO_CONFIG, error_of, session_dynastore, unique_name

pytestmark = pytest.mark.not_on_cluster("global tables are served by a single dynastore and its peers")

NEW_AND_OLD = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
INVALID = "One or more parameter values were invalid: "
EAST, WEST, CENTRAL = "us-east-1", "us-west-2", "eu-central-1"


@pytest.fixture(scope="module")
def clients(request: pytest.FixtureRequest) -> dict[str, Any]:
    """A client of the session's dynastore per region."""
    session: Any = session_dynastore(request)
    stand_in = {} if session.credentials is not None else {"aws_access_key_id": "AKIDEXAMPLE"}
    return {r: session.client(region_name=r, config=BOTO_CONFIG, **stand_in) for r in (EAST, WEST, CENTRAL)}


def make_table(ddb: Any, name: str, *, stream: dict[str, Any] | None = NEW_AND_OLD, **extra: Any) -> None:
    members: dict[str, Any] = {
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
        **extra,
    }
    if stream is not None:
        members["StreamSpecification"] = stream
    ddb.create_table(TableName=name, **members)
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})


def tables_in(clients: dict[str, Any], *regions: str, **extra: Any) -> str:
    name = unique_name("g")
    for region in regions:
        make_table(clients[region], name, **extra)
    return name


def group(*regions: str) -> list[dict[str, str]]:
    return [{"RegionName": r} for r in regions]


def global_table(clients: dict[str, Any], *regions: str, **extra: Any) -> str:
    """A legacy global table of ``regions``, every member ACTIVE (seeded)."""
    name = tables_in(clients, *regions, **extra)
    clients[regions[0]].create_global_table(GlobalTableName=name, ReplicationGroup=group(*regions))
    assert statuses_once_settled(clients[regions[0]], name) == ("ACTIVE", {r: "ACTIVE" for r in sorted(regions)})
    return name


def statuses(ddb: Any, name: str) -> tuple[str, dict[str, str]]:
    """DescribeGlobalTable's GlobalTableStatus and each member's ReplicaStatus."""
    desc = ddb.describe_global_table(GlobalTableName=name)["GlobalTableDescription"]
    return desc["GlobalTableStatus"], {r["RegionName"]: r["ReplicaStatus"] for r in desc["ReplicationGroup"]}


def statuses_once_settled(ddb: Any, name: str) -> tuple[str, dict[str, str]]:
    """``statuses`` once no member is CREATING any more (or as they are after 20 seconds)."""
    found = statuses(ddb, name)
    for _ in range(400):
        if "CREATING" not in found[1].values():
            break
        time.sleep(0.05)
        found = statuses(ddb, name)
    return found


def wait_item(ddb: Any, name: str, key: dict[str, Any]) -> dict[str, Any] | None:
    for _ in range(400):
        item: dict[str, Any] | None = ddb.get_item(TableName=name, Key=key, ConsistentRead=True).get("Item")
        if item is not None:
            return item
        time.sleep(0.05)
    return None


class TestCreateGlobalTable:
    def test_answers_the_description(self, clients: dict[str, Any]) -> None:
        name = tables_in(clients, EAST, WEST)
        answer = clients[EAST].create_global_table(GlobalTableName=name, ReplicationGroup=group(EAST, WEST))
        desc = answer["GlobalTableDescription"]
        assert desc["GlobalTableName"] == name
        assert desc["GlobalTableStatus"] == "CREATING"
        assert desc["GlobalTableArn"] == f"arn:aws:dynamodb::{_account(clients)}:global-table/{name}"
        assert desc["ReplicationGroup"] == [
            {"RegionName": EAST, "ReplicaStatus": "CREATING"},
            {"RegionName": WEST, "ReplicaStatus": "CREATING"},
        ]
        assert "CreationDateTime" in desc

    def test_the_members_are_creating_until_seeded_then_active(self, clients: dict[str, Any]) -> None:
        name = tables_in(clients, EAST, WEST, CENTRAL)
        clients[WEST].create_global_table(GlobalTableName=name, ReplicationGroup=group(EAST, WEST, CENTRAL))
        settled = ("ACTIVE", {CENTRAL: "ACTIVE", EAST: "ACTIVE", WEST: "ACTIVE"})
        assert statuses_once_settled(clients[CENTRAL], name) == settled
        settings = clients[EAST].describe_global_table_settings(GlobalTableName=name)["ReplicaSettings"]
        assert [(s["RegionName"], s["ReplicaStatus"]) for s in settings] == [
            (CENTRAL, "ACTIVE"),
            (EAST, "ACTIVE"),
            (WEST, "ACTIVE"),
        ]
        clients[CENTRAL].put_item(TableName=name, Item={"pk": {"S": "c"}})
        assert wait_item(clients[EAST], name, {"pk": {"S": "c"}}) == {"pk": {"S": "c"}}
        assert wait_item(clients[WEST], name, {"pk": {"S": "c"}}) == {"pk": {"S": "c"}}

    def test_members_show_the_legacy_version(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST)
        table = clients[WEST].describe_table(TableName=name)["Table"]
        assert table["GlobalTableVersion"] == "2017.11.29"
        assert [r["RegionName"] for r in table["Replicas"]] == [EAST]

    def test_a_missing_table(self, clients: dict[str, Any]) -> None:
        name = tables_in(clients, EAST)
        code, message = error_of(
            lambda: clients[EAST].create_global_table(GlobalTableName=name, ReplicationGroup=group(EAST, WEST))
        )
        assert code == "TableNotFoundException"
        assert message == f"Table not found: Table: '{name}' not found in region: '{WEST}'."

    def test_an_existing_global_table(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST)
        code, message = error_of(
            lambda: clients[WEST].create_global_table(GlobalTableName=name, ReplicationGroup=group(EAST, WEST))
        )
        assert code == "GlobalTableAlreadyExistsException"
        assert message == f"Global table already exists: Global table with name: '{name}' already exists."

    def test_a_table_without_both_images(self, clients: dict[str, Any]) -> None:
        name = unique_name("g")
        make_table(clients[EAST], name)
        make_table(clients[WEST], name, stream={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
        code, message = error_of(
            lambda: clients[EAST].create_global_table(GlobalTableName=name, ReplicationGroup=group(EAST, WEST))
        )
        assert code == "ValidationException"
        assert message == (
            f"Table: '{name}' in region: '{WEST}' must have DynamoDB Streams enabled with StreamViewType "
            "NEW_AND_OLD_IMAGES"
        )

    def test_a_table_holding_items(self, clients: dict[str, Any]) -> None:
        name = tables_in(clients, EAST, WEST)
        clients[WEST].put_item(TableName=name, Item={"pk": {"S": "x"}})
        code, message = error_of(
            lambda: clients[EAST].create_global_table(GlobalTableName=name, ReplicationGroup=group(EAST, WEST))
        )
        assert code == "ValidationException"
        assert message == f"Table: '{name}' in region: '{WEST}' is not empty"

    def test_another_key_schema(self, clients: dict[str, Any]) -> None:
        name = unique_name("g")
        make_table(clients[EAST], name)
        make_table(
            clients[WEST],
            name,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        )
        code, message = error_of(
            lambda: clients[EAST].create_global_table(GlobalTableName=name, ReplicationGroup=group(EAST, WEST))
        )
        assert code == "ValidationException"
        assert message == (
            f"Table: '{name}' in region: '{WEST}' does not have the same key schema and global secondary indexes "
            f"as in region: '{EAST}'"
        )

    def test_a_current_version_global_table(self, clients: dict[str, Any]) -> None:
        name = tables_in(clients, EAST)
        clients[EAST].update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": CENTRAL}}])
        code, message = error_of(
            lambda: clients[EAST].create_global_table(GlobalTableName=name, ReplicationGroup=group(EAST))
        )
        assert code == "ValidationException"
        assert message == f"Table: '{name}' in region: '{EAST}' is already a replica of a global table"

    def test_a_region_twice(self, clients: dict[str, Any]) -> None:
        name = tables_in(clients, EAST)
        code, message = error_of(
            lambda: clients[EAST].create_global_table(GlobalTableName=name, ReplicationGroup=group(EAST, EAST))
        )
        assert code == "ValidationException"
        assert message == f"{INVALID}Duplicate region in ReplicationGroup: {EAST}"

    def test_an_empty_group(self, clients: dict[str, Any]) -> None:
        code, message = error_of(lambda: clients[EAST].create_global_table(GlobalTableName="abc", ReplicationGroup=[]))
        assert code == "ValidationException"
        assert message == f"{INVALID}ReplicationGroup must name at least one region"

    def test_a_region_name_that_is_none(self, clients: dict[str, Any]) -> None:
        code, message = error_of(
            lambda: clients[EAST].create_global_table(GlobalTableName="abc", ReplicationGroup=group("nowhere"))
        )
        assert code == "ValidationException"
        assert message == f"{INVALID}Invalid region name: nowhere"

    def test_group_is_required(self, clients: dict[str, Any]) -> None:
        code, message = error_of(lambda: clients[EAST].create_global_table(GlobalTableName="abc"))
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'ReplicationGroup' failed to satisfy constraint: Member "
            "must not be null"
        )

    def test_replica_updates_of_a_member_are_refused(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST)
        code, message = error_of(
            lambda: clients[EAST].update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": CENTRAL}}])
        )
        assert code == "ValidationException"
        assert message == (
            f"Table: {name} is a replica of a version 2017.11.29 global table: its replicas change with "
            "UpdateGlobalTable"
        )


class TestReplication:
    def test_an_item_written_in_one_region_appears_in_the_others(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST, CENTRAL)
        clients[WEST].put_item(TableName=name, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
        for region in (EAST, CENTRAL):
            assert wait_item(clients[region], name, {"pk": {"S": "a"}}) == {"pk": {"S": "a"}, "v": {"N": "1"}}

    def test_a_member_removed_no_longer_receives(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST, CENTRAL)
        clients[EAST].update_global_table(GlobalTableName=name, ReplicaUpdates=[{"Delete": {"RegionName": WEST}}])
        clients[EAST].put_item(TableName=name, Item={"pk": {"S": "late"}})
        # Once a remaining member has it, the round that shipped it is over: the removed one never gets it.
        assert wait_item(clients[CENTRAL], name, {"pk": {"S": "late"}}) == {"pk": {"S": "late"}}
        assert "Item" not in clients[WEST].get_item(TableName=name, Key={"pk": {"S": "late"}}, ConsistentRead=True)
        west = clients[WEST].describe_table(TableName=name)["Table"]
        assert "GlobalTableVersion" not in west and "Replicas" not in west
        east = clients[EAST].describe_table(TableName=name)["Table"]
        assert [r["RegionName"] for r in east["Replicas"]] == [CENTRAL]

    def test_a_member_table_deleted_leaves_the_set(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST, CENTRAL)
        # Once replication from the member flows, its deletion is announced to the others.
        clients[WEST].put_item(TableName=name, Item={"pk": {"S": "w"}})
        assert wait_item(clients[EAST], name, {"pk": {"S": "w"}}) == {"pk": {"S": "w"}}
        clients[WEST].delete_table(TableName=name)
        for _ in range(400):
            replicas = clients[EAST].describe_table(TableName=name)["Table"].get("Replicas", [])
            if [r["RegionName"] for r in replicas] == [CENTRAL]:
                break
            time.sleep(0.05)
        assert [r["RegionName"] for r in replicas] == [CENTRAL]
        group = clients[EAST].describe_global_table(GlobalTableName=name)["GlobalTableDescription"]["ReplicationGroup"]
        assert [r["RegionName"] for r in group] == [CENTRAL, EAST]


class TestDescribeAndList:
    def test_describe_from_any_region(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST)
        created = clients[EAST].describe_global_table(GlobalTableName=name)["GlobalTableDescription"]
        seen = clients[CENTRAL].describe_global_table(GlobalTableName=name)["GlobalTableDescription"]
        assert seen == created
        assert [r["RegionName"] for r in seen["ReplicationGroup"]] == [EAST, WEST]

    def test_describe_a_missing_one(self, clients: dict[str, Any]) -> None:
        name = tables_in(clients, EAST)
        for call in (clients[EAST].describe_global_table, clients[EAST].describe_global_table_settings):
            code, message = error_of(lambda call=call: call(GlobalTableName=name))  # type: ignore[misc]
            assert code == "GlobalTableNotFoundException"
            assert message == f"Global table not found: Global table with name: '{name}' does not exist."

    def test_list_pages_and_filters(self, clients: dict[str, Any]) -> None:
        first = global_table(clients, EAST, CENTRAL)
        second = global_table(clients, EAST, WEST)
        names = sorted([first, second])
        listed = clients[EAST].list_global_tables(Limit=100)["GlobalTables"]
        mine = [t for t in listed if t["GlobalTableName"] in names]
        assert [t["GlobalTableName"] for t in mine] == names
        by_name = {t["GlobalTableName"]: t["ReplicationGroup"] for t in mine}
        assert by_name[first] == [{"RegionName": CENTRAL}, {"RegionName": EAST}]
        in_west = [t["GlobalTableName"] for t in clients[EAST].list_global_tables(RegionName=WEST)["GlobalTables"]]
        assert second in in_west and first not in in_west
        page = clients[EAST].list_global_tables(Limit=1, ExclusiveStartGlobalTableName=names[0][:-1])
        assert [t["GlobalTableName"] for t in page["GlobalTables"]] == [names[0]]
        assert page["LastEvaluatedGlobalTableName"] == names[0]

    def test_describe_settings(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST, BillingMode="PROVISIONED", ProvisionedThroughput=_capacity(5, 7))
        answer = clients[WEST].describe_global_table_settings(GlobalTableName=name)
        assert answer["GlobalTableName"] == name
        assert answer["ReplicaSettings"] == [
            {
                "RegionName": region,
                "ReplicaStatus": "ACTIVE",
                "ReplicaBillingModeSummary": {"BillingMode": "PROVISIONED"},
                "ReplicaProvisionedReadCapacityUnits": 5,
                "ReplicaProvisionedWriteCapacityUnits": 7,
            }
            for region in (EAST, WEST)
        ]


class TestUpdateGlobalTable:
    def test_create_a_replica(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST)
        make_table(clients[CENTRAL], name)
        answer = clients[WEST].update_global_table(
            GlobalTableName=name, ReplicaUpdates=[{"Create": {"RegionName": CENTRAL}}]
        )
        desc = answer["GlobalTableDescription"]
        assert desc["GlobalTableStatus"] == "UPDATING"
        assert desc["ReplicationGroup"] == [
            {"RegionName": CENTRAL, "ReplicaStatus": "CREATING"},
            {"RegionName": EAST, "ReplicaStatus": "ACTIVE"},
            {"RegionName": WEST, "ReplicaStatus": "ACTIVE"},
        ]
        settled = ("ACTIVE", {CENTRAL: "ACTIVE", EAST: "ACTIVE", WEST: "ACTIVE"})
        assert statuses_once_settled(clients[EAST], name) == settled
        clients[CENTRAL].put_item(TableName=name, Item={"pk": {"S": "c"}})
        assert wait_item(clients[EAST], name, {"pk": {"S": "c"}}) == {"pk": {"S": "c"}}
        assert wait_item(clients[WEST], name, {"pk": {"S": "c"}}) == {"pk": {"S": "c"}}

    def test_create_an_existing_replica(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST)
        code, message = error_of(
            lambda: clients[EAST].update_global_table(
                GlobalTableName=name, ReplicaUpdates=[{"Create": {"RegionName": WEST}}]
            )
        )
        assert code == "ReplicaAlreadyExistsException"
        assert message == f"Replica already exists in region: '{WEST}' of global table: '{name}'."

    def test_create_where_there_is_no_table(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST)
        code, message = error_of(
            lambda: clients[EAST].update_global_table(
                GlobalTableName=name, ReplicaUpdates=[{"Create": {"RegionName": CENTRAL}}]
            )
        )
        assert code == "TableNotFoundException"
        assert message == f"Table not found: Table: '{name}' not found in region: '{CENTRAL}'."

    def test_create_once_the_global_table_holds_items(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST)
        make_table(clients[CENTRAL], name)
        clients[EAST].put_item(TableName=name, Item={"pk": {"S": "x"}})
        code, message = error_of(
            lambda: clients[EAST].update_global_table(
                GlobalTableName=name, ReplicaUpdates=[{"Create": {"RegionName": CENTRAL}}]
            )
        )
        assert code == "ValidationException"
        assert message == f"Table: '{name}' in region: '{EAST}' is not empty"

    def test_updates_are_made_together_or_not_at_all(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST)
        make_table(clients[CENTRAL], name)
        updates = [{"Create": {"RegionName": CENTRAL}}, {"Delete": {"RegionName": "eu-west-1"}}]
        code, message = error_of(
            lambda: clients[EAST].update_global_table(GlobalTableName=name, ReplicaUpdates=updates)
        )
        assert code == "ReplicaNotFoundException"
        assert message == f"Replica not found in region: 'eu-west-1' of global table: '{name}'."
        group = clients[EAST].describe_global_table(GlobalTableName=name)["GlobalTableDescription"]["ReplicationGroup"]
        assert [r["RegionName"] for r in group] == [EAST, WEST]
        assert "GlobalTableVersion" not in clients[CENTRAL].describe_table(TableName=name)["Table"]

    def test_delete_a_region_that_is_no_replica(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST)
        code, message = error_of(
            lambda: clients[EAST].update_global_table(
                GlobalTableName=name, ReplicaUpdates=[{"Delete": {"RegionName": CENTRAL}}]
            )
        )
        assert code == "ReplicaNotFoundException"
        assert message == f"Replica not found in region: '{CENTRAL}' of global table: '{name}'."

    def test_a_missing_global_table(self, clients: dict[str, Any]) -> None:
        code, message = error_of(
            lambda: clients[EAST].update_global_table(
                GlobalTableName="nothing_here", ReplicaUpdates=[{"Delete": {"RegionName": WEST}}]
            )
        )
        assert code == "GlobalTableNotFoundException"
        assert message == "Global table not found: Global table with name: 'nothing_here' does not exist."

    def test_an_update_without_action(self, clients: dict[str, Any]) -> None:
        code, message = error_of(lambda: clients[EAST].update_global_table(GlobalTableName="abc", ReplicaUpdates=[{}]))
        assert code == "ValidationException"
        assert message == f"{INVALID}Exactly one of Create or Delete must be given in each ReplicaUpdate"


PROVISIONED = {"BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 7}}
GSI = {
    "IndexName": "by_g",
    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"},
    "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 3},
}
WITH_GSI = {
    **PROVISIONED,
    "AttributeDefinitions": [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "g", "AttributeType": "S"},
    ],
    "GlobalSecondaryIndexes": [GSI],
}


def capacities(answer: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Region -> (read, write) of a ReplicaSettings answer."""
    return {
        r["RegionName"]: (r["ReplicaProvisionedReadCapacityUnits"], r["ReplicaProvisionedWriteCapacityUnits"])
        for r in answer["ReplicaSettings"]
    }


class TestUpdateGlobalTableSettings:
    def test_write_capacity_is_shared_and_read_capacity_each_replicas(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST, **PROVISIONED)
        answer = clients[EAST].update_global_table_settings(
            GlobalTableName=name,
            GlobalTableProvisionedWriteCapacityUnits=9,
            ReplicaSettingsUpdate=[{"RegionName": WEST, "ReplicaProvisionedReadCapacityUnits": 3}],
        )
        assert capacities(answer) == {EAST: (5, 9), WEST: (3, 9)}
        described = clients[WEST].describe_global_table_settings(GlobalTableName=name)
        assert capacities(described) == {EAST: (5, 9), WEST: (3, 9)}

    def test_index_write_capacity_and_read_capacity(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST, **WITH_GSI)
        answer = clients[WEST].update_global_table_settings(
            GlobalTableName=name,
            GlobalTableGlobalSecondaryIndexSettingsUpdate=[{"IndexName": "by_g", "ProvisionedWriteCapacityUnits": 4}],
            ReplicaSettingsUpdate=[
                {
                    "RegionName": EAST,
                    "ReplicaGlobalSecondaryIndexSettingsUpdate": [
                        {"IndexName": "by_g", "ProvisionedReadCapacityUnits": 6}
                    ],
                }
            ],
        )
        indexes = {r["RegionName"]: r["ReplicaGlobalSecondaryIndexSettings"] for r in answer["ReplicaSettings"]}
        assert indexes == {
            EAST: [
                {"IndexName": "by_g", "IndexStatus": "ACTIVE", "ProvisionedReadCapacityUnits": 6,
                 "ProvisionedWriteCapacityUnits": 4}
            ],
            WEST: [
                {"IndexName": "by_g", "IndexStatus": "ACTIVE", "ProvisionedReadCapacityUnits": 2,
                 "ProvisionedWriteCapacityUnits": 4}
            ],
        }  # fmt: skip

    def test_billing_mode_of_every_replica(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST, **PROVISIONED)
        answer = clients[EAST].update_global_table_settings(
            GlobalTableName=name, GlobalTableBillingMode="PAY_PER_REQUEST"
        )
        modes = {r["RegionName"]: r["ReplicaBillingModeSummary"]["BillingMode"] for r in answer["ReplicaSettings"]}
        assert modes == {EAST: "PAY_PER_REQUEST", WEST: "PAY_PER_REQUEST"}
        table = clients[WEST].describe_table(TableName=name)["Table"]
        assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"

    def test_a_replicas_table_class(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST, **PROVISIONED)
        answer = clients[EAST].update_global_table_settings(
            GlobalTableName=name,
            ReplicaSettingsUpdate=[{"RegionName": WEST, "ReplicaTableClass": "STANDARD_INFREQUENT_ACCESS"}],
        )
        classes = {
            r["RegionName"]: r.get("ReplicaTableClassSummary", {}).get("TableClass") for r in answer["ReplicaSettings"]
        }
        assert classes == {EAST: None, WEST: "STANDARD_INFREQUENT_ACCESS"}
        table = clients[WEST].describe_table(TableName=name)["Table"]
        assert table["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"

    def test_auto_scaling_is_refused(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST, **PROVISIONED)
        code, message = error_of(
            lambda: clients[EAST].update_global_table_settings(
                GlobalTableName=name,
                GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate={"MinimumUnits": 1, "MaximumUnits": 5},
            )
        )
        assert code == "ValidationException"
        assert message == (
            f"Auto scaling is not supported by dynastore: table: {name} keeps the capacity UpdateTable sets"
        )

    def test_a_region_that_is_no_replica(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST, **PROVISIONED)
        code, message = error_of(
            lambda: clients[EAST].update_global_table_settings(
                GlobalTableName=name,
                ReplicaSettingsUpdate=[{"RegionName": CENTRAL, "ReplicaProvisionedReadCapacityUnits": 3}],
            )
        )
        assert code == "ReplicaNotFoundException"
        assert message == f"Replica not found in region: '{CENTRAL}' of global table: '{name}'."

    def test_an_index_that_is_none(self, clients: dict[str, Any]) -> None:
        name = global_table(clients, EAST, WEST, **PROVISIONED)
        code, message = error_of(
            lambda: clients[EAST].update_global_table_settings(
                GlobalTableName=name,
                GlobalTableGlobalSecondaryIndexSettingsUpdate=[
                    {"IndexName": "nope", "ProvisionedWriteCapacityUnits": 4}
                ],
            )
        )
        assert code == "IndexNotFoundException"
        assert message == f"Index: 'nope' not found on table: '{name}' in region: '{EAST}'."

    def test_a_missing_global_table(self, clients: dict[str, Any]) -> None:
        code, message = error_of(
            lambda: clients[EAST].update_global_table_settings(
                GlobalTableName="nothing_here", GlobalTableProvisionedWriteCapacityUnits=3
            )
        )
        assert code == "GlobalTableNotFoundException"
        assert message == "Global table not found: Global table with name: 'nothing_here' does not exist."


def _capacity(read: int, write: int) -> dict[str, int]:
    return {"ReadCapacityUnits": read, "WriteCapacityUnits": write}


def _account(clients: dict[str, Any]) -> str:
    """The caller's account, as a table's ARN names it."""
    name = tables_in(clients, EAST)
    table_arn: str = clients[EAST].describe_table(TableName=name)["Table"]["TableArn"]
    return table_arn.split(":")[4]
