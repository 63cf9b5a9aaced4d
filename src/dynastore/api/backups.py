"""CreateBackup, DescribeBackup, ListBackups, DeleteBackup and RestoreTableFromBackup: the wire of on-demand
backups (engine/backups.py keeps them; docs/backups.md "On-demand backups").

Shapes as botocore's service model has them: ``BackupDetails`` (CreateBackup; with the source table and its
features in ``BackupDescription`` for DescribeBackup and DeleteBackup), ``BackupSummary`` (ListBackups). A backup
being created reports the source table's size at the request as its BackupSizeBytes; an AVAILABLE one its image's.

RestoreTableFromBackup checks, in this order: the backup exists in the caller's namespace
(BackupNotFoundException) and is not being created (BackupInUseException); the target name is free
(TableInUseException while a table of that name is being created or deleted, TableAlreadyExistsException
otherwise); fewer than 50 restores run in the account (LimitExceededException); the overrides are valid
(ValidationException, LimitExceededException for throughput over the per-table quota), as a restore to a point in
time checks them (api/restore_target.py).
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.restore_target import restored_table
from dynastore.api.table_description import (
    describe_index,
    key_schema_description,
    on_demand_description,
    table_description,
)
from dynastore.api.table_requests import check_capacity_bounds, invalid
from dynastore.engine import backups
from dynastore.engine.context import Context
from dynastore.engine.recovery_state import AVAILABLE, SYSTEM, USER, BackupRecord
from dynastore.errors import ValidationException
from dynastore.model.table_schema import BillingMode, TableDef, table_arn

__all__ = [
    "backup_description",
    "backup_details",
    "handle_create",
    "handle_delete",
    "handle_describe",
    "handle_list",
    "handle_restore",
]

_AWS_BACKUP = "AWS_BACKUP"  # made by AWS Backup: dynastore has none, so the filter finds none
_TYPES = {"USER": (USER,), "SYSTEM": (SYSTEM,), _AWS_BACKUP: (), "ALL": (USER, SYSTEM)}


def handle_create(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    record = backups.create_backup(ctx, req["TableName"], req["BackupName"])
    return {"BackupDetails": backup_details(record)}


def handle_describe(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"BackupDescription": backup_description(backups.find_backup(ctx, req["BackupArn"]))}


def handle_delete(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"BackupDescription": backup_description(backups.delete_backup(ctx, req["BackupArn"]))}


def handle_list(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    found = backups.list_backups(
        ctx,
        req.get("TableName"),
        req.get("TimeRangeLowerBound"),
        req.get("TimeRangeUpperBound"),
        _TYPES[req.get("BackupType") or "USER"],
        req.get("ExclusiveStartBackupArn"),
    )
    limit = req.get("Limit")
    page = found if limit is None else found[:limit]
    out: dict[str, Any] = {"BackupSummaries": [_summary(r) for r in page]}
    if len(page) < len(found):
        out["LastEvaluatedBackupArn"] = page[-1].arn
    return out


def handle_restore(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    record = backups.find_backup(ctx, req["BackupArn"])
    target_name: str = req["TargetTableName"]
    backups.check_restore(ctx, record, target_name)
    throughput = req.get("ProvisionedThroughputOverride")
    if throughput is not None:
        check_capacity_bounds(throughput)
    target = restored_table(ctx, backups.source_table(record), target_name, req)
    if target.billing_mode is BillingMode.PAY_PER_REQUEST and throughput is not None:
        raise invalid(messages.PPR_WITH_THROUGHPUT)
    _check_indexes(target)
    created = backups.restore_backup(ctx, record, target)
    return {"TableDescription": table_description(ctx, created)}


def _check_indexes(target: TableDef) -> None:
    seen: set[str] = set()
    for index in target.lsis + target.gsis:
        if index.name in seen:
            raise ValidationException(messages.RESTORE_INDEX_DUPLICATE.format(index=index.name), bare=True)
        seen.add(index.name)


# ---- shapes ------------------------------------------------------------------------------------------------------
def backup_details(record: BackupRecord) -> dict[str, Any]:
    """``BackupDetails``."""
    out: dict[str, Any] = {"BackupArn": record.arn, "BackupName": record.backup_name}
    if record.size_bytes is not None:
        out["BackupSizeBytes"] = record.size_bytes
    out["BackupStatus"] = record.status
    out["BackupType"] = record.kind
    out["BackupCreationDateTime"] = _time(record.created_at)
    if record.expires_at is not None:
        out["BackupExpiryDateTime"] = _time(record.expires_at)
    return out


def backup_description(record: BackupRecord) -> dict[str, Any]:
    """``BackupDescription``: the backup, its source table and the table's features when it was taken."""
    source = backups.source_table(record)
    arn = table_arn(record.region, record.account_id, source.name)
    return {
        "BackupDetails": backup_details(record),
        "SourceTableDetails": _source_details(record, source, arn),
        "SourceTableFeatureDetails": _feature_details(source, arn, record.created_at),
    }


