"""The API of global tables (docs/global-tables.md): UpdateTable's ReplicaUpdates, MultiRegionConsistency and
GlobalTableWitnessUpdates, DescribeTable's Replicas and GlobalTableVersion, DescribeTableReplicaAutoScaling /
UpdateTableReplicaAutoScaling and the legacy (2017.11.29) operations dynastore serves. Replication itself is
tests/e2e/test_global_tables.py's; multi-Region strong consistency's control plane is
tests/e2e/test_global_tables_strong_api.py's."""

from __future__ import annotations

import re
import time
from functools import partial
from typing import Any

import pytest

from tests.e2e.conftest import (
    BOTO_CONFIG,
    Send,
    create_provisioned_table_with_gsi,
    create_table,
    error_of,
    session_dynastore,
    unique_name,
)

pytestmark = pytest.mark.not_on_cluster("global tables are served by a single dynastore and its peers")

NEW_AND_OLD = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
INVALID = "One or more parameter values were invalid: "


@pytest.fixture(scope="module")
def ddb_west(request: pytest.FixtureRequest) -> Any:
    """A client of the same dynastore in us-west-2: the region the replicas of these tests live in."""
    session: Any = session_dynastore(request)
    stand_in = {} if session.credentials is not None else {"aws_access_key_id": "AKIDEXAMPLE"}
    return session.client(region_name="us-west-2", config=BOTO_CONFIG, **stand_in)


@pytest.fixture(scope="module")
def ddb_eu(request: pytest.FixtureRequest) -> Any:
    """A client of the same dynastore in eu-west-1: a third region of a set."""
    session: Any = session_dynastore(request)
    stand_in = {} if session.credentials is not None else {"aws_access_key_id": "AKIDEXAMPLE"}
    return session.client(region_name="eu-west-1", config=BOTO_CONFIG, **stand_in)


def streamed_table(ddb: Any, **extra: Any) -> str:
    return create_table(ddb, "S", StreamSpecification=NEW_AND_OLD, **extra)


def replica_update(ddb: Any, name: str, *updates: dict[str, Any], **extra: Any) -> Any:
    return ddb.update_table(TableName=name, ReplicaUpdates=list(updates), **extra)


def create_in(region: str, **members: Any) -> dict[str, Any]:
    return {"Create": {"RegionName": region, **members}}


def wait_replica(ddb: Any, name: str, region: str, status: str) -> dict[str, Any]:
    """DescribeTable until the replica in ``region`` has ``status`` and the table is ACTIVE."""
    table: dict[str, Any] = {}
    for _ in range(400):
        table = ddb.describe_table(TableName=name)["Table"]
        found = [r for r in table.get("Replicas", []) if r["RegionName"] == region]
        if found and found[0]["ReplicaStatus"] == status and table["TableStatus"] == "ACTIVE":
            return table
        time.sleep(0.05)
    raise AssertionError(f"replica {region} of {name} never became {status}: {table.get('Replicas')}")


def own_settings(client: Any, name: str) -> tuple[int, int, str | None]:
    """A replica's table as its own region describes it: its read capacity, its GSI's, its table class."""
    table = client.describe_table(TableName=name)["Table"]
    gsi = table["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"]
    table_class = table.get("TableClassSummary", {}).get("TableClass")
    return table["ProvisionedThroughput"]["ReadCapacityUnits"], gsi, table_class


def listing(client: Any, name: str, region: str) -> dict[str, Any]:
    """How the client's region lists the replica of ``region``."""
    replicas = client.describe_table(TableName=name)["Table"]["Replicas"]
    return next(r for r in replicas if r["RegionName"] == region)


def settled(read: Any, expected: Any) -> bool:
    """Whether ``read()`` comes to equal ``expected`` (replication is asynchronous); the last value is shown."""
    found = None
    for _ in range(400):
        found = read()
        if found == expected:
            return True
        time.sleep(0.05)
    raise AssertionError(f"{found!r} never became {expected!r}")


