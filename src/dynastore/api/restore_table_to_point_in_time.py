"""RestoreTableToPointInTime: a new table holding exactly the items the source held at an instant of its
recovery period (engine/point_in_time.py), loaded in the background by engine/restore.py; the table is CREATING
until its data is in, and DescribeTable's RestoreSummary says where it came from (docs/backups.md
"Point-in-time recovery").

Checks, in this order: one source (SourceTableArn or SourceTableName) and one time (RestoreDateTime or
UseLatestRestorableTime); the source exists (TableNotFoundException) and is not being created
(TableInUseException); the target name is free (TableInUseException while a table of that name is being created
or deleted, TableAlreadyExistsException otherwise); fewer than 50 restores run in the account
(LimitExceededException); the source has point-in-time recovery on (PointInTimeRecoveryUnavailableException);
the time is within its restorable window (InvalidRestoreTimeException); the overrides are valid
(ValidationException, LimitExceededException for throughput over the per-table quota), as for
RestoreTableFromBackup (api/backups.py).
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.continuous_backups import wire_time
from dynastore.api.restore_target import restored_table
from dynastore.api.table_description import table_description
from dynastore.api.table_requests import check_capacity_bounds, invalid
from dynastore.engine import continuous_backups
from dynastore.engine.context import Context
from dynastore.engine.point_in_time import items_at, restorable_window
from dynastore.engine.restore import check_target_name, start_restore
from dynastore.errors import (
    InvalidRestoreTimeException,
    PointInTimeRecoveryUnavailableException,
    TableInUseException,
    ValidationException,
)
from dynastore.model.table_schema import CREATING, BillingMode, RestoreSummary, TableDef

__all__ = ["handle"]


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    source_name = _source_name(req)
    use_latest = bool(req.get("UseLatestRestorableTime"))
    requested = req.get("RestoreDateTime")
    if use_latest and requested is not None:
        raise ValidationException(messages.PITR_TIME_TWICE, bare=True)
    if not use_latest and requested is None:
        raise ValidationException(messages.PITR_TIME_MISSING, bare=True)
    source = continuous_backups.find_table(ctx, source_name)
    if source.status == CREATING:
        raise TableInUseException(messages.PITR_SOURCE_IN_USE.format(name=source.name, status=source.status))
    target_name: str = req["TargetTableName"]
    check_target_name(ctx, target_name)
    if source.pitr is None:
        raise PointInTimeRecoveryUnavailableException(messages.PITR_NOT_ENABLED.format(name=source.name))
    window = restorable_window(ctx, source)
    if window is None:  # turned on a moment ago: its first base is being taken
        raise PointInTimeRecoveryUnavailableException(messages.PITR_BEING_ENABLED.format(name=source.name))
    instant = window[1] if requested is None else _within(float(requested), window)
    throughput = req.get("ProvisionedThroughputOverride")
    if throughput is not None:
        check_capacity_bounds(throughput)
    target = restored_table(ctx, source, target_name, req)
    _check_target(target, throughput)
    summary = RestoreSummary(None, source.arn(ctx.namespace.region, ctx.namespace.account_id), instant, True)
    created = start_restore(ctx, target, _items(ctx, source, instant), summary)
    return {"TableDescription": table_description(ctx, created)}


def _check_target(target: TableDef, throughput: dict[str, Any] | None) -> None:
    """The overrides make a table CreateTable would accept: no throughput for an on-demand one, index names
    unique."""
    if target.billing_mode is BillingMode.PAY_PER_REQUEST and throughput is not None:
        raise invalid(messages.PPR_WITH_THROUGHPUT)
    seen: set[str] = set()
    for index in target.lsis + target.gsis:
        if index.name in seen:
            raise ValidationException(messages.RESTORE_INDEX_DUPLICATE.format(index=index.name), bare=True)
        seen.add(index.name)


def _source_name(req: dict[str, Any]) -> str:
    arn, name = req.get("SourceTableArn"), req.get("SourceTableName")
    if arn is not None and name is not None:
        raise ValidationException(messages.PITR_SOURCE_TWICE, bare=True)
    if arn is None and name is None:
        raise ValidationException(messages.PITR_SOURCE_MISSING, bare=True)
    return str(arn if arn is not None else name)


def _within(instant: float, window: tuple[float, float]) -> float:
    """The instant to restore to. Restores are to the second, as DynamoDB's (clients send whole seconds): a time
    in the second that holds the earliest restorable time means that time."""
    earliest, latest = window
    if earliest - 1.0 < instant < earliest:
        return earliest
    if earliest <= instant <= latest:
        return instant
    raise InvalidRestoreTimeException(
        messages.PITR_INVALID_RESTORE_TIME.format(earliest=wire_time(earliest), latest=wire_time(latest))
    )


def _items(ctx: Context, source: TableDef, instant: float) -> Any:
    def items() -> Any:
        return items_at(ctx, source, instant)

    return items
