"""DynamoDB's wire ``TableDescription`` of a table, built from its model values (model/table_schema.py).

CreateTable, UpdateTable, DeleteTable and DescribeTable answer with it. Members come in DynamoDB's order and
optional members only when set. Choices where DynamoDB's behaviour is not pinned down by a public source:
``BillingModeSummary`` appears for PAY_PER_REQUEST tables, for tables created with an explicit BillingMode
and for tables that were switched; ``TableClassSummary`` appears once a TableClass was given;
``AttributeDefinitions`` and ``NonKeyAttributes`` are sorted by name (as DynamoDB echoes them). A global table
(global_tables/) shows ``GlobalTableVersion`` and ``Replicas``: the other regions of its replica set, not its own
(``replica_description``); while it has replicas (version 2019.11.21), its ``MultiRegionConsistency`` (STRONG
or EVENTUAL), and the witness of a strongly consistent one (``GlobalTableWitnesses``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dynastore import limits
from dynastore.engine.context import Context
from dynastore.global_tables.replicas import GLOBAL_TABLE_VERSION, witness_status
from dynastore.model.table_schema import (
    ACTIVE,
    CREATING,
    UPDATING,
    ZERO_THROUGHPUT,
    BillingMode,
    IndexDef,
    KeySchema,
    OnDemandThroughput,
    Projection,
    ProvisionedThroughput,
    ReplicaDef,
    RestoreSummary,
    TableDef,
)
from dynastore.model.warm_throughput import WarmThroughput

__all__ = [
    "describe_index",
    "describe_table",
    "key_schema_description",
    "on_demand_description",
    "projection_description",
    "replica_description",
    "restore_summary_description",
    "throughput_description",
    "table_description",
    "warm_description",
]


def table_description(ctx: Context, td: TableDef, *, warm: bool = True, created: bool = False) -> dict[str, Any]:
    """``describe_table`` of ``td`` with the live item statistics, the region and account of its namespace, and
    now."""
    live = ctx.catalog.with_live_stats(td)
    namespace = ctx.catalog.namespace_of_table(td)
    return describe_table(live, namespace.region, namespace.account_id, ctx.clock.now(), warm=warm, created=created)


def describe_table(
    td: TableDef, region: str, account_id: str, now: float, *, warm: bool = True, created: bool = False
) -> dict[str, Any]:
    """The ``TableDescription`` of ``td`` at ``now`` (its ItemCount / TableSizeBytes as ``td`` carries them).

    ``warm`` False (a CreateTable or DeleteTable response): WarmThroughput only where the request configured it.
    ``created`` (a CreateTable response): the BillingModeSummary of an on-demand table holds its mode only, as
    the Developer Guide's sample CreateTable output shows (DescribeTable adds LastUpdateToPayPerRequestDateTime).
    """
    arn = td.arn(region, account_id)
    desc: dict[str, Any] = {
        "AttributeDefinitions": [
            {"AttributeName": a.name, "AttributeType": a.type}
            for a in sorted(td.attribute_definitions, key=lambda a: a.name)
        ],
        "TableName": td.name,
        "KeySchema": key_schema_description(td.key_schema),
        "TableStatus": td.status,
        "CreationDateTime": td.created_at,
    }
    desc["ProvisionedThroughput"] = throughput_description(_billed(td.throughput, td.billing_mode), now)
    desc["TableSizeBytes"] = td.size_bytes
    desc["ItemCount"] = td.item_count
    desc["TableArn"] = arn
    desc["TableId"] = td.uuid
    summary = _billing_summary(td, created)
    if summary is not None:
        desc["BillingModeSummary"] = summary
    if td.lsis:
        desc["LocalSecondaryIndexes"] = [describe_index(i, arn, td.billing_mode, now) for i in td.lsis]
    if td.gsis:
        desc["GlobalSecondaryIndexes"] = [
            describe_index(_as_here(td, i), arn, td.billing_mode, now, warm=warm) for i in td.gsis
        ]
    if td.stream is not None:
        if td.stream.enabled:
            desc["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": td.stream.view_type}
        if td.stream.label is not None:
            desc["LatestStreamLabel"] = td.stream.label
            desc["LatestStreamArn"] = f"{arn}/stream/{td.stream.label}"
    if td.global_table_version is not None:
        desc["GlobalTableVersion"] = td.global_table_version
    if td.replicas:
        desc["Replicas"] = [replica_description(r, td) for r in td.replicas]
    witness = witness_status(td)
    if witness is not None:
        desc["GlobalTableWitnesses"] = [{"RegionName": td.witness_region, "WitnessStatus": witness}]
    if td.restore is not None:
        desc["RestoreSummary"] = restore_summary_description(td.restore)
    if td.sse is not None:
        desc["SSEDescription"] = {
            "Status": "ENABLED",
            "SSEType": td.sse.sse_type,
            "KMSMasterKeyArn": td.sse.kms_key_arn,
        }
    if td.table_class is not None:
        class_summary: dict[str, Any] = {"TableClass": td.table_class}
        if td.table_class_updated_at is not None:
            class_summary["LastUpdateDateTime"] = td.table_class_updated_at
        desc["TableClassSummary"] = class_summary
    desc["DeletionProtectionEnabled"] = td.deletion_protection
    on_demand = td.on_demand_of()
    if on_demand is not None:
        desc["OnDemandThroughput"] = on_demand_description(on_demand)
    if warm or td.warm is not None:
        # An UPDATING table's warm throughput is not itself changing: DynamoDB shows it ACTIVE.
        desc["WarmThroughput"] = warm_description(td.warm, ACTIVE if td.status == UPDATING else td.status)
    if td.replicas and td.global_table_version == GLOBAL_TABLE_VERSION:
        desc["MultiRegionConsistency"] = "STRONG" if td.is_strong else "EVENTUAL"
    return desc


def _as_here(td: TableDef, index: IndexDef) -> IndexDef:
    """``index`` with the on-demand throughput it has in this replica (its own MaxReadRequestUnits, if any)."""
    if not td.own_gsi_max_reads:
        return index
    return dataclasses.replace(index, on_demand=td.on_demand_of(index))


def replica_description(replica: ReplicaDef, td: TableDef) -> dict[str, Any]:
    """A ``ReplicaDescription``: the replica's status and the settings it overrides (a replica without a
    TableClassOverride has the table's class: shown when the table shows one)."""
    out: dict[str, Any] = {"RegionName": replica.region, "ReplicaStatus": replica.status}
    if replica.status_description is not None:
        out["ReplicaStatusDescription"] = replica.status_description
    if replica.progress is not None and replica.status == CREATING:
        out["ReplicaStatusPercentProgress"] = replica.progress
    if replica.read_capacity_override is not None:
        out["ProvisionedThroughputOverride"] = {"ReadCapacityUnits": replica.read_capacity_override}
    on_demand = td.billing_mode is BillingMode.PAY_PER_REQUEST  # (overrides kept across a switch are not shown)
    if replica.max_read_override is not None and on_demand:
        out["OnDemandThroughputOverride"] = {"MaxReadRequestUnits": replica.max_read_override}
    if replica.gsi_overrides:
        max_reads = dict(replica.gsi_max_read_overrides) if on_demand else {}
        out["GlobalSecondaryIndexes"] = [
            _replica_index(name, read, max_reads.get(name)) for name, read in replica.gsi_overrides
        ]
    table_class = replica.table_class if replica.table_class is not None else td.table_class
    if table_class is not None:
        out["ReplicaTableClassSummary"] = {"TableClass": table_class}
    return out