class TestValidation:
    def test_consistency_outside_the_enum(self, ddb: Any, table_s: str) -> None:
        code, message = error_of(lambda: ddb.update_table(TableName=table_s, MultiRegionConsistency="SOMETIMES"))
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'MultiRegionConsistency' failed to satisfy "
            "constraint: Member must satisfy enum value set: [EVENTUAL, STRONG]"
        )

    def test_empty_replica_updates(self, ddb: Any, table_s: str) -> None:
        code, message = error_of(lambda: ddb.update_table(TableName=table_s, ReplicaUpdates=[]))
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'ReplicaUpdates' failed to satisfy constraint: Member must "
            "have length greater than or equal to 1"
        )

    def test_region_name_required(self, ddb: Any, table_s: str) -> None:
        code, message = error_of(lambda: replica_update(ddb, table_s, {"Create": {}}))
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'ReplicaUpdates.1.member.Create.RegionName' failed to "
            "satisfy constraint: Member must not be null"
        )

    def test_override_read_capacity_at_least_one(self, ddb: Any, table_s: str) -> None:
        update = create_in("us-west-2", ProvisionedThroughputOverride={"ReadCapacityUnits": 0})
        code, message = error_of(partial(replica_update, ddb, table_s, update))
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at "
            "'ReplicaUpdates.1.member.Create.ProvisionedThroughputOverride.ReadCapacityUnits' failed to satisfy "
            "constraint: Member must have value greater than or equal to 1"
        )

    def test_update_without_action(self, ddb: Any, table_s: str) -> None:
        code, message = error_of(lambda: replica_update(ddb, table_s, {}))
        assert code == "ValidationException"
        assert message == (
            INVALID + "One of ReplicationGroupUpdate.Create, ReplicationGroupUpdate.Update, "
            "ReplicationGroupUpdate.Delete must not be null"
        )

    def test_update_with_two_actions(self, ddb: Any, table_s: str) -> None:
        both = {"Create": {"RegionName": "us-west-2"}, "Delete": {"RegionName": "us-west-2"}}
        code, message = error_of(lambda: replica_update(ddb, table_s, both))
        assert code == "ValidationException"
        assert message == INVALID + "Only one replica action is allowed per ReplicationGroupUpdate object"

    def test_two_replicas_in_one_request(self, ddb: Any, table_s: str) -> None:
        code, message = error_of(lambda: replica_update(ddb, table_s, create_in("us-west-2"), create_in("eu-west-1")))
        assert code == "ValidationException"
        assert message == INVALID + "Only one replica can be created, updated or deleted per UpdateTable request"

    def test_replica_updates_with_other_updates(self, ddb: Any, table_s: str) -> None:
        code, message = error_of(
            lambda: replica_update(ddb, table_s, create_in("us-west-2"), DeletionProtectionEnabled=True)
        )
        assert code == "ValidationException"
        assert message == INVALID + "ReplicaUpdates cannot be combined with other table updates in the same request"

    def test_own_region(self, ddb: Any, table_s: str) -> None:
        for update in (create_in("us-east-1"), {"Delete": {"RegionName": "us-east-1"}}):
            code, message = error_of(partial(replica_update, ddb, table_s, update))
            assert code == "ValidationException"
            assert message == (
                "Cannot add, delete, or update the local region through ReplicaUpdates. Use CreateTable, "
                "DeleteTable, or UpdateTable as required."
            )

    def test_invalid_region_name(self, ddb: Any, table_s: str) -> None:
        code, message = error_of(lambda: replica_update(ddb, table_s, create_in("moon-base-one")))
        assert code == "ValidationException"
        assert message == INVALID + "Invalid region name: moon-base-one"

    def test_duplicate_index_override(self, ddb: Any, table_s: str) -> None:
        gsis = [{"IndexName": "gsi1"}, {"IndexName": "gsi1"}]
        code, message = error_of(
            lambda: replica_update(ddb, table_s, create_in("us-west-2", GlobalSecondaryIndexes=gsis))
        )
        assert code == "ValidationException"
        assert message == INVALID + "Duplicate index name in replica GlobalSecondaryIndexes: gsi1"

    def test_missing_table(self, ddb: Any) -> None:
        name = unique_name()
        code, message = error_of(lambda: replica_update(ddb, name, create_in("us-west-2")))
        assert code == "ResourceNotFoundException"
        assert message == f"Requested resource not found: Table: {name} not found"


