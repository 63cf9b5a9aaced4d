"""CreateTable end to end: every semantic rule with DynamoDB's literal text, and the TableDescription shape."""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import pytest

from tests.e2e.conftest import error_of, unique_name

INVALID = "One or more parameter values were invalid: "
PT = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def defs(*pairs: str) -> list[dict[str, str]]:
    """defs("a:S", "b:N") -> AttributeDefinitions."""
    return [{"AttributeName": p.split(":")[0], "AttributeType": p.split(":")[1]} for p in pairs]


def keys(*pairs: str) -> list[dict[str, str]]:
    """keys("a:HASH", "b:RANGE") -> KeySchema."""
    return [{"AttributeName": p.split(":")[0], "KeyType": p.split(":")[1]} for p in pairs]


def lsi(name: str, *key: str, projection: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": keys(*key),
        "Projection": {"ProjectionType": "ALL"} if projection is None else projection,
    }


def gsi(name: str, *key: str, projection: dict[str, Any] | None = None, pt: Any = PT) -> dict[str, Any]:
    out = lsi(name, *key, projection=projection)
    if pt is not None:
        out["ProvisionedThroughput"] = pt
    return out


def request(**overrides: Any) -> dict[str, Any]:
    """A valid provisioned hash+range table request (a:S HASH, b:S RANGE), with overrides; None drops a member."""
    req: dict[str, Any] = {
        "TableName": unique_name("ct"),
        "AttributeDefinitions": defs("a:S", "b:S"),
        "KeySchema": keys("a:HASH", "b:RANGE"),
        "ProvisionedThroughput": PT,
    }
    req.update(overrides)
    return {k: v for k, v in req.items() if v is not None}


def hash_request(**overrides: Any) -> dict[str, Any]:
    return request(**{"AttributeDefinitions": defs("a:S"), "KeySchema": keys("a:HASH"), **overrides})


def create_error(ddb: Any, req: dict[str, Any]) -> tuple[str, str]:
    return error_of(lambda: ddb.create_table(**req))


def wait_active(ddb: Any, name: str) -> None:
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})


def drop(ddb: Any, name: str) -> None:
    wait_active(ddb, name)
    ddb.delete_table(TableName=name)


