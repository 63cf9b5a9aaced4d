"""api/table_description.py: the wire TableDescription of model values, member for member and in order."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dynastore.api import create_table
from dynastore.api.table_description import (
    describe_index,
    describe_table,
    key_schema_description,
    table_description,
    throughput_description,
    warm_description,
)
from dynastore.app import build_context
from dynastore.config import Config
from dynastore.model.table_schema import (
    UPDATING,
    BillingMode,
    IndexDef,
    KeyAttr,
    KeySchema,
    OnDemandThroughput,
    Projection,
    ProvisionedThroughput,
    StreamSpec,
    TableDef,
)
from dynastore.model.warm_throughput import WarmThroughput
from dynastore.storage.catalog import Catalog
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock
from tests.unit.model.test_table_schema import ARN, NOW, full_table

REGION, ACCOUNT = "us-east-1", "000000000000"
BASELINE_WARM = {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000}


def test_a_provisioned_table_with_an_lsi_a_gsi_a_stream_and_sse() -> None:
    desc = describe_table(full_table(), REGION, ACCOUNT, NOW)
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
    assert desc == {
        "AttributeDefinitions": [
            {"AttributeName": "a", "AttributeType": "S"},
            {"AttributeName": "b", "AttributeType": "N"},
            {"AttributeName": "c", "AttributeType": "B"},
        ],
        "TableName": "t1",
        "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}],
        "TableStatus": "CREATING",
        "CreationDateTime": NOW,
        "ProvisionedThroughput": {
            "LastIncreaseDateTime": NOW,
            "NumberOfDecreasesToday": 0,
            "ReadCapacityUnits": 5,
            "WriteCapacityUnits": 6,
        },
        "TableSizeBytes": 30,
        "ItemCount": 3,
        "TableArn": ARN,
        "TableId": "0000-uuid",
        "BillingModeSummary": {"BillingMode": "PROVISIONED"},
        "LocalSecondaryIndexes": [
            {
                "IndexName": "l1",
                "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "c", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
                "IndexSizeBytes": 0,
                "ItemCount": 0,
                "IndexArn": ARN + "/index/l1",
            }
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "g1",
                "KeySchema": [{"AttributeName": "c", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "z"]},
                "IndexStatus": "CREATING",  # no Backfilling: an index created with its table (not online)
                "ProvisionedThroughput": {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 1, "WriteCapacityUnits": 2},
                "IndexSizeBytes": 0,
                "ItemCount": 0,
                "IndexArn": ARN + "/index/g1",
                "OnDemandThroughput": {"MaxReadRequestUnits": 10},
                "WarmThroughput": {**BASELINE_WARM, "Status": "CREATING"},
            }
        ],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        "LatestStreamLabel": "2023-11-14T22:13:20.000",
        "LatestStreamArn": ARN + "/stream/2023-11-14T22:13:20.000",
        "SSEDescription": {
            "Status": "ENABLED",
            "SSEType": "KMS",
            "KMSMasterKeyArn": "arn:aws:kms:us-east-1:000000000000:key/k",
        },
        "TableClassSummary": {"TableClass": "STANDARD"},
        "DeletionProtectionEnabled": True,
        "WarmThroughput": {**BASELINE_WARM, "Status": "CREATING"},
    }


def minimal(**changes: Any) -> TableDef:
    return replace(TableDef("t1", 1, "u", KeySchema(KeyAttr("a", "S")), (KeyAttr("a", "S"),), NOW), **changes)


def test_a_minimal_provisioned_table() -> None:
    assert describe_table(minimal(item_count=4, size_bytes=40), REGION, ACCOUNT, NOW) == {
        "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
        "TableName": "t1",
        "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
        "TableStatus": "ACTIVE",
        "CreationDateTime": NOW,
        "ProvisionedThroughput": {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
        "TableSizeBytes": 40,
        "ItemCount": 4,
        "TableArn": ARN,
        "TableId": "u",
        "DeletionProtectionEnabled": False,
        "WarmThroughput": {**BASELINE_WARM, "Status": "ACTIVE"},
    }


def on_demand_table() -> TableDef:
    gsi = IndexDef(
        "g1",
        "GSI",
        KeySchema(KeyAttr("a", "S")),
        Projection("ALL"),
        2,
        throughput=ProvisionedThroughput(3, 4),
        on_demand=OnDemandThroughput(None, 7),
        warm=WarmThroughput(15000, 5000),
    )
    return minimal(
        billing_mode=BillingMode.PAY_PER_REQUEST,
        last_update_to_pay_per_request=NOW - 10,
        throughput=ProvisionedThroughput(5, 5, last_decrease=NOW - 5, decreases_today=2),
        on_demand=OnDemandThroughput(100, 200),
        warm=WarmThroughput(20000, 6000),
        gsis=(gsi,),
        stream=StreamSpec(False, None, "2023-11-14T22:13:20.000"),
        table_class="STANDARD_INFREQUENT_ACCESS",
        table_class_updated_at=NOW - 1,
        status=UPDATING,
    )


def test_an_on_demand_table_with_configured_warm_throughput() -> None:
    assert describe_table(on_demand_table(), REGION, ACCOUNT, NOW) == {
        "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
        "TableName": "t1",
        "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
        "TableStatus": "UPDATING",
        "CreationDateTime": NOW,
        # On-demand: zero units, but the decrease date and the day's count stay.
        "ProvisionedThroughput": {
            "LastDecreaseDateTime": NOW - 5,
            "NumberOfDecreasesToday": 2,
            "ReadCapacityUnits": 0,
            "WriteCapacityUnits": 0,
        },
        "TableSizeBytes": 0,
        "ItemCount": 0,
        "TableArn": ARN,
        "TableId": "u",
        "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST", "LastUpdateToPayPerRequestDateTime": NOW - 10},
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "g1",
                "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
                "IndexStatus": "ACTIVE",
                "ProvisionedThroughput": {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
                "IndexSizeBytes": 0,
                "ItemCount": 0,
                "IndexArn": ARN + "/index/g1",
                "OnDemandThroughput": {"MaxWriteRequestUnits": 7},
                "WarmThroughput": {"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 5000, "Status": "ACTIVE"},
            }
        ],
        # A disabled stream: no StreamSpecification, the latest label stays.
        "LatestStreamLabel": "2023-11-14T22:13:20.000",
        "LatestStreamArn": ARN + "/stream/2023-11-14T22:13:20.000",
        "TableClassSummary": {"TableClass": "STANDARD_INFREQUENT_ACCESS", "LastUpdateDateTime": NOW - 1},
        "DeletionProtectionEnabled": False,
        "OnDemandThroughput": {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 200},
        # An UPDATING table's warm throughput is ACTIVE.
        "WarmThroughput": {"ReadUnitsPerSecond": 20000, "WriteUnitsPerSecond": 6000, "Status": "ACTIVE"},
    }


def test_without_warm_only_configured_warm_throughput_is_shown() -> None:
    configured = describe_table(on_demand_table(), REGION, ACCOUNT, NOW, warm=False)
    assert configured["WarmThroughput"] == {
        "ReadUnitsPerSecond": 20000,
        "WriteUnitsPerSecond": 6000,
        "Status": "ACTIVE",
    }
    assert "WarmThroughput" in configured["GlobalSecondaryIndexes"][0]
    baseline = describe_table(full_table(), REGION, ACCOUNT, NOW, warm=False)
    assert "WarmThroughput" not in baseline
    assert "WarmThroughput" not in baseline["GlobalSecondaryIndexes"][0]


def test_a_gsi_added_online_shows_its_backfill() -> None:
    gsi = IndexDef(
        "g",
        "GSI",
        KeySchema(KeyAttr("n", "N"), KeyAttr("s", "S")),
        Projection("KEYS_ONLY"),
        5,
        throughput=ProvisionedThroughput(1, 1),
        status="CREATING",
        backfilling=True,
        online=True,
        item_count=2,
        size_bytes=20,
    )
    assert describe_index(gsi, ARN, BillingMode.PROVISIONED, NOW) == {
        "IndexName": "g",
        "KeySchema": [{"AttributeName": "n", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
        "IndexStatus": "CREATING",
        "Backfilling": True,
        "ProvisionedThroughput": {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        "IndexSizeBytes": 20,
        "ItemCount": 2,
        "IndexArn": ARN + "/index/g",
        "WarmThroughput": {**BASELINE_WARM, "Status": "CREATING"},
    }
    done = replace(gsi, status="ACTIVE", backfilling=False)
    assert "Backfilling" not in describe_index(done, ARN, BillingMode.PROVISIONED, NOW)


def test_multi_attribute_key_schema_lists_hash_elements_then_range_elements() -> None:
    schema = KeySchema(KeyAttr("a", "S"), KeyAttr("c", "N"), (KeyAttr("b", "B"),), (KeyAttr("d", "S"),))
    assert key_schema_description(schema) == [
        {"AttributeName": "a", "KeyType": "HASH"},
        {"AttributeName": "b", "KeyType": "HASH"},
        {"AttributeName": "c", "KeyType": "RANGE"},
        {"AttributeName": "d", "KeyType": "RANGE"},
    ]


def test_decreases_count_only_in_the_utc_day_of_the_last_one() -> None:
    pt = ProvisionedThroughput(4, 5, last_increase=NOW - 50, last_decrease=NOW, decreases_today=3)
    assert throughput_description(pt, NOW + 86400) == {
        "LastIncreaseDateTime": NOW - 50,
        "LastDecreaseDateTime": NOW,
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": 4,
        "WriteCapacityUnits": 5,
    }


def test_warm_description_of_the_baseline_and_of_a_configured_value() -> None:
    assert warm_description(None, "ACTIVE") == {**BASELINE_WARM, "Status": "ACTIVE"}
    assert warm_description(WarmThroughput(13000, 4500), "CREATING") == {
        "ReadUnitsPerSecond": 13000,
        "WriteUnitsPerSecond": 4500,
        "Status": "CREATING",
    }


def test_table_description_carries_the_live_statistics_and_the_servers_region() -> None:
    clock = ManualClock()
    config = Config(in_memory=True, clock=clock, region="eu-west-1", account_id="123456789012")
    kv = MemoryKV()
    ctx = build_context(config, kv, Catalog.load(kv, config))
    create_table.handle(
        {
            "TableName": "t",
            "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
        },
        ctx,
    )
    ctx.catalog.add_stats("t", 3, 120)
    td = ctx.catalog.get("t")
    assert (td.item_count, td.size_bytes) == (0, 0)  # the counters are not persisted per write
    desc = table_description(ctx, td)
    assert (desc["ItemCount"], desc["TableSizeBytes"]) == (3, 120)
    assert desc["TableArn"] == "arn:aws:dynamodb:eu-west-1:123456789012:table/t"
    assert desc == describe_table(ctx.catalog.with_live_stats(td), "eu-west-1", "123456789012", clock.now())