class TestStateRules:
    def test_stream_required(self, ddb: Any, table_s: str) -> None:
        code, message = error_of(lambda: replica_update(ddb, table_s, create_in("us-west-2")))
        assert code == "ValidationException"
        assert message == (
            f"Table {table_s} must have DynamoDB Streams enabled with StreamViewType NEW_AND_OLD_IMAGES to add a "
            "replica"
        )

    def test_stream_of_another_view_type(self, ddb: Any) -> None:
        name = create_table(ddb, "S", StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
        code, message = error_of(lambda: replica_update(ddb, name, create_in("us-west-2")))
        assert code == "ValidationException"
        assert message == (
            f"Table {name} must have DynamoDB Streams enabled with StreamViewType NEW_AND_OLD_IMAGES to add a replica"
        )

    def test_table_of_that_name_in_the_region(self, ddb: Any, ddb_west: Any) -> None:
        name = streamed_table(ddb)
        ddb_west.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        code, message = error_of(lambda: replica_update(ddb, name, create_in("us-west-2")))
        assert code == "ValidationException"
        assert message == (
            f"Failed to create a the new replica of table with name: '{name}' because one or more replicas already "
            "existed as tables."
        )

    def test_throughput_override_on_demand_table(self, ddb: Any) -> None:
        name = streamed_table(ddb)
        update = create_in("us-west-2", ProvisionedThroughputOverride={"ReadCapacityUnits": 5})
        code, message = error_of(lambda: replica_update(ddb, name, update))
        assert code == "ValidationException"
        assert message == (
            INVALID + "ProvisionedThroughputOverride cannot be specified when the table BillingMode is PAY_PER_REQUEST"
        )

    def test_unknown_index_override(self, ddb: Any) -> None:
        name = streamed_table(ddb)
        update = create_in("us-west-2", GlobalSecondaryIndexes=[{"IndexName": "nope"}])
        code, message = error_of(lambda: replica_update(ddb, name, update))
        assert code == "ValidationException"
        assert message == INVALID + f"Global secondary index: nope does not exist on table: {name}"

    def test_kms_key_on_a_table_without_kms(self, ddb: Any) -> None:
        name = streamed_table(ddb)
        update = create_in("us-west-2", KMSMasterKeyId="alias/mine")
        code, message = error_of(lambda: replica_update(ddb, name, update))
        assert code == "ValidationException"
        assert (
            message
            == INVALID + "KMSMasterKeyId can only be specified for a replica of a table encrypted with a KMS key"
        )

    def test_update_or_delete_of_no_replica(self, ddb: Any) -> None:
        name = streamed_table(ddb)
        for update in (
            {"Update": {"RegionName": "eu-west-1", "TableClassOverride": "STANDARD"}},
            {"Delete": {"RegionName": "eu-west-1"}},
        ):
            code, message = error_of(partial(replica_update, ddb, name, update))
            assert code == "ValidationException"
            assert message == (
                "Update global table operation failed because the specified replica does not exist: eu-west-1"
            )


class TestReplicaLifecycle:
    def test_create_describes_the_replica_creating(self, ddb: Any) -> None:
        name = streamed_table(ddb)
        table = replica_update(ddb, name, create_in("us-west-2"))["TableDescription"]
        assert table["TableStatus"] == "UPDATING"
        assert table["GlobalTableVersion"] == "2019.11.21"
        assert table["Replicas"] == [
            {"RegionName": "us-west-2", "ReplicaStatus": "CREATING", "ReplicaStatusPercentProgress": "0"}
        ]

    def test_active_replica_lists_the_source_region(self, ddb: Any, ddb_west: Any) -> None:
        name = streamed_table(ddb)
        replica_update(ddb, name, create_in("us-west-2"))
        table = wait_replica(ddb, name, "us-west-2", "ACTIVE")
        assert table["Replicas"] == [{"RegionName": "us-west-2", "ReplicaStatus": "ACTIVE"}]
        # Each replica lists the other regions of the set, not its own.
        west = ddb_west.describe_table(TableName=name)["Table"]
        assert west["GlobalTableVersion"] == "2019.11.21"
        assert [r["RegionName"] for r in west["Replicas"]] == ["us-east-1"]
        # A replica already in the set cannot be added again.
        code, message = error_of(lambda: replica_update(ddb, name, create_in("us-west-2")))
        assert code == "ValidationException"
        assert message == (
            f"Failed to create a the new replica of table with name: '{name}' because one or more replicas already "
            "existed as tables."
        )
        # A global table keeps its stream.
        code, message = error_of(lambda: ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False}))
        assert code == "ValidationException"
        assert message == f"Cannot disable the stream of table: {name} while it has replicas"

    def test_update_overrides_then_delete(self, ddb: Any) -> None:
        name = unique_name()
        ddb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
            StreamSpecification=NEW_AND_OLD,
        )
        ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
        replica_update(ddb, name, create_in("us-west-2"))
        wait_replica(ddb, name, "us-west-2", "ACTIVE")
        code, message = error_of(lambda: replica_update(ddb, name, {"Update": {"RegionName": "us-west-2"}}))
        assert code == "ValidationException"
        assert message == INVALID + (
            "At least one of KMSMasterKeyId, ProvisionedThroughputOverride, OnDemandThroughputOverride, "
            "GlobalSecondaryIndexes or TableClassOverride is required to update a replica"
        )
        update = {
            "Update": {
                "RegionName": "us-west-2",
                "ProvisionedThroughputOverride": {"ReadCapacityUnits": 7},
                "TableClassOverride": "STANDARD_INFREQUENT_ACCESS",
            }
        }
        replicas = replica_update(ddb, name, update)["TableDescription"]["Replicas"]
        assert replicas == [
            {
                "RegionName": "us-west-2",
                "ReplicaStatus": "ACTIVE",
                "ProvisionedThroughputOverride": {"ReadCapacityUnits": 7},
                "ReplicaTableClassSummary": {"TableClass": "STANDARD_INFREQUENT_ACCESS"},
            }
        ]
        deleting = replica_update(ddb, name, {"Delete": {"RegionName": "us-west-2"}})["TableDescription"]
        assert deleting["Replicas"][0]["ReplicaStatus"] == "DELETING"

    def test_a_replicas_own_settings_reach_its_table_and_every_regions_list(
        self, ddb: Any, ddb_west: Any, ddb_eu: Any
    ) -> None:
        name = create_provisioned_table_with_gsi(ddb, StreamSpecification=NEW_AND_OLD)
        ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
        gsi_read = [{"IndexName": "by_g", "ProvisionedThroughputOverride": {"ReadCapacityUnits": 3}}]
        replica_update(ddb, name, create_in("us-west-2", GlobalSecondaryIndexes=gsi_read))
        wait_replica(ddb, name, "us-west-2", "ACTIVE")
        replica_update(ddb, name, create_in("eu-west-1"))
        wait_replica(ddb, name, "eu-west-1", "ACTIVE")
        assert own_settings(ddb_west, name) == (5, 3, None)  # created with its GSI's override
        west_gsi = ddb_west.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]
        assert west_gsi["ProvisionedThroughput"]["NumberOfDecreasesToday"] == 0  # it started at 3: no decrease
        assert "LastDecreaseDateTime" not in west_gsi["ProvisionedThroughput"]
        assert own_settings(ddb_eu, name) == (5, 5, None)

        # Changed in us-east-1: the replica's table in us-west-2 takes them, and eu-west-1 lists them.
        update = {
            "Update": {
                "RegionName": "us-west-2",
                "ProvisionedThroughputOverride": {"ReadCapacityUnits": 7},
                "TableClassOverride": "STANDARD_INFREQUENT_ACCESS",
                "GlobalSecondaryIndexes": [
                    {"IndexName": "by_g", "ProvisionedThroughputOverride": {"ReadCapacityUnits": 4}}
                ],
            }
        }
        replica_update(ddb, name, update)
        assert settled(lambda: own_settings(ddb_west, name), (7, 4, "STANDARD_INFREQUENT_ACCESS"))
        listed = {
            "RegionName": "us-west-2",
            "ReplicaStatus": "ACTIVE",
            "ProvisionedThroughputOverride": {"ReadCapacityUnits": 7},
            "GlobalSecondaryIndexes": [
                {"IndexName": "by_g", "ProvisionedThroughputOverride": {"ReadCapacityUnits": 4}}
            ],
            "ReplicaTableClassSummary": {"TableClass": "STANDARD_INFREQUENT_ACCESS"},
        }
        assert settled(lambda: listing(ddb_eu, name, "us-west-2"), listed)
        west = ddb_west.describe_table(TableName=name)["Table"]
        assert "LastIncreaseDateTime" in west["ProvisionedThroughput"]

        # Changed again from eu-west-1: the newest wins everywhere. An override left out is the source's setting.
        replica_update(ddb_eu, name, {"Update": {"RegionName": "us-west-2", "TableClassOverride": "STANDARD"}})
        assert settled(lambda: own_settings(ddb_west, name), (5, 5, "STANDARD"))
        plain = {
            "RegionName": "us-west-2",
            "ReplicaStatus": "ACTIVE",
            "ReplicaTableClassSummary": {"TableClass": "STANDARD"},
        }
        assert settled(lambda: listing(ddb, name, "us-west-2"), plain)
        assert own_settings(ddb_eu, name) == (5, 5, None)  # the other replicas' own settings are untouched

    def test_a_replicas_own_maximum_read_units_reach_its_table_and_win_over_the_sets(
        self, ddb: Any, ddb_west: Any, ddb_eu: Any
    ) -> None:
        gsi = {
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "OnDemandThroughput": {"MaxReadRequestUnits": 300, "MaxWriteRequestUnits": 200},
        }
        name = streamed_table(
            ddb,
            indexed={"g": "S"},
            GlobalSecondaryIndexes=[gsi],
            OnDemandThroughput={"MaxReadRequestUnits": 500, "MaxWriteRequestUnits": 400},
        )

        def maxima(client: Any) -> tuple[Any, Any]:
            table = client.describe_table(TableName=name)["Table"]
            return table["OnDemandThroughput"], table["GlobalSecondaryIndexes"][0]["OnDemandThroughput"]

        own = {
            "OnDemandThroughputOverride": {"MaxReadRequestUnits": 50},
            "GlobalSecondaryIndexes": [
                {"IndexName": "by_g", "OnDemandThroughputOverride": {"MaxReadRequestUnits": 30}}
            ],
        }
        replica_update(ddb, name, create_in("us-west-2", **own))
        wait_replica(ddb, name, "us-west-2", "ACTIVE")
        replica_update(ddb, name, create_in("eu-west-1"))
        wait_replica(ddb, name, "eu-west-1", "ACTIVE")
        listed = {"RegionName": "us-west-2", "ReplicaStatus": "ACTIVE", **own}
        assert settled(lambda: listing(ddb, name, "us-west-2"), listed)
        assert settled(lambda: listing(ddb_eu, name, "us-west-2"), listed)
        set_maxima = (
            {"MaxReadRequestUnits": 500, "MaxWriteRequestUnits": 400},
            {"MaxReadRequestUnits": 300, "MaxWriteRequestUnits": 200},
        )
        west_maxima = (
            {"MaxReadRequestUnits": 50, "MaxWriteRequestUnits": 400},
            {"MaxReadRequestUnits": 30, "MaxWriteRequestUnits": 200},
        )
        assert maxima(ddb_west) == west_maxima
        assert (maxima(ddb), maxima(ddb_eu)) == (set_maxima, set_maxima)

        # The set's maxima changed in us-east-1: the override still wins in us-west-2, the write maximum reaches it.
        ddb.update_table(TableName=name, OnDemandThroughput={"MaxReadRequestUnits": 600, "MaxWriteRequestUnits": 450})
        changed = (
            {"MaxReadRequestUnits": 600, "MaxWriteRequestUnits": 450},
            {"MaxReadRequestUnits": 300, "MaxWriteRequestUnits": 200},
        )
        assert settled(lambda: maxima(ddb_eu), changed)
        assert settled(
            lambda: maxima(ddb_west), ({"MaxReadRequestUnits": 50, "MaxWriteRequestUnits": 450}, west_maxima[1])
        )

        # An Update from eu-west-1 that leaves the overrides out: us-west-2 takes the set's maxima again.
        replica_update(ddb_eu, name, {"Update": {"RegionName": "us-west-2", "TableClassOverride": "STANDARD"}})
        assert settled(lambda: maxima(ddb_west), changed)
        assert "OnDemandThroughputOverride" not in listing(ddb, name, "us-west-2")

    def test_a_set_switched_to_provisioned_shows_no_on_demand_override(self, ddb: Any, ddb_west: Any) -> None:
        name = streamed_table(ddb)
        override = {"OnDemandThroughputOverride": {"MaxReadRequestUnits": 50}}
        replica_update(ddb, name, create_in("us-west-2", **override))
        wait_replica(ddb, name, "us-west-2", "ACTIVE")
        assert ddb_west.describe_table(TableName=name)["Table"]["OnDemandThroughput"] == {"MaxReadRequestUnits": 50}
        throughput = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
        ddb.update_table(TableName=name, BillingMode="PROVISIONED", ProvisionedThroughput=throughput)

        def west() -> tuple[str, Any]:
            table = ddb_west.describe_table(TableName=name)["Table"]
            return table["BillingModeSummary"]["BillingMode"], table.get("OnDemandThroughput")

        assert settled(west, ("PROVISIONED", None))
        assert "OnDemandThroughputOverride" not in listing(ddb, name, "us-west-2")

    def test_an_on_demand_override_out_of_range_is_refused(self, ddb: Any) -> None:
        name = streamed_table(ddb)
        for units in (0, -1):
            update = create_in("us-west-2", OnDemandThroughputOverride={"MaxReadRequestUnits": units})
            code, message = error_of(partial(replica_update, ddb, name, update))
            assert (code, message) == (
                "ValidationException",
                INVALID + "Requested MaxReadRequestUnits for OnDemandThroughputOverride of the replica is outside "
                "of valid range",
            )
        assert "Replicas" not in ddb.describe_table(TableName=name)["Table"]


