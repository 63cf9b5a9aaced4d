"""global_tables/replicas.py: the status DescribeTable shows of a strongly consistent table's witness; the
settings every replica shares; the versions of a replica's own settings."""

from __future__ import annotations

import dataclasses

import orjson

from dynastore.global_tables.replicas import synchronized_settings, witness_status
from dynastore.model.table_schema import (
    ACTIVE,
    CREATING,
    DELETING,
    BillingMode,
    IndexDef,
    KeyAttr,
    KeySchema,
    OnDemandThroughput,
    Projection,
    ReplicaDef,
    TableDef,
)
from dynastore.model.warm_throughput import WarmThroughput


def table(*statuses: str, witness: str | None = "us-west-2") -> TableDef:
    base = TableDef(
        name="t",
        table_id=1,
        uuid="u",
        key_schema=KeySchema(KeyAttr("pk", "S")),
        attribute_definitions=(KeyAttr("pk", "S"),),
        created_at=0.0,
    )
    replicas = tuple(ReplicaDef(f"us-east-{n + 2}", status) for n, status in enumerate(statuses))
    return dataclasses.replace(base, replicas=replicas, strong_log="log", witness_region=witness)


def test_no_witness() -> None:
    assert witness_status(table(ACTIVE, ACTIVE, witness=None)) is None


def test_follows_the_replicas() -> None:
    assert witness_status(table(CREATING)) == CREATING
    assert witness_status(table(ACTIVE)) == ACTIVE
    assert witness_status(table(DELETING)) == DELETING


def with_gsi(td: TableDef, **settings: object) -> TableDef:
    gsi = IndexDef("by_g", "GSI", KeySchema(KeyAttr("g", "S")), Projection("ALL"), index_id=2)
    return dataclasses.replace(td, gsis=(dataclasses.replace(gsi, **settings),))  # type: ignore[arg-type]


def test_on_demand_and_warm_throughput_of_the_table_and_its_gsis_are_synchronized() -> None:
    base = with_gsi(table(ACTIVE, witness=None))
    changes = [
        dataclasses.replace(base, on_demand=OnDemandThroughput(max_write=10)),
        dataclasses.replace(base, on_demand=OnDemandThroughput(max_read=10)),
        dataclasses.replace(base, warm=WarmThroughput(13000, 4000)),
        with_gsi(base, on_demand=OnDemandThroughput(max_write=10)),
        with_gsi(base, warm=WarmThroughput(12000, 5000)),
    ]
    settings = [synchronized_settings(changed) for changed in changes]
    assert all(found != synchronized_settings(base) for found in settings)
    assert len(set(settings)) == len(settings)


def test_a_replicas_own_settings_are_not_synchronized() -> None:
    base = table(ACTIVE, witness=None)
    own = dataclasses.replace(
        base, deletion_protection=True, table_class="STANDARD_INFREQUENT_ACCESS", tags=(("k", "v"),)
    )
    assert synchronized_settings(own) == synchronized_settings(base)


def test_a_change_of_a_replicas_own_settings_is_announced() -> None:
    # Not shared, but their versions are in the digest: a region that changed them announces the table's list.
    base = table(ACTIVE, witness=None)
    first = dataclasses.replace(base, replicas=(ReplicaDef("us-west-2", ACTIVE, overrides_version=(1, "us-east-1")),))
    later = dataclasses.replace(base, replicas=(ReplicaDef("us-west-2", ACTIVE, overrides_version=(2, "us-east-1")),))
    assert synchronized_settings(first) != synchronized_settings(base)
    assert synchronized_settings(later) != synchronized_settings(first)
    # A status is no setting.
    moved = dataclasses.replace(first, replicas=(dataclasses.replace(first.replicas[0], status=CREATING),))
    assert synchronized_settings(moved) == synchronized_settings(first)


def test_replica_settings_versions_are_kept_in_the_record() -> None:
    replica = ReplicaDef(
        "us-west-2", ACTIVE, read_capacity_override=7, gsi_overrides=(("by_g", 3),),
        table_class="STANDARD_INFREQUENT_ACCESS", overrides_version=(1700000000000, "us-east-1"),
    )  # fmt: skip
    td = dataclasses.replace(table(ACTIVE, witness=None), replicas=(replica,), own_overrides_version=(5, "eu-west-1"))
    again = TableDef.from_record(orjson.loads(orjson.dumps(td.to_record())))
    assert again.replicas == (replica,)
    assert again.own_overrides_version == (5, "eu-west-1")
    # A record written before versions were kept reads as having none.
    assert ReplicaDef.from_record(replica.to_record()[:7]) == dataclasses.replace(replica, overrides_version=None)
    old = td.to_record()
    del old["oov"]
    assert TableDef.from_record(old).own_overrides_version is None


def test_on_demand_read_overrides_are_kept_in_the_record() -> None:
    replica = ReplicaDef(
        "us-west-2", ACTIVE, gsi_overrides=(("by_g", None),), overrides_version=(1, "us-east-1"),
        max_read_override=40, gsi_max_read_overrides=(("by_g", 30),),
    )  # fmt: skip
    td = dataclasses.replace(
        table(ACTIVE, witness=None), replicas=(replica,), own_max_read=20, own_gsi_max_reads=(("by_g", 10),)
    )
    again = TableDef.from_record(orjson.loads(orjson.dumps(td.to_record())))
    assert again.replicas == (replica,)
    assert (again.own_max_read, again.own_gsi_max_reads) == (20, (("by_g", 10),))
    # Records written before these overrides were kept read as having none.
    older = dataclasses.replace(replica, max_read_override=None, gsi_max_read_overrides=())
    assert ReplicaDef.from_record(replica.to_record()[:8]) == older
    old = td.to_record()
    del old["omr"], old["ogmr"]
    assert (TableDef.from_record(old).own_max_read, TableDef.from_record(old).own_gsi_max_reads) == (None, ())


def test_a_replicas_own_maximum_read_units_win_over_the_sets_and_are_not_synchronized() -> None:
    on_demand = dataclasses.replace(table(ACTIVE, witness=None), billing_mode=BillingMode.PAY_PER_REQUEST)
    base = with_gsi(dataclasses.replace(on_demand, on_demand=OnDemandThroughput(100, 50)))
    base = with_gsi(base, on_demand=OnDemandThroughput(80, 40))
    own = dataclasses.replace(base, own_max_read=7, own_gsi_max_reads=(("by_g", 5),))
    assert synchronized_settings(own) == synchronized_settings(base)
    gsi = own.gsis[0]
    assert (own.on_demand_of(), own.on_demand_of(gsi)) == (OnDemandThroughput(7, 50), OnDemandThroughput(5, 40))
    assert (base.on_demand_of(), base.on_demand_of(gsi)) == (OnDemandThroughput(100, 50), OnDemandThroughput(80, 40))
    # A table without a set maximum still takes its own; a provisioned one has none.
    bare = dataclasses.replace(table(ACTIVE, witness=None), own_max_read=9, billing_mode=BillingMode.PAY_PER_REQUEST)
    assert bare.on_demand_of() == OnDemandThroughput(9, None)
    assert dataclasses.replace(bare, billing_mode=BillingMode.PROVISIONED).on_demand_of() is None