class TestValidation:
    """Phase-3 rules, in DynamoDB's order (dynalite's AWS-verified createTable cases, moto's, later rules)."""

    @pytest.mark.parametrize(
        ("overrides", "message"),
        [
            pytest.param(
                {"ProvisionedThroughput": None},
                INVALID + "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is "
                "PROVISIONED",
                id="provisioned-without-throughput",
            ),
            pytest.param(
                {"BillingMode": "PROVISIONED", "ProvisionedThroughput": None},
                INVALID + "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is "
                "PROVISIONED",
                id="explicit-provisioned-without-throughput",
            ),
            pytest.param(
                {"BillingMode": "PAY_PER_REQUEST"},
                INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is "
                "PAY_PER_REQUEST",
                id="ppr-with-throughput",
            ),
            pytest.param(
                {"ProvisionedThroughput": {"ReadCapacityUnits": 1000000000001, "WriteCapacityUnits": 1000000000001}},
                "Given value 1000000000001 for ReadCapacityUnits is out of bounds",
                id="read-out-of-bounds",
            ),
            pytest.param(
                {"ProvisionedThroughput": {"ReadCapacityUnits": 1000000000000, "WriteCapacityUnits": 1000000000001}},
                "Given value 1000000000001 for WriteCapacityUnits is out of bounds",
                id="write-out-of-bounds",
            ),
            pytest.param(
                {"AttributeDefinitions": [], "KeySchema": keys("a:HASH", "a:HASH")},
                "Invalid KeySchema: Some index key attribute have no definition",
                id="two-keys-no-definitions",
            ),
            pytest.param(
                {"AttributeDefinitions": defs("b:S"), "KeySchema": keys("a:HASH", "b:RANGE")},
                "Invalid KeySchema: Some index key attribute have no definition",
                id="two-keys-one-undefined",
            ),
            pytest.param(
                {"AttributeDefinitions": defs("a:S", "c:S", "d:S"), "KeySchema": keys("a:HASH", "b:RANGE")},
                "Invalid KeySchema: Some index key attribute have no definition",
                id="two-keys-range-undefined-among-many",
            ),
            pytest.param(
                {"AttributeDefinitions": defs("a:S"), "KeySchema": keys("a:HASH", "a:HASH")},
                "Invalid KeySchema: Some index key attribute have no definition",
                id="same-key-twice-one-definition",
            ),
            pytest.param(
                {"AttributeDefinitions": defs("b:S"), "KeySchema": keys("a:HASH")},
                INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [a], "
                "AttributeDefinitions: [b]",
                id="hash-key-undefined",
            ),
            pytest.param(
                {"AttributeDefinitions": defs("a:S", "b:S"), "KeySchema": keys("a:HASH", "a:HASH")},
                "Both the Hash Key and the Range Key element in the KeySchema have the same name",
                id="hash-and-range-same-name",
            ),
            pytest.param(
                {"KeySchema": keys("a:RANGE", "b:HASH")},
                "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
                id="first-not-hash",
            ),
            pytest.param(
                {"KeySchema": keys("a:RANGE", "b:RANGE")},
                "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
                id="both-range",
            ),
            pytest.param(
                {"KeySchema": keys("a:HASH", "b:HASH")},
                "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
                id="second-not-range",
            ),
            pytest.param(
                {"AttributeDefinitions": defs("a:S", "a:N"), "KeySchema": keys("a:HASH")},
                "Attribute Name is duplicated: a",
                id="duplicated-definition",
            ),
            pytest.param(
                {"AttributeDefinitions": defs("a:S", "b:S"), "KeySchema": keys("a:HASH")},
                INVALID + "Number of attributes in KeySchema does not exactly match number of attributes defined in "
                "AttributeDefinitions",
                id="extra-definition-hash",
            ),
            pytest.param(
                {"AttributeDefinitions": defs("a:S", "c:S", "b:S")},
                INVALID + "Number of attributes in KeySchema does not exactly match number of attributes defined in "
                "AttributeDefinitions",
                id="extra-definition-range",
            ),
            pytest.param(
                {
                    "AttributeDefinitions": defs("a:S", "b:S", "c:S", "d:S"),
                    "GlobalSecondaryIndexes": [gsi("gx1", "c:HASH")],
                },
                INVALID + "Some AttributeDefinitions are not used. AttributeDefinitions: [a, b, c, d], "
                "keys used: [a, b, c]",
                id="definition-unused-with-index",
            ),
            pytest.param(
                {"AttributeDefinitions": defs("a:S", "b:S"), "GlobalSecondaryIndexes": [gsi("gx1", "c:HASH")]},
                INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [c], "
                "AttributeDefinitions: [a, b]",
                id="gsi-key-undefined",
            ),
            pytest.param(
                {
                    "AttributeDefinitions": defs("a:S", "x:N"),
                    "KeySchema": keys("a:HASH"),
                    "GlobalSecondaryIndexes": [gsi("gx1", "u:HASH")],
                },
                INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [u], "
                "AttributeDefinitions: [a, x]",
                id="gsi-key-undefined-before-unused-definition",
            ),
            pytest.param(
                {
                    "AttributeDefinitions": defs("a:S", "b:S"),
                    "KeySchema": keys("a:HASH"),
                    "GlobalSecondaryIndexes": [gsi("gx1", "c:RANGE")],
                },
                INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [c], "
                "AttributeDefinitions: [a, b]",
                id="gsi-range-only-undefined",
            ),
        ],
    )
    def test_table_keys(self, ddb: Any, overrides: dict[str, Any], message: str) -> None:
        assert create_error(ddb, request(**overrides)) == ("ValidationException", message)

    @pytest.mark.parametrize(
        ("overrides", "message"),
        [
            pytest.param(
                {"LocalSecondaryIndexes": []},
                INVALID + "List of LocalSecondaryIndexes is empty",
                id="empty-list",
            ),
            pytest.param(
                {
                    "AttributeDefinitions": defs("a:S", "c:S"),
                    "KeySchema": keys("a:HASH"),
                    "LocalSecondaryIndexes": [lsi("ix1", "a:HASH", "c:RANGE")],
                },
                INVALID + "Table KeySchema does not have a range key, which is required when specifying a "
                "LocalSecondaryIndex",
                id="table-without-range",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi("ix1", "c:RANGE", "d:RANGE"), lsi("ix2", "e:RANGE")]},
                INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [c, d], "
                "AttributeDefinitions: [a, b]",
                id="keys-undefined",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi("ix1", "a:HASH", "c:RANGE")]},
                INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [a, c], "
                "AttributeDefinitions: [a, b]",
                id="range-undefined",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi("ix1", "a:RANGE")]},
                "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
                id="first-not-hash",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi("ix1", "a:HASH", "a:RANGE")]},
                "Both the Hash Key and the Range Key element in the KeySchema have the same name",
                id="same-names",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi("ix1", "a:HASH", "b:HASH")]},
                "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
                id="second-not-range",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi("ix1", "b:HASH")]},
                INVALID + "Index KeySchema does not have a range key for index: ix1",
                id="no-range",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi("ix1", "b:HASH", "a:RANGE")]},
                INVALID + "Index KeySchema does not have the same leading hash key as table KeySchema for index: "
                "ix1. index hash key: b, table hash key: a",
                id="other-hash",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi("ix1", "a:HASH", "b:RANGE", projection={})]},
                INVALID + "Unknown ProjectionType: null",
                id="projection-empty",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi("ix1", "a:HASH", "b:RANGE", projection={"NonKeyAttributes": ["x"]})]},
                INVALID + "Unknown ProjectionType: null",
                id="projection-type-missing",
            ),
            pytest.param(
                {
                    "LocalSecondaryIndexes": [
                        lsi("ix1", "a:HASH", "b:RANGE", projection={"ProjectionType": "ALL", "NonKeyAttributes": ["x"]})
                    ]
                },
                INVALID + "ProjectionType is ALL, but NonKeyAttributes is specified",
                id="all-with-non-key",
            ),
            pytest.param(
                {
                    "LocalSecondaryIndexes": [
                        lsi(
                            "ix1",
                            "a:HASH",
                            "b:RANGE",
                            projection={"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["x"]},
                        )
                    ]
                },
                INVALID + "ProjectionType is KEYS_ONLY, but NonKeyAttributes is specified",
                id="keys-only-with-non-key",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi("ix1", "a:HASH", "b:RANGE", projection={"ProjectionType": "INCLUDE"})]},
                INVALID + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified",
                id="include-without-non-key",
            ),
            pytest.param(
                {
                    "LocalSecondaryIndexes": [
                        lsi(
                            "ix1",
                            "a:HASH",
                            "b:RANGE",
                            projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "x"]},
                        )
                    ]
                },
                INVALID + "Duplicate element in NonKeyAttributes: x",
                id="include-duplicate-non-key",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi("ix1", "a:HASH", "b:RANGE"), lsi("ix1", "a:HASH", "b:RANGE")]},
                INVALID + "Duplicate index name: ix1",
                id="duplicate-name",
            ),
            pytest.param(
                {"LocalSecondaryIndexes": [lsi(f"i{n}x", "a:HASH", "b:RANGE") for n in range(6)]},
                INVALID + "Number of LocalSecondaryIndexes exceeds per-table limit of 5",
                id="too-many",
            ),
        ],
    )
    def test_local_secondary_indexes(self, ddb: Any, overrides: dict[str, Any], message: str) -> None:
        assert create_error(ddb, request(**overrides)) == ("ValidationException", message)

    @pytest.mark.parametrize(
        ("overrides", "message"),
        [
            pytest.param(
                {"GlobalSecondaryIndexes": []},
                INVALID + "List of GlobalSecondaryIndexes is empty",
                id="empty-list",
            ),
            pytest.param(
                {"GlobalSecondaryIndexes": [gsi("gx1", "c:RANGE", "d:RANGE"), gsi("gx2", "e:RANGE")]},
                INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [c, d], "
                "AttributeDefinitions: [a, b]",
                id="keys-undefined",
            ),
            pytest.param(
                {"GlobalSecondaryIndexes": [gsi("gx1", "a:RANGE")]},
                "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
                id="first-not-hash",
            ),
            pytest.param(
                {"GlobalSecondaryIndexes": [gsi("gx1", "a:HASH", "a:RANGE")]},
                "Both the Hash Key and the Range Key element in the KeySchema have the same name",
                id="same-names",
            ),
            pytest.param(  # two HASH elements are a multi-attribute key; a HASH after a RANGE is not
                {"GlobalSecondaryIndexes": [gsi("gx1", "a:HASH", "b:RANGE", "a:HASH")]},
                "The KeySchema contains multiple key attributes with the same name",
                id="hash-after-range-duplicate",
            ),
            pytest.param(
                {"GlobalSecondaryIndexes": [gsi("gx1", "b:HASH", projection={})]},
                INVALID + "Unknown ProjectionType: null",
                id="projection-empty",
            ),
            pytest.param(
                {
                    "GlobalSecondaryIndexes": [
                        gsi("gx1", "b:HASH", projection={"ProjectionType": "ALL", "NonKeyAttributes": ["x"]})
                    ]
                },
                INVALID + "ProjectionType is ALL, but NonKeyAttributes is specified",
                id="all-with-non-key",
            ),
            pytest.param(
                {"GlobalSecondaryIndexes": [gsi("gx1", "b:HASH", pt=None)]},
                INVALID + "ProvisionedThroughput is not specified for index: gx1",
                id="throughput-missing",
            ),
            pytest.param(
                {
                    "BillingMode": "PAY_PER_REQUEST",
                    "ProvisionedThroughput": None,
                    "GlobalSecondaryIndexes": [gsi("gx1", "b:HASH")],
                },
                INVALID + "ProvisionedThroughput should not be specified for index: gx1 when BillingMode is "
                "PAY_PER_REQUEST",
                id="ppr-with-index-throughput",
            ),
            pytest.param(
                {
                    "GlobalSecondaryIndexes": [
                        gsi("gx1", "b:HASH", pt={"ReadCapacityUnits": 1000000000001, "WriteCapacityUnits": 1})
                    ]
                },
                "Given value 1000000000001 for ReadCapacityUnits is out of bounds",
                id="index-throughput-out-of-bounds",
            ),
            pytest.param(
                {"GlobalSecondaryIndexes": [gsi("gx1", "b:HASH"), gsi("gx1", "b:HASH")]},
                INVALID + "Duplicate index name: gx1",
                id="duplicate-name",
            ),
            pytest.param(
                {
                    "LocalSecondaryIndexes": [lsi("ix1", "a:HASH", "b:RANGE")],
                    "GlobalSecondaryIndexes": [gsi("ix1", "b:HASH")],
                },
                INVALID + "Duplicate index name: ix1",
                id="duplicate-name-across-kinds",
            ),
            pytest.param(
                {"GlobalSecondaryIndexes": [gsi(f"g{n}x", "b:HASH") for n in range(21)]},
                INVALID + "GlobalSecondaryIndex count exceeds the per-table limit of 20",
                id="too-many",
            ),
        ],
    )
    def test_global_secondary_indexes(self, ddb: Any, overrides: dict[str, Any], message: str) -> None:
        assert create_error(ddb, request(**overrides)) == ("ValidationException", message)

    @pytest.mark.parametrize(
        ("overrides", "message"),
        [
            pytest.param(
                {"StreamSpecification": {"StreamEnabled": True}},
                INVALID + "Table is being created with a stream enabled, UpdateViewType is required",
                id="stream-enabled-without-view",
            ),
            pytest.param(
                {"StreamSpecification": {"StreamEnabled": False, "StreamViewType": "KEYS_ONLY"}},
                INVALID + "Table is being created with a stream disabled, UpdateViewType should not be specified",
                id="stream-disabled-with-view",
            ),
            pytest.param(
                {"SSESpecification": {"Enabled": False, "SSEType": "KMS"}},
                INVALID + "SSEType can not be specified if Enabled is false",
                id="sse-type-when-disabled",
            ),
            pytest.param(
                {"SSESpecification": {"Enabled": False, "KMSMasterKeyId": "k"}},
                INVALID + "KMSMasterKeyId can not be specified if Enabled is false",
                id="sse-key-when-disabled",
            ),
            pytest.param(
                {"SSESpecification": {"Enabled": True, "SSEType": "AES256"}},
                INVALID + "SSEType AES256 is not supported",
                id="sse-aes256",
            ),
            pytest.param(
                {"SSESpecification": {"Enabled": True, "KMSMasterKeyId": "k"}},
                INVALID + "SSEType KMS is required if KMSMasterKeyId is specified",
                id="sse-key-without-kms",
            ),
            pytest.param(
                {"OnDemandThroughput": {"MaxReadRequestUnits": 10}},
                INVALID + "MaxReadRequestUnits for OnDemandThroughput cannot be specified when the table "
                "BillingMode is PROVISIONED",
                id="on-demand-with-provisioned",
            ),
            pytest.param(
                {
                    "BillingMode": "PAY_PER_REQUEST",
                    "ProvisionedThroughput": None,
                    "OnDemandThroughput": {"MaxWriteRequestUnits": 0},
                },
                INVALID + "Requested MaxWriteRequestUnits for OnDemandThroughput for table is outside of valid range",
                id="on-demand-zero",
            ),
            pytest.param(
                {"Tags": [{"Key": "aws:x", "Value": "v"}]},
                "Tag Key cannot be prefixed with aws:, Key: aws:x",
                id="tag-aws-prefix",
            ),
            pytest.param(
                {"Tags": [{"Key": "k", "Value": "1"}, {"Key": "k", "Value": "2"}]},
                "Duplicate Tag Keys provided as input: Duplicate Tag Key found k",
                id="tag-duplicate",
            ),
            pytest.param(
                {"Tags": [{"Key": f"k{n}", "Value": "v"} for n in range(51)]},
                "Number of Tags exceed the current limit for the provided ResourceArn",
                id="tags-too-many",
            ),
        ],
    )
    def test_other_members(self, ddb: Any, overrides: dict[str, Any], message: str) -> None:
        assert create_error(ddb, request(**overrides)) == ("ValidationException", message)

    def test_constraint_errors_come_before_semantics(self, ddb: Any) -> None:
        code, message = create_error(
            ddb,
            request(ProvisionedThroughput={"ReadCapacityUnits": 0, "WriteCapacityUnits": 0}, TableClass="COLD"),
        )
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'ProvisionedThroughput.ReadCapacityUnits' failed to satisfy "
            "constraint: Member must have value greater than or equal to 1"
        )

    def test_existing_table_is_in_use(self, ddb: Any) -> None:
        req = hash_request(BillingMode="PAY_PER_REQUEST", ProvisionedThroughput=None)
        ddb.create_table(**req)
        try:
            assert create_error(ddb, req) == ("ResourceInUseException", f"Table already exists: {req['TableName']}")
        finally:
            drop(ddb, req["TableName"])