def _replica_index(name: str, read: int | None, max_read: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"IndexName": name}
    if read is not None:
        out["ProvisionedThroughputOverride"] = {"ReadCapacityUnits": read}
    if max_read is not None:
        out["OnDemandThroughputOverride"] = {"MaxReadRequestUnits": max_read}
    return out


def restore_summary_description(summary: RestoreSummary) -> dict[str, Any]:
    """A restored table's ``RestoreSummary`` (engine/restore.py)."""
    out: dict[str, Any] = {}
    if summary.source_backup_arn is not None:
        out["SourceBackupArn"] = summary.source_backup_arn
    if summary.source_table_arn is not None:
        out["SourceTableArn"] = summary.source_table_arn
    out["RestoreDateTime"] = summary.restored_at
    out["RestoreInProgress"] = summary.in_progress
    return out


def describe_index(
    index: IndexDef, table_arn: str, billing: BillingMode, now: float, *, warm: bool = True
) -> dict[str, Any]:
    """A ``LocalSecondaryIndexDescription`` or ``GlobalSecondaryIndexDescription``."""
    out: dict[str, Any] = {
        "IndexName": index.name,
        "KeySchema": key_schema_description(index.key_schema),
        "Projection": projection_description(index.projection),
    }
    is_gsi = index.kind == "GSI"
    if is_gsi:
        out["IndexStatus"] = index.status
        if index.online and (index.status == CREATING or (index.status == UPDATING and index.backfilling)):
            out["Backfilling"] = index.backfilling
        throughput = index.throughput if index.throughput is not None else ZERO_THROUGHPUT
        out["ProvisionedThroughput"] = throughput_description(_billed(throughput, billing), now)
    out["IndexSizeBytes"] = index.size_bytes
    out["ItemCount"] = index.item_count
    out["IndexArn"] = f"{table_arn}/index/{index.name}"
    if is_gsi and index.on_demand is not None:
        out["OnDemandThroughput"] = on_demand_description(index.on_demand)
    if is_gsi and (warm or index.warm is not None):
        out["WarmThroughput"] = warm_description(index.warm, index.status)
    return out