class TestMetrics:
    def test_replication_latency_and_pending_per_region_pair(self, ddb: Any, ddb_west: Any, send: Send) -> None:
        name = streamed_table(ddb)
        replica_update(ddb, name, create_in("us-west-2"))
        wait_replica(ddb, name, "us-west-2", "ACTIVE")
        ddb.put_item(TableName=name, Item={"pk": {"S": "k"}})
        for _ in range(400):
            if "Item" in ddb_west.get_item(TableName=name, Key={"pk": {"S": "k"}}):
                break
            time.sleep(0.05)
        pair = f'table="{name}",source_region="us-east-1",target_region="us-west-2"'
        page = ""
        for _ in range(400):  # the acknowledgement is counted just after the replica applied the change
            status, body = send("GET", "/metrics", b"", {"Host": "localhost"})
            assert status == 200
            page = body.decode()
            if re.search(rf"^dynastore_replicated_changes_total\{{{pair}\}} [1-9]", page, re.MULTILINE):
                break
            time.sleep(0.05)
        assert "# TYPE dynastore_replication_latency_seconds gauge" in page
        assert "# TYPE dynastore_pending_replication_count gauge" in page
        assert re.search(rf"^dynastore_pending_replication_count\{{{pair}\}} 0$", page, re.MULTILINE)
        for quantile in ("0.5", "0.99"):
            line = re.search(
                rf'^dynastore_replication_latency_seconds\{{{pair},quantile="{quantile}"\}} (\S+)$', page, re.MULTILINE
            )
            assert line is not None
            assert float(line.group(1)) >= 0  # a number once a change was acknowledged (NaN before)


