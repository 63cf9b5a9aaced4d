"""Control-plane handlers: semantic errors with DynamoDB's literal texts, and lifecycles on a ManualClock."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.api import (
    create_table,
    delete_table,
    describe_endpoints,
    describe_limits,
    describe_table,
    list_tables,
    tags,
    time_to_live,
    update_table,
)
from dynastore.app import build_context
from dynastore.config import Config
from dynastore.engine import indexes
from dynastore.engine.context import Context
from dynastore.errors import (
    AccessDeniedException,
    DynamoError,
    LimitExceededException,
    ResourceInUseException,
    ResourceNotFoundException,
    ValidationException,
)
from dynastore.storage.catalog import Catalog
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/"
PT = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}


def make_ctx(create: float = 0.0, update: float = 0.0, delete: float = 0.0) -> Context:
    clock = ManualClock()
    config = Config(
        in_memory=True,
        create_table_delay=create,
        update_table_delay=update,
        delete_table_delay=delete,
        clock=clock,
    )
    kv = MemoryKV()
    return build_context(config, kv, Catalog.load(kv, config))


@pytest.fixture
def ctx() -> Context:
    return make_ctx()


def clock(ctx: Context) -> ManualClock:
    c = ctx.config.clock
    assert isinstance(c, ManualClock)
    return c


def hash_table(name: str = "tbl", **extra: Any) -> dict[str, Any]:
    req: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
        "ProvisionedThroughput": dict(PT),
    }
    req.update(extra)
    return req


def range_table(name: str = "tbl", **extra: Any) -> dict[str, Any]:
    req = hash_table(name, **extra)
    req.setdefault(
        "AttributeDefinitions",
        [{"AttributeName": "a", "AttributeType": "S"}, {"AttributeName": "b", "AttributeType": "N"}],
    )
    if "AttributeDefinitions" not in extra:
        req["AttributeDefinitions"] = [
            {"AttributeName": "a", "AttributeType": "S"},
            {"AttributeName": "b", "AttributeType": "N"},
        ]
    req["KeySchema"] = [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}]
    return req


def lsi(name: str, range_key: str = "c", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "IndexName": name,
        "KeySchema": [
            {"AttributeName": "a", "KeyType": "HASH"},
            {"AttributeName": range_key, "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "ALL"},
    }
    out.update(extra)
    return out


def gsi(name: str, hash_key: str = "c", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "IndexName": name,
        "KeySchema": [{"AttributeName": hash_key, "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"},
        "ProvisionedThroughput": dict(PT),
    }
    out.update(extra)
    return out


ABC_DEFS = [
    {"AttributeName": "a", "AttributeType": "S"},
    {"AttributeName": "b", "AttributeType": "N"},
    {"AttributeName": "c", "AttributeType": "S"},
]


def error(exc_type: type[DynamoError], fn: Any, req: dict[str, Any], ctx: Context) -> str:
    with pytest.raises(exc_type) as info:
        fn(req, ctx)
    assert info.value.message is not None
    return info.value.message


# ---- CreateTable -------------------------------------------------------------------------------------------
INVALID = "One or more parameter values were invalid: "


@pytest.mark.parametrize(
    ("req", "message"),
    [
        (
            {**hash_table(), "ProvisionedThroughput": None},
            INVALID + "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
        ),
        (
            hash_table(BillingMode="PAY_PER_REQUEST"),
            INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be "
            "specified when BillingMode is PAY_PER_REQUEST",
        ),
        (
            hash_table(ProvisionedThroughput={"ReadCapacityUnits": 1000000000001, "WriteCapacityUnits": 5}),
            "Given value 1000000000001 for ReadCapacityUnits is out of bounds",
        ),
        (
            hash_table(AttributeDefinitions=[]),
            "Invalid KeySchema: Some index key attribute have no definition",
        ),
        (
            hash_table(AttributeDefinitions=[{"AttributeName": "b", "AttributeType": "S"}]),
            INVALID + "Some index key attributes are not defined in AttributeDefinitions. "
            "Keys: [a], AttributeDefinitions: [b]",
        ),
        (
            hash_table(
                AttributeDefinitions=[{"AttributeName": "a", "AttributeType": "S"}],
                KeySchema=[
                    {"AttributeName": "a", "KeyType": "HASH"},
                    {"AttributeName": "a", "KeyType": "HASH"},
                ],
            ),
            "Invalid KeySchema: Some index key attribute have no definition",
        ),
        (
            hash_table(
                AttributeDefinitions=ABC_DEFS[:2],
                KeySchema=[
                    {"AttributeName": "a", "KeyType": "HASH"},
                    {"AttributeName": "a", "KeyType": "HASH"},
                ],
            ),
            "Both the Hash Key and the Range Key element in the KeySchema have the same name",
        ),
        (
            hash_table(
                AttributeDefinitions=ABC_DEFS[:2],
                KeySchema=[
                    {"AttributeName": "a", "KeyType": "RANGE"},
                    {"AttributeName": "b", "KeyType": "HASH"},
                ],
            ),
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        ),
        (
            hash_table(
                AttributeDefinitions=ABC_DEFS[:2],
                KeySchema=[
                    {"AttributeName": "a", "KeyType": "HASH"},
                    {"AttributeName": "b", "KeyType": "HASH"},
                ],
            ),
            "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
        ),
        (
            hash_table(AttributeDefinitions=ABC_DEFS[:2]),
            INVALID + "Number of attributes in KeySchema does not exactly match number of attributes defined "
            "in AttributeDefinitions",
        ),
        (
            range_table(AttributeDefinitions=ABC_DEFS, LocalSecondaryIndexes=[]),
            INVALID + "Some AttributeDefinitions are not used. AttributeDefinitions: [a, b, c], keys used: [a, b]",
        ),
        (
            range_table(LocalSecondaryIndexes=[]),
            INVALID + "List of LocalSecondaryIndexes is empty",
        ),
        (
            hash_table(AttributeDefinitions=ABC_DEFS[:1] + ABC_DEFS[2:], LocalSecondaryIndexes=[lsi("i1")]),
            INVALID + "Table KeySchema does not have a range key, which is "
            "required when specifying a LocalSecondaryIndex",
        ),
        (
            range_table(LocalSecondaryIndexes=[lsi("i1", "d")]),
            INVALID + "Some index key attributes are not defined in AttributeDefinitions. "
            "Keys: [a, d], AttributeDefinitions: [a, b]",
        ),
        (
            range_table(
                LocalSecondaryIndexes=[
                    lsi("i1", KeySchema=[{"AttributeName": "b", "KeyType": "HASH"}]),
                ]
            ),
            INVALID + "Index KeySchema does not have a range key for index: i1",
        ),
        (
            range_table(
                LocalSecondaryIndexes=[
                    lsi(
                        "i1",
                        KeySchema=[
                            {"AttributeName": "b", "KeyType": "HASH"},
                            {"AttributeName": "a", "KeyType": "RANGE"},
                        ],
                    ),
                ]
            ),
            INVALID + "Index KeySchema does not have the same leading hash key as table KeySchema for index: i1. "
            "index hash key: b, table hash key: a",
        ),
        (
            range_table(LocalSecondaryIndexes=[lsi("i1", "b", Projection={})]),
            INVALID + "Unknown ProjectionType: null",
        ),
        (
            range_table(
                LocalSecondaryIndexes=[lsi("i1", "b", Projection={"ProjectionType": "ALL", "NonKeyAttributes": ["x"]})]
            ),
            INVALID + "ProjectionType is ALL, but NonKeyAttributes is specified",
        ),
        (
            range_table(LocalSecondaryIndexes=[lsi("i1", "b"), lsi("i1", "b")]),
            INVALID + "Duplicate index name: i1",
        ),
        (
            range_table(LocalSecondaryIndexes=[lsi(f"i{n}", "b") for n in range(6)]),
            INVALID + "Number of LocalSecondaryIndexes exceeds per-table limit of 5",
        ),
        (
            range_table(GlobalSecondaryIndexes=[]),
            INVALID + "List of GlobalSecondaryIndexes is empty",
        ),
        (
            range_table(GlobalSecondaryIndexes=[gsi("g1", "b", ProvisionedThroughput=None)]),
            INVALID + "ProvisionedThroughput is not specified for index: g1",
        ),
        (
            range_table(
                BillingMode="PAY_PER_REQUEST",
                ProvisionedThroughput=None,
                GlobalSecondaryIndexes=[gsi("g1", "b")],
            ),
            INVALID + "ProvisionedThroughput should not be specified for index: g1 when BillingMode is PAY_PER_REQUEST",
        ),
        (
            range_table(
                LocalSecondaryIndexes=[lsi("i1", "b")],
                GlobalSecondaryIndexes=[gsi("i1", "b")],
            ),
            INVALID + "Duplicate index name: i1",
        ),
        (
            range_table(GlobalSecondaryIndexes=[gsi(f"g{n}", "b") for n in range(21)]),
            INVALID + "GlobalSecondaryIndex count exceeds the per-table limit of 20",
        ),
        (
            hash_table(StreamSpecification={"StreamEnabled": True}),
            INVALID + "Table is being created with a stream enabled, UpdateViewType is required",
        ),
        (
            hash_table(StreamSpecification={"StreamEnabled": False, "StreamViewType": "KEYS_ONLY"}),
            INVALID + "Table is being created with a stream disabled, UpdateViewType should not be specified",
        ),
        (
            hash_table(SSESpecification={"Enabled": False, "SSEType": "KMS"}),
            INVALID + "SSEType can not be specified if Enabled is false",
        ),
        (
            hash_table(OnDemandThroughput={"MaxReadRequestUnits": 10}),
            INVALID + "MaxReadRequestUnits for OnDemandThroughput cannot be specified when the table BillingMode "
            "is PROVISIONED",
        ),
        (
            hash_table(Tags=[{"Key": "aws:x", "Value": "v"}]),
            "Tag Key cannot be prefixed with aws:, Key: aws:x",
        ),
        (
            hash_table(Tags=[{"Key": f"k{n}", "Value": "v"} for n in range(51)]),
            "Number of Tags exceed the current limit for the provided ResourceArn",
        ),
    ],
)
def test_create_table_semantic_errors(ctx: Context, req: dict[str, Any], message: str) -> None:
    req = {k: v for k, v in req.items() if v is not None}
    assert error(ValidationException, create_table.handle, req, ctx) == message
    assert ctx.catalog.list_names() == []


def test_create_table_response_and_duplicate(ctx: Context) -> None:
    out = create_table.handle(hash_table(), ctx)["TableDescription"]
    assert out["TableStatus"] == "CREATING"
    assert out["TableName"] == "tbl"
    assert out["TableArn"] == ARN + "tbl"
    assert out["KeySchema"] == [{"AttributeName": "a", "KeyType": "HASH"}]
    assert out["ProvisionedThroughput"] == {
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": 5,
        "WriteCapacityUnits": 5,
    }
    assert out["ItemCount"] == 0 and out["TableSizeBytes"] == 0
    assert out["DeletionProtectionEnabled"] is False
    assert "BillingModeSummary" not in out
    assert error(ResourceInUseException, create_table.handle, hash_table(), ctx) == "Table already exists: tbl"


def test_create_table_full_options(ctx: Context) -> None:
    req = range_table(
        AttributeDefinitions=ABC_DEFS,
        BillingMode="PAY_PER_REQUEST",
        ProvisionedThroughput=None,
        LocalSecondaryIndexes=[lsi("l1", Projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": ["z", "y"]})],
        GlobalSecondaryIndexes=[gsi("g1", ProvisionedThroughput=None, Projection={"ProjectionType": "KEYS_ONLY"})],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        SSESpecification={"Enabled": True},
        TableClass="STANDARD_INFREQUENT_ACCESS",
        DeletionProtectionEnabled=True,
        Tags=[{"Key": "k", "Value": "v"}],
    )
    req = {k: v for k, v in req.items() if v is not None}
    out = create_table.handle(req, ctx)["TableDescription"]
    assert out["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert out["ProvisionedThroughput"] == {
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": 0,
        "WriteCapacityUnits": 0,
    }
    [l1] = out["LocalSecondaryIndexes"]
    assert l1["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["y", "z"]}
    assert l1["IndexArn"] == ARN + "tbl/index/l1"
    assert "IndexStatus" not in l1
    [g1] = out["GlobalSecondaryIndexes"]
    assert g1["IndexStatus"] == "CREATING"
    assert g1["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    assert out["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    assert out["LatestStreamArn"] == ARN + "tbl/stream/" + out["LatestStreamLabel"]
    assert out["SSEDescription"]["Status"] == "ENABLED" and out["SSEDescription"]["SSEType"] == "KMS"
    assert out["TableClassSummary"] == {"TableClass": "STANDARD_INFREQUENT_ACCESS"}
    assert out["DeletionProtectionEnabled"] is True
    desc = describe_table.handle({"TableName": "tbl"}, ctx)["Table"]
    assert desc["TableStatus"] == "ACTIVE"
    assert desc["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"
    listed = tags.handle_list_tags_of_resource({"ResourceArn": ARN + "tbl"}, ctx)
    assert listed == {"Tags": [{"Key": "k", "Value": "v"}]}


# ---- lifecycle ---------------------------------------------------------------------------------------------
def test_creating_then_active_and_data_plane_visibility() -> None:
    ctx = make_ctx(create=5)
    create_table.handle(hash_table(), ctx)
    assert describe_table.handle({"TableName": "tbl"}, ctx)["Table"]["TableStatus"] == "CREATING"
    with pytest.raises(ResourceNotFoundException) as info:
        ctx.catalog.get_active("tbl")
    assert info.value.message == "Requested resource not found"
    msg = error(ResourceInUseException, delete_table.handle, {"TableName": "tbl"}, ctx)
    assert msg == "Attempt to change a resource which is still in use: Table is being created: tbl"
    msg = error(ResourceInUseException, update_table.handle, {"TableName": "tbl", "ProvisionedThroughput": PT}, ctx)
    assert msg == "Attempt to change a resource which is still in use: Table is being created: tbl"
    clock(ctx).advance(5)
    assert describe_table.handle({"TableName": "tbl"}, ctx)["Table"]["TableStatus"] == "ACTIVE"
    assert ctx.catalog.get_active("tbl").name == "tbl"


def test_describe_missing_table(ctx: Context) -> None:
    msg = error(ResourceNotFoundException, describe_table.handle, {"TableName": "nope"}, ctx)
    assert msg == "Requested resource not found: Table: nope not found"


def test_delete_table_lifecycle() -> None:
    ctx = make_ctx(delete=3)
    create_table.handle(hash_table(), ctx)
    out = delete_table.handle({"TableName": "tbl"}, ctx)["TableDescription"]
    assert out["TableStatus"] == "DELETING"
    assert list_tables.handle({}, ctx) == {"TableNames": ["tbl"]}
    msg = error(ResourceInUseException, delete_table.handle, {"TableName": "tbl"}, ctx)
    assert msg == "Attempt to change a resource which is still in use: Table is being deleted: tbl"
    assert error(ResourceInUseException, create_table.handle, hash_table(), ctx) == "Table already exists: tbl"
    clock(ctx).advance(3)
    msg = error(ResourceNotFoundException, describe_table.handle, {"TableName": "tbl"}, ctx)
    assert msg == "Requested resource not found: Table: tbl not found"
    assert list_tables.handle({}, ctx) == {"TableNames": []}
    create_table.handle(hash_table(), ctx)


def test_delete_protected_table(ctx: Context) -> None:
    create_table.handle(hash_table(DeletionProtectionEnabled=True), ctx)
    msg = error(ValidationException, delete_table.handle, {"TableName": "tbl"}, ctx)
    assert msg == (
        "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first."
    )
    update_table.handle({"TableName": "tbl", "DeletionProtectionEnabled": False}, ctx)
    delete_table.handle({"TableName": "tbl"}, ctx)
    assert ctx.catalog.list_names() == []


def test_delete_missing(ctx: Context) -> None:
    msg = error(ResourceNotFoundException, delete_table.handle, {"TableName": "nope"}, ctx)
    assert msg == "Requested resource not found: Table: nope not found"


# ---- ListTables --------------------------------------------------------------------------------------------
def test_list_tables_paging(ctx: Context) -> None:
    for name in ("ccc", "aaa", "bbb", "ddd"):
        create_table.handle(hash_table(name), ctx)
    assert list_tables.handle({}, ctx) == {"TableNames": ["aaa", "bbb", "ccc", "ddd"]}
    page = list_tables.handle({"Limit": 2}, ctx)
    assert page == {"TableNames": ["aaa", "bbb"], "LastEvaluatedTableName": "bbb"}
    page = list_tables.handle({"Limit": 2, "ExclusiveStartTableName": "bbb"}, ctx)
    assert page == {"TableNames": ["ccc", "ddd"]}
    assert list_tables.handle({"ExclusiveStartTableName": "b"}, ctx) == {"TableNames": ["bbb", "ccc", "ddd"]}


# ---- UpdateTable -------------------------------------------------------------------------------------------
def test_update_nothing(ctx: Context) -> None:
    msg = error(ValidationException, update_table.handle, {"TableName": "tbl"}, ctx)
    assert msg == (
        "At least one of ProvisionedThroughput, BillingMode, "
        "UpdateStreamEnabled, GlobalSecondaryIndexUpdates, "
        "SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, "
        "ReplicaTransitRoleArn, MultiRegionConsistency, "
        "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required"
    )


def test_update_missing_table(ctx: Context) -> None:
    msg = error(ResourceNotFoundException, update_table.handle, {"TableName": "x1y", "ProvisionedThroughput": PT}, ctx)
    assert msg == "Requested resource not found: Table: x1y not found"


def test_update_same_throughput(ctx: Context) -> None:
    create_table.handle(hash_table(), ctx)
    msg = error(ValidationException, update_table.handle, {"TableName": "tbl", "ProvisionedThroughput": PT}, ctx)
    assert msg == (
        "The provisioned throughput for the table will not change. "
        "The requested value equals the current value. "
        "Current ReadCapacityUnits provisioned for the table: 5. Requested ReadCapacityUnits: 5. "
        "Current WriteCapacityUnits provisioned for the table: 5. Requested WriteCapacityUnits: 5. "
        "Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
    )


def test_update_throughput_lifecycle() -> None:
    ctx = make_ctx(update=10)
    create_table.handle(hash_table(), ctx)
    now = clock(ctx).now()
    req = {"TableName": "tbl", "ProvisionedThroughput": {"ReadCapacityUnits": 10, "WriteCapacityUnits": 5}}
    out = update_table.handle(req, ctx)["TableDescription"]
    assert out["TableStatus"] == "UPDATING"
    assert out["ProvisionedThroughput"] == {
        "LastIncreaseDateTime": now,
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": 5,
        "WriteCapacityUnits": 5,
    }
    msg = error(ResourceInUseException, update_table.handle, req, ctx)
    assert msg == "Attempt to change a resource which is still in use: Table is being updated: tbl"
    msg = error(ResourceInUseException, delete_table.handle, {"TableName": "tbl"}, ctx)
    assert msg == "Attempt to change a resource which is still in use: Table is being updated: tbl"
    assert ctx.catalog.get_active("tbl").name == "tbl"  # UPDATING tables serve items
    clock(ctx).advance(10)
    desc = describe_table.handle({"TableName": "tbl"}, ctx)["Table"]
    assert desc["TableStatus"] == "ACTIVE"
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 10
    decrease = {
        "TableName": "tbl",
        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
    }
    update_table.handle(decrease, ctx)
    clock(ctx).advance(10)
    pt = describe_table.handle({"TableName": "tbl"}, ctx)["Table"]["ProvisionedThroughput"]
    assert pt["NumberOfDecreasesToday"] == 1
    assert pt["ReadCapacityUnits"] == 1
    assert pt["LastDecreaseDateTime"] == now + 10


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"BillingMode": "PAY_PER_REQUEST", "ProvisionedThroughput": PT},
            INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be "
            "specified when BillingMode is PAY_PER_REQUEST",
        ),
        (
            {"GlobalSecondaryIndexUpdates": [{}]},
            INVALID + "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
            "GlobalSecondaryIndexUpdate.Delete must not be null",
        ),
        (
            {
                "GlobalSecondaryIndexUpdates": [
                    {"Delete": {"IndexName": "abc"}},
                    {"Delete": {"IndexName": "abc"}},
                ]
            },
            INVALID + "Only one global secondary index update per index is allowed simultaneously. Index: abc",
        ),
        (
            {"SSESpecification": {"Enabled": True}, "DeletionProtectionEnabled": True},
            INVALID + "Server-Side Encryption modification must be the only operation in the request",
        ),
        (
            {"StreamSpecification": {"StreamEnabled": True}},
            INVALID + "If stream is being enabled then UpdateViewType is required",
        ),
        (
            {"StreamSpecification": {"StreamEnabled": False}},
            "Table has no stream to disable: TableName: tbl",
        ),
        (
            {"GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "nope", "ProvisionedThroughput": PT}}]},
            "Requested resource not found: Index nope for table tbl",
        ),
        (
            {
                "GlobalSecondaryIndexUpdates": [
                    {
                        "Update": {
                            "IndexName": "x1y",
                            "ProvisionedThroughput": {**PT, "ReadCapacityUnits": 10**12 + 1},
                        }
                    }
                ]
            },
            "This operation cannot be performed with given input values. "
            "Please contact DynamoDB service team for "
            "more info: Action Blocked: IndexUpdate",
        ),
        (
            {"BillingMode": "PAY_PER_REQUEST", "TableClass": "NOPE"},
            "Invalid table-class parameter provided. Please try again with a valid table-class value: "
            "[STANDARD, STANDARD_INFREQUENT_ACCESS].",
        ),
    ],
)
def test_update_table_semantic_errors(ctx: Context, extra: dict[str, Any], message: str) -> None:
    create_table.handle(hash_table(), ctx)
    with pytest.raises(DynamoError) as info:
        update_table.handle({"TableName": "tbl", **extra}, ctx)
    assert info.value.message == message


def test_update_billing_switch(ctx: Context) -> None:
    create_table.handle(range_table(AttributeDefinitions=ABC_DEFS, GlobalSecondaryIndexes=[gsi("g1")]), ctx)
    now = clock(ctx).now()
    out = update_table.handle({"TableName": "tbl", "BillingMode": "PAY_PER_REQUEST"}, ctx)["TableDescription"]
    assert out["BillingModeSummary"] == {
        "BillingMode": "PAY_PER_REQUEST",
        "LastUpdateToPayPerRequestDateTime": now,
    }
    assert out["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    assert out["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    msg = error(ValidationException, update_table.handle, {"TableName": "tbl", "BillingMode": "PROVISIONED"}, ctx)
    assert msg == INVALID + "ProvisionedThroughput must be specified when BillingMode is PROVISIONED"
    req: dict[str, Any] = {"TableName": "tbl", "BillingMode": "PROVISIONED", "ProvisionedThroughput": PT}
    msg = error(ValidationException, update_table.handle, req, ctx)
    assert msg == INVALID + "ProvisionedThroughput must be specified for index: g1"
    req["GlobalSecondaryIndexUpdates"] = [{"Update": {"IndexName": "g1", "ProvisionedThroughput": PT}}]
    out = update_table.handle(req, ctx)["TableDescription"]
    assert out["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert out["ProvisionedThroughput"]["ReadCapacityUnits"] == 5


def test_update_gsi_create_and_delete() -> None:
    ctx = make_ctx(update=4)
    create_table.handle(hash_table(), ctx)
    create = {
        "TableName": "tbl",
        "AttributeDefinitions": [{"AttributeName": "c", "AttributeType": "N"}],
        "GlobalSecondaryIndexUpdates": [{"Create": gsi("g1")}],
    }
    out = update_table.handle(create, ctx)["TableDescription"]
    assert out["TableStatus"] == "UPDATING"
    [g1] = out["GlobalSecondaryIndexes"]
    assert g1["IndexStatus"] == "CREATING" and g1["Backfilling"] is True  # online: copying existing items
    assert {"AttributeName": "c", "AttributeType": "N"} in out["AttributeDefinitions"]
    clock(ctx).advance(4)
    assert describe_table.handle({"TableName": "tbl"}, ctx)["Table"]["GlobalSecondaryIndexes"][0]["Backfilling"]
    indexes.maintain(ctx)  # the server's maintenance loop: the backfill of an empty table ends at once
    assert describe_table.handle({"TableName": "tbl"}, ctx)["Table"]["GlobalSecondaryIndexes"][0]["IndexStatus"] == (
        "ACTIVE"
    )
    again = {"TableName": "tbl", "GlobalSecondaryIndexUpdates": [{"Create": gsi("g1")}]}
    assert error(ValidationException, update_table.handle, again, ctx) == (
        "Attempting to create an index which already exists"
    )
    two = {
        "TableName": "tbl",
        "GlobalSecondaryIndexUpdates": [{"Create": gsi("g2")}, {"Delete": {"IndexName": "g1"}}],
    }
    assert error(LimitExceededException, update_table.handle, two, ctx) == (
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table"
    )
    out = update_table.handle(
        {"TableName": "tbl", "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "g1"}}]}, ctx
    )
    assert out["TableDescription"]["GlobalSecondaryIndexes"][0]["IndexStatus"] == "DELETING"
    clock(ctx).advance(4)
    desc = describe_table.handle({"TableName": "tbl"}, ctx)["Table"]
    assert "GlobalSecondaryIndexes" not in desc
    assert desc["AttributeDefinitions"] == [{"AttributeName": "a", "AttributeType": "S"}]


def test_update_stream(ctx: Context) -> None:
    create_table.handle(hash_table(), ctx)
    req = {"TableName": "tbl", "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}}
    out = update_table.handle(req, ctx)["TableDescription"]
    assert out["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
    assert error(ValidationException, update_table.handle, req, ctx) == (
        "Table already has an enabled stream: TableName: tbl"
    )
    off = update_table.handle({"TableName": "tbl", "StreamSpecification": {"StreamEnabled": False}}, ctx)
    assert "StreamSpecification" not in off["TableDescription"]
    assert off["TableDescription"]["LatestStreamLabel"] == out["LatestStreamLabel"]


# ---- tags --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("arn", "exc", "message"),
    [
        ("tbl", ValidationException, INVALID + "ARNs must start with 'arn:': tbl"),
        (
            "arn:aws:s3:us-east-1:000000000000:table/tbl",
            ValidationException,
            INVALID + "Provided Arn is not a DynamoDB resource arn: arn:aws:s3:us-east-1:000000000000:table/tbl",
        ),
        (
            "a:b:c:d:e:f/g",
            ValidationException,
            INVALID + "ARNs must start with 'arn:': a:b:c:d:e:f/g",
        ),
        (
            ARN + "ab",
            ValidationException,
            "Invalid TableArn: Invalid ResourceArn provided as input " + ARN + "ab",
        ),
        (
            ARN + "tbl/index/g1",
            ValidationException,
            INVALID
            + "Invalid resource arn provided, only table or stream is accepted. Provided resource arn: "
            + ARN
            + "tbl/index/g1",
        ),
        ("arn:aws:dynamodb:us-east-1:111111111111:table/tbl", AccessDeniedException, "Access is denied"),
        (
            ARN + "missing",
            ResourceNotFoundException,
            "Requested resource not found: ResourcArn: " + ARN + "missing not found",
        ),
    ],
)
def test_tag_arn_errors(ctx: Context, arn: str, exc: type[DynamoError], message: str) -> None:
    create_table.handle(hash_table(), ctx)
    for fn, req in (
        (tags.handle_tag_resource, {"ResourceArn": arn, "Tags": [{"Key": "k", "Value": "v"}]}),
        (tags.handle_untag_resource, {"ResourceArn": arn, "TagKeys": ["k"]}),
        (tags.handle_list_tags_of_resource, {"ResourceArn": arn}),
    ):
        assert error(exc, fn, req, ctx) == message


def test_tags_roundtrip_and_limits(ctx: Context) -> None:
    create_table.handle(hash_table(), ctx)
    arn = ARN + "tbl"
    assert error(ValidationException, tags.handle_tag_resource, {"ResourceArn": arn, "Tags": []}, ctx) == (
        "Atleast one Tag needs to be provided as Input."
    )
    assert error(ValidationException, tags.handle_untag_resource, {"ResourceArn": arn, "TagKeys": []}, ctx) == (
        "Atleast one Tag Key needs to be provided as Input."
    )
    dup = {"ResourceArn": arn, "Tags": [{"Key": "d", "Value": "1"}, {"Key": "d", "Value": "2"}]}
    assert error(ValidationException, tags.handle_tag_resource, dup, ctx) == (
        "Duplicate Tag Keys provided as input: Duplicate Tag Key found d"
    )
    bad = {"ResourceArn": arn, "Tags": [{"Key": "k", "Value": "a,b"}]}
    assert error(ValidationException, tags.handle_tag_resource, bad, ctx) == (
        "The Tag Value provided is invalid, Value: a,b"
    )
    tags.handle_tag_resource(
        {"ResourceArn": arn, "Tags": [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]}, ctx
    )
    tags.handle_tag_resource({"ResourceArn": arn, "Tags": [{"Key": "a", "Value": "3"}]}, ctx)
    tags.handle_untag_resource({"ResourceArn": arn, "TagKeys": ["b", "zz"]}, ctx)
    assert tags.handle_list_tags_of_resource({"ResourceArn": arn}, ctx) == {"Tags": [{"Key": "a", "Value": "3"}]}
    many = {"ResourceArn": arn, "Tags": [{"Key": f"k{n}", "Value": "v"} for n in range(50)]}
    assert error(ValidationException, tags.handle_tag_resource, many, ctx) == (
        "Number of Tags exceed the current limit for the provided ResourceArn"
    )


def test_tags_on_creating_table() -> None:
    ctx = make_ctx(create=5)
    create_table.handle(hash_table(), ctx)
    msg = error(ResourceNotFoundException, tags.handle_list_tags_of_resource, {"ResourceArn": ARN + "tbl"}, ctx)
    assert msg == "Requested resource not found: ResourcArn: " + ARN + "tbl not found"


# ---- limits, endpoints, TTL --------------------------------------------------------------------------------
def test_describe_limits_and_endpoints(ctx: Context) -> None:
    assert describe_limits.handle({}, ctx) == {
        "AccountMaxReadCapacityUnits": 80000,
        "AccountMaxWriteCapacityUnits": 80000,
        "TableMaxReadCapacityUnits": 40000,
        "TableMaxWriteCapacityUnits": 40000,
    }
    assert describe_endpoints.handle({}, ctx) == {
        "Endpoints": [{"Address": "127.0.0.1:8000", "CachePeriodInMinutes": 1440}]
    }


def test_time_to_live(ctx: Context) -> None:
    create_table.handle(hash_table(), ctx)
    assert time_to_live.handle_describe({"TableName": "tbl"}, ctx) == {
        "TimeToLiveDescription": {"TimeToLiveStatus": "DISABLED"}
    }
    off = {"TableName": "tbl", "TimeToLiveSpecification": {"Enabled": False, "AttributeName": "exp"}}
    assert error(ValidationException, time_to_live.handle_update, off, ctx) == "TimeToLive is already disabled"
    on = {"TableName": "tbl", "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "exp"}}
    assert time_to_live.handle_update(on, ctx) == {"TimeToLiveSpecification": {"Enabled": True, "AttributeName": "exp"}}
    assert time_to_live.handle_describe({"TableName": "tbl"}, ctx) == {
        "TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED", "AttributeName": "exp"}
    }
    assert error(ValidationException, time_to_live.handle_update, on, ctx) == "TimeToLive is already enabled"
    other = {"TableName": "tbl", "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "x"}}
    assert error(ValidationException, time_to_live.handle_update, other, ctx) == (
        "TimeToLive is active on a different AttributeName: current AttributeName is exp"
    )
    time_to_live.handle_update(off, ctx)
    assert ctx.catalog.get("tbl").ttl is not None
    missing = {"TableName": "nope"}
    assert error(ResourceNotFoundException, time_to_live.handle_describe, missing, ctx) == (
        "Requested resource not found: Table: nope not found"
    )


def test_describe_ttl_while_creating() -> None:
    ctx = make_ctx(create=5)
    create_table.handle(hash_table(), ctx)
    assert error(ValidationException, time_to_live.handle_describe, {"TableName": "tbl"}, ctx) == (
        "Cannot describe time to live while table is in CREATING state: Current table state is CREATING"
    )
