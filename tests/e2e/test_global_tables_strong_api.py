"""The control plane of multi-Region strong consistency (docs/global-tables.md "Multi-Region strong consistency
(MRSC)"): UpdateTable's MultiRegionConsistency STRONG and GlobalTableWitnessUpdates, DescribeTable's
MultiRegionConsistency and GlobalTableWitnesses, and what an MRSC global table refuses (adding a replica,
deleting one alone, time to live, transactions). The regions are namespaces of one dynastore."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import pytest

from tests.e2e.conftest import BOTO_CONFIG, create_table, error_of, session_dynastore

pytestmark = pytest.mark.not_on_cluster("global tables are served by a single dynastore and its peers")

INVALID = "One or more parameter values were invalid: "
NEW_AND_OLD = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
THREE_REGIONS = INVALID + (
    "A global table with MultiRegionConsistency STRONG is created in exactly three Regions: with two ReplicaUpdates "
    "Create actions, or with one Create action and one GlobalTableWitnessUpdates Create action"
)


def client_in(request: pytest.FixtureRequest, region: str) -> Any:
    session: Any = session_dynastore(request)
    stand_in = {} if session.credentials is not None else {"aws_access_key_id": "AKIDEXAMPLE"}
    return session.client(region_name=region, config=BOTO_CONFIG, **stand_in)


@pytest.fixture(scope="module")
def ddb_ohio(request: pytest.FixtureRequest) -> Any:
    return client_in(request, "us-east-2")


@pytest.fixture(scope="module")
def ddb_oregon(request: pytest.FixtureRequest) -> Any:
    return client_in(request, "us-west-2")


def create_in(region: str) -> dict[str, Any]:
    return {"Create": {"RegionName": region}}


def delete_in(region: str) -> dict[str, Any]:
    return {"Delete": {"RegionName": region}}


def strong(ddb: Any, name: str, *updates: dict[str, Any], witness: dict[str, Any] | None = None, **extra: Any) -> Any:
    """UpdateTable with MultiRegionConsistency STRONG (unless ``extra`` sets it otherwise)."""
    members: dict[str, Any] = {"MultiRegionConsistency": "STRONG", **extra}
    if witness is not None:
        members["GlobalTableWitnessUpdates"] = [witness]
    return ddb.update_table(TableName=name, ReplicaUpdates=list(updates), **members)


def refusal(call: Any) -> str:
    code, message = error_of(call)
    assert code == "ValidationException"
    return message


def wait_settled(ddb: Any, name: str, regions: int) -> dict[str, Any]:
    """DescribeTable until the table is ACTIVE with ``regions`` other regions, every one ACTIVE."""
    table: dict[str, Any] = {}
    for _ in range(400):
        table = ddb.describe_table(TableName=name)["Table"]
        replicas = table.get("Replicas", [])
        if (
            table["TableStatus"] == "ACTIVE"
            and len(replicas) == regions
            and all(r["ReplicaStatus"] == "ACTIVE" for r in replicas)
        ):
            return table
        time.sleep(0.05)
    raise AssertionError(f"{name} never settled with {regions} other regions: {table.get('Replicas')}")


def wait_gone(ddb: Any, name: str) -> None:
    for _ in range(400):
        try:
            ddb.describe_table(TableName=name)
        except ddb.exceptions.ResourceNotFoundException:
            return
        time.sleep(0.05)
    raise AssertionError(f"{name} was never deleted")


@pytest.fixture
def mrsc_with_witness(ddb: Any) -> str:
    """An ACTIVE MRSC global table: replicas in us-east-1 (the client's) and us-east-2, a witness in us-west-2."""
    name = create_table(ddb, "S")
    strong(ddb, name, create_in("us-east-2"), witness=create_in("us-west-2"))
    wait_settled(ddb, name, 1)
    return name


@pytest.fixture
def mrsc_of_three(ddb: Any) -> str:
    """An ACTIVE MRSC global table with replicas in us-east-1 (the client's), us-east-2 and us-west-2."""
    name = create_table(ddb, "S")
    strong(ddb, name, create_in("us-east-2"), create_in("us-west-2"))
    wait_settled(ddb, name, 2)
    return name


class TestRequestRules:
    def test_consistency_needs_create_actions(self, ddb: Any, table_s: str) -> None:
        expected = INVALID + (
            "MultiRegionConsistency can only be specified with ReplicaUpdates Create actions, when a table becomes "
            "a global table"
        )
        for mode in ("STRONG", "EVENTUAL"):
            assert refusal(lambda m=mode: ddb.update_table(TableName=table_s, MultiRegionConsistency=m)) == expected
            assert refusal(partial(strong, ddb, table_s, delete_in("us-east-2"), MultiRegionConsistency=mode)) == (
                expected
            )

    def test_strong_takes_exactly_three_regions(self, ddb: Any, table_s: str) -> None:
        for updates, witness in (
            ([create_in("us-east-2")], None),
            ([create_in("us-east-2"), create_in("us-west-2")], create_in("us-west-2")),
            ([create_in("us-east-2"), delete_in("us-west-2")], None),
            ([create_in("us-east-2")], delete_in("us-west-2")),
        ):
            assert refusal(partial(strong, ddb, table_s, *updates, witness=witness)) == THREE_REGIONS

    def test_three_creates_are_too_many(self, ddb: Any, table_s: str) -> None:
        updates = [create_in("us-east-2"), create_in("us-west-2"), create_in("us-west-1")]
        assert refusal(partial(strong, ddb, table_s, *updates)) == THREE_REGIONS

    def test_one_region_twice(self, ddb: Any, table_s: str) -> None:
        message = refusal(partial(strong, ddb, table_s, create_in("us-east-2"), create_in("us-east-2")))
        assert message == INVALID + "Duplicate region in ReplicaUpdates: us-east-2"

    def test_witness_in_a_replica_region(self, ddb: Any, table_s: str) -> None:
        for region in ("us-east-2", "us-east-1"):
            message = refusal(partial(strong, ddb, table_s, create_in("us-east-2"), witness=create_in(region)))
            assert message == INVALID + f"The witness Region must differ from the Regions of the replicas: {region}"

    def test_regions_of_another_region_set(self, ddb: Any, table_s: str) -> None:
        for updates, witness in (
            ([create_in("eu-west-1"), create_in("us-west-2")], None),
            ([create_in("us-east-2")], create_in("eu-central-1")),
        ):
            region = "eu-west-1" if witness is None else "eu-central-1"
            assert refusal(partial(strong, ddb, table_s, *updates, witness=witness)) == INVALID + (
                "Every Region of a global table with MultiRegionConsistency STRONG must be in the Region set of "
                f"us-east-1: {region} is not"
            )

    def test_region_of_no_region_set(self, ddb: Any, table_s: str) -> None:
        message = refusal(partial(strong, ddb, table_s, create_in("us-east-2"), create_in("us-west-1")))
        assert message == INVALID + "Multi-Region strong consistency is not available in Region: us-west-1"

    def test_caller_region_of_no_region_set(self, request: pytest.FixtureRequest) -> None:
        sydney = client_in(request, "ap-southeast-2")
        name = create_table(sydney, "S")
        message = refusal(partial(strong, sydney, name, create_in("ap-northeast-1"), create_in("ap-northeast-2")))
        assert message == INVALID + "Multi-Region strong consistency is not available in Region: ap-southeast-2"

    def test_eu_and_ap_region_sets(self, request: pytest.FixtureRequest) -> None:
        for home, others in (
            ("eu-west-1", ("eu-west-2", "eu-west-3", "eu-central-1")),
            ("ap-northeast-1", ("ap-northeast-2", "ap-northeast-3")),
        ):
            client = client_in(request, home)
            name = create_table(client, "S")
            described = strong(client, name, create_in(others[0]), witness=create_in(others[-1]))
            assert described["TableDescription"]["MultiRegionConsistency"] == "STRONG"

    def test_witness_needs_strong(self, ddb: Any, table_s: str) -> None:
        expected = INVALID + (
            "A witness can only be added when a table becomes a global table with MultiRegionConsistency STRONG"
        )
        witness = [create_in("us-west-2")]
        assert refusal(lambda: ddb.update_table(TableName=table_s, GlobalTableWitnessUpdates=witness)) == expected
        update = partial(
            ddb.update_table,
            TableName=table_s,
            ReplicaUpdates=[create_in("us-east-2")],
            GlobalTableWitnessUpdates=witness,
        )
        assert refusal(update) == expected
        assert refusal(partial(update, MultiRegionConsistency="EVENTUAL")) == expected

    def test_witness_update_actions(self, ddb: Any, table_s: str) -> None:
        for update, detail in (
            ({}, "One of GlobalTableWitnessGroupUpdate.Create, GlobalTableWitnessGroupUpdate.Delete must not be null"),
            (
                {"Create": {"RegionName": "us-west-2"}, "Delete": {"RegionName": "us-west-2"}},
                "Only one witness action is allowed per GlobalTableWitnessGroupUpdate object",
            ),
        ):
            assert refusal(partial(strong, ddb, table_s, create_in("us-east-2"), witness=update)) == INVALID + detail

    def test_one_witness_per_request(self, ddb: Any, table_s: str) -> None:
        two = [create_in("us-west-2"), create_in("us-east-2")]
        message = refusal(
            lambda: ddb.update_table(
                TableName=table_s,
                ReplicaUpdates=[create_in("us-east-2")],
                MultiRegionConsistency="STRONG",
                GlobalTableWitnessUpdates=two,
            )
        )
        assert message == (
            "1 validation error detected: Value at 'GlobalTableWitnessUpdates' failed to satisfy constraint: "
            "Member must have length less than or equal to 1"
        )

    def test_witness_deleted_only_with_one_replica(self, ddb: Any, table_s: str) -> None:
        expected = (
            INVALID + "A witness can only be deleted together with one replica (one ReplicaUpdates Delete action)"
        )
        witness = [delete_in("us-west-2")]
        assert refusal(lambda: ddb.update_table(TableName=table_s, GlobalTableWitnessUpdates=witness)) == expected
        both = [delete_in("us-east-2"), delete_in("eu-west-1")]
        assert (
            refusal(lambda: ddb.update_table(TableName=table_s, ReplicaUpdates=both, GlobalTableWitnessUpdates=witness))
            == expected
        )

    def test_eventual_keeps_one_replica_per_request(self, ddb: Any, table_s: str) -> None:
        two = [create_in("us-east-2"), create_in("us-west-2")]
        for extra in ({}, {"MultiRegionConsistency": "EVENTUAL"}):
            message = refusal(lambda e=extra: ddb.update_table(TableName=table_s, ReplicaUpdates=two, **e))
            assert message == INVALID + "Only one replica can be created, updated or deleted per UpdateTable request"

    def test_strong_creation_alone(self, ddb: Any, table_s: str) -> None:
        message = refusal(
            partial(
                strong, ddb, table_s, create_in("us-east-2"), create_in("us-west-2"), DeletionProtectionEnabled=True
            )
        )
        assert message == INVALID + "ReplicaUpdates cannot be combined with other table updates in the same request"


class TestTableRules:
    def test_table_must_be_empty(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        ddb.put_item(TableName=name, Item={"pk": {"S": "k"}})
        message = refusal(partial(strong, ddb, name, create_in("us-east-2"), create_in("us-west-2")))
        assert message == f"Table {name} must be empty to become a global table with MultiRegionConsistency STRONG"
        ddb.delete_item(TableName=name, Key={"pk": {"S": "k"}})
        described = strong(ddb, name, create_in("us-east-2"), create_in("us-west-2"))["TableDescription"]
        assert described["MultiRegionConsistency"] == "STRONG"

    def test_no_local_secondary_indexes(self, ddb: Any) -> None:
        lsi = {
            "IndexName": "by_sk",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        }
        name = create_table(ddb, "S", "S", LocalSecondaryIndexes=[lsi])
        message = refusal(partial(strong, ddb, name, create_in("us-east-2"), create_in("us-west-2")))
        assert message == (
            "Local secondary indexes are not supported for global tables with MultiRegionConsistency STRONG: table "
            f"{name} has local secondary indexes"
        )

    def test_no_time_to_live(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})
        message = refusal(partial(strong, ddb, name, create_in("us-east-2"), witness=create_in("us-west-2")))
        assert message == (
            "Time to Live is not supported for global tables with MultiRegionConsistency STRONG: table "
            f"{name} has Time to Live enabled"
        )

    def test_a_table_of_that_name_in_a_replica_region(self, ddb: Any, ddb_oregon: Any) -> None:
        name = create_table(ddb, "S")
        ddb_oregon.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        message = refusal(partial(strong, ddb, name, create_in("us-east-2"), create_in("us-west-2")))
        assert message == (
            f"Failed to create a the new replica of table with name: '{name}' because one or more replicas already "
            "existed as tables."
        )

    def test_consistency_of_a_global_table_cannot_change(self, ddb: Any) -> None:
        name = create_table(ddb, "S", StreamSpecification=NEW_AND_OLD)
        ddb.update_table(TableName=name, ReplicaUpdates=[create_in("us-east-2")])
        table = wait_settled(ddb, name, 1)
        assert table["MultiRegionConsistency"] == "EVENTUAL"
        assert "GlobalTableWitnesses" not in table
        expected = (
            "The consistency mode of a global table cannot be set or changed after its creation: table "
            f"{name} already has replicas"
        )
        assert refusal(partial(strong, ddb, name, create_in("us-west-2"), create_in("us-east-2"))) == expected
        assert refusal(partial(strong, ddb, name, create_in("us-west-2"), MultiRegionConsistency="EVENTUAL")) == (
            expected
        )

    def test_eventual_table_deletes_one_replica_per_request(self, ddb: Any) -> None:
        name = create_table(ddb, "S", StreamSpecification=NEW_AND_OLD)
        ddb.update_table(TableName=name, ReplicaUpdates=[create_in("us-east-2")])
        wait_settled(ddb, name, 1)
        both = [delete_in("us-east-2"), delete_in("us-west-2")]
        message = refusal(lambda: ddb.update_table(TableName=name, ReplicaUpdates=both))
        assert message == INVALID + "Only one replica can be created, updated or deleted per UpdateTable request"
        witness = [delete_in("us-west-2")]
        message = refusal(
            lambda: ddb.update_table(
                TableName=name, ReplicaUpdates=[delete_in("us-east-2")], GlobalTableWitnessUpdates=witness
            )
        )
        assert message == f"Table {name} has no witness in Region: us-west-2"

    def test_no_stream_needed_and_a_single_region_table_shows_no_mode(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        table = ddb.describe_table(TableName=name)["Table"]
        assert "MultiRegionConsistency" not in table
        assert "StreamSpecification" not in table
        described = strong(ddb, name, create_in("us-east-2"), create_in("us-west-2"))["TableDescription"]
        assert "StreamSpecification" not in described


class TestCreation:
    def test_response_while_creating(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        described = strong(ddb, name, create_in("us-east-2"), witness=create_in("us-west-2"))["TableDescription"]
        assert described["TableStatus"] == "UPDATING"
        assert described["GlobalTableVersion"] == "2019.11.21"
        assert described["Replicas"] == [
            {"RegionName": "us-east-2", "ReplicaStatus": "CREATING", "ReplicaStatusPercentProgress": "0"}
        ]
        assert described["GlobalTableWitnesses"] == [{"RegionName": "us-west-2", "WitnessStatus": "CREATING"}]
        assert described["MultiRegionConsistency"] == "STRONG"

    def test_three_replicas_in_every_region(self, ddb: Any, ddb_ohio: Any, ddb_oregon: Any, mrsc_of_three: str) -> None:
        for client, own in ((ddb, "us-east-1"), (ddb_ohio, "us-east-2"), (ddb_oregon, "us-west-2")):
            table = wait_settled(client, mrsc_of_three, 2)
            assert table["MultiRegionConsistency"] == "STRONG"
            assert sorted(r["RegionName"] for r in table["Replicas"]) == sorted(
                {"us-east-1", "us-east-2", "us-west-2"} - {own}
            )
            assert "GlobalTableWitnesses" not in table

    def test_two_replicas_and_a_witness(self, ddb: Any, ddb_ohio: Any, ddb_oregon: Any, mrsc_with_witness: str) -> None:
        for client, other in ((ddb, "us-east-2"), (ddb_ohio, "us-east-1")):
            table = wait_settled(client, mrsc_with_witness, 1)
            assert table["MultiRegionConsistency"] == "STRONG"
            assert table["Replicas"] == [{"RegionName": other, "ReplicaStatus": "ACTIVE"}]
            assert table["GlobalTableWitnesses"] == [{"RegionName": "us-west-2", "WitnessStatus": "ACTIVE"}]
        # The witness region serves no table.
        code, _ = error_of(lambda: ddb_oregon.describe_table(TableName=mrsc_with_witness))
        assert code == "ResourceNotFoundException"


class TestStrongTable:
    def test_no_replica_added(self, ddb: Any, mrsc_with_witness: str) -> None:
        message = refusal(
            lambda: ddb.update_table(TableName=mrsc_with_witness, ReplicaUpdates=[create_in("eu-west-1")])
        )
        assert message == (
            f"Replicas cannot be added to table {mrsc_with_witness}: a global table with MultiRegionConsistency "
            "STRONG keeps the three Regions it was created in"
        )
        message = refusal(partial(strong, ddb, mrsc_with_witness, create_in("us-west-2"), create_in("us-east-2")))
        assert message == (
            "The consistency mode of a global table cannot be set or changed after its creation: table "
            f"{mrsc_with_witness} already has replicas"
        )

    def test_stream_is_the_replicas_own(self, ddb: Any, ddb_ohio: Any, mrsc_with_witness: str) -> None:
        ddb.update_table(TableName=mrsc_with_witness, StreamSpecification=NEW_AND_OLD)
        wait_settled(ddb, mrsc_with_witness, 1)
        ddb.update_table(TableName=mrsc_with_witness, StreamSpecification={"StreamEnabled": False})
        table = wait_settled(ddb, mrsc_with_witness, 1)
        assert "StreamSpecification" not in table
        assert "StreamSpecification" not in ddb_ohio.describe_table(TableName=mrsc_with_witness)["Table"]

    def test_time_to_live_refused(self, ddb: Any, ddb_ohio: Any, mrsc_with_witness: str) -> None:
        for client in (ddb, ddb_ohio):
            message = refusal(
                lambda c=client: c.update_time_to_live(
                    TableName=mrsc_with_witness, TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"}
                )
            )
            assert message == (
                f"Time to Live is not supported for table {mrsc_with_witness}: it is a global table with "
                "MultiRegionConsistency STRONG"
            )

    def test_transactions_refused(self, ddb: Any, table_s: str, mrsc_with_witness: str) -> None:
        expected = (
            f"Transactions are not supported for table {mrsc_with_witness}: it is a global table with "
            "MultiRegionConsistency STRONG"
        )
        put = {"Put": {"TableName": mrsc_with_witness, "Item": {"pk": {"S": "a"}}}}
        other = {"Put": {"TableName": table_s, "Item": {"pk": {"S": "mrsc-other"}}}}
        assert refusal(lambda: ddb.transact_write_items(TransactItems=[other, put])) == expected
        get = {"Get": {"TableName": mrsc_with_witness, "Key": {"pk": {"S": "a"}}}}
        assert refusal(lambda: ddb.transact_get_items(TransactItems=[get])) == expected
        insert = {"Statement": f"INSERT INTO \"{mrsc_with_witness}\" VALUE {{'pk': 'a'}}"}
        assert refusal(lambda: ddb.execute_transaction(TransactStatements=[insert])) == expected
        select = {"Statement": f"SELECT * FROM \"{mrsc_with_witness}\" WHERE pk = 'a'"}
        assert refusal(lambda: ddb.execute_transaction(TransactStatements=[select])) == expected
        # Nothing of the refused transaction was written.
        assert "Item" not in ddb.get_item(TableName=table_s, Key={"pk": {"S": "mrsc-other"}})

    def test_a_single_replica_or_the_witness_alone_is_not_deleted(self, ddb: Any, mrsc_with_witness: str) -> None:
        expected = (
            f"Cannot delete a single replica or the witness of table {mrsc_with_witness} (MultiRegionConsistency "
            "STRONG): delete both other replicas, or one replica and the witness, in one request"
        )
        message = refusal(
            lambda: ddb.update_table(TableName=mrsc_with_witness, ReplicaUpdates=[delete_in("us-east-2")])
        )
        assert message == expected
        message = refusal(
            lambda: ddb.update_table(
                TableName=mrsc_with_witness,
                ReplicaUpdates=[delete_in("us-east-2")],
                GlobalTableWitnessUpdates=[delete_in("eu-west-1")],
            )
        )
        assert message == f"Table {mrsc_with_witness} has no witness in Region: eu-west-1"

    def test_delete_table_of_a_replica_refused(self, ddb: Any, ddb_ohio: Any, mrsc_with_witness: str) -> None:
        for client in (ddb, ddb_ohio):
            message = refusal(lambda c=client: c.delete_table(TableName=mrsc_with_witness))
            assert message == (
                f"Cannot delete table {mrsc_with_witness}: it is a replica of a global table with "
                "MultiRegionConsistency STRONG; delete its other Regions first (UpdateTable ReplicaUpdates and "
                "GlobalTableWitnessUpdates Delete actions)"
            )

    def test_delete_a_replica_and_the_witness(self, ddb: Any, ddb_ohio: Any, mrsc_with_witness: str) -> None:
        name = mrsc_with_witness
        described = ddb.update_table(
            TableName=name, ReplicaUpdates=[delete_in("us-east-2")], GlobalTableWitnessUpdates=[delete_in("us-west-2")]
        )["TableDescription"]
        assert described["Replicas"] == [{"RegionName": "us-east-2", "ReplicaStatus": "DELETING"}]
        assert described["GlobalTableWitnesses"] == [{"RegionName": "us-west-2", "WitnessStatus": "DELETING"}]
        wait_gone(ddb_ohio, name)
        table = wait_settled(ddb, name, 0)
        assert "Replicas" not in table
        assert "GlobalTableWitnesses" not in table
        assert "MultiRegionConsistency" not in table
        # A single-Region table again: time to live and transactions are its own.
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})
        ddb.transact_write_items(TransactItems=[{"Put": {"TableName": name, "Item": {"pk": {"S": "a"}}}}])
        ddb.delete_table(TableName=name)

    def test_one_replica_of_three_is_not_deleted(self, ddb: Any, mrsc_of_three: str) -> None:
        message = refusal(lambda: ddb.update_table(TableName=mrsc_of_three, ReplicaUpdates=[delete_in("us-west-2")]))
        assert message == (
            f"Cannot delete a single replica or the witness of table {mrsc_of_three} (MultiRegionConsistency "
            "STRONG): delete both other replicas, or one replica and the witness, in one request"
        )
        message = refusal(
            lambda: ddb.update_table(
                TableName=mrsc_of_three,
                ReplicaUpdates=[delete_in("us-west-2")],
                GlobalTableWitnessUpdates=[delete_in("us-east-2")],
            )
        )
        assert message == f"Table {mrsc_of_three} has no witness in Region: us-east-2"

    def test_delete_both_other_replicas(self, ddb: Any, ddb_ohio: Any, ddb_oregon: Any, mrsc_of_three: str) -> None:
        name = mrsc_of_three
        both = [delete_in("us-east-2"), delete_in("us-west-2")]
        described = ddb.update_table(TableName=name, ReplicaUpdates=both)["TableDescription"]
        assert sorted((r["RegionName"], r["ReplicaStatus"]) for r in described["Replicas"]) == [
            ("us-east-2", "DELETING"),
            ("us-west-2", "DELETING"),
        ]
        wait_gone(ddb_ohio, name)
        wait_gone(ddb_oregon, name)
        table = wait_settled(ddb, name, 0)
        assert "MultiRegionConsistency" not in table