class TestReplicaAutoScaling:
    def test_describe_a_table_without_policies(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        described = ddb.describe_table_replica_auto_scaling(TableName=name)["TableAutoScalingDescription"]
        assert described == {
            "TableName": name,
            "TableStatus": "ACTIVE",
            "Replicas": [{"RegionName": "us-east-1", "GlobalSecondaryIndexes": [], "ReplicaStatus": "ACTIVE"}],
        }

    def test_describe_lists_every_region_of_the_set(self, ddb: Any) -> None:
        name = streamed_table(ddb)
        replica_update(ddb, name, create_in("us-west-2"))
        wait_replica(ddb, name, "us-west-2", "ACTIVE")
        described = ddb.describe_table_replica_auto_scaling(TableName=name)["TableAutoScalingDescription"]
        assert [(r["RegionName"], r["ReplicaStatus"]) for r in described["Replicas"]] == [
            ("us-east-1", "ACTIVE"),
            ("us-west-2", "ACTIVE"),
        ]

    def test_update_is_refused(self, ddb: Any, table_s: str) -> None:
        scaling = {"MinimumUnits": 1, "MaximumUnits": 10}
        code, message = error_of(
            lambda: ddb.update_table_replica_auto_scaling(
                TableName=table_s, ProvisionedWriteCapacityAutoScalingUpdate=scaling
            )
        )
        assert code == "ValidationException"
        assert message == (
            f"Auto scaling is not supported by dynastore: table: {table_s} keeps the capacity UpdateTable sets"
        )

    def test_missing_table(self, ddb: Any) -> None:
        name = unique_name()
        for call in (ddb.describe_table_replica_auto_scaling, ddb.update_table_replica_auto_scaling):
            code, message = error_of(partial(call, TableName=name))
            assert code == "ResourceNotFoundException"
            assert message == f"Requested resource not found: Table: {name} not found"


class TestLegacyOperations:
    def test_describe_global_table_of_a_current_version_table(self, ddb: Any) -> None:
        # DynamoDB's legacy operations do not see version 2019.11.21 global tables.
        name = streamed_table(ddb)
        replica_update(ddb, name, create_in("us-west-2"))
        for call in (ddb.describe_global_table, ddb.describe_global_table_settings):
            code, message = error_of(partial(call, GlobalTableName=name))
            assert code == "GlobalTableNotFoundException"
            assert message == f"Global table not found: Global table with name: '{name}' does not exist."

    def test_list_global_tables_leaves_out_current_version_tables(self, ddb: Any) -> None:
        name = streamed_table(ddb)
        replica_update(ddb, name, create_in("us-west-2"))
        listed = [t["GlobalTableName"] for t in ddb.list_global_tables()["GlobalTables"]]
        assert name not in listed
        in_west = ddb.list_global_tables(RegionName="us-west-2", Limit=5)["GlobalTables"]
        assert name not in [t["GlobalTableName"] for t in in_west]

    def test_global_table_name_constraints(self, ddb: Any) -> None:
        code, message = error_of(lambda: ddb.describe_global_table(GlobalTableName="a"))
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'GlobalTableName' failed to satisfy constraint: Member must "
            "have length greater than or equal to 3"
        )
