"""TableDef: record round-trips, lazy settling, and the wire TableDescription shapes."""

from __future__ import annotations

import orjson

from dynastore.model.table_schema import (
    SSE,
    BillingMode,
    IndexDef,
    KeyAttr,
    KeySchema,
    OnDemandThroughput,
    Projection,
    ProvisionedThroughput,
    StreamSpec,
    TableDef,
    TtlSpec,
)

NOW = 1_700_000_000.0
ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/t1"


def full_table() -> TableDef:
    keys = KeySchema(KeyAttr("a", "S"), KeyAttr("b", "N"))
    return TableDef(
        name="t1",
        table_id=7,
        uuid="0000-uuid",
        key_schema=keys,
        attribute_definitions=(KeyAttr("b", "N"), KeyAttr("a", "S"), KeyAttr("c", "B")),
        created_at=NOW,
        billing_mode=BillingMode.PROVISIONED,
        billing_mode_explicit=True,
        throughput=ProvisionedThroughput(5, 6, last_increase=NOW),
        on_demand=None,
        lsis=(IndexDef("l1", "LSI", KeySchema(KeyAttr("a", "S"), KeyAttr("c", "B")), Projection("KEYS_ONLY"), 8),),
        gsis=(
            IndexDef(
                "g1",
                "GSI",
                KeySchema(KeyAttr("c", "B")),
                Projection("INCLUDE", ("z", "x")),
                9,
                throughput=ProvisionedThroughput(1, 2),
                on_demand=OnDemandThroughput(10, None),
                status="CREATING",
            ),
        ),
        stream=StreamSpec(True, "NEW_IMAGE", "2023-11-14T22:13:20.000"),
        sse=SSE("KMS", "arn:aws:kms:us-east-1:000000000000:key/k"),
        table_class="STANDARD",
        deletion_protection=True,
        tags=(("k", "v"),),
        ttl=TtlSpec("exp", True),
        status="CREATING",
        status_until=NOW + 5,
        item_count=3,
        size_bytes=30,
    )


def test_record_round_trip_through_json() -> None:
    td = full_table()
    assert TableDef.from_record(orjson.loads(orjson.dumps(td.to_record()))) == td


