"""UpdateTable end to end: request rules, state rules against the table, and each kind of change."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import error_of, unique_name

INVALID = "One or more parameter values were invalid: "
WAIT = {"Delay": 0.05, "MaxAttempts": 100}
PT5 = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}


def make(ddb: Any, *, ppr: bool = False, gsi: bool = False, lsi: bool = False, **extra: Any) -> str:
    """A table pk:S (+ sk:S when lsi) with optional GSI `by_g` (g:S) and LSI `by_l` (l:S)."""
    name = unique_name("ut")
    definitions = [{"AttributeName": "pk", "AttributeType": "S"}]
    key_schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    req: dict[str, Any] = {"TableName": name}
    if lsi:
        definitions += [{"AttributeName": "sk", "AttributeType": "S"}, {"AttributeName": "l", "AttributeType": "S"}]
        key_schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
        req["LocalSecondaryIndexes"] = [
            {
                "IndexName": "by_l",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ]
    if gsi:
        definitions.append({"AttributeName": "g", "AttributeType": "S"})
        index: dict[str, Any] = {
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }
        if not ppr:
            index["ProvisionedThroughput"] = PT5
        req["GlobalSecondaryIndexes"] = [index]
    if ppr:
        req["BillingMode"] = "PAY_PER_REQUEST"
    else:
        req["ProvisionedThroughput"] = PT5
    ddb.create_table(AttributeDefinitions=definitions, KeySchema=key_schema, **req, **extra)
    active(ddb, name)
    return name


def active(ddb: Any, name: str) -> dict[str, Any]:
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=WAIT)
    table: dict[str, Any] = ddb.describe_table(TableName=name)["Table"]
    return table


@pytest.fixture(scope="module")
def prov(ddb: Any) -> Iterator[str]:
    """A provisioned table with a GSI and an LSI, never changed by the tests that use it."""
    name = make(ddb, gsi=True, lsi=True)
    yield name
    ddb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def ppr(ddb: Any) -> Iterator[str]:
    """An on-demand table with a GSI, never changed by the tests that use it."""
    name = make(ddb, ppr=True, gsi=True)
    yield name
    ddb.delete_table(TableName=name)


class TestValidation:
    def test_table_name_required(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.update_table(BillingMode="PAY_PER_REQUEST")) == (
            "ValidationException",
            "1 validation error detected: The parameter 'TableName' is required but was not present in the request",
        )

    NOTHING = (
        "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, "
        "SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, "
        "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required"
    )

    @pytest.mark.parametrize("extra", [{}, {"GlobalSecondaryIndexUpdates": []}, {"AttributeDefinitions": []}])
    def test_nothing_to_update(self, ddb: Any, prov: str, extra: dict[str, Any]) -> None:
        assert error_of(lambda: ddb.update_table(TableName=prov, **extra)) == ("ValidationException", self.NOTHING)

    def test_constraints_before_semantics(self, ddb: Any) -> None:
        code, message = error_of(
            lambda: ddb.update_table(
                TableName="abc",
                ProvisionedThroughput={"ReadCapacityUnits": 0, "WriteCapacityUnits": 1},
                BillingMode="FREE",
            )
        )
        assert (code, message) == (
            "ValidationException",
            "1 validation error detected: Value at 'BillingMode' failed to satisfy constraint: Member must "
            "satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]",
        )

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            pytest.param(
                {"ProvisionedThroughput": {"ReadCapacityUnits": 1000000000001, "WriteCapacityUnits": 1}},
                "Given value 1000000000001 for ReadCapacityUnits is out of bounds",
                id="out-of-bounds",
            ),
            pytest.param(
                {"GlobalSecondaryIndexUpdates": [{}]},
                INVALID + "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
                "GlobalSecondaryIndexUpdate.Delete must not be null",
                id="gsi-update-without-action",
            ),
            pytest.param(
                {
                    "GlobalSecondaryIndexUpdates": [
                        {"Delete": {"IndexName": "by_g"}, "Update": {"IndexName": "by_g", "ProvisionedThroughput": PT5}}
                    ]
                },
                INVALID + "Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate object",
                id="gsi-update-two-actions",
            ),
            pytest.param(
                {"GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "by_g"}}, {"Delete": {"IndexName": "by_g"}}]},
                INVALID + "Only one global secondary index update per index is allowed simultaneously. Index: by_g",
                id="gsi-update-same-index-twice",
            ),
            pytest.param(
                {
                    "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}],
                    "GlobalSecondaryIndexUpdates": [
                        {
                            "Create": {
                                "IndexName": "by_g",
                                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                "Projection": {"ProjectionType": "ALL"},
                                "ProvisionedThroughput": PT5,
                            }
                        },
                        {"Delete": {"IndexName": "by_g"}},
                    ],
                },
                INVALID + "Only one global secondary index update per index is allowed simultaneously. Index: by_g",
                id="gsi-create-and-delete-of-one-index",
            ),
            pytest.param(
                {"StreamSpecification": {"StreamEnabled": True}},
                INVALID + "If stream is being enabled then UpdateViewType is required",
                id="stream-enable-without-view",
            ),
            pytest.param(
                {"StreamSpecification": {"StreamEnabled": False, "StreamViewType": "NEW_IMAGE"}},
                INVALID + "If stream is being disabled, then UpdateViewType must not be specified",
                id="stream-disable-with-view",
            ),
            pytest.param(
                {"SSESpecification": {"Enabled": False, "SSEType": "KMS"}},
                INVALID + "SSEType can not be specified if Enabled is false",
                id="sse-type-when-disabled",
            ),
            pytest.param(
                {"SSESpecification": {"Enabled": True}, "DeletionProtectionEnabled": True},
                INVALID + "Server-Side Encryption modification must be the only operation in the request",
                id="sse-not-alone",
            ),
            pytest.param(
                {"TableClass": "STANDARD", "BillingMode": "PROVISIONED"},
                INVALID + "TableClass modification must be the only operation in the request",
                id="class-not-alone",
            ),
            pytest.param(
                {"DeletionProtectionEnabled": True, "BillingMode": "PROVISIONED"},
                INVALID + "DeletionProtection modification must be the only operation in the request",
                id="protection-not-alone",
            ),
            pytest.param(
                {"ProvisionedThroughput": PT5, "StreamSpecification": {"StreamEnabled": False}},
                INVALID + "You cannot modify stream status while updating table IOPS",
                id="stream-and-iops",
            ),
            pytest.param(
                {
                    "ProvisionedThroughput": {"ReadCapacityUnits": 6, "WriteCapacityUnits": 6},
                    "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "by_g"}}],
                },
                INVALID + "You cannot create or delete index while updating table IOPS",
                id="index-and-iops",
            ),
            pytest.param(
                {
                    "StreamSpecification": {"StreamEnabled": False},
                    "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "by_g"}}],
                },
                INVALID + "You cannot create or delete index while changing stream status",
                id="index-and-stream",
            ),
        ],
    )
    def test_request_rules(self, ddb: Any, prov: str, kwargs: dict[str, Any], message: str) -> None:
        assert error_of(lambda: ddb.update_table(TableName=prov, **kwargs)) == ("ValidationException", message)

    def test_missing_table(self, ddb: Any) -> None:
        name = unique_name("missing")
        assert error_of(lambda: ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")) == (
            "ResourceNotFoundException",
            f"Requested resource not found: Table: {name} not found",
        )

    def test_same_throughput(self, ddb: Any, prov: str) -> None:
        assert error_of(lambda: ddb.update_table(TableName=prov, ProvisionedThroughput=PT5)) == (
            "ValidationException",
            "The provisioned throughput for the table will not change. The requested value equals the current value. "
            "Current ReadCapacityUnits provisioned for the table: 5. Requested ReadCapacityUnits: 5. Current "
            "WriteCapacityUnits provisioned for the table: 5. Requested WriteCapacityUnits: 5. Refer to the Amazon "
            "DynamoDB Developer Guide for current limits and how to request higher limits.",
        )

    @pytest.mark.parametrize(
        ("fixture", "kwargs", "code", "message"),
        [
            pytest.param(
                "ppr",
                {"ProvisionedThroughput": PT5},
                "ValidationException",
                INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is "
                "PAY_PER_REQUEST",
                id="ppr-table-with-throughput",
            ),
            pytest.param(
                "prov",
                {"BillingMode": "PAY_PER_REQUEST", "ProvisionedThroughput": PT5},
                "ValidationException",
                INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is "
                "PAY_PER_REQUEST",
                id="to-ppr-with-throughput",
            ),
            pytest.param(
                "ppr",
                {"BillingMode": "PROVISIONED"},
                "ValidationException",
                INVALID + "ProvisionedThroughput must be specified when BillingMode is PROVISIONED",
                id="to-provisioned-without-throughput",
            ),
            pytest.param(
                "ppr",
                {"BillingMode": "PROVISIONED", "ProvisionedThroughput": PT5},
                "ValidationException",
                INVALID + "ProvisionedThroughput must be specified for index: by_g",
                id="to-provisioned-without-index-throughput",
            ),
            pytest.param(
                "prov",
                {"OnDemandThroughput": {"MaxReadRequestUnits": 5}},
                "ValidationException",
                INVALID + "MaxReadRequestUnits for OnDemandThroughput cannot be specified when the table BillingMode "
                "is PROVISIONED",
                id="on-demand-on-provisioned",
            ),
            pytest.param(
                "ppr",
                {"OnDemandThroughput": {"MaxWriteRequestUnits": 0}},
                "ValidationException",
                INVALID + "Requested MaxWriteRequestUnits for OnDemandThroughput for table is outside of valid range",
                id="on-demand-zero",
            ),
            pytest.param(
                "prov",
                {"StreamSpecification": {"StreamEnabled": False}},
                "ValidationException",
                "Table has no stream to disable: TableName: {name}",
                id="disable-missing-stream",
            ),
            pytest.param(
                "prov",
                {"GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "nope"}}]},
                "ResourceNotFoundException",
                "Requested resource not found: Index nope for table {name}",
                id="delete-missing-index",
            ),
            pytest.param(
                "prov",
                {"GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "nope", "ProvisionedThroughput": PT5}}]},
                "ResourceNotFoundException",
                "Requested resource not found: Index nope for table {name}",
                id="update-missing-index",
            ),
            pytest.param(
                "prov",
                {"GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "by_l"}}]},
                "ValidationException",
                "Cannot delete an index that is not a GlobalSecondaryIndex: by_l",
                id="delete-lsi",
            ),
            pytest.param(
                "prov",
                {"GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "by_l", "ProvisionedThroughput": PT5}}]},
                "ValidationException",
                "Cannot update an index that is not a GlobalSecondaryIndex: by_l",
                id="update-lsi",
            ),
            pytest.param(
                "prov",
                {"GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "by_g", "ProvisionedThroughput": PT5}}]},
                "ValidationException",
                "The provisioned throughput for the index by_g will not change. The requested value equals the current "
                "value. Current ReadCapacityUnits provisioned for the index: 5. Requested ReadCapacityUnits: 5. "
                "Current WriteCapacityUnits provisioned for the index: 5. Requested WriteCapacityUnits: 5. Refer to "
                "the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
                id="index-same-throughput",
            ),
            pytest.param(
                "ppr",
                {"GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "by_g", "ProvisionedThroughput": PT5}}]},
                "ValidationException",
                INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified for index: by_g when "
                "BillingMode is PAY_PER_REQUEST",
                id="ppr-index-throughput",
            ),
            pytest.param(
                "prov",
                {
                    "GlobalSecondaryIndexUpdates": [
                        {
                            "Create": {
                                "IndexName": "by_g",
                                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                "Projection": {"ProjectionType": "ALL"},
                                "ProvisionedThroughput": PT5,
                            }
                        }
                    ]
                },
                "ValidationException",
                "Attempting to create an index which already exists",
                id="create-existing-index",
            ),
            pytest.param(
                "prov",
                {
                    "GlobalSecondaryIndexUpdates": [
                        {
                            "Create": {
                                "IndexName": "by_x",
                                "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                                "Projection": {"ProjectionType": "ALL"},
                                "ProvisionedThroughput": PT5,
                            }
                        }
                    ]
                },
                "ValidationException",
                INVALID + "AttributeDefinitions is not specified for index: by_x",
                id="create-index-undefined-attribute",
            ),
            pytest.param(
                "prov",
                {
                    "AttributeDefinitions": [{"AttributeName": "x", "AttributeType": "S"}],
                    "GlobalSecondaryIndexUpdates": [
                        {
                            "Create": {
                                "IndexName": "by_x",
                                "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                                "Projection": {"ProjectionType": "ALL"},
                            }
                        }
                    ],
                },
                "ValidationException",
                INVALID + "ProvisionedThroughput must be specified for index: by_x",
                id="create-index-without-throughput",
            ),
            pytest.param(
                "ppr",
                {
                    "AttributeDefinitions": [{"AttributeName": "x", "AttributeType": "S"}],
                    "GlobalSecondaryIndexUpdates": [
                        {
                            "Create": {
                                "IndexName": "by_x",
                                "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                                "Projection": {"ProjectionType": "ALL"},
                                "ProvisionedThroughput": PT5,
                            }
                        }
                    ],
                },
                "ValidationException",
                INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified for index: by_x when "
                "BillingMode is PAY_PER_REQUEST",
                id="create-ppr-index-with-throughput",
            ),
            pytest.param(
                "ppr",
                {
                    "AttributeDefinitions": [{"AttributeName": "x", "AttributeType": "S"}],
                    "GlobalSecondaryIndexUpdates": [
                        {
                            "Create": {
                                "IndexName": "by_x",
                                "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                                "Projection": {"ProjectionType": "INCLUDE"},
                            }
                        }
                    ],
                },
                "ValidationException",
                INVALID + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified",
                id="create-index-bad-projection",
            ),
            pytest.param(
                "ppr",
                {
                    "AttributeDefinitions": [{"AttributeName": "x", "AttributeType": "S"}],
                    "GlobalSecondaryIndexUpdates": [
                        {
                            "Create": {
                                "IndexName": "by_x",
                                "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                                "Projection": {"ProjectionType": "ALL"},
                            }
                        },
                        {"Delete": {"IndexName": "by_g"}},
                    ],
                },
                "LimitExceededException",
                "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
                id="two-online-index-changes",
            ),
        ],
    )
    def test_state_rules(
        self, request: pytest.FixtureRequest, ddb: Any, fixture: str, kwargs: dict[str, Any], code: str, message: str
    ) -> None:
        name = request.getfixturevalue(fixture)
        before = ddb.describe_table(TableName=name)["Table"]
        assert error_of(lambda: ddb.update_table(TableName=name, **kwargs)) == (code, message.format(name=name))
        assert ddb.describe_table(TableName=name)["Table"] == before


class TestFunctionality:
    def test_throughput_increase_then_decrease(self, ddb: Any) -> None:
        name = make(ddb)
        try:
            desc = ddb.update_table(
                TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 10, "WriteCapacityUnits": 5}
            )["TableDescription"]
            assert desc["TableStatus"] == "UPDATING"
            pt = active(ddb, name)["ProvisionedThroughput"]
            assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"], pt["NumberOfDecreasesToday"]) == (10, 5, 0)
            assert "LastIncreaseDateTime" in pt
            assert "LastDecreaseDateTime" not in pt
            ddb.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 5})
            pt = active(ddb, name)["ProvisionedThroughput"]
            assert (pt["ReadCapacityUnits"], pt["NumberOfDecreasesToday"]) == (2, 1)
            assert "LastDecreaseDateTime" in pt
        finally:
            ddb.delete_table(TableName=name)

    def test_billing_mode_round_trip(self, ddb: Any) -> None:
        name = make(ddb, gsi=True)
        try:
            ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")
            table = active(ddb, name)
            assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
            switched = table["BillingModeSummary"]["LastUpdateToPayPerRequestDateTime"]
            assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
            assert table["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
            ddb.update_table(
                TableName=name,
                BillingMode="PROVISIONED",
                ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
                GlobalSecondaryIndexUpdates=[
                    {
                        "Update": {
                            "IndexName": "by_g",
                            "ProvisionedThroughput": {"ReadCapacityUnits": 6, "WriteCapacityUnits": 7},
                        }
                    }
                ],
            )
            table = active(ddb, name)
            assert table["BillingModeSummary"] == {
                "BillingMode": "PROVISIONED",
                "LastUpdateToPayPerRequestDateTime": switched,
            }
            assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 3
            assert table["ProvisionedThroughput"]["WriteCapacityUnits"] == 4
            gpt = table["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]
            assert (gpt["ReadCapacityUnits"], gpt["WriteCapacityUnits"]) == (6, 7)
        finally:
            ddb.delete_table(TableName=name)

    def test_same_billing_mode_is_accepted(self, ddb: Any, ppr: str) -> None:
        desc = ddb.update_table(TableName=ppr, BillingMode="PAY_PER_REQUEST")["TableDescription"]
        assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"

    def test_create_and_delete_gsi(self, ddb: Any) -> None:
        name = make(ddb, ppr=True)
        try:
            desc = ddb.update_table(
                TableName=name,
                AttributeDefinitions=[{"AttributeName": "x", "AttributeType": "N"}],
                GlobalSecondaryIndexUpdates=[
                    {
                        "Create": {
                            "IndexName": "by_x",
                            "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                            "Projection": {"ProjectionType": "KEYS_ONLY"},
                        }
                    }
                ],
            )["TableDescription"]
            [index] = desc["GlobalSecondaryIndexes"]
            assert index["IndexStatus"] == "CREATING"
            assert index["IndexArn"] == desc["TableArn"] + "/index/by_x"
            table = active(ddb, name)
            assert {"AttributeName": "x", "AttributeType": "N"} in table["AttributeDefinitions"]
            for _ in range(500):  # the backfill runs in the background once the table is ACTIVE
                [index] = ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"]
                if index["IndexStatus"] == "ACTIVE":
                    break
                time.sleep(0.01)
            assert (index["IndexName"], index["IndexStatus"]) == ("by_x", "ACTIVE")
            assert index["Projection"] == {"ProjectionType": "KEYS_ONLY"}
            desc = ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by_x"}}])[
                "TableDescription"
            ]
            assert desc["GlobalSecondaryIndexes"][0]["IndexStatus"] == "DELETING"
            table = active(ddb, name)
            assert "GlobalSecondaryIndexes" not in table
            assert table["AttributeDefinitions"] == [{"AttributeName": "pk", "AttributeType": "S"}]
        finally:
            ddb.delete_table(TableName=name)

    def test_stream_enable_disable(self, ddb: Any) -> None:
        name = make(ddb, ppr=True)
        try:
            desc = ddb.update_table(
                TableName=name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
            )["TableDescription"]
            assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
            label = desc["LatestStreamLabel"]
            assert desc["LatestStreamArn"] == f"{desc['TableArn']}/stream/{label}"
            active(ddb, name)
            assert error_of(
                lambda: ddb.update_table(
                    TableName=name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
                )
            ) == ("ValidationException", f"Table already has an enabled stream: TableName: {name}")
            ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
            table = active(ddb, name)
            assert "StreamSpecification" not in table
            assert table["LatestStreamLabel"] == label
        finally:
            ddb.delete_table(TableName=name)

    def test_class_protection_sse_on_demand(self, ddb: Any) -> None:
        name = make(ddb, ppr=True)
        try:
            desc = ddb.update_table(TableName=name, TableClass="STANDARD_INFREQUENT_ACCESS")["TableDescription"]
            assert desc["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
            assert "LastUpdateDateTime" in desc["TableClassSummary"]
            active(ddb, name)
            desc = ddb.update_table(TableName=name, DeletionProtectionEnabled=True)["TableDescription"]
            assert desc["DeletionProtectionEnabled"] is True
            active(ddb, name)
            desc = ddb.update_table(TableName=name, SSESpecification={"Enabled": True, "SSEType": "KMS"})[
                "TableDescription"
            ]
            assert desc["SSEDescription"]["Status"] == "ENABLED"
            active(ddb, name)
            desc = ddb.update_table(TableName=name, OnDemandThroughput={"MaxReadRequestUnits": 9})["TableDescription"]
            assert desc["OnDemandThroughput"] == {"MaxReadRequestUnits": 9}
            active(ddb, name)
            ddb.update_table(TableName=name, DeletionProtectionEnabled=False)
            assert active(ddb, name)["DeletionProtectionEnabled"] is False
        finally:
            ddb.delete_table(TableName=name)

    def test_an_on_demand_maximum_left_out_is_kept(self, ddb: Any) -> None:
        # "To remove the maximum ... set the value to -1": a maximum the request does not name stays as it was.
        name = make(
            ddb, ppr=True, gsi=True, OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}
        )
        try:
            desc = ddb.update_table(TableName=name, OnDemandThroughput={"MaxWriteRequestUnits": 70})["TableDescription"]
            assert desc["OnDemandThroughput"] == {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 70}
            active(ddb, name)
            desc = ddb.update_table(TableName=name, OnDemandThroughput={"MaxReadRequestUnits": -1})["TableDescription"]
            assert desc["OnDemandThroughput"] == {"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": 70}
            active(ddb, name)
            index = {"IndexName": "by_g", "OnDemandThroughput": {"MaxReadRequestUnits": 30, "MaxWriteRequestUnits": 20}}
            ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Update": index}])
            active(ddb, name)
            index = {"IndexName": "by_g", "OnDemandThroughput": {"MaxReadRequestUnits": 40}}
            ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Update": index}])
            gsi = active(ddb, name)["GlobalSecondaryIndexes"][0]
            assert gsi["OnDemandThroughput"] == {"MaxReadRequestUnits": 40, "MaxWriteRequestUnits": 20}
        finally:
            ddb.delete_table(TableName=name)

    def test_items_survive_updates(self, ddb: Any) -> None:
        name = make(ddb)
        try:
            ddb.put_item(TableName=name, Item={"pk": {"S": "keep"}, "v": {"N": "1"}})
            ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")
            active(ddb, name)
            item = ddb.get_item(TableName=name, Key={"pk": {"S": "keep"}}, ConsistentRead=True)["Item"]
            assert item == {"pk": {"S": "keep"}, "v": {"N": "1"}}
        finally:
            ddb.delete_table(TableName=name)
