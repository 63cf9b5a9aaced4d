"""UpdateContinuousBackups / DescribeContinuousBackups: point-in-time recovery of a table (docs/backups.md
"Point-in-time recovery"). Continuous backups themselves are always ENABLED, as DynamoDB reports them."""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.engine import continuous_backups
from dynastore.engine.context import Context
from dynastore.engine.point_in_time import restorable_window
from dynastore.errors import ValidationException
from dynastore.model.table_schema import TableDef

__all__ = ["continuous_backups_description", "handle_describe", "handle_update", "wire_time"]


def handle_update(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    spec = req["PointInTimeRecoverySpecification"]
    enabled = bool(spec["PointInTimeRecoveryEnabled"])
    days = spec.get("RecoveryPeriodInDays")
    if not enabled and days is not None:
        raise ValidationException(messages.PITR_PERIOD_WHILE_DISABLED, bare=True)
    table = continuous_backups.update(ctx, req["TableName"], enabled, days)
    return {"ContinuousBackupsDescription": continuous_backups_description(ctx, table)}


def handle_describe(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    table = continuous_backups.find_table(ctx, req["TableName"])
    return {"ContinuousBackupsDescription": continuous_backups_description(ctx, table)}


def continuous_backups_description(ctx: Context, table: TableDef) -> dict[str, Any]:
    """The times are left out for the moment after recovery is turned on until the first base is in."""
    pitr: dict[str, Any] = {"PointInTimeRecoveryStatus": "DISABLED"}
    if table.pitr is not None:
        pitr = {"PointInTimeRecoveryStatus": "ENABLED", "RecoveryPeriodInDays": table.pitr.recovery_days}
        window = restorable_window(ctx, table)
        if window is not None:
            pitr["EarliestRestorableDateTime"] = wire_time(window[0])
            pitr["LatestRestorableDateTime"] = wire_time(window[1])
    return {"ContinuousBackupsStatus": "ENABLED", "PointInTimeRecoveryDescription": pitr}


def wire_time(seconds: float) -> float:
    """A time as the wire carries it: seconds since the epoch to the millisecond."""
    return round(seconds, 3)