def key_schema_description(schema: KeySchema) -> list[dict[str, str]]:
    """A ``KeySchema`` list: every HASH element, then every RANGE element."""
    out = [{"AttributeName": k.name, "KeyType": "HASH"} for k in schema.hash_keys]
    out.extend({"AttributeName": k.name, "KeyType": "RANGE"} for k in schema.range_keys)
    return out


def projection_description(projection: Projection) -> dict[str, Any]:
    out: dict[str, Any] = {"ProjectionType": projection.type}
    if projection.non_key_attributes:
        out["NonKeyAttributes"] = sorted(projection.non_key_attributes)
    return out


def throughput_description(throughput: ProvisionedThroughput, now: float) -> dict[str, Any]:
    """A ``ProvisionedThroughputDescription`` (NumberOfDecreasesToday counts the UTC day of ``now``)."""
    out: dict[str, Any] = {}
    if throughput.last_increase is not None:
        out["LastIncreaseDateTime"] = throughput.last_increase
    if throughput.last_decrease is not None:
        out["LastDecreaseDateTime"] = throughput.last_decrease
    out["NumberOfDecreasesToday"] = throughput.decreases_on(now)
    out["ReadCapacityUnits"] = throughput.read
    out["WriteCapacityUnits"] = throughput.write
    return out


def on_demand_description(on_demand: OnDemandThroughput) -> dict[str, int]:
    out: dict[str, int] = {}
    if on_demand.max_read is not None:
        out["MaxReadRequestUnits"] = on_demand.max_read
    if on_demand.max_write is not None:
        out["MaxWriteRequestUnits"] = on_demand.max_write
    return out


def warm_description(warm: WarmThroughput | None, status: str) -> dict[str, Any]:
    """``TableWarmThroughputDescription`` / ``GlobalSecondaryIndexWarmThroughputDescription``: the configured
    warm throughput, else the baseline every table starts with."""
    read = limits.WARM_READ_UNITS if warm is None else warm.read
    write = limits.WARM_WRITE_UNITS if warm is None else warm.write
    return {"ReadUnitsPerSecond": read, "WriteUnitsPerSecond": write, "Status": status}


def _billed(throughput: ProvisionedThroughput, billing: BillingMode) -> ProvisionedThroughput:
    """On-demand tables and their GSIs report zero read and write capacity (the dates and counter stay)."""
    if billing is BillingMode.PAY_PER_REQUEST:
        return dataclasses.replace(throughput, read=0, write=0)
    return throughput


def _billing_summary(td: TableDef, created: bool) -> dict[str, Any] | None:
    if td.billing_mode is BillingMode.PAY_PER_REQUEST:
        out: dict[str, Any] = {"BillingMode": "PAY_PER_REQUEST"}
    elif td.billing_mode_explicit or td.last_update_to_pay_per_request is not None:
        out = {"BillingMode": "PROVISIONED"}
    else:
        return None
    if td.last_update_to_pay_per_request is not None and not created:
        out["LastUpdateToPayPerRequestDateTime"] = td.last_update_to_pay_per_request
    return out