def _summary(record: BackupRecord) -> dict[str, Any]:
    """``BackupSummary``."""
    source = backups.source_table(record)
    out: dict[str, Any] = {
        "TableName": source.name,
        "TableId": source.uuid,
        "TableArn": table_arn(record.region, record.account_id, source.name),
        "BackupArn": record.arn,
        "BackupName": record.backup_name,
        "BackupCreationDateTime": _time(record.created_at),
    }
    if record.expires_at is not None:
        out["BackupExpiryDateTime"] = _time(record.expires_at)
    out["BackupStatus"] = record.status
    out["BackupType"] = record.kind
    if record.size_bytes is not None:
        out["BackupSizeBytes"] = record.size_bytes
    return out


def _source_details(record: BackupRecord, source: TableDef, arn: str) -> dict[str, Any]:
    """``SourceTableDetails``: the table as it was when the backup was taken."""
    billed = source.billing_mode is BillingMode.PROVISIONED
    out: dict[str, Any] = {
        "TableName": source.name,
        "TableId": source.uuid,
        "TableArn": arn,
        "TableSizeBytes": source.size_bytes,
        "KeySchema": key_schema_description(source.key_schema),
        "TableCreationDateTime": source.created_at,  # as DescribeTable's CreationDateTime
        "ProvisionedThroughput": {
            "ReadCapacityUnits": source.throughput.read if billed else 0,
            "WriteCapacityUnits": source.throughput.write if billed else 0,
        },
    }
    on_demand = source.on_demand_of()
    if on_demand is not None:
        out["OnDemandThroughput"] = on_demand_description(on_demand)
    out["ItemCount"] = record.item_count if record.status == AVAILABLE else source.item_count
    out["BillingMode"] = source.billing_mode.value
    return out


def _feature_details(source: TableDef, arn: str, now: float) -> dict[str, Any]:
    """``SourceTableFeatureDetails``: the source's indexes, stream, time to live and encryption, when set."""
    out: dict[str, Any] = {}
    if source.lsis:
        out["LocalSecondaryIndexes"] = [_index_info(source, i.name, arn, now) for i in source.lsis]
    if source.gsis:
        out["GlobalSecondaryIndexes"] = [_index_info(source, i.name, arn, now) for i in source.gsis]
    if source.stream is not None and source.stream.enabled:
        out["StreamDescription"] = {"StreamEnabled": True, "StreamViewType": source.stream.view_type}
    if source.ttl is not None:
        status = "ENABLED" if source.ttl.enabled else "DISABLED"
        out["TimeToLiveDescription"] = {"TimeToLiveStatus": status, "AttributeName": source.ttl.attribute_name}
    if source.sse is not None:
        out["SSEDescription"] = {
            "Status": "ENABLED",
            "SSEType": source.sse.sse_type,
            "KMSMasterKeyArn": source.sse.kms_key_arn,
        }
    return out


def _index_info(source: TableDef, name: str, arn: str, now: float) -> dict[str, Any]:
    """``LocalSecondaryIndexInfo`` / ``GlobalSecondaryIndexInfo``: the description's members the shape has."""
    index = source.index(name)
    assert index is not None
    described = describe_index(index, arn, source.billing_mode, now, warm=False)
    out = {key: described[key] for key in ("IndexName", "KeySchema", "Projection")}
    if index.kind == "GSI":
        throughput = described["ProvisionedThroughput"]
        out["ProvisionedThroughput"] = {
            "ReadCapacityUnits": throughput["ReadCapacityUnits"],
            "WriteCapacityUnits": throughput["WriteCapacityUnits"],
        }
        if "OnDemandThroughput" in described:
            out["OnDemandThroughput"] = described["OnDemandThroughput"]
    return out


def _time(seconds: float) -> float:
    """A time as the wire carries it: seconds since the epoch, to the millisecond."""
    return round(seconds, 3)
