"""TableDef: record round-trips and lazy settling (its wire TableDescription: tests/unit/api)."""

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
    assert [k.name for k in schema.hash_keys] == ["a", "b"]
    assert [k.name for k in schema.range_keys] == ["c", "d"]
    assert KeySchema.from_record(schema.to_record()) == schema
    classic = KeySchema(KeyAttr("a", "S"), KeyAttr("c", "N"))
    assert classic.to_record() == [["a", "S"], ["c", "N"]]  # the stored form of existing tables is unchanged
    assert KeySchema.from_record(classic.to_record()) == classic