class TestFunctionality:
    def test_basic_provisioned_description(self, ddb: Any) -> None:
        req = hash_request(ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 2})
        before = time.time()
        desc = ddb.create_table(**req)["TableDescription"]
        try:
            region = ddb.meta.region_name
            assert re.fullmatch(rf"arn:aws:dynamodb:{region}:\d{{12}}:table/{req['TableName']}", desc.pop("TableArn"))
            assert UUID_RE.match(desc.pop("TableId"))
            created = desc.pop("CreationDateTime").timestamp()
            assert before - 5 <= created <= time.time() + 5
            assert desc.pop("TableStatus") in ("CREATING", "ACTIVE")
            assert desc == {
                "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
                "TableName": req["TableName"],
                "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
                "ProvisionedThroughput": {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 1, "WriteCapacityUnits": 2},
                "TableSizeBytes": 0,
                "ItemCount": 0,
                "DeletionProtectionEnabled": False,
            }
        finally:
            drop(ddb, req["TableName"])

    def test_pay_per_request_description(self, ddb: Any) -> None:
        req = request(BillingMode="PAY_PER_REQUEST", ProvisionedThroughput=None)
        desc = ddb.create_table(**req)["TableDescription"]
        try:
            assert desc["ProvisionedThroughput"] == {
                "NumberOfDecreasesToday": 0,
                "ReadCapacityUnits": 0,
                "WriteCapacityUnits": 0,
            }
            # The Developer Guide's sample CreateTable output of an on-demand table: the mode only; DescribeTable
            # adds when the table became on-demand (its creation).
            assert desc["BillingModeSummary"] == {"BillingMode": "PAY_PER_REQUEST"}
            described = ddb.describe_table(TableName=req["TableName"])["Table"]
            assert described["BillingModeSummary"] == {
                "BillingMode": "PAY_PER_REQUEST",
                "LastUpdateToPayPerRequestDateTime": desc["CreationDateTime"],
            }
        finally:
            drop(ddb, req["TableName"])

    def test_explicit_provisioned_has_billing_summary(self, ddb: Any) -> None:
        req = hash_request(BillingMode="PROVISIONED")
        desc = ddb.create_table(**req)["TableDescription"]
        try:
            assert desc["BillingModeSummary"] == {"BillingMode": "PROVISIONED"}
        finally:
            drop(ddb, req["TableName"])

    def test_index_descriptions(self, ddb: Any) -> None:
        req = request(
            AttributeDefinitions=defs("a:S", "b:S", "c:N"),
            LocalSecondaryIndexes=[
                lsi("by_c", "a:HASH", "c:RANGE", projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": ["z"]})
            ],
            GlobalSecondaryIndexes=[
                gsi("by_b", "b:HASH", "c:RANGE", pt={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}),
            ],
        )
        desc = ddb.create_table(**req)["TableDescription"]
        name = req["TableName"]
        try:
            arn = desc["TableArn"]
            assert desc["AttributeDefinitions"] == defs("a:S", "b:S", "c:N")
            assert desc["LocalSecondaryIndexes"] == [
                {
                    "IndexName": "by_c",
                    "KeySchema": keys("a:HASH", "c:RANGE"),
                    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["z"]},
                    "IndexSizeBytes": 0,
                    "ItemCount": 0,
                    "IndexArn": f"{arn}/index/by_c",
                }
            ]
            [g] = desc["GlobalSecondaryIndexes"]
            assert g.pop("IndexStatus") in ("CREATING", "ACTIVE")
            g.pop("Backfilling", None)
            assert g == {
                "IndexName": "by_b",
                "KeySchema": keys("b:HASH", "c:RANGE"),
                "Projection": {"ProjectionType": "ALL"},
                "ProvisionedThroughput": {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
                "IndexSizeBytes": 0,
                "ItemCount": 0,
                "IndexArn": f"{arn}/index/by_b",
            }
            wait_active(ddb, name)
            [g] = ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"]
            assert g["IndexStatus"] == "ACTIVE"
            assert "Backfilling" not in g
        finally:
            drop(ddb, name)

    def test_ppr_index_throughput_is_zero(self, ddb: Any) -> None:
        req = request(
            BillingMode="PAY_PER_REQUEST",
            ProvisionedThroughput=None,
            GlobalSecondaryIndexes=[gsi("by_b", "b:HASH", pt=None)],
        )
        desc = ddb.create_table(**req)["TableDescription"]
        try:
            [g] = desc["GlobalSecondaryIndexes"]
            assert g["ProvisionedThroughput"] == {
                "NumberOfDecreasesToday": 0,
                "ReadCapacityUnits": 0,
                "WriteCapacityUnits": 0,
            }
        finally:
            drop(ddb, req["TableName"])

    def test_stream_sse_class_protection_tags_on_demand(self, ddb: Any) -> None:
        req = hash_request(
            BillingMode="PAY_PER_REQUEST",
            ProvisionedThroughput=None,
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
            SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": "my-key"},
            TableClass="STANDARD_INFREQUENT_ACCESS",
            DeletionProtectionEnabled=True,
            Tags=[{"Key": "team", "Value": "core"}],
            OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50},
        )
        desc = ddb.create_table(**req)["TableDescription"]
        name = req["TableName"]
        arn = desc["TableArn"]
        try:
            assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
            label = desc["LatestStreamLabel"]
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}", label)
            assert desc["LatestStreamArn"] == f"{arn}/stream/{label}"
            region = ddb.meta.region_name
            assert desc["SSEDescription"]["Status"] == "ENABLED"
            assert desc["SSEDescription"]["SSEType"] == "KMS"
            assert re.fullmatch(rf"arn:aws:kms:{region}:\d{{12}}:key/my-key", desc["SSEDescription"]["KMSMasterKeyArn"])
            assert desc["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
            assert desc["DeletionProtectionEnabled"] is True
            assert desc["OnDemandThroughput"] == {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}
            wait_active(ddb, name)
            assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == [{"Key": "team", "Value": "core"}]
        finally:
            wait_active(ddb, name)
            ddb.update_table(TableName=name, DeletionProtectionEnabled=False)
            drop(ddb, name)

    def test_sse_without_key_gets_a_kms_key(self, ddb: Any) -> None:
        req = hash_request(SSESpecification={"Enabled": True})
        desc = ddb.create_table(**req)["TableDescription"]
        try:
            sse = desc["SSEDescription"]
            assert sse["SSEType"] == "KMS"
            assert sse["KMSMasterKeyArn"].startswith(f"arn:aws:kms:{ddb.meta.region_name}:")
        finally:
            drop(ddb, req["TableName"])

    def test_sse_disabled_means_no_description(self, ddb: Any) -> None:
        req = hash_request(SSESpecification={"Enabled": False})
        desc = ddb.create_table(**req)["TableDescription"]
        try:
            assert "SSEDescription" not in desc
        finally:
            drop(ddb, req["TableName"])

    def test_table_ids_are_unique(self, ddb: Any) -> None:
        a, b = hash_request(), hash_request()
        id_a = ddb.create_table(**a)["TableDescription"]["TableId"]
        id_b = ddb.create_table(**b)["TableDescription"]["TableId"]
        try:
            assert id_a != id_b
            assert uuid.UUID(id_a).version == 4
        finally:
            drop(ddb, a["TableName"])
            drop(ddb, b["TableName"])

    def test_five_lsis_and_twenty_gsis_are_allowed(self, ddb: Any) -> None:
        req = request(
            LocalSecondaryIndexes=[lsi(f"l{n}x", "a:HASH", "b:RANGE") for n in range(5)],
            GlobalSecondaryIndexes=[gsi(f"g{n}x", "b:HASH") for n in range(20)],
        )
        desc = ddb.create_table(**req)["TableDescription"]
        try:
            assert len(desc["LocalSecondaryIndexes"]) == 5
            assert len(desc["GlobalSecondaryIndexes"]) == 20
        finally:
            drop(ddb, req["TableName"])