def test_describe_full_shape() -> None:
    desc = full_table().describe("us-east-1", "000000000000", now=NOW)
    assert list(desc) == [
        "AttributeDefinitions",
        "TableName",
        "KeySchema",
        "TableStatus",
        "CreationDateTime",
        "ProvisionedThroughput",
        "TableSizeBytes",
        "ItemCount",
        "TableArn",
        "TableId",
        "BillingModeSummary",
        "LocalSecondaryIndexes",
        "GlobalSecondaryIndexes",
        "StreamSpecification",
        "LatestStreamLabel",
        "LatestStreamArn",
        "SSEDescription",
        "TableClassSummary",
        "DeletionProtectionEnabled",
        "WarmThroughput",
    ]
    assert desc["AttributeDefinitions"] == [
        {"AttributeName": "a", "AttributeType": "S"},
        {"AttributeName": "b", "AttributeType": "N"},
        {"AttributeName": "c", "AttributeType": "B"},
    ]
    assert desc["KeySchema"] == [
        {"AttributeName": "a", "KeyType": "HASH"},
        {"AttributeName": "b", "KeyType": "RANGE"},
    ]
    assert desc["ProvisionedThroughput"] == {
        "LastIncreaseDateTime": NOW,
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": 5,
        "WriteCapacityUnits": 6,
    }
    assert desc["TableArn"] == ARN
    assert desc["TableId"] == "0000-uuid"
    assert desc["BillingModeSummary"] == {"BillingMode": "PROVISIONED"}
    assert desc["LocalSecondaryIndexes"] == [
        {
            "IndexName": "l1",
            "KeySchema": [
                {"AttributeName": "a", "KeyType": "HASH"},
                {"AttributeName": "c", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
            "IndexSizeBytes": 0,
            "ItemCount": 0,
            "IndexArn": ARN + "/index/l1",
        }
    ]
    assert desc["GlobalSecondaryIndexes"] == [
        {
            "IndexName": "g1",
            "KeySchema": [{"AttributeName": "c", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "z"]},
            "IndexStatus": "CREATING",  # no Backfilling: an index created with its table (not online)
            "ProvisionedThroughput": {
                "NumberOfDecreasesToday": 0,
                "ReadCapacityUnits": 1,
                "WriteCapacityUnits": 2,
            },
            "IndexSizeBytes": 0,
            "ItemCount": 0,
            "IndexArn": ARN + "/index/g1",
            "OnDemandThroughput": {"MaxReadRequestUnits": 10},
            "WarmThroughput": {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "CREATING"},
        }
    ]
    assert desc["LatestStreamArn"] == ARN + "/stream/2023-11-14T22:13:20.000"
    assert desc["SSEDescription"] == {
        "Status": "ENABLED",
        "SSEType": "KMS",
        "KMSMasterKeyArn": "arn:aws:kms:us-east-1:000000000000:key/k",
    }
    assert desc["TableClassSummary"] == {"TableClass": "STANDARD"}


def test_describe_minimal_provisioned_table() -> None:
    td = TableDef("t1", 1, "u", KeySchema(KeyAttr("a", "S")), (KeyAttr("a", "S"),), NOW)
    desc = td.describe("us-east-1", "000000000000", now=NOW, item_count=4, size_bytes=40)
    assert desc == {
        "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
        "TableName": "t1",
        "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
        "TableStatus": "ACTIVE",
        "CreationDateTime": NOW,
        "ProvisionedThroughput": {
            "NumberOfDecreasesToday": 0,
            "ReadCapacityUnits": 0,
            "WriteCapacityUnits": 0,
        },
        "TableSizeBytes": 40,
        "ItemCount": 4,
        "TableArn": ARN,
        "TableId": "u",
        "DeletionProtectionEnabled": False,
        "WarmThroughput": {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"},
    }


def test_pay_per_request_reports_zero_throughput() -> None:
    td = TableDef(
        "t1",
        1,
        "u",
        KeySchema(KeyAttr("a", "S")),
        (KeyAttr("a", "S"),),
        NOW,
        billing_mode=BillingMode.PAY_PER_REQUEST,
        last_update_to_pay_per_request=NOW,
        throughput=ProvisionedThroughput(5, 5),
    )
    desc = td.describe("us-east-1", "000000000000", now=NOW)
    assert desc["ProvisionedThroughput"] == {
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": 0,
        "WriteCapacityUnits": 0,
    }
    assert desc["BillingModeSummary"] == {
        "BillingMode": "PAY_PER_REQUEST",
        "LastUpdateToPayPerRequestDateTime": NOW,
    }


def test_settle_applies_pending_changes() -> None:
    td = full_table()
    assert td.settle(NOW + 4) is td
    settled = td.settle(NOW + 5)
    assert settled.status == "ACTIVE" and settled.status_until is None
    assert settled.gsis[0].status == "ACTIVE"


def test_decreases_today_resets_at_utc_midnight() -> None:
    pt = ProvisionedThroughput(1, 1, last_decrease=NOW, decreases_today=3)
    assert pt.decreases_on(NOW + 1) == 3
    assert pt.decreases_on(NOW + 86400) == 0


def test_multi_attribute_key_schema_round_trips() -> None:
    schema = KeySchema(KeyAttr("a", "S"), KeyAttr("c", "N"), (KeyAttr("b", "B"),), (KeyAttr("d", "S"),))
    assert schema.names == ("a", "b", "c", "d")
    assert [(k["AttributeName"], k["KeyType"]) for k in schema.to_wire()] == [
        ("a", "HASH"),
        ("b", "HASH"),
        ("c", "RANGE"),
        ("d", "RANGE"),
    ]
    assert KeySchema.from_record(schema.to_record()) == schema
    classic = KeySchema(KeyAttr("a", "S"), KeyAttr("c", "N"))
    assert classic.to_record() == [["a", "S"], ["c", "N"]]  # the stored form of existing tables is unchanged
    assert KeySchema.from_record(classic.to_record()) == classic
